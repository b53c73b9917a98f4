"""Variable projection for the offset and Chinchilla forms (``method="varpro"``).

At fixed exponents the model L = E + A·x^(−α) (+ B·D^(−β)) is linear in its coefficients (E, A, B) ≥ 0. For every
exponent (pair) on a fine grid the coefficients are solved by non-negative least squares on the linear-space problem
with rows scaled by √w/L (a relative, i.e. first-order log, residual; :func:`nnls_batch`), and the fit's actual
objective — on log residuals, weighted, Huber or likelihood for the Chinchilla form — is evaluated there
(:func:`projected_grid`). The best local minima of that projected objective, then its best grid points 0.1 apart
(:data:`SPREAD`), start the refinement (:func:`polish`):
a Gauss–Newton fit (:func:`scipy.optimize.least_squares`, trust region) of the objective written as a sum of squares —
the Huber loss ρ_δ(r) as (sign r·√(2ρ_δ(r)))², exactly — in centred coordinates (log A − α·mean log x instead of
log A, which decorrelates the two), then the form's own optimiser (L-BFGS-B for the Chinchilla form) from there. On
the nearly piecewise-linear summed Huber loss (δ = 1e-3 against log residuals of ~1e-2) L-BFGS-B in the raw coordinates
stops early along narrow valleys; the centred Gauss–Newton step does not.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np

from ttlab.scaling.fit_models import (
    PARAM_NAMES,
    chinchilla_huber_nll,
    huber_loss,
    log_model,
    loss_weights,
    objective_rows,
    profile_scale,
)

__all__ = ["EXPONENT_GRID", "METHODS", "SPREAD", "nnls_batch", "polish", "projected_grid", "varpro_starts"]

METHODS = ("grid", "varpro")
"""How the offset and Chinchilla fits find their starts: ``grid`` (Epoch AI's grid of starts for the Chinchilla form,
a grid of (E, α) for the offset form) or ``varpro`` (variable projection over a fine grid of exponents)."""
EXPONENT_GRID: dict[str, np.ndarray] = {
    "offset": np.round(np.arange(1, 1001) * 0.01, 10),  # α ∈ {0.01, 0.02, …, 10} (the fit's bounds are [0, 10])
    "chinchilla": np.round(np.arange(1, 101) * 0.03, 10),  # α, β ∈ {0.03, 0.06, …, 3}
}
"""The exponents variable projection searches (α for the offset form; α × β for the Chinchilla form)."""
_COEF_FLOOR = 1e-12  # a coefficient NNLS sets to 0 becomes a term this far below the smallest loss (log needs > 0) …
_START_FLOOR = 1e-3  # … and, in a start, this far: a term whose share is ~1e-12 has no gradient to grow back with


def nnls_batch(gram: np.ndarray, rhs: np.ndarray, tt: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min ‖Xc − t‖² subject to c ≥ 0 for a batch of problems given by their Gram matrices ``gram`` = XᵀX (…, k, k),
    ``rhs`` = Xᵀt (…, k) and ``tt`` = tᵀt; returns (c, the residual sum of squares).

    The NNLS optimum is the least-squares solution on its support, so it is the best of the least-squares solutions on
    the 2^k column subsets whose coefficients are all ≥ 0 (k ≤ 3 here: at most 7 small solves, vectorised over the
    batch); :func:`scipy.optimize.nnls` gives the same (tested)."""
    k = gram.shape[-1]
    nrm = np.sqrt(np.maximum(np.einsum("...ii->...i", gram), 1e-300))  # columns scaled to unit norm
    g = gram / nrm[..., :, None] / nrm[..., None, :]
    b = rhs / nrm
    best = np.broadcast_to(np.asarray(tt, dtype=float), b.shape[:-1]).copy()
    coef = np.zeros(b.shape)
    for size in range(1, k + 1):
        for sub in map(list, itertools.combinations(range(k), size)):
            gs, bs = g[..., sub, :][..., :, sub], b[..., sub]
            try:
                c = np.linalg.solve(gs, bs[..., None])[..., 0]
            except np.linalg.LinAlgError:  # an exactly singular subset (duplicate columns): its pseudo-inverse
                c = (np.linalg.pinv(gs) @ bs[..., None])[..., 0]
            sse = tt - np.einsum("...i,...i->...", c, bs)
            ok = np.all(c >= 0, axis=-1) & (sse < best)
            best = np.where(ok, sse, best)
            full = np.zeros_like(coef)
            full[..., sub] = c
            coef = np.where(ok[..., None], full, coef)
    return coef / nrm, np.maximum(best, 0.0)


def _columns(exps: np.ndarray, lx: np.ndarray) -> np.ndarray:
    """x^(−e) / x_min^(−e) for every exponent e (rows): the largest entry of each row is 1, so nothing underflows."""
    return np.exp(-np.outer(exps, lx - lx.min()))


def _projected_coefficients(form: str, lx, lx2, ly, weights) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """NNLS coefficients for every exponent (pair) of :data:`EXPONENT_GRID`: (coefficients of the columns
    x^(−α)/x_min^(−α) …, the exponents (rows), the grid's shape)."""
    grid = EXPONENT_GRID[form]
    y = np.exp(ly)
    sq = np.ones_like(y) if weights is None else np.sqrt(weights)
    s2, st = (sq / y) ** 2, (sq / y) * sq  # row scale s = √w/L: the target s·L is √w
    tt = float(sq @ sq)
    pa = _columns(grid, lx)
    m = grid.size
    if form == "offset":
        g01 = pa @ s2
        gram = np.stack([np.stack([np.full(m, s2.sum()), g01], -1), np.stack([g01, (pa * pa) @ s2], -1)], -2)
        coef, _ = nnls_batch(gram, np.stack([np.full(m, st.sum()), pa @ st], -1), tt)
        return coef, grid[:, None], (m,)
    pb = _columns(grid, lx2)
    col, row = (lambda v: np.broadcast_to(v[:, None], (m, m))), (lambda v: np.broadcast_to(v[None, :], (m, m)))
    g01, g02, g11, g22 = col(pa @ s2), row(pb @ s2), col((pa * pa) @ s2), row((pb * pb) @ s2)
    g12 = (pa * s2) @ pb.T
    g00 = np.full((m, m), s2.sum())
    gram = np.stack([np.stack([g00, g01, g02], -1), np.stack([g01, g11, g12], -1), np.stack([g02, g12, g22], -1)], -2)
    rhs = np.stack([np.full((m, m), st.sum()), col(pa @ st), row(pb @ st)], -1)
    coef, _ = nnls_batch(gram, rhs, tt)
    aa, bb = np.meshgrid(grid, grid, indexing="ij")
    return coef.reshape(-1, 3), np.column_stack([aa.ravel(), bb.ravel()]), (m, m)


def _thetas(form: str, coef: np.ndarray, exps: np.ndarray, lx, lx2, floor: float) -> np.ndarray:
    """θ rows from NNLS coefficients, each raised to at least ``floor`` (a log needs > 0; a term's largest value is its
    coefficient, at the smallest size)."""
    logc = np.log(np.maximum(coef, floor))
    cols = [logc[:, 0], logc[:, 1] + exps[:, 0] * lx.min(), exps[:, 0]]  # a = log A' + α·log x_min
    if form == "chinchilla":
        cols += [logc[:, 2] + exps[:, 1] * lx2.min(), exps[:, 1]]
    return np.column_stack(cols)


def projected_grid(form: str, lx, lx2, ly, *, objective: str, delta: float, weights=None, asymmetry: float = 1.0):
    """The projected objective over :data:`EXPONENT_GRID`: (θ rows with the NNLS coefficients, the fit's objective at
    each, the grid's shape)."""
    coef, exps, shape = _projected_coefficients(form, lx, lx2, ly, weights)
    thetas = _thetas(form, coef, exps, lx, lx2, _COEF_FLOOR * float(np.exp(ly.min())))
    loss = "squares" if form == "offset" else objective
    return thetas, objective_rows(form, thetas, lx, lx2, ly, objective=loss, delta=delta, weights=weights,
                                  asymmetry=asymmetry), shape


def _local_minima(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Flat indices of the grid points no higher than any neighbour (8-neighbourhood in 2-D), lowest first."""
    v = values.reshape(shape)
    pad = np.pad(v, 1, constant_values=np.inf)
    lowest = np.full(v.shape, np.inf)
    for step in itertools.product((-1, 0, 1), repeat=v.ndim):
        if any(step):
            lowest = np.minimum(lowest, pad[tuple(slice(1 + d, 1 + d + n) for d, n in zip(step, v.shape))])
    idx = np.flatnonzero((v <= lowest).ravel() & np.isfinite(values))
    return idx[np.argsort(values[idx], kind="stable")]


SPREAD = 0.1
"""Starts beyond the local minima of the projected objective are its best grid points at least this far (in the
exponents, max-norm) from every start already chosen: the summed Huber loss of noisy data has local minima that the
smooth projected objective does not show."""


def _spread_starts(minima: np.ndarray, values: np.ndarray, exps: np.ndarray, n_keep: int) -> np.ndarray:
    """The ``n_keep`` starts: the best local minima, then (while fewer) the best grid points :data:`SPREAD` away from
    every start chosen."""
    chosen = list(minima[:n_keep])
    if len(chosen) < n_keep:
        order = np.argsort(np.where(np.isfinite(values), values, np.inf), kind="stable")
        for i in order:
            if len(chosen) >= n_keep:
                break
            if not chosen or np.min(np.max(np.abs(exps[chosen] - exps[i]), axis=1)) >= SPREAD - 1e-12:
                chosen.append(int(i))
    return np.array(chosen, dtype=int)


def varpro_starts(form: str, lx, lx2, ly, *, n_keep: int, objective: str, delta: float, weights=None,
                  asymmetry: float = 1.0) -> tuple[np.ndarray, dict[str, Any]]:
    """``n_keep`` starts (θ rows): the best local minima of the projected objective, then its best grid points
    :data:`SPREAD` apart; and what the search found: the grid, the best projected point, and the exponents whose best
    value lies on the upper edge of the grid (not bracketed)."""
    thetas, values, shape = projected_grid(form, lx, lx2, ly, objective=objective, delta=delta, weights=weights,
                                           asymmetry=asymmetry)
    grid = EXPONENT_GRID[form]
    names = [n for n in PARAM_NAMES[form] if n in ("alpha", "beta")]
    cols = [2, 4][: len(names)]
    local = _local_minima(values, shape)
    minima = _spread_starts(local, values, thetas[:, cols], n_keep)
    best = thetas[minima[0]]
    lifted = thetas[minima].copy()  # the starts: the coefficients NNLS set to 0 are raised to _START_FLOOR
    floor = math.log(_START_FLOOR * float(np.exp(ly.min())))
    for j, c in ((0, None), (1, 2), (3, 4))[: 2 if form == "offset" else 3]:
        top = lifted[:, j] if c is None else lifted[:, j] - lifted[:, c] * (lx if j == 1 else lx2).min()
        lifted[:, j] += np.maximum(floor - top, 0.0)
    info = {
        "exponent_grid": {n: [float(grid[0]), float(grid[-1]), float(grid[1] - grid[0])] for n in names},
        "n_grid_points": int(values.size),
        "n_local_minima": int(local.size),
        "n_starts": int(minima.size),
        "best_projected": {"objective": float(values[minima[0]]), **{n: float(best[c]) for n, c in zip(names, cols)}},
        "at_grid_edge": [n for n, c in zip(names, cols) if best[c] >= grid[-1]],
    }
    return lifted, info


def _centring(form: str, lx, lx2) -> np.ndarray:
    """T with θ' = T·θ: log A − α·mean log x (and log B − β·mean log D) in place of log A (log B)."""
    t = np.eye(len(PARAM_NAMES[form]))
    t[1, 2] = -float(lx.mean())
    if form == "chinchilla":
        t[3, 4] = -float(lx2.mean())
    return t


def _pseudo(r: np.ndarray, jac: np.ndarray, loss: str, delta: float, om: np.ndarray | None):
    """The objective Σ ω·ρ(r) as ½·Σ g², ρ(r) = r² (``squares``) or Huber's ρ_δ: g = sign(r)·√(2ωρ(r)), and its
    Jacobian."""
    w = np.ones_like(r) if om is None else om
    if loss == "squares":  # Σ ω r² = ½ Σ (√(2ω) r)²
        f = np.sqrt(2 * w)
        return f * r, jac * f[:, None]
    g = np.sign(r) * np.sqrt(2 * w * huber_loss(delta, r))
    inner = np.abs(r) <= delta
    fac = np.where(inner, np.sqrt(w), w * np.clip(r, -delta, delta) / np.where(inner, 1.0, g))
    return g, jac * fac[:, None]


def _gauss_newton(form, theta0, lx, lx2, ly, *, loss, delta, weights, asymmetry, scale=1.0, bounds=None):
    """θ minimising Σ ω·ρ(r/scale) (the pseudo-residual least squares of :func:`_pseudo`, centred coordinates)."""
    from scipy import optimize  # scipy.optimize: here, not when the command line starts

    t = _centring(form, lx, lx2)
    ti = np.linalg.inv(t)

    memo: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def parts(tp):  # least_squares asks for the residuals and then the Jacobian at the same point: computed once
        key = tp.tobytes()
        if key not in memo:
            pred, jac = log_model(form, ti @ tp, lx, lx2)
            r = (pred - ly) / scale
            memo.clear()
            memo[key] = _pseudo(r, (jac / scale) @ ti, loss, delta, loss_weights(r, weights, asymmetry))
        return memo[key]

    lo, hi = (np.full(t.shape[0], -np.inf), np.full(t.shape[0], np.inf)) if bounds is None else bounds
    x0 = np.clip(t @ theta0, lo + 1e-9, hi - 1e-9)  # bounds on the centred coordinates
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = optimize.least_squares(lambda tp: parts(tp)[0], x0, jac=lambda tp: parts(tp)[1], bounds=(lo, hi),
                                     method="trf", x_scale="jac", ftol=1e-15, xtol=1e-15, gtol=1e-15, max_nfev=2000)
    return ti @ res.x


def polish(form: str, theta0: np.ndarray, lx, lx2, ly, *, objective: str, delta: float, weights=None,
           asymmetry: float = 1.0, bounds=None) -> np.ndarray:
    """θ refined from ``theta0`` by the centred Gauss–Newton fit of the objective (see the module doc) within
    ``bounds`` (lower, upper arrays on the centred coordinates: e, log A − α·mean log x, α …); the Chinchilla form's
    default keeps every term and the floor within e^40 below the smallest loss and e^5 above the largest, and the
    exponents in [0, 10] — the form's own optimiser, run next, is free of them. For the Huber likelihood the scale
    and θ are refined in turn (each step lowers the NLL); θ gains the log scale."""
    loss = "squares" if form == "offset" else "huber"
    if bounds is None and form == "chinchilla":
        lo, hi = float(ly.min()) - 40.0, float(ly.max()) + 5.0
        bounds = (np.array([lo, lo, 0.0, lo, 0.0]), np.array([hi, hi, 10.0, hi, 10.0]))
    if objective != "huber-likelihood":
        return _gauss_newton(form, theta0, lx, lx2, ly, loss=loss, delta=delta, weights=weights, asymmetry=asymmetry,
                             bounds=bounds)
    theta, best, best_f = np.asarray(theta0, dtype=float), np.empty(0), math.inf
    for _ in range(20):
        r = log_model(form, theta, lx, lx2)[0] - ly
        sigma = float(profile_scale(r, delta, weights, asymmetry)[0])
        full = np.append(theta, math.log(sigma))
        f = chinchilla_huber_nll(full, lx, lx2, ly, delta, "sum", weights, asymmetry)[0]
        if best.size and not f < best_f - 1e-13 * abs(best_f):
            break
        best, best_f = full, f
        theta = _gauss_newton(form, theta, lx, lx2, ly, loss=loss, delta=delta, weights=weights, asymmetry=asymmetry,
                              scale=sigma, bounds=bounds)
    return best
