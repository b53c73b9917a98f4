"""More PCA-spectrum rules of scikit-dimension 0.5's ``lPCA``: Kaiser, broken stick, and the signal-rank
rules for data = low-rank signal + iid noise (MP, GD, KN, Minka, parallel analysis, scran's
``denoised``, randomly's ``scRMT``).

Same definitions and conventions as scikit-dimension (which follows R's intrinsicDimension, PCAtools,
scran and the randomly package), so the same data give the same rank:

- spectra are covariance-scale eigenvalues ``ev`` (descending, zero-padded to ``p`` features), with
  ``n_eff = n − 1`` for centred data and ``n`` otherwise;
- ``MP``: eigenvalues above ``σ² (1 + √(p/n_eff))²`` (Marchenko–Pastur edge); ``GD``: above Gavish–Donoho's
  ``λ*(β)² max(n_eff, p)/n_eff σ²``; σ² given (``noise_var``) or matched to the Marchenko–Pastur median;
- ``denoised``: fewest leading components whose discarded variance exceeds the technical variance;
- ``KN``: Kritchman–Nadler's sequential Tracy–Widom test at level ``alpha_kn``;
- ``Minka``: argmax of Minka's Laplace evidence (equal to scikit-learn's ``PCA(n_components='mle')``);
- ``parallel``: leading eigenvalues above the ``quantile`` of ``n_permutations`` null spectra
  (columns permuted, or signs flipped), drawn with ``numpy.random.RandomState(random_state)``;
- ``scRMT``: eigenvalues of the standardised data's Wishart matrix above the moment-matched
  Marchenko–Pastur edge plus one Tracy–Widom unit (the null bulk from a permuted copy).

These estimate the rank of a *linear* signal, not a manifold dimension.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.validation import check_choice, check_float, check_int

SPECTRUM_VERSIONS = ("Kaiser", "broken_stick")
RANK_VERSIONS = ("MP", "GD", "KN", "Minka", "parallel", "denoised", "scRMT")
TW1_UPPER = {0.1: 0.4501, 0.05: 0.9793, 0.01: 2.0234, 0.005: 2.4223, 0.001: 3.2722}
"""Upper quantiles s(α) of the Tracy–Widom (β = 1) law, P(TW1 > s) = α (Johnstone 2001, Table 1; Bejan 2005)."""


def kaiser(ev: np.ndarray) -> float:
    """Number of eigenvalues above their mean (Kaiser's 'eigenvalue > 1' for standardised data)."""
    return float(np.sum(ev > np.mean(ev)))


def broken_stick(ev: np.ndarray) -> float:
    """Number of leading normalised eigenvalues above the broken-stick expectation ``(1/p) Σ_{j>=i} 1/j``."""
    p = len(ev)
    stick = np.cumsum(1.0 / np.arange(p, 0, -1))[::-1] / p
    below = np.flatnonzero(stick > ev / np.sum(ev))
    return float(below[0]) if len(below) else 0.0


def check_rank_options(ver: str, noise_var: Any, alpha_kn: float, null: str, quantile: float,
                       n_permutations: int) -> None:
    """Clear errors for the signal-rank options."""
    if np.ndim(noise_var) and ver != "denoised":
        raise TTLabInputError("an array noise_var (per-feature technical variances) is only valid for ver='denoised'.")
    if ver == "KN" and alpha_kn not in TW1_UPPER:
        raise TTLabInputError(f"alpha_kn must be one of {sorted(TW1_UPPER)}; got {alpha_kn!r}.")
    if ver == "parallel":
        check_choice(null, "null", ("permute", "signflip"))
        check_float(quantile, "quantile", 0, 1, lo_open=True)
        check_int(n_permutations, "n_permutations", 1)


def signal_rank(X: np.ndarray, spectrum: np.ndarray, ver: str, *, center: bool = True, noise_var: Any = None,
                alpha_kn: float = 0.05, n_permutations: int = 100, quantile: float = 0.95, null: str = "permute",
                random_state: int | None = 0) -> tuple[int, dict[str, Any]]:
    """Signal rank of ``X`` (n, p) by rule ``ver`` from its PCA ``spectrum`` (descending; covariance
    scale if ``center``, else the eigenvalues of ``XᵀX``). Returns the rank and diagnostics
    (``noise_var_``, ``threshold_``, ``log_evidence_``)."""
    n, p = X.shape
    if ver == "parallel":
        return _parallel(X, np.asarray(spectrum, dtype=np.float64), center, n_permutations, quantile, null,
                         random_state), {}
    if ver == "scRMT":
        return _scrmt(X, random_state)
    ev = np.asarray(spectrum, dtype=np.float64) if center else np.asarray(spectrum, dtype=np.float64) / n
    ev = np.concatenate([np.sort(ev)[::-1], np.zeros(p - len(ev))])
    return rank_from_spectrum(ev, ver, n, n_eff=n - 1 if center else n, noise_var=noise_var, alpha_kn=alpha_kn)


def rank_from_spectrum(ev: np.ndarray, ver: str, n_samples: int, *, n_eff: int | None = None, noise_var: Any = None,
                       alpha_kn: float = 0.05) -> tuple[int, dict[str, Any]]:
    """Signal rank by a rule that reads the spectrum alone (MP, GD, KN, Minka, denoised) from the covariance-scale
    eigenvalues ``ev`` of ``n_samples`` rows, one per feature (``p = len(ev)``, zero-padded; sorted here);
    ``n_eff`` defaults to ``n_samples - 1`` (centred data). :func:`signal_rank` computes these versions with it."""
    if ver not in RANK_VERSIONS or ver in ("parallel", "scRMT"):
        raise TTLabInputError(f"ver={ver!r} is not a signal-rank rule of the spectrum alone "
                              "(MP, GD, KN, Minka, denoised); parallel and scRMT need the data.")
    n = int(n_samples)
    n_eff = n - 1 if n_eff is None else int(n_eff)
    ev = np.sort(np.asarray(ev, dtype=np.float64))[::-1]
    p = len(ev)
    if ver == "Minka":
        return _minka(ev, n)
    if ver == "KN":
        return _kn(ev, n_eff, alpha_kn, noise_var), {}
    nz = ev[: min(n_eff, p)]
    nz = nz[nz > nz[0] * max(n, p) * np.finfo(float).eps]
    beta = min(n_eff, p) / max(n_eff, p)
    sigma2 = noise_var
    if sigma2 is None:
        sigma2 = float(np.median(nz) / (_mp_median(beta) * max(n_eff, p) / n_eff))
    extra = {"noise_var_": sigma2}
    if ver == "denoised":
        tech = float(np.sum(sigma2)) if np.ndim(sigma2) else p * float(sigma2)
        above = np.cumsum(ev[::-1]) > tech
        return (p - int(np.argmax(above)) if above.any() else 1), extra
    if ver == "MP":
        thr = sigma2 * (1 + math.sqrt(p / n_eff)) ** 2
    else:  # GD, Gavish & Donoho (2014) eq. (11) in eigenvalue form
        lam2 = 2 * (beta + 1) + 8 * beta / (beta + 1 + math.sqrt(beta**2 + 14 * beta + 1))
        thr = lam2 * max(n_eff, p) / n_eff * sigma2
    return int(np.sum(nz > thr)), extra


def _mp_median(beta: float) -> float:
    """Median of the Marchenko–Pastur law with ratio ``beta <= 1`` and unit variance."""
    from scipy.integrate import quad
    from scipy.optimize import brentq

    a, b = (1 - math.sqrt(beta)) ** 2, (1 + math.sqrt(beta)) ** 2

    def pdf(x: float) -> float:
        return math.sqrt((b - x) * (x - a)) / (2 * math.pi * beta * x)

    return brentq(lambda x: quad(pdf, a, x)[0] - 0.5, a + 1e-9, b)


def _kn_noise(ev: np.ndarray, n: int, k: int) -> float:
    """Kritchman–Nadler noise variance given ``k`` signals (fixed point with debiased spikes)."""
    p = len(ev)
    sigma2 = ev[k:].sum() / (p - k)
    for _ in range(30):
        t = ev[:k] + sigma2 - sigma2 * (p - k) / n
        rho = (t + np.sqrt(np.maximum(t**2 - 4 * ev[:k] * sigma2, 0))) / 2
        new = (ev[k:].sum() + (ev[:k] - rho).sum()) / (p - k)
        if abs(new - sigma2) <= 1e-5 * sigma2:
            return float(new)
        sigma2 = new
    return float(sigma2)


def _kn(ev: np.ndarray, n: int, alpha: float, noise_var: Any) -> int:
    """Kritchman–Nadler sequential test; step k tests k − 1 signals, σ² estimated under that null,
    Tracy–Widom centring with n − 1/2, p − k + 1/2 (El Karoui)."""
    p = len(ev)
    s = TW1_UPPER[alpha]
    for k in range(1, min(n, p)):
        sigma2 = noise_var if noise_var is not None else _kn_noise(ev, n, k - 1)
        a, b = math.sqrt(n - 0.5), math.sqrt(p - k + 1 - 0.5)
        mu = (a + b) ** 2
        xi = (a + b) * (1 / a + 1 / b) ** (1 / 3)
        if n * ev[k - 1] <= sigma2 * (mu + s * xi):
            return k - 1
    return min(n, p) - 1


def _minka(ev: np.ndarray, n: int) -> tuple[int, dict[str, Any]]:
    """argmax over k = 1..r−1 of Minka's (2000) Laplace evidence (r = numerical rank), accumulated in k."""
    from scipy.special import loggamma

    d = len(ev)
    L = ev / ev[0]
    r = int(np.sum(L > d * np.finfo(float).eps))
    if r < 2:
        return r, {}
    tiny = np.finfo(float).tiny

    def log(x: Any) -> Any:
        return np.log(np.maximum(x, tiny))

    ll = np.empty(r - 1)
    pu = ediff = ainv = 0.0
    for k in range(1, r):
        i = k - 1
        pu += loggamma((d - i) / 2) - math.log(math.pi) * (d - i) / 2
        ediff += log(L[i] - L[i + 1:]).sum()
        ainv += log((L[:i] - L[i]) / (L[:i] * L[i])).sum()
        nu = L[k:].sum() / (d - k)
        binv = (d - k) * log((L[:k] - nu) / (L[:k] * nu)).sum()
        m = d * k - k * (k + 1) / 2
        pa = m * math.log(n) + ediff + ainv + binv
        ll[i] = (pu - k * math.log(2) - n / 2 * log(L[:k]).sum() - n * (d - k) / 2 * math.log(nu)
                 + math.log(2 * math.pi) * (m + k) / 2 - pa / 2 - k * math.log(n) / 2)
    return int(np.argmax(ll)) + 1, {"log_evidence_": ll}


def _parallel(X: np.ndarray, spectrum: np.ndarray, center: bool, n_perm: int, quantile: float, null: str,
              random_state: int | None) -> int:
    """Horn's parallel analysis: leading eigenvalues above the null ``quantile`` (sequential)."""
    rng = np.random.RandomState(random_state)
    n, p = X.shape
    X = np.asarray(X, dtype=np.float64)
    if null == "signflip" and center:
        X = X - X.mean(axis=0)
    nulls = np.empty((n_perm, len(spectrum)))
    for b in range(n_perm):
        if null == "permute":
            Xb = np.take_along_axis(X, np.argsort(rng.rand(n, p), axis=0), axis=0)
        else:
            Xb = X * np.where(rng.rand(n, p) < 0.5, -1.0, 1.0)
        Xb = Xb - Xb.mean(axis=0) if center else Xb
        nulls[b] = np.linalg.svd(Xb, compute_uv=False)[: len(spectrum)] ** 2 / (n - 1 if center else 1)
    above = spectrum > np.quantile(nulls, quantile, axis=0)
    return int(np.argmin(above)) if not above.all() else len(above)


def _scrmt(X: np.ndarray, random_state: int | None) -> tuple[int, dict[str, Any]]:
    """Aparicio et al. (2020) rank (the randomly package): standardised features, Marchenko–Pastur
    bulk fitted by moments from a permuted copy, threshold = bulk edge + one Tracy–Widom unit."""
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    X = (X[:, sd > 0] - X[:, sd > 0].mean(axis=0)) / sd[sd > 0]
    rng = np.random.RandomState(random_state)
    Xr = np.column_stack([rng.permutation(col) for col in X.T])
    L = np.linalg.eigvalsh(X @ X.T / X.shape[1])
    Lr = np.linalg.eigvalsh(Xr @ Xr.T / X.shape[1])

    def mp(S: np.ndarray) -> tuple[float, float, float]:
        m1, m2 = S.mean(), np.mean(S**2)
        g = m2 / m1**2 - 1
        return g, m1 * (1 + np.sqrt(g)) ** 2, m1 * (1 - np.sqrt(g)) ** 2

    _, b_plus, _ = mp(Lr)
    _, new_plus, new_minus = mp(L[(L > mp(Lr)[2]) & (L < b_plus)])
    for _ in range(1000):
        if (1 - new_plus / b_plus) ** 2 <= 1e-6:
            break
        b_plus = new_plus
        _, new_plus, new_minus = mp(L[(L > new_minus) & (L < new_plus)])
    bulk = L[(L > new_minus) & (L < new_plus)]
    gamma = mp(bulk)[0]
    tw = (len(L) / gamma) ** (-2 / 3) * gamma ** (5 / 6) * (1 + np.sqrt(gamma)) ** (4 / 3)
    threshold = float(bulk.mean() * (1 + np.sqrt(gamma)) ** 2 + tw)
    return int(np.sum(L > threshold)), {"threshold_": threshold}
