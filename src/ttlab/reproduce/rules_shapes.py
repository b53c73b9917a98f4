"""Verdict rules on shapes and comparisons: monotone profiles and inner peaks with standard errors, the attention
bound, agreeing intervals, exponents validated by an oracle, a value beyond its control, and unjudgeable claims.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from ttlab.reproduce.rules_exponents import fit_problem, width_margin
from ttlab.reproduce.verdict_base import (
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PARTLY,
    SHAPE_SE_MULT,
    Judgement,
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


def _capped(m: dict) -> Judgement | None:
    """Inconclusive when ``measured['n_capped']`` > 0: values fitted on step-capped runs are budget-limited."""
    n = capped_count(m)
    if n:
        return INCONCLUSIVE, f"{n} of the compared values come from fits that include step-capped runs: budget-limited"
    return None


@register_rule("monotone", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_monotone)
def _monotone(m: dict, th: dict, q: str) -> Judgement:
    """``values`` (ordered) with standard errors ``se`` move in ``direction`` (+1 up, −1 down); inconclusive
    when ``n_capped`` of them come from step-capped fits."""
    vals, se, bad = _profile(m, 2, "a change", th.get("need_se", True))
    bad = bad or _capped(m)
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


def _describe_attention(th: dict, q: str) -> str:
    clear = th.get("min_clearance", 0.0)
    return ("not reproduced if the final minimum attention on optimal tokens is below the theorem's bound "
            "1/(1 + L_max·exp(−C1 t)); inconclusive if the bound does not clear the uniform-attention baseline of the "
            f"same sentences (the control: W_kq = 0, no training) by at least {short_number(clear)} (a bound that uniform "
            "attention nearly meets says nothing); otherwise holds if the attention gap decays at a fitted rate ≥ C1, "
            "partly if not")


@register_rule("attention_bound", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_attention)
def _attention_bound(m: dict, th: dict, q: str) -> Judgement:
    """Theorem 2's attention bound judged against the uniform-attention baseline (the control): the bound must
    exceed it by ``min_clearance`` (default 0) for meeting the bound to say anything."""
    bad = missing_inputs(m, "attention", "bound", "baseline")
    if bad:
        return bad
    att, bound, base = float(m["attention"]), float(m["bound"]), float(m["baseline"])
    clear = float(th.get("min_clearance", 0.0))
    rate, c1 = finite_number(m.get("gap_rate")), finite_number(m.get("c1"))
    margin = closest(rel_distance(att, bound), rel_distance(bound - base, clear), rel_distance(rate, c1))
    if att < bound:
        return NOT_REPRODUCED, f"attention {att:.4f} < bound {bound:.4f}", margin
    if bound - base < clear or bound <= base:
        return INCONCLUSIVE, (f"bound {bound:.4f} clears the uniform-attention baseline {base:.4f} by "
                              f"{bound - base:+.4f} < {short_number(clear)}: uniform attention (no training) nearly meets it, so "
                              f"meeting it says nothing (attention {att:.4f})"), margin
    if rate is not None and c1 is not None and rate >= c1:
        return HOLDS, (f"attention {att:.4f} ≥ bound {bound:.4f}, which clears the uniform baseline {base:.4f} by "
                       f"{bound - base:.4f} ≥ {short_number(clear)}; gap rate {short_number(rate)} ≥ C1 {short_number(c1)}"), margin
    return PARTLY, (f"attention {att:.4f} ≥ bound {bound:.4f} (baseline {base:.4f} + {bound - base:.4f}), but gap rate "
                    f"{'—' if rate is None else short_number(rate)} < C1 {'—' if c1 is None else short_number(c1)}"), margin


def _describe_agree(th: dict, q: str) -> str:
    return (f"holds if the 95 % intervals of {q} overlap and the point estimates lie within {short_number(th['max_spread'])}; "
            "partly if only one of the two holds; not reproduced if neither; inconclusive with fewer than 2 intervals "
            f"or when overlapping intervals include one wider than the tolerance {short_number(th['max_spread'])} (overlap of "
            "wide intervals cannot show agreement within the tolerance)")


@register_rule("intervals_agree", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_agree)
def _intervals_agree(m: dict, th: dict, q: str) -> Judgement:
    """Estimates ``values`` with intervals ``intervals`` ([lo, hi] each) agree across settings; inconclusive
    when ``n_capped`` of them come from step-capped fits."""
    vals = [finite_number(v) for v in m.get("values") or []]
    ivs = [iv for iv in (m.get("intervals") or []) if iv and finite_number(iv[0]) is not None and finite_number(iv[1]) is not None]
    if len(ivs) < 2 or len(vals) != len(ivs) or any(v is None for v in vals):
        return INCONCLUSIVE, f"{len(ivs)} usable interval(s): need ≥ 2"
    capped = _capped(m)
    if capped:
        return capped
    overlap = max(iv[0] for iv in ivs) <= min(iv[1] for iv in ivs)
    spread = max(vals) - min(vals)  # type: ignore[type-var,operator]
    tol = float(th["max_spread"])
    close = spread <= tol
    width = max(float(iv[1]) - float(iv[0]) for iv in ivs)
    margin = closest(rel_distance(spread, tol), rel_distance(width, tol))
    desc = f"spread {spread:.3g}, intervals {'overlap' if overlap else 'do not overlap'}"
    if width > tol and overlap:  # disjoint intervals still show a difference, however wide
        return INCONCLUSIVE, (f"{desc}, but the widest interval ({width:.3g}) is wider than the tolerance {short_number(tol)}: "
                              "their overlap cannot show agreement within the tolerance"), margin
    if overlap and close:
        return HOLDS, desc, margin
    if overlap or close:
        return PARTLY, desc, margin
    return NOT_REPRODUCED, desc, margin


@register_rule("unjudgeable", (INCONCLUSIVE,),
       lambda th, q: "inconclusive: the numbers this claim needs are not available (the reason says why)")
def _unjudgeable(m: dict, th: dict, q: str) -> Judgement:
    """A claim whose inputs are missing (a sub-experiment did not run, stored numbers of an older schema)."""
    return INCONCLUSIVE, str(m.get("why") or "inputs missing")


@register_rule("not_at_this_scale", (INCONCLUSIVE,),
       lambda th, q: "not judged at this scale: the run cannot reach the regime the claim is about (the reason says "
                     "what it needs and the command that would judge it); listed apart from the paper claims' counts")
def _not_at_this_scale(m: dict, th: dict, q: str) -> Judgement:
    """A paper claim this machine's run cannot reach (e.g. text α_N below Kaplan's data-rich regime)."""
    cmd = m.get("command")
    return INCONCLUSIVE, "not judged at this scale: " + str(m.get("why") or "needs a larger run") + (
        f"; judge it with: {cmd}" if cmd else "")


# ---------------------------------------------------------------------------------------------
# exponents judged only where an oracle shows the design can show them


ORACLE_DECIDER = ("; what would decide it: sizes (or a target function) over which the oracle's slope comes within the "
                  "tolerance of the theory's")
"""Appended to an inconclusive oracle verdict: the design, not the network, is what has to change."""


def _describe_oracle(th: dict, q: str) -> str:
    tol = short_number(th["oracle_tol"])
    if th.get("bound"):
        return (f"bound form (noiseless regime): inconclusive if the oracle's slope is below the theory's exponent ({q}) "
                f"by more than {tol} (the design cannot show the bound); otherwise holds if the fitted exponent ≥ "
                f"(1 − {100 * th['holds_rel']:.0f} %) × theory, partly if ≥ (1 − {100 * th['partly_rel']:.0f} %) × theory, "
                f"not reproduced below; inconclusive if its interval is wider than 2 × {100 * th['partly_rel']:.0f} % of "
                f"the theory, the fit has fewer than {th.get('min_points', 2)} points or a fitted run hit its step cap"
                + _data_clause(th))
    return (f"inconclusive unless the oracle's slope lies within ±{tol} of the theory's exponent ({q}) — design not in "
            f"the asymptotic regime; then holds if |fitted − theory| ≤ {100 * th['holds_rel']:.0f} % of the theory, "
            f"partly if ≤ {100 * th['partly_rel']:.0f} %, not reproduced beyond; inconclusive if the fitted interval is "
            f"wider than 2 × {100 * th['partly_rel']:.0f} % of the theory, the fit has fewer than "
            f"{th.get('min_points', 2)} points or a fitted run hit its step cap" + _data_clause(th))


def _data_clause(th: dict) -> str:
    if "max_data_change" not in th:
        return ""
    return (f"; inconclusive if the widest model is data-limited (its loss at 2n differs from that at n by more than "
            f"{100 * th['max_data_change']:.0f} %)")


def _oracle_margin(m: dict, th: dict) -> float | None:
    """Margin of :func:`_oracle_validated_exponent`: the oracle's miss against its tolerance, the fitted exponent's
    relative error against the holds/partly bands, the interval's width against the partly band and the data check."""
    p, o = finite_number(m.get("predicted")), finite_number(m.get("oracle"))
    if p is None or o is None or p <= 0:
        return None
    bound = bool(th.get("bound"))
    a = finite_number(m.get("fitted"))
    rel = None if a is None else ((p - a) / p if bound else abs(a - p) / p)
    ratio = finite_number(m.get("data_ratio"))
    return closest(rel_distance(p - o if bound else abs(o - p), th["oracle_tol"]),
                   rel_distance(rel, th["holds_rel"]), rel_distance(rel, th["partly_rel"]), width_margin(m, th, p),
                   rel_distance(abs(ratio - 1.0), th["max_data_change"]) if ratio is not None and "max_data_change" in th
                   else None)


@register_rule("oracle_validated_exponent", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_oracle)
def _oracle_validated_exponent(m: dict, th: dict, q: str) -> Judgement:
    """See :func:`_oracle_core` (the verdict) and :func:`_oracle_margin` (its distance to the thresholds)."""
    verdict, reason = _oracle_core(m, th)
    return verdict, reason, _oracle_margin(m, th)


def _oracle_core(m: dict, th: dict) -> tuple[str, str]:
    """A network's fitted exponent judged only where an estimator of known rate (the oracle) shows the design
    can exhibit the theory's exponent.

    ``measured``: ``fitted`` (with ``lo``/``hi``), ``predicted``, ``oracle`` (the oracle's fitted slope on the
    same splits), optional ``n_points``, ``n_capped`` and ``data_ratio``. ``thresholds``: ``oracle_tol``
    (absolute), ``holds_rel``/``partly_rel`` (relative to the prediction), ``bound`` (1: the claim is the
    bound fitted ≥ predicted — the noiseless regime, where the minimax rate is faster), ``min_points``,
    and for a model-size exponent ``max_data_change``: inconclusive unless the widest model's loss at 2n
    is within this relative change of its loss at n (``data_ratio``), i.e. the sweep is not data-limited.
    """
    bad = missing_inputs(m, "predicted", "oracle")
    if bad:
        return INCONCLUSIVE, f"no oracle check of the design ({bad[1]})"
    p, o, tol = float(m["predicted"]), float(m["oracle"]), float(th["oracle_tol"])
    if p <= 0:
        return INCONCLUSIVE, "the prediction is not positive: no relative tolerance"
    bound = bool(th.get("bound"))
    miss = o - p
    if bound and miss < -tol:
        return INCONCLUSIVE, (f"design not in the asymptotic regime: the oracle's slope {short_number(o)} is shallower than the "
                              f"bound {short_number(p)} by {-miss:.3g} > {short_number(tol)}" + ORACLE_DECIDER)
    if not bound and abs(miss) > tol:
        way = "steeper" if miss > 0 else "shallower"
        return INCONCLUSIVE, (f"design not in the asymptotic regime: the oracle's slope {short_number(o)} is {way} than the "
                              f"theory's {short_number(p)} by {abs(miss):.3g} > {short_number(tol)}" + ORACLE_DECIDER)
    design = f"oracle {short_number(o)} within {short_number(tol)} of {short_number(p)}" if not bound else f"oracle {short_number(o)} ≥ {short_number(p)} − {short_number(tol)}"
    if "max_data_change" in th:  # a model-size sweep: the widest model must not be data-limited
        ratio = finite_number(m.get("data_ratio"))
        if ratio is None:
            return INCONCLUSIVE, f"{design}, but no data-limit check (loss of the widest model at n and 2n)"
        if abs(ratio - 1.0) > th["max_data_change"]:
            return INCONCLUSIVE, (f"{design}, but the widest model is data-limited: its loss at 2n is {ratio:.3g} × "
                                  f"that at n (more than ±{100 * th['max_data_change']:.0f} %)")
        design += f"; widest model not data-limited (loss at 2n / n = {ratio:.3g})"
    bad = missing_inputs(m, "fitted")
    if bad:
        return INCONCLUSIVE, f"{design}, but {bad[1]}"
    a = float(m["fitted"])
    problem = fit_problem(m, th, p)
    if problem:
        return INCONCLUSIVE, f"{design}, but {problem}"
    rel = (a - p) / p
    delta = f"fitted {short_number(a)} vs {short_number(p)}: Δ = {a - p:+.3g} ({100 * rel:+.0f} %); {design}"
    if bound:
        if rel >= -th["holds_rel"]:
            return HOLDS, delta + " (the bound holds)"
        if rel >= -th["partly_rel"]:
            return PARTLY, delta + " (below the bound within the partly band)"
        return NOT_REPRODUCED, delta + " (below the bound)"
    if abs(rel) <= th["holds_rel"]:
        return HOLDS, delta
    if abs(rel) <= th["partly_rel"]:
        return PARTLY, delta
    return NOT_REPRODUCED, delta


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
