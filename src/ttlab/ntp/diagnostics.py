"""Rates measured from training curves, set against the theorems' statements.

* direction: 1 − cos(W(t), W*) against C·log t / t (Proposition 1) and C·log² t / t (Theorem 1);
  both shapes are fitted in log space (log C = mean of log(1 − cos) − log f(t)) and the spread of the
  residuals says which shape follows the curve better; a free log-log slope is reported too (≈ −1
  up to logarithms when the theory holds);
* loss: log(L(t) − L∞) = a − c·t fitted on the second half of a stage (linear convergence), with L∞ = 0
  in stage 1 (fitted on the recorded log L, exact at any margin, also below float64's range) and, in
  stage 2, the loss with all attention on optimal tokens;
* norms: the fraction of steps t ≥ 2 at which t·η/(2‖W*‖) ≤ ‖W(t)‖ ≤ t·η holds;
* linear convergence told from a power law (:func:`fit_exp_vs_power`): log(gap) fitted linearly in t
  and in log t on the same steps, both R² reported;
* float64's reach: stage-2 rates are judged up to the last step whose attention gap 1 − φ+ is still
  ≥ 1e-10 (:func:`resolvable_until`); beyond it the normalized step is rounding noise;
* Theorem 2's attention bound: the stage-2 step at which 1/(1 + L_max·exp(−C1 t)) clears a baseline by a
  given amount (:func:`steps_to_clear`), chosen before a run from C1;
* the theorems' preconditions computed for a run (:func:`proposition1_conditions`,
  :func:`theorem1_conditions`, :func:`theorem2_conditions`): the paper's absolute constant c0 is not
  given in the main text, so c0 = 1 (the most lenient) decides ``met``; the appendix's explicit constants
  (1696 and 384) are recorded beside it.
"""

from __future__ import annotations

import math

import numpy as np

from ttlab.ntp.config import TrainResult

_TINY = 1e-13
#: differences of two numbers exact to rounding (1 − attention, L − L∞ relative to L∞) are resolvable above this
TINY_GAP = 1e-13


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


def fit_loss_rate(t: np.ndarray, loss: np.ndarray, limit: float = 0.0, log_loss: np.ndarray | None = None) -> dict:
    """Fit log(L(t) − limit) = a − c·t on the second half of the curve; returns c and the fit's R².

    With ``limit == 0`` and ``log_loss`` (the recorded natural log of L, finite at any margin) the fit uses
    log L directly, so it covers losses far below 1e-13 and below float64's range.
    """
    t = np.asarray(t, dtype=float)
    gap = np.asarray(loss, dtype=float) - limit
    half = t >= t.max() / 2 if t.size else np.zeros(0, bool)
    if limit == 0 and log_loss is not None:
        lgap = np.asarray(log_loss, dtype=float)
        keep = half & np.isfinite(lgap)
    else:
        # the gap is a difference of two values exact to rounding: resolvable down to ~1e-13 of the limit
        floor = _TINY * abs(limit) if limit != 0 else _TINY
        keep = half & np.isfinite(gap) & (gap > floor)
        lgap = np.log(np.where(keep, gap, 1.0))
    if keep.sum() < 3:
        return {"rate": float("nan"), "r2": float("nan"), "limit": limit, "note": "loss gap at floating-point zero"}
    lt, lg = t[keep], lgap[keep]
    slope, r2 = _line_r2(lt, lg)
    return {
        "rate": float(-slope),
        "r2": r2,
        "limit": limit,
        "final_gap": float(gap[keep][-1]),
        "final_log_gap": float(lg[-1]),
    }


def _line_r2(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y on x and the fit's R² (NaN when y is constant)."""
    slope, intercept = np.polyfit(x, y, 1)
    ss_res = float(((y - (intercept + slope * x)) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return float(slope), (1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan"))


def fit_exp_vs_power(t: np.ndarray, gap: np.ndarray, floor: float, t_max: float | None = None) -> dict:
    """Linear convergence against a power law on the last decade of steps where ``gap`` > ``floor``.

    The window is [t1/10, t1] with t1 the last step ≤ ``t_max`` whose gap is resolvable (above ``floor``,
    e.g. 1e-13 × the limit of a difference of two losses); on it log(gap) is fitted linearly in t
    (exponential decay, ``rate`` = −slope, ``r2_exp``) and in log t (power law, ``power`` = −slope,
    ``r2_power``). Returns those with ``t0``, ``t1`` and ``n_points`` (fewer than 3: no fit)."""
    t = np.asarray(t, dtype=float)
    g = np.asarray(gap, dtype=float)
    ok = np.isfinite(g) & (g > floor) & (t >= 1) & (t <= (t.max() if t_max is None else t_max) if t.size else False)
    if not ok.any():
        return {"n_points": 0, "note": "the gap is at floating-point zero from the first step"}
    t1 = float(t[ok].max())
    keep = ok & (t >= t1 / 10)
    out: dict = {"t0": t1 / 10, "t1": t1, "n_points": int(keep.sum())}
    if keep.sum() < 3:
        return out
    lg = np.log(g[keep])
    rate, r2e = _line_r2(t[keep], lg)
    power, r2p = _line_r2(np.log(t[keep]), lg)
    return out | {"rate": -rate, "r2_exp": r2e, "power": -power, "r2_power": r2p}


#: the smallest attention gap 1 − φ+ at which a stage-2 step is resolved in float64: an optimal token's gradient
#: is a difference of O(1) numbers of size O(1 − φ+), so its relative rounding error is ε/(1 − φ+) ≈ 2×10⁻⁶ here
RESOLVABLE_ATTENTION_GAP = 1e-10


def resolvable_until(t: np.ndarray, attention_gap: np.ndarray, floor: float = RESOLVABLE_ATTENTION_GAP) -> float:
    """The last step at which the largest attention gap 1 − min φ+ is still ≥ ``floor``: beyond it normalized
    GD's stage-2 step is dominated by rounding (measured: 1 − cos(W_kq, W*_kq) rises again after ~16,000 steps
    on Figure 2's data in both training paths), so stage-2 rates are judged on steps up to here."""
    t = np.asarray(t, dtype=float)
    ok = np.asarray(attention_gap, dtype=float) >= floor
    return float(t[ok].max()) if ok.any() else float(t.min())


def attention_bound(c1: float, max_len: int, t: float) -> float:
    """Theorem 2's lower bound 1/(1 + L_max·exp(−C1 t)) on the attention to optimal tokens."""
    return 1.0 / (1.0 + max_len * math.exp(-c1 * t))


def steps_to_clear(c1: float, max_len: int, baseline: float, clearance: float) -> float:
    """The first stage-2 step t at which :func:`attention_bound` ≥ ``baseline + clearance``:
    t = log(L_max / (1/(b + c) − 1)) / C1 (0 if the bound starts there, ∞ if b + c ≥ 1 or C1 ≤ 0)."""
    target = baseline + clearance
    if target >= 1 or not c1 > 0:
        return math.inf
    if target <= 0:
        return 0.0
    return max(0.0, math.log(max_len / (1.0 / target - 1.0)) / c1)


def smallest_t(coef: float, power: int, t_min: float = 2.0) -> float:
    """The smallest t ≥ ``t_min`` from which t ≥ coef·log^power(t) holds for every larger t: the largest root
    of t = coef·log^power t, reached by fixed-point iteration from above (``t_min`` if there is none above it)."""
    if coef <= 0:
        return t_min
    t = 4.0 * max(coef, 10.0) * (math.log(max(coef, 10.0)) + 1.0) ** power  # above the largest root
    for _ in range(500):
        nxt = coef * math.log(t) ** power
        if nxt <= t_min:
            return t_min
        if abs(nxt - t) <= 1e-12 * t:
            return nxt
        t = nxt
    return t


def proposition1_conditions(steps: int, init: str = "zero") -> dict:
    """Proposition 1's preconditions for a stage-1 run of ``steps`` steps from ``init``: Assumptions 1–2
    (checked when the dataset is analysed), t ≥ 2, and Algorithm 1's zero start W_ov(0) = 0 (explicit in
    its restatement, Appendix B's Proposition 3). A random start tests the rate outside that statement —
    the only place it can be tested, since from zero W_ov stays on the max-margin ray."""
    return {"met": init == "zero" and steps >= 2, "t": steps, "t_min": 2, "init": init,
            "statement": "Assumptions 1–2, t ≥ 2 and the zero start W_ov(0) = 0 (Proposition 1; Proposition 3 in "
                         "Appendix B)"}


def theorem1_conditions(eta: float, wkq_norm: float, max_len: int, steps: int) -> dict:
    """Theorem 1's preconditions: η < O(1), made explicit in its proof (Appendix C.5) as η ≤ ‖W*_kq‖/e,
    and the direction bound of Lemma 7 holding from t0 = ⌈8 L_max ‖W*_kq‖²/η⌉ on."""
    eta_max = wkq_norm / math.e
    t0 = math.ceil(8 * max_len * wkq_norm**2 / eta)
    return {"met": eta <= eta_max and steps >= t0, "t": steps, "t_min": t0, "eta": eta, "eta_max": eta_max,
            "statement": "η ≤ ‖W*_kq‖/e (proof of Theorem 1) and t ≥ t0 = ⌈8·L_max·‖W*_kq‖²/η⌉ (Lemma 7)"}


def theorem2_conditions(n_sentences: int, max_len: int, vocab_size: int, wov_norm: float, wkq_norm: float,
                        eta0: float, eta: float, stage1_steps: int, stage2_steps: int, c0: float = 1.0) -> dict:
    """Theorem 2's preconditions for a run: T ≥ c0·‖W*_ov‖⁵·log|V|·log T/η0 (stage 1) and
    t ≥ c0·N·L_max⁴·‖W*_kq‖⁶·log²t/η (stage 2), with Theorem 1's η ≤ ‖W*_kq‖/e.

    c0 is the paper's unspecified absolute constant: ``met`` uses ``c0`` (default 1). The proofs' explicit
    constants are recorded as ``appendix`` (Corollary 1: 384 with log(2|V|); proof of Theorem 2: 1696)."""
    a1 = wov_norm**5 * math.log(vocab_size) / eta0
    a2 = n_sentences * max_len**4 * wkq_norm**6 / eta
    T_min, t_min = smallest_t(c0 * a1, 1), smallest_t(c0 * a2, 2)
    eta_max = wkq_norm / math.e
    return {
        "met": stage1_steps >= T_min and stage2_steps >= t_min and eta <= eta_max,
        "c0": c0, "T": stage1_steps, "T_min": T_min, "t": stage2_steps, "t_min": t_min, "eta": eta, "eta_max": eta_max,
        "appendix": {"T_min": smallest_t(384 * wov_norm**5 * math.log(2 * vocab_size) / eta0, 1),
                     "t_min": smallest_t(1696 * a2, 2)},
        "statement": f"T ≥ c0·‖W*_ov‖⁵·log|V|·log T/η0 and t ≥ c0·N·L_max⁴·‖W*_kq‖⁶·log²t/η with c0 = {c0:g} "
                     "(unspecified in the paper), η ≤ ‖W*_kq‖/e",
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
        assert eta is not None, "summarize() takes a trained run, whose config holds its resolved step sizes"
        star = result.wov_star if stage == "1" else result.wkq_star
        limit = 0.0 if stage == "1" else result.limit_loss
        s = {
            "steps": int(r["step"][-1]),
            "final_loss": float(r["loss"][-1]),
            "final_log_loss": float(r["log_loss"][-1]),
            "final_cosine": float(r["cosine"][-1]),
            "final_norm": float(r["norm"][-1]),
            "direction_fit": fit_direction_rate(r["step"], 1.0 - r["cosine"]),
            "loss_fit": fit_loss_rate(r["step"], r["loss"], limit, r["log_loss"] if limit == 0 else None),
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


def format_loss(loss: float, log_loss: float | None = None, digits: int = 4) -> str:
    """A loss for tables: fixed-point for ordinary values, scientific for tiny ones, and from ``log_loss``
    (natural log) when the loss is below float64's range, e.g. ``1.234e-1253``; never ``0.0000`` or ``-0``."""
    if loss is None or (isinstance(loss, float) and math.isnan(loss)):
        return "nan"
    if loss == 0 and log_loss is not None and math.isfinite(log_loss):
        x = log_loss / math.log(10)
        exp10 = math.floor(x)
        mant = 10 ** (x - exp10)
        if round(mant, digits - 1) >= 10:
            mant, exp10 = mant / 10, exp10 + 1
        return f"{mant:.{digits - 1}f}e{exp10}"
    if loss == 0:
        return "0"
    if 1e-3 <= abs(loss) < 1e4:
        return f"{loss:.{digits}f}"
    return f"{loss:.{digits - 1}e}"


def theory_attention_rate(eta: float, wkq_star_norm: float, max_len: int) -> float:
    """C1 = η / (4 L_max ‖W*_kq‖²) of Theorem 2."""
    if wkq_star_norm <= 0:
        return math.nan
    return eta / (4 * max_len * wkq_star_norm**2)


def local_loglog_slopes(t: np.ndarray, one_minus_cos: np.ndarray, t0: float, t1: float) -> dict:
    """Least-squares log-log slope of 1 − cos over steps t0 ≤ t ≤ t1, beside the slopes of the theory's
    shapes log²t/t (Theorem 1), log t/t (Proposition 1) and 1/t fitted the same way on the same steps.

    Rates such as O(log²t/t) are asymptotic: over early steps the measured slope is far shallower
    (−0.3 over t ≤ 900 on the Figure 2 data) than over a late decade (≈ −1), so judge them there.
    """
    t = np.asarray(t, dtype=float)
    y = np.asarray(one_minus_cos, dtype=float)
    keep = (t >= max(t0, 3)) & (t <= t1) & np.isfinite(y) & (y > _TINY)
    out: dict = {"t0": float(t0), "t1": float(t1), "n_points": int(keep.sum())}
    if keep.sum() < 3:
        out["note"] = "fewer than 3 steps with 1 − cos above floating-point zero"
        return out
    lt = np.log(t[keep])

    def slope(v: np.ndarray) -> float:
        return float(np.polyfit(lt, v, 1)[0])

    out["slope"] = slope(np.log(y[keep]))
    out["theory_log2_t_over_t"] = slope(2 * np.log(lt) - lt)
    out["theory_log_t_over_t"] = slope(np.log(lt) - lt)
    out["theory_1_over_t"] = -1.0
    return out
