"""Rates measured from training curves, set against the theorems' statements.

* direction: 1 − cos(W(t), W*) against C·log t / t (Proposition 1) and C·log² t / t (Theorem 1);
  both shapes are fitted in log space (log C = mean of log(1 − cos) − log f(t)) and the spread of the
  residuals says which shape follows the curve better; a free log-log slope is reported too (≈ −1
  up to logarithms when the theory holds);
* loss: log(L(t) − L∞) = a − c·t fitted on the second half of a stage (linear convergence), with L∞ = 0
  in stage 1 and, in stage 2, the loss with all attention on optimal tokens;
* norms: the fraction of steps t ≥ 2 at which t·η/(2‖W*‖) ≤ ‖W(t)‖ ≤ t·η holds.
"""

from __future__ import annotations

import math

import numpy as np

from ttlab.ntp.train import TrainResult

_TINY = 1e-13


def fit_direction_rate(t: np.ndarray, one_minus_cos: np.ndarray, t_min: int = 10) -> dict:
    """Fit 1 − cos against log t/t and log²t/t (constant C, log-residual spread) and a free slope."""
    t = np.asarray(t, dtype=float)
    y = np.asarray(one_minus_cos, dtype=float)
    keep = (t >= max(t_min, 3)) & np.isfinite(y) & (y > _TINY)
    out: dict = {"n_points": int(keep.sum()), "t_min": t_min}
    if keep.sum() < 3:
        out["note"] = "1 − cos is at floating-point zero (the iterate lies on the max-margin ray)"
        out["max_one_minus_cos"] = float(np.nanmax(np.abs(y))) if y.size else float("nan")
        return out
    t, y = t[keep], y[keep]
    ly = np.log(y)
    for name, f in (("log_t_over_t", np.log(t) / t), ("log2_t_over_t", np.log(t) ** 2 / t)):
        resid = ly - np.log(f)
        out[name] = {"C": float(np.exp(resid.mean())), "log_residual_std": float(resid.std())}
    slope, intercept = np.polyfit(np.log(t), ly, 1)
    out["loglog_slope"] = float(slope)
    out["final_one_minus_cos"] = float(y[-1])
    return out


def fit_loss_rate(t: np.ndarray, loss: np.ndarray, limit: float = 0.0) -> dict:
    """Fit log(L(t) − limit) = a − c·t on the second half of the curve; returns c and the fit's R²."""
    t = np.asarray(t, dtype=float)
    gap = np.asarray(loss, dtype=float) - limit
    half = t >= t.max() / 2 if t.size else np.zeros(0, bool)
    keep = half & np.isfinite(gap) & (gap > _TINY)
    if keep.sum() < 3:
        return {"rate": float("nan"), "r2": float("nan"), "limit": limit, "note": "loss gap at floating-point zero"}
    lt, lg = t[keep], np.log(gap[keep])
    slope, intercept = np.polyfit(lt, lg, 1)
    pred = intercept + slope * lt
    ss_res = float(((lg - pred) ** 2).sum())
    ss_tot = float(((lg - lg.mean()) ** 2).sum())
    return {
        "rate": float(-slope),
        "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan"),
        "limit": limit,
        "final_gap": float(gap[keep][-1]),
    }


def norm_bounds_hold(t: np.ndarray, norm: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> dict:
    """Fraction of steps t ≥ 2 at which lower ≤ ‖W(t)‖ ≤ upper (relative slack 1e-9)."""
    t = np.asarray(t)
    keep = t >= 2
    if not keep.any():
        return {"fraction": float("nan"), "n_steps": 0}
    n, lo, up = (np.asarray(a, dtype=float)[keep] for a in (norm, lower, upper))
    ok = (n >= lo * (1 - 1e-9)) & (n <= up * (1 + 1e-9))
    return {"fraction": float(ok.mean()), "n_steps": int(keep.sum()), "first_failure_step": int(t[keep][~ok][0]) if (~ok).any() else None}


def summarize(result: TrainResult) -> dict:
    """Final values and fitted rates of a training run, per stage, with the theory's constants."""
    cfg = result.config
    out: dict = {}
    stages = ["1", "2"] if cfg.schedule == "two-stage" else ["joint"]
    for stage in stages:
        r = result.rows(stage)
        if r["step"].size == 0:
            continue
        eta = cfg.eta0 if stage == "1" else cfg.eta
        star = result.wov_star if stage == "1" else result.wkq_star
        limit = 0.0 if stage == "1" else result.limit_loss
        s = {
            "steps": int(r["step"][-1]),
            "final_loss": float(r["loss"][-1]),
            "final_cosine": float(r["cosine"][-1]),
            "final_norm": float(r["norm"][-1]),
            "direction_fit": fit_direction_rate(r["step"], 1.0 - r["cosine"]),
            "loss_fit": fit_loss_rate(r["step"], r["loss"], limit),
            "norm_bounds": norm_bounds_hold(r["step"], r["norm"], r["norm_lower_bound"], r["norm_upper_bound"]),
        }
        if stage != "1":  # stage 1 trains W_ov alone: attention is not defined there
            s["final_min_optimal_attention"] = float(r["min_optimal_attention"][-1])
        if stage == "1":
            s["theory_loss_rate"] = eta / (4 * star.norm) if star.norm > 0 else float("nan")
        else:
            s["final_cosine_ov"] = float(r["cosine_ov"][-1])
            s["final_norm_ov"] = float(r["norm_ov"][-1])
            att = 1.0 - r["min_optimal_attention"]
            s["attention_gap_fit"] = fit_loss_rate(r["step"], att, 0.0)
            s["limit_loss"] = result.limit_loss
            s["theory_attention_rate_C1"] = theory_attention_rate(eta, star.norm, result.max_len)
        out[f"stage_{stage}"] = s
    return out


def theory_attention_rate(eta: float, wkq_star_norm: float, max_len: int) -> float:
    """C1 = η / (4 L_max ‖W*_kq‖²) of Theorem 2."""
    if wkq_star_norm <= 0:
        return math.nan
    return eta / (4 * max_len * wkq_star_norm**2)
