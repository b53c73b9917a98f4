"""β-Hölder regression targets on manifolds embedded in R^D, and seeded data splits.

The test of Theorem 1 needs targets whose difficulty grows with the intrinsic dimension d at a
fixed Hölder exponent β (a smooth additive target is far easier than the theorem's worst case).
:class:`RidgeTarget` is a sum of K random ridge features of the manifold's natural coordinates
u ∈ R^m (the unit sphere S^d ⊂ R^{d+1}, the cube [0, 1]^d, …):

    f(u) = (1/s) · [ Σ_k a_k ψ(r_k ⟨θ_k, u⟩ + φ_k) / √K − c ],

with directions θ_k uniform on the unit sphere of R^m and phases φ_k uniform. Spectrum
``"weighted"`` (the default): frequencies log-stratified on [r_0, R] (one per equal slice of log r)
with amplitudes a_k ∝ r_k^−β; ``"sampled"``: equal amplitudes and frequencies drawn with density
∝ r^−(1+2β) (whose tail above ≈ r_0·K^(1/2β) holds almost no feature). Either way — the same law for
every d — the share of the target's energy above frequency r falls like r^−2β, the spectral
signature of a β-smooth function. As K grows the sum tends to a Gaussian random field on
R^m with spectral density ∝ |ω|^−(2β+m) (a fractional-Brownian-type field, Hölder of every order
below β between the scales 1/R and 1/r_0): a typical, not a specially easy, β-Hölder function. ``c`` and ``s`` centre the target and give it unit variance on the manifold.
Profiles: ``"sin"`` (ψ = √2 sin) and ``"cusp"`` (ψ(t) = |sin(t/2)|^β, which has β-Hölder cusps;
the β < 1 variant that is not smooth at any scale).

Data: points are drawn in natural coordinates, centred, scaled so that every ambient coordinate
has unit mean square, and mapped into R^D by a random matrix with orthonormal columns (a
similarity — an isometry up to the global scale √D/rms). The target depends on ``problem_seed``
and d only (not on D); the samples depend on ``seed`` and d only, so the same intrinsic points
appear at every D, and the first n training points are the same for every training-set size
(nested training sets, common test set).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import MANIFOLDS, random_isometry
from ttlab.validation import check_choice, check_float, check_int

__all__ = [
    "PROFILES",
    "REGRESSION_MANIFOLDS",
    "ManifoldProblem",
    "RegressionData",
    "RidgeTarget",
    "SPECTRA",
    "knn_regression",
    "make_problem",
    "make_splits",
    "sample_frequencies",
    "weighted_frequencies",
]

PROFILES = ("sin", "cusp")
SPECTRA = ("weighted", "sampled")
REGRESSION_MANIFOLDS = ("sphere", "cube", "nonlinear")
_REFERENCE_POINTS = 10_000  # points used to centre and normalise the target
_STREAMS = {"target": 1, "isometry": 2, "reference": 3, "train": 11, "val": 12, "test": 13,
            "train_noise": 21, "val_noise": 22}


def sample_frequencies(rng: np.random.Generator, k: int, beta: float, max_freq: float,
                       min_freq: float = 1.0) -> np.ndarray:
    """``k`` frequencies with density ∝ r^−(1+2β) on [``min_freq``, ``max_freq``] (inverse CDF)."""
    p = 2.0 * beta
    u = rng.random(k)
    ratio = (max_freq / min_freq) ** (-p)
    return min_freq * (1.0 - u * (1.0 - ratio)) ** (-1.0 / p)


def weighted_frequencies(rng: np.random.Generator, k: int, beta: float, max_freq: float,
                         min_freq: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``k`` log-stratified frequencies on [``min_freq``, ``max_freq``] and amplitudes ∝ r^−β (mean square 1).

    One frequency in each of ``k`` equal slices of log r (uniform within its slice): every octave gets
    the same number of features, so the tail up to ``max_freq`` is represented however steep the law.
    With amplitude² ∝ r^−2β per feature, the energy per unit of log r is ∝ r^−2β — the same spectrum as
    the density ∝ r^−(1+2β) of :func:`sample_frequencies` with equal amplitudes.
    """
    u = (np.arange(k) + rng.random(k)) / k
    r = min_freq * (max_freq / min_freq) ** u
    amp = r ** (-beta)
    return r, amp / math.sqrt(float(np.mean(amp ** 2)))


@dataclass(frozen=True)
class RidgeTarget:
    """f(u) = (Σ_k a_k ψ(r_k ⟨θ_k, u⟩ + φ_k)/√K − center) / scale, a sum of random ridge features.

    ``amplitudes`` a_k (mean square 1) default to 1 (equal amplitudes).
    """

    directions: np.ndarray  # (K, m), unit rows
    frequencies: np.ndarray  # (K,)
    phases: np.ndarray  # (K,)
    profile: str
    beta: float
    center: float = 0.0
    scale: float = 1.0
    amplitudes: np.ndarray | None = None  # (K,), or None for equal amplitudes

    def raw(self, u: np.ndarray) -> np.ndarray:
        """The un-normalised sum Σ_k a_k ψ(r_k ⟨θ_k, u⟩ + φ_k)/√K."""
        t = (np.asarray(u, dtype=float) @ self.directions.T) * self.frequencies + self.phases
        if self.profile == "sin":
            feats = math.sqrt(2.0) * np.sin(t)
        else:
            feats = np.abs(np.sin(0.5 * t)) ** self.beta
        if self.amplitudes is not None:
            feats = feats * self.amplitudes
        return feats.sum(axis=1) / math.sqrt(self.frequencies.size)

    def __call__(self, u: np.ndarray) -> np.ndarray:
        """Target values at natural coordinates ``u`` of shape (n, m)."""
        return (self.raw(u) - self.center) / self.scale

    def lipschitz_bound(self) -> float | None:
        """Upper bound on the Lipschitz constant in natural coordinates (``"sin"`` profile only)."""
        if self.profile != "sin":
            return None
        amp = np.ones_like(self.frequencies) if self.amplitudes is None else np.abs(self.amplitudes)
        return float(math.sqrt(2.0) * (amp * self.frequencies).sum() / math.sqrt(self.frequencies.size) / self.scale)

    def describe(self) -> dict[str, Any]:
        """JSON-ready summary (no arrays)."""
        f = self.frequencies
        return {
            "profile": self.profile, "beta": self.beta, "n_features": int(f.size),
            "spectrum": "sampled" if self.amplitudes is None else "weighted",
            "frequency_min": float(f.min()), "frequency_median": float(np.median(f)),
            "frequency_max": float(f.max()), "center": self.center, "scale": self.scale,
            "lipschitz_bound": self.lipschitz_bound(),
        }


@dataclass(frozen=True)
class ManifoldProblem:
    """A manifold in R^D with a target: ``sample(n, rng)`` gives points x, natural coords u, f(u)."""

    manifold: str
    d: int
    ambient: int
    isometry: np.ndarray  # (D, m), orthonormal columns
    center: np.ndarray  # (m,)
    input_scale: float
    target: RidgeTarget
    noise: float
    problem_seed: int

    @property
    def natural_dim(self) -> int:
        """Dimension m of the space the manifold is drawn in (d + 1 for the sphere)."""
        return int(self.isometry.shape[1])

    def natural(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` points in natural coordinates."""
        return MANIFOLDS[self.manifold][0](rng, n, self.d)

    def embed(self, u: np.ndarray) -> np.ndarray:
        """Natural coordinates → R^D (centred, scaled, rotated)."""
        return (self.input_scale * (u - self.center)) @ self.isometry.T

    def describe(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "manifold": self.manifold, "d": self.d, "ambient": self.ambient, "natural_dim": self.natural_dim,
            "input_scale": self.input_scale, "noise": self.noise, "problem_seed": self.problem_seed,
            "target": self.target.describe(),
        }


def _rng(*key: int) -> np.random.Generator:
    return np.random.default_rng([int(k) for k in key])


def make_problem(
    d: int,
    ambient: int,
    *,
    manifold: str = "sphere",
    beta: float = 1.0,
    profile: str = "sin",
    n_features: int = 1024,
    min_freq: float = 1.0,
    max_freq: float = 32.0,
    noise: float = 0.3,
    problem_seed: int = 0,
    spectrum: str = "weighted",
) -> ManifoldProblem:
    """The regression problem for intrinsic dimension ``d`` in R^``ambient`` (deterministic).

    The target depends on (``problem_seed``, manifold, d, β, profile, spectrum, K, frequency range) but
    not on ``ambient``. ``spectrum``: ``"weighted"`` (log-stratified frequencies, amplitudes ∝ r^−β:
    :func:`weighted_frequencies`) or ``"sampled"`` (frequencies drawn with density ∝ r^−(1+2β), equal
    amplitudes: :func:`sample_frequencies`; its tail above ≈ r_0·K^(1/2β) holds no feature).
    """
    check_choice(spectrum, "target spectrum", SPECTRA)
    check_choice(manifold, "manifold", REGRESSION_MANIFOLDS)
    check_choice(profile, "target profile", PROFILES)
    d = check_int(d, "intrinsic dimension d", 1)
    ambient = check_int(ambient, "ambient dimension D", 1)
    beta = check_float(beta, "Hölder exponent beta", 0.0, 1.0, lo_open=True)
    n_features = check_int(n_features, "number of target features", 1)
    min_freq = check_float(min_freq, "minimum target frequency", 0.0, lo_open=True)
    max_freq = check_float(max_freq, "maximum target frequency", 0.0, lo_open=True)
    if max_freq < min_freq:
        raise TTLabInputError(f"maximum target frequency ({max_freq:g}) must be >= the minimum ({min_freq:g})")
    noise = check_float(noise, "label noise sigma", 0.0)
    problem_seed = check_int(problem_seed, "problem seed", 0)
    m = MANIFOLDS[manifold][1](d)
    if ambient < m:
        raise TTLabInputError(
            f"the {manifold} with d={d} lives in R^{m}; ambient dimension D={ambient} is too small (need D >= {m})"
        )
    mid = REGRESSION_MANIFOLDS.index(manifold)
    rng_t = _rng(problem_seed, _STREAMS["target"], mid, d)
    dirs = rng_t.standard_normal((n_features, m))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    amps = None
    if spectrum == "sampled":
        freqs = sample_frequencies(rng_t, n_features, beta, max_freq, min_freq)
    else:
        freqs, amps = weighted_frequencies(rng_t, n_features, beta, max_freq, min_freq)
    phases = rng_t.uniform(0.0, 2.0 * math.pi, n_features)
    raw = RidgeTarget(dirs, freqs, phases, profile, beta, amplitudes=amps)
    ref = MANIFOLDS[manifold][0](_rng(problem_seed, _STREAMS["reference"], mid, d), _REFERENCE_POINTS, d)
    vals = raw.raw(ref)
    sd = float(vals.std())
    if not sd > 0:
        raise TTLabInputError("the target is constant on the manifold; use more features or a higher max frequency")
    target = RidgeTarget(dirs, freqs, phases, profile, beta, center=float(vals.mean()), scale=sd, amplitudes=amps)
    center = ref.mean(axis=0)
    rms = float(np.sqrt(np.mean(np.sum((ref - center) ** 2, axis=1))))
    iso = random_isometry(_rng(problem_seed, _STREAMS["isometry"], mid, d, ambient), m, ambient)
    return ManifoldProblem(manifold, d, ambient, iso, center, math.sqrt(ambient) / rms, target, noise, problem_seed)


@dataclass(frozen=True)
class RegressionData:
    """Train/validation (noisy labels) and test (clean targets) splits, float32."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    f_test: np.ndarray
    f_train: np.ndarray  # clean targets of the training points (diagnostics only)


def make_splits(problem: ManifoldProblem, n_train: int, n_val: int, n_test: int, seed: int) -> RegressionData:
    """Seeded splits; the first ``k`` rows of each split do not depend on its size (nested sets)."""
    n_train = check_int(n_train, "n_train", 1)
    n_val = check_int(n_val, "n_val", 1)
    n_test = check_int(n_test, "n_test", 1)
    seed = check_int(seed, "seed", 0)
    mid = REGRESSION_MANIFOLDS.index(problem.manifold)

    def split(stream: str, n: int, noise_stream: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        u = problem.natural(_rng(seed, _STREAMS[stream], mid, problem.d), n)
        f = problem.target(u)
        y = f
        if noise_stream is not None and problem.noise > 0:
            y = f + problem.noise * _rng(seed, _STREAMS[noise_stream], mid, problem.d).standard_normal(n)
        return problem.embed(u).astype(np.float32), y.astype(np.float32), f.astype(np.float32)

    x_tr, y_tr, f_tr = split("train", n_train, "train_noise")
    x_va, y_va, _ = split("val", n_val, "val_noise")
    x_te, _, f_te = split("test", n_test, None)
    return RegressionData(x_tr, y_tr, x_va, y_va, x_te, f_te, f_tr)


def knn_regression(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    x_test: np.ndarray,
    f_test: np.ndarray,
    ks: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128),
) -> dict[str, Any]:
    """k-nearest-neighbour regression with k chosen on validation: a model-free difficulty gauge.

    Averaging the k nearest labels attains the minimax rate n^(−2β/(2β+d)) for β ≤ 1 with k tuned,
    so its error level and slope show how hard a target is at each d, independent of any network.
    """
    import torch

    xt = torch.as_tensor(np.asarray(x_train, dtype=np.float32))
    yt = torch.as_tensor(np.asarray(y_train, dtype=np.float32))
    kmax = min(max(ks), xt.shape[0])
    ks_ok = sorted({min(k, xt.shape[0]) for k in ks})

    def predict_all(x: np.ndarray) -> torch.Tensor:  # (len(ks_ok), n)
        xq = torch.as_tensor(np.asarray(x, dtype=np.float32))
        out = []
        for a in range(0, xq.shape[0], 2048):
            dist = torch.cdist(xq[a:a + 2048], xt)
            idx = dist.topk(kmax, largest=False).indices  # sorted ascending
            cums = yt[idx].cumsum(dim=1)
            out.append(torch.stack([cums[:, k - 1] / k for k in ks_ok]))
        return torch.cat(out, dim=1)

    val_mse = ((predict_all(x_val) - torch.as_tensor(y_val)) ** 2).mean(dim=1)
    best = int(val_mse.argmin())
    test_pred = predict_all(x_test)[best]
    test_mse = float(((test_pred - torch.as_tensor(f_test)) ** 2).mean())
    return {"k": ks_ok[best], "val_mse": float(val_mse[best]), "test_mse": test_mse,
            "val_mse_by_k": {str(k): float(v) for k, v in zip(ks_ok, val_mse)}}
