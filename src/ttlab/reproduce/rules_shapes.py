"""Verdict rules on the shape of a profile, judged with standard errors: monotone (``monotone``), an inner peak
(``inner_peak``), and a value or a profile's change beyond a trivial control measured in the same run
(``exceeds_control``).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from ttlab.reproduce.verdict_base import (
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PARTLY,
    SHAPE_SE_MULT,
    Judgement,
    budget_limited,
    capped_count,
    closest,
    finite_number,
    missing_inputs,
    register_rule,
    rel_distance,
    short_number,
)

# ---------------------------------------------------------------------------------------------
# shapes of profiles


def _se_list(m: dict, n: int) -> list[float] | None:
    se = m.get("se")
    if se is None:
        return None
    vals = [finite_number(x) for x in se]
    if len(vals) != n or any(v is None for v in vals):
        return None
    return [float(v) for v in vals]  # type: ignore[arg-type]


def _profile(m: dict, need: int, shape: str, need_se: bool = True
             ) -> tuple[list[float], list[float] | None, Judgement | None]:
    """``values`` as floats and their standard errors ``se`` (None when absent or incomplete), or an
    inconclusive judgement when fewer than ``need`` finite values are given, or when ``need_se`` and
    there are no standard errors (a ``shape`` such as "a peak" cannot be told from noise)."""
    raw = [finite_number(v) for v in m.get("values") or []]
    if len(raw) < need or any(v is None for v in raw):
        return [], None, (INCONCLUSIVE, f"{len(raw)} value(s), some missing: need ≥ {need} finite values")
    vals = [float(v) for v in raw]  # type: ignore[arg-type]
    se = _se_list(m, len(vals))
    if se is None and need_se:
        return vals, None, (INCONCLUSIVE, f"no standard errors for the values (e.g. a single ID batch): cannot tell "
                                          f"{shape} from noise")
    return vals, se, None


def _describe_monotone(th: dict, q: str) -> str:
    way = "rises" if th["direction"] > 0 else "falls"
    k = th.get("se_mult", SHAPE_SE_MULT)
    se, its, within = ("their combined standard error", "its standard error", "the standard error") if k == 1 else (
        f"{k:g} × their combined standard error", f"{k:g} × its standard error", f"{k:g} × the standard error")
    return (f"holds if {q} {way} from the first to the last value by more than {se} and no "
            f"step goes clearly (beyond {its}) the other way; partly if it does so overall but some step "
            "goes clearly the other way; not reproduced if it moves clearly the other way overall; inconclusive if the "
            f"overall change is within {within} (or there are fewer than 2 values or no standard errors)")


@register_rule("monotone", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_monotone)
def _monotone(m: dict, th: dict, q: str) -> Judgement:
    """``values`` (ordered) with standard errors ``se`` move in ``direction`` (+1 up, −1 down); inconclusive
    when ``n_capped`` of them come from step-capped fits."""
    vals, se, bad = _profile(m, 2, "a change", th.get("need_se", True))
    bad = bad or budget_limited(m)
    if bad:
        return bad
    k = float(th.get("se_mult", SHAPE_SE_MULT))  # decide beyond k combined standard errors
    se = [k * x for x in se] if se else [0.0] * len(vals)
    sgn = 1.0 if th["direction"] > 0 else -1.0
    v = [sgn * x for x in vals]  # type: ignore[operator]
    overall, s_all = v[-1] - v[0], math.hypot(se[0], se[-1])
    lab = "SE" if k == 1 else f"{k:g}·SE"
    listing = ", ".join(f"{x:.3g}" for x in vals)  # type: ignore[union-attr]
    margin = closest(rel_distance(abs(overall), s_all))  # the overall change against its standard error
    if overall < -s_all:
        return NOT_REPRODUCED, f"{listing}: moves the other way overall ({abs(overall):.3g} > {lab} {s_all:.2g})", margin
    if overall <= s_all:
        return INCONCLUSIVE, f"{listing}: overall change {overall * sgn:+.3g} within {lab} {s_all:.2g}", margin
    against = [i for i in range(len(v) - 1) if v[i + 1] - v[i] < -math.hypot(se[i], se[i + 1])]
    if against:
        return (PARTLY, f"{listing}: overall change {overall * sgn:+.3g} ({lab} {s_all:.2g}) but {len(against)} step(s) go "
                        "the other way", margin)
    return HOLDS, f"{listing}: overall change {overall * sgn:+.3g} ({lab} {s_all:.2g}), no step clearly against", margin


def peak_se_mult(n_values: int) -> float:
    """Standard errors an inner peak must clear: :data:`SHAPE_SE_MULT`, raised for the number of comparisons that can
    decide (Bonferroni over 2·(n − 1) one-sided tests at 5 % in all: each of the n − 2 inner values above each end —
    holds, partly — and each end above the inner maximum — not reproduced), so that on pure noise the rule decides at
    most 5 % of the time whatever the number of layers."""
    comparisons = max(1, 2 * (n_values - 1))
    return max(SHAPE_SE_MULT, NormalDist().inv_cdf(1.0 - PEAK_FALSE_RATE / comparisons))


PEAK_FALSE_RATE = 0.05
"""The largest rate at which :func:`_inner_peak` may decide on a profile of pure noise."""


def _describe_peak(th: dict, q: str) -> str:
    k = (f"k = {th['se_mult']:g}" if "se_mult" in th else
         f"k = max({SHAPE_SE_MULT:g}, the Bonferroni z of 2·(n − 1) one-sided comparisons at {100 * PEAK_FALSE_RATE:.0f} % "
         f"in all: {peak_se_mult(3):.2f} for 3 values, {peak_se_mult(19):.2f} for 19)")
    control = ("; a holds or partly stands only if the trivial control measured the same way (untrained copies) does "
               "not peak by the same test — if it does, or was not measured, inconclusive: the peak is no evidence"
               if th.get("control") else "")
    return (f"with {k}: holds if an inner {q} exceeds both the first and the last by more than k × their combined "
            "standard error; partly if it clearly exceeds one end and ties the other (within k × the standard error); "
            "not reproduced if an end clearly exceeds every inner value; inconclusive otherwise (ties at both ends, "
            f"fewer than 3 values, no standard errors){control}")


@register_rule("inner_peak", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_peak)
def _inner_peak(m: dict, th: dict, q: str) -> Judgement:
    """``values`` (e.g. ID per layer) with standard errors ``se`` peak strictly inside, beyond ``se_mult`` combined
    standard errors (default :func:`peak_se_mult` of the number of values). With threshold ``control``, a holds or
    partly needs ``control_values``/``control_se`` (a trivial control's profile) that do not peak by the same test."""
    found = _peak(m, th, q)
    if not th.get("control") or found[0] not in (HOLDS, PARTLY):
        return found
    cm = {"values": m.get("control_values"), "se": m.get("control_se")}
    bad = _profile(cm, 3, "a peak")[2]
    if bad:
        return INCONCLUSIVE, f"{found[1]}; but no usable control ({bad[1]})", found[2]
    control = _peak(cm, th, q)
    if control[0] in (HOLDS, PARTLY):
        return INCONCLUSIVE, f"{found[1]}; but the untrained control peaks too ({control[1]}): no evidence", found[2]
    return found[0], f"{found[1]}; the untrained control does not peak ({control[1]})", found[2]


def _peak(m: dict, th: dict, q: str) -> Judgement:
    """The inner-peak test of :func:`_inner_peak` on one profile."""
    vals, se, bad = _profile(m, 3, "a peak")
    if bad:
        return bad
    assert se is not None  # _profile judges a profile without standard errors inconclusive
    inner = max(range(1, len(vals) - 1), key=lambda i: vals[i])  # type: ignore[arg-type,return-value]
    pk = float(vals[inner])  # type: ignore[arg-type]
    k = float(th["se_mult"]) if "se_mult" in th else peak_se_mult(len(vals))

    def side(j: int) -> str:
        d, s = pk - float(vals[j]), k * math.hypot(se[inner], se[j])  # type: ignore[arg-type]
        return "above" if d > s else ("below" if d < -s else "tie")

    def dist(j: int) -> float | None:
        return rel_distance(abs(pk - float(vals[j])), k * math.hypot(se[inner], se[j]))  # type: ignore[arg-type]

    margin = closest(dist(0), dist(len(vals) - 1))
    a, b = side(0), side(len(vals) - 1)
    desc = f"inner maximum {pk:.3g} at position {inner} vs ends {vals[0]:.3g}, {vals[-1]:.3g}"
    desc += f" ({k:.3g} × combined SE to decide)"
    if a == b == "above":
        return HOLDS, desc + ": above both ends beyond that", margin
    if "below" in (a, b):
        return NOT_REPRODUCED, desc + ": an end is clearly above every inner value", margin
    if "above" in (a, b):
        return PARTLY, desc + ": clearly above one end, tied with the other", margin
    return INCONCLUSIVE, desc + ": within that of both ends", margin


def _describe_exceeds(th: dict, q: str) -> str:
    z, tail = short_number(th.get("z", 1.0)), "inconclusive too when inputs are missing or a fitted run hit its step cap"
    if "direction" in th:  # a profile against the same profile of a trivial control
        return (f"judged as the monotone rule first ({q} {'rises' if th['direction'] > 0 else 'falls'}, beyond "
                f"{short_number(th.get('se_mult', SHAPE_SE_MULT))} × the combined standard error); then it "
                f"holds (or stays partly) only if its overall change, first to last value, exceeds the control's "
                f"(untrained copies measured the same way) by more than {z} × their combined standard error, "
                f"otherwise inconclusive: the control meets it; {tail}")
    return (f"holds if {q} exceeds the control by more than {z} × their combined standard error (a 95 % interval "
            f"gives the value's), not reproduced if it lies that far below, inconclusive in between; {tail}, or the "
            f"fit has fewer than {th.get('min_points', 2)} points")


def _se_of(m: dict, key: str) -> float | None:
    """Standard error of ``m[key]``: ``m[key + '_se']``, else from a 95 % interval ``lo``/``hi`` (value only)."""
    se = finite_number(m.get(f"{key}_se"))
    if se is not None:
        return se
    lo, hi = finite_number(m.get("lo")), finite_number(m.get("hi"))
    return (hi - lo) / (2 * 1.959964) if key == "value" and lo is not None and hi is not None else None


@register_rule("exceeds_control", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_exceeds)
def _exceeds_control(m: dict, th: dict, q: str) -> tuple:
    """A measurement judged against a trivial control measured in the same run.

    Profile form: ``values``/``se`` (ordered, e.g. the ID by model size) and ``control_values``/``control_se``
    (the same for untrained copies); ``direction`` ±1. Single-value form: ``value`` with ``value_se`` or
    ``lo``/``hi``, against ``control`` (± ``control_se``; e.g. a prediction the paper says under-estimates the
    value). Optional ``n_capped`` and ``n_points`` (threshold ``min_points``); threshold ``z`` (default 1)."""
    z = float(th.get("z", 1.0))
    if capped_count(m):
        return INCONCLUSIVE, f"{capped_count(m)} fitted run(s) hit the step cap: the measurement is budget-limited"
    if "n_points" in m and (finite_number(m["n_points"]) is None or m["n_points"] < th.get("min_points", 2)):
        return INCONCLUSIVE, f"only {m['n_points']} fitted points (need ≥ {th.get('min_points', 2)})"
    profile_margin = None
    if "values" in m:
        trend = _monotone(m, {"direction": th["direction"], "se_mult": th.get("se_mult", SHAPE_SE_MULT)}, q)
        verdict, reason = trend[0], trend[1]
        profile_margin = trend[2] if len(trend) > 2 else None
        if verdict in (NOT_REPRODUCED, INCONCLUSIVE):
            return verdict, reason, profile_margin
        vals, se, _ = _profile(m, 2, "a change")
        cvals, cse, bad = _profile({"values": m.get("control_values"), "se": m.get("control_se")}, 2, "a change")
        if bad:
            return INCONCLUSIVE, f"{reason}; but no usable control ({bad[1]})"
        sgn = 1.0 if th["direction"] > 0 else -1.0
        value, value_se = sgn * (vals[-1] - vals[0]), math.hypot(se[0], se[-1])  # type: ignore[index]
        control, control_se = sgn * (cvals[-1] - cvals[0]), math.hypot(cse[0], cse[-1])  # type: ignore[index]
        what = "change"
    else:
        bad = missing_inputs(m, "value", "control")
        if bad:
            return bad
        value, control = float(m["value"]), float(m["control"])
        given_se, control_se = _se_of(m, "value"), _se_of(m, "control") or 0.0
        if given_se is None:
            return INCONCLUSIVE, "no standard error or interval for the value: cannot tell it from the control"
        value_se = given_se
        verdict, reason, what = HOLDS, f"{short_number(value)} (SE {short_number(value_se)})", "value"
    diff, s = value - control, z * math.hypot(value_se, control_se)
    versus = (f"{'it' if what == 'value' else 'the change'} {short_number(value)} vs the control's {short_number(control)} (SE "
              f"{short_number(control_se)}): difference {diff:+.3g}, {z:g} × combined SE {s:.2g}")
    # margin: the difference's relative distance to the nearer threshold (±s for a value, +s for a profile,
    # whose own margin counts too)
    edge = abs(abs(diff) - s) if what == "value" else abs(diff - s)
    margins = [x for x in (profile_margin, edge / s if s > 0 else None) if x is not None]
    margin = min(margins) if margins else None
    if diff > s:
        return verdict, f"{reason}; {versus}: beyond the control", margin
    if diff < -s and what == "value":
        return NOT_REPRODUCED, f"{versus}: clearly below the control", margin
    return INCONCLUSIVE, f"{reason}; {versus}: the control meets it, so it is no evidence", margin
