"""The three scaling-law forms in log space, their parameters, and the Chinchilla form's Huber objectives.

Internal parameter vector θ per form (log-amplitudes): power (a, α); offset (e, a, α); chinchilla (e, a, α, b, β).
Natural parameters: E = e^e, A = e^a, B = e^b (:func:`natural_params`). :func:`log_model` gives log L̂ and its
Jacobian; :func:`chinchilla_huber_objective` (summed Huber loss, Hoffmann et al. 2022) and
:func:`chinchilla_huber_nll` (Huber likelihood with a fitted scale, Besiroglu et al. 2024) are what the
Chinchilla fit minimises. Every objective takes per-point ``weights`` (each point's loss term multiplied by its weight)
and an ``asymmetry`` A ≥ 1 (the loss term of a point the model over-estimates, log L̂ > log L, multiplied by A:
OLMo-core's "overestimate penalty", for lower-envelope fits); :func:`loss_weights` gives the multipliers and
:func:`objective_rows` evaluates an objective at many parameter vectors at once.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "FORMS", "HUBER_DELTA", "LOG_PARAMS", "MIN_POINTS", "MIN_SCALE", "OBJECTIVES", "PARAM_NAMES", "Form",
    "chinchilla_huber_nll", "chinchilla_huber_objective", "huber_log_normaliser", "huber_logpdf", "huber_loss",
    "log_model", "log_sum_exp", "loss_weights", "natural_params", "objective_rows", "profile_scale", "theta_from_natural",
]

Form = Literal["power", "offset", "chinchilla"]
FORMS: tuple[str, ...] = ("power", "offset", "chinchilla")
PARAM_NAMES: dict[str, tuple[str, ...]] = {
    "power": ("A", "alpha"),
    "offset": ("E", "A", "alpha"),
    "chinchilla": ("E", "A", "alpha", "B", "beta"),
}
LOG_PARAMS = {"E", "A", "B"}
"""Parameters fitted as logarithms (θ holds log E, log A, log B)."""
MIN_POINTS: dict[str, int] = {"power": 3, "offset": 4, "chinchilla": 6}
"""Fewest points per form: one more than the number of parameters (one residual degree of freedom)."""
OBJECTIVES = ("huber", "huber-likelihood")
"""Chinchilla-form objectives: ``huber`` = summed Huber loss of log residuals (Hoffmann et al. 2022);
``huber-likelihood`` = Huber negative log-likelihood with a fitted scale (Besiroglu et al. 2024)."""
MIN_SCALE = 1e-12
"""The likelihood's σ is bounded below: an exact fit would send it to 0 (NLL → −∞)."""
HUBER_DELTA = 1e-3
"""The Huber loss's δ (Hoffmann et al. 2022)."""


def log_sum_exp(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log Σ_k exp(t_k) over axis 0 and the softmax weights (plain numpy: this is the hot loop)."""
    m = t.max(axis=0)
    ex = np.exp(t - m)
    s = ex.sum(axis=0)
    return m + np.log(s), ex / s


def huber_loss(delta: float, r: np.ndarray) -> np.ndarray:
    """Huber's ρ_δ of each residual: r²/2 within δ, linear beyond."""
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


def loss_weights(r: np.ndarray, weights: np.ndarray | None, asymmetry: float) -> np.ndarray | None:
    """Each residual's multiplier of its loss term: its point's weight, times ``asymmetry`` where the model
    over-estimates (r = log L̂ − log L > 0); None when every multiplier is 1 (the plain sum). ``r`` may hold rows
    (one per parameter vector); ``weights`` is one per point."""
    if weights is None and asymmetry == 1.0:
        return None
    w = np.broadcast_to(np.ones(r.shape[-1]) if weights is None else weights, r.shape)
    return w if asymmetry == 1.0 else np.where(r > 0, asymmetry * w, w)


def log_model(form: str, theta: np.ndarray, lx: np.ndarray, lx2: np.ndarray | None):
    """log L̂ and its Jacobian with respect to θ (shape (n, p))."""
    if form == "power":
        a, alpha = theta
        return a - alpha * lx, np.column_stack([np.ones_like(lx), -lx])
    if form == "offset":
        e, a, alpha = theta
        pred, w = log_sum_exp(np.stack([np.full_like(lx, e), a - alpha * lx]))
        return pred, np.column_stack([w[0], w[1], -w[1] * lx])
    e, a, alpha, b, beta = theta
    pred, w = log_sum_exp(np.stack([np.full_like(lx, e), a - alpha * lx, b - beta * lx2]))
    return pred, np.column_stack([w[0], w[1], -w[1] * lx, w[2], -w[2] * lx2])


def chinchilla_huber_objective(
    theta: ArrayLike,
    log_n: ArrayLike,
    log_d: ArrayLike,
    log_loss: ArrayLike,
    delta: float = HUBER_DELTA,
    reduction: Literal["sum", "mean"] = "sum",
    weights: np.ndarray | None = None,
    asymmetry: float = 1.0,
) -> tuple[float, np.ndarray]:
    """Huber loss of log residuals of the Chinchilla form, and its gradient.

    ``theta = (e, a, alpha, b, beta)``; the loss is Σ_i ω_i·Huber_δ(LSE(e, a − α log N_i,
    b − β log D_i) − log L_i), divided by the number of points when ``reduction="mean"``; ω_i = 1, or the
    point's weight times ``asymmetry`` where the model over-estimates (:func:`loss_weights`).
    """
    r, jac = _chinchilla_residuals(theta, log_n, log_d, log_loss)
    om = loss_weights(r, weights, asymmetry)
    if om is None:
        return _reduced(float(huber_loss(delta, r).sum()), jac.T @ np.clip(r, -delta, delta), r.size, reduction)
    return _reduced(float(om @ huber_loss(delta, r)), jac.T @ (om * np.clip(r, -delta, delta)), r.size, reduction)


def _chinchilla_residuals(theta: ArrayLike, log_n: ArrayLike, log_d: ArrayLike, log_loss: ArrayLike):
    """Log residuals log L̂ − log L of the Chinchilla form at θ[:5], and their Jacobian."""
    lx, lx2, ly = (np.asarray(v, dtype=float) for v in (log_n, log_d, log_loss))
    pred, jac = log_model("chinchilla", np.asarray(theta, dtype=float)[:5], lx, lx2)
    return pred - ly, jac


def _reduced(f: float, grad: np.ndarray, n: int, reduction: str) -> tuple[float, np.ndarray]:
    """(f, grad) summed over the n points, or divided by n for ``reduction="mean"``."""
    return (f / n, grad / n) if reduction == "mean" else (f, grad)


def huber_log_normaliser(delta: float = HUBER_DELTA, asymmetry: float = 1.0) -> float:
    """log Z(δ) of the unit-scale Huber density p(u) = exp(−ρ_δ(u)) / Z(δ).

    Z(δ) = ∫ exp(−ρ_δ(u)) du = √(2π)·(2Φ(δ) − 1) + 2·exp(−δ²/2)/δ: the Gaussian core on |u| ≤ δ,
    plus two exponential tails ∫_δ^∞ exp(δ²/2 − δu) du = exp(−δ²/2)/δ. With ``asymmetry`` A the density is
    exp(−A·ρ_δ(u)) for u > 0, and that half integrates to √(π/(2A))·erf(δ·√(A/2)) + exp(−Aδ²/2)/(Aδ).
    """
    from scipy import special  # scipy: here, not when the command line starts

    if asymmetry == 1.0:
        return math.log(math.sqrt(2 * math.pi) * special.erf(delta / math.sqrt(2))
                        + 2 * math.exp(-0.5 * delta**2) / delta)

    def half(a: float) -> float:
        return (math.sqrt(math.pi / (2 * a)) * special.erf(delta * math.sqrt(a / 2))
                + math.exp(-0.5 * a * delta**2) / (a * delta))

    return math.log(half(1.0) + half(asymmetry))


def huber_logpdf(r: ArrayLike, delta: float = HUBER_DELTA, scale: float = 1.0) -> np.ndarray:
    """log density of residuals ``r`` under the Huber distribution with scale σ:
    −ρ_δ(r/σ) − log σ − log Z(δ) (δ applies to the standardised residual r/σ)."""
    u = np.asarray(r, dtype=float) / scale
    return -huber_loss(delta, u) - math.log(scale) - huber_log_normaliser(delta)


def chinchilla_huber_nll(
    theta: ArrayLike,
    log_n: ArrayLike,
    log_d: ArrayLike,
    log_loss: ArrayLike,
    delta: float = HUBER_DELTA,
    reduction: Literal["sum", "mean"] = "sum",
    weights: np.ndarray | None = None,
    asymmetry: float = 1.0,
) -> tuple[float, np.ndarray]:
    """Huber negative log-likelihood of the Chinchilla form's log residuals, and its gradient.

    ``theta = (e, a, alpha, b, beta, s)`` with scale σ = e^s; with r_i the log residual and
    u_i = r_i/σ, NLL = Σ_i ρ_δ(u_i) + n·s + n·log Z(δ) (:func:`huber_log_normaliser`). Gradient:
    ∂/∂θ_j = Σ_i ψ(u_i)·J_ij/σ, ∂/∂s = n − Σ_i ψ(u_i)·u_i, ψ = clip(·, −δ, δ). With ``weights`` w_i each point's
    term is multiplied by w_i (n becomes Σ w_i); with ``asymmetry`` A the ρ_δ of a point the model over-estimates is
    multiplied by A (and Z(δ) is that asymmetric density's normaliser).
    """
    r, jac = _chinchilla_residuals(theta, log_n, log_d, log_loss)
    s = float(np.asarray(theta, dtype=float)[5])
    u = r * math.exp(-s)
    psi = np.clip(u, -delta, delta)
    n = u.size
    om = loss_weights(r, weights, asymmetry)
    if om is None:
        f = float(huber_loss(delta, u).sum()) + n * (s + huber_log_normaliser(delta))
        return _reduced(f, np.append(jac.T @ psi * math.exp(-s), n - float(psi @ u)), n, reduction)
    total = float(n if weights is None else np.sum(weights))
    f = float(om @ huber_loss(delta, u)) + total * (s + huber_log_normaliser(delta, asymmetry))
    return _reduced(f, np.append(jac.T @ (om * psi) * math.exp(-s), total - float((om * psi) @ u)), n, reduction)


def profile_scale(r: np.ndarray, delta: float, weights: np.ndarray | None = None,
                  asymmetry: float = 1.0) -> np.ndarray:
    """The likelihood's σ for fixed residuals (rows of ``r``): the root of mean_i min(u_i², δ|u_i|) = 1,
    u = r/σ (∂NLL/∂s = 0), by bisection in log σ; at least :data:`MIN_SCALE`. With ``weights`` and ``asymmetry`` the
    root of Σ_i ω_i·min(u_i², δ|u_i|) = Σ_i w_i (ω_i: :func:`loss_weights`)."""
    r = np.atleast_2d(r)
    a = np.abs(r)
    n = a.shape[-1]
    om = loss_weights(r, weights, asymmetry)
    if om is None:
        amax = np.maximum(a.max(axis=-1), MIN_SCALE)
        # the mean is ≤ δ·mean|u| and ≤ mean u², so the root is ≤ hi; at lo the largest |u| alone gives ≥ 1
        hi = np.maximum(np.minimum(delta * a.mean(axis=-1), np.sqrt((a * a).mean(axis=-1))), MIN_SCALE)
        lo = np.minimum(np.minimum(delta * amax / n, amax / math.sqrt(n)), hi)
        total = float(n)
    else:  # the same bounds with the multipliers: Σω·min(·)/W ≤ δ·Σω|r|/(σW) and ≤ Σω r²/(σ²W)
        total = float(n if weights is None else np.sum(weights))
        hi = np.maximum(np.minimum(delta * (om * a).sum(axis=-1) / total,
                                   np.sqrt((om * a * a).sum(axis=-1) / total)), MIN_SCALE)
        single = np.minimum(a * np.sqrt(om / total), delta * om * a / total).max(axis=-1)
        lo = np.minimum(np.maximum(single, MIN_SCALE), hi)
    llo, lhi = np.log(lo), np.log(hi)
    for _ in range(80):
        mid = 0.5 * (llo + lhi)
        u = a / np.exp(mid)[:, None]
        terms = np.minimum(u * u, delta * u)
        big = (terms.mean(axis=-1) if om is None else (om * terms).sum(axis=-1) / total) > 1.0
        llo, lhi = np.where(big, mid, llo), np.where(big, lhi, mid)
    return np.maximum(np.exp(0.5 * (llo + lhi)), MIN_SCALE)


def objective_rows(
    form: str, rows: np.ndarray, lx: np.ndarray, lx2: np.ndarray | None, ly: np.ndarray, *, objective: str,
    delta: float = HUBER_DELTA, weights: np.ndarray | None = None, asymmetry: float = 1.0,
) -> np.ndarray:
    """The objective at every row θ of ``rows`` (offset or Chinchilla form; vectorised, chunked): ``squares`` (the
    summed squared log residuals), ``huber`` (the summed Huber loss) or ``huber-likelihood`` (the Huber NLL at its
    best scale, less the constant Σw·log Z(δ)); each point's term multiplied by :func:`loss_weights`."""
    out = np.empty(rows.shape[0])
    chunk = max(1, 2_000_000 // max(1, lx.size))
    total = float(lx.size if weights is None else np.sum(weights))
    for i in range(0, rows.shape[0], chunk):
        g = rows[i : i + chunk]
        parts = [np.broadcast_to(g[:, 0:1], (g.shape[0], lx.size)), g[:, 1:2] - g[:, 2:3] * lx]
        if form == "chinchilla":
            parts.append(g[:, 3:4] - g[:, 4:5] * lx2)
        r = log_sum_exp(np.stack(parts))[0] - ly
        om = loss_weights(r, weights, asymmetry)
        if objective == "huber-likelihood":
            sigma = profile_scale(r, delta, weights, asymmetry)
            terms = huber_loss(delta, r / sigma[:, None])
            out[i : i + chunk] = (terms.sum(axis=1) if om is None else (om * terms).sum(axis=1)) + total * np.log(sigma)
        else:
            terms = r * r if objective == "squares" else huber_loss(delta, r)
            out[i : i + chunk] = terms.sum(axis=1) if om is None else (om * terms).sum(axis=1)
    return out


def natural_params(form: str, theta: np.ndarray) -> np.ndarray:
    """Natural parameters (A = e^a etc.) from θ; works row-wise on a 2-D array."""
    theta = np.asarray(theta, dtype=float)
    out = theta.copy()
    for j, name in enumerate(PARAM_NAMES[form]):
        if name in LOG_PARAMS:
            with np.errstate(over="ignore"):
                out[..., j] = np.exp(theta[..., j])
    return out


def theta_from_natural(form: str, natural: np.ndarray) -> np.ndarray:
    """θ (log E, log A, … as the optimiser holds them) from natural parameters: the inverse of :func:`natural_params`;
    works row-wise on a 2-D array (a non-positive coefficient gives NaN or −inf)."""
    out = np.array(natural, dtype=float, copy=True)
    for j, name in enumerate(PARAM_NAMES[form]):
        if name in LOG_PARAMS:
            with np.errstate(divide="ignore", invalid="ignore"):
                out[..., j] = np.log(out[..., j])
    return out
