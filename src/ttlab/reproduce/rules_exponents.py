"""Verdict rules on fitted exponents: an exponent against its prediction (``exponent_match``), the model-size
exponent judged only with a valid harness (``model_rate``), an exponent judged only where an oracle shows the design
can show it (``oracle_validated_exponent``) and estimates that agree across settings (``intervals_agree``); the fit
checks they share (:func:`fit_problem`, :func:`width_margin`).
"""

from __future__ import annotations

from ttlab.reproduce.verdict_base import (
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PARTLY,
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


def fit_problem(m: dict, th: dict, p: float) -> str | None:
    """Why a fitted exponent cannot be judged against the prediction ``p``, or None.

    Too few fitted points (``n_points`` < ``min_points``, default 2), runs stopped by the step cap
    (``n_capped``), or an interval (``lo``/``hi``, when either is given) missing or wider than the
    partly band (2 × ``partly_rel`` × |p|)."""
    if "n_points" in m and (finite_number(m["n_points"]) is None or m["n_points"] < th.get("min_points", 2)):
        return f"only {m['n_points']} fitted points (need ≥ {th.get('min_points', 2)})"
    if capped_count(m):
        return f"{capped_count(m)} fitted run(s) hit the step cap: the exponent is budget-limited"
    if "lo" in m or "hi" in m:
        bad = missing_inputs(m, "lo", "hi")
        if bad:
            return f"no interval for the fitted exponent ({bad[1]})"
        width = float(m["hi"]) - float(m["lo"])
        if width > 2 * th["partly_rel"] * abs(p):
            return (f"the interval [{short_number(m['lo'])}, {short_number(m['hi'])}] (width {short_number(width)}) is wider than the partly band "
                    f"±{100 * th['partly_rel']:.0f} % of {short_number(p)}: cannot discriminate")
    return None


def width_margin(m: dict, th: dict, p: float) -> float | None:
    """Relative distance of a fitted interval's width to the partly band 2 × partly_rel × |p| (None without one)."""
    lo, hi = finite_number(m.get("lo")), finite_number(m.get("hi"))
    if lo is None or hi is None:
        return None
    return rel_distance(hi - lo, 2 * th["partly_rel"] * abs(p))


def _describe_exponent(th: dict, q: str) -> str:
    s = (f"holds if |fitted − predicted| ≤ {100 * th['holds_rel']:.0f} % of the prediction ({q}), partly if ≤ "
         f"{100 * th['partly_rel']:.0f} %; inconclusive if the fitted exponent's interval is wider than the partly "
         f"band (2 × {100 * th['partly_rel']:.0f} % of the prediction)")
    if "min_points" in th:
        s += f", the fit has fewer than {th['min_points']} points, or any fitted run hit its step cap"
    if th.get("control"):
        s += ("; a holds or partly stands only if the fitted exponent's interval lies wholly outside the partly band "
              f"(±{100 * th['partly_rel']:.0f} %) of the prediction from the trivial control's ID (an untrained copy of "
              "the measuring network, embedded the same way) — if it does not, or the control was not measured, "
              "inconclusive: the agreement is no evidence")
    return s


@register_rule("exponent_match", (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE), _describe_exponent)
def _exponent_match(m: dict, th: dict, q: str) -> Judgement:
    """A fitted exponent (``fitted``, optional interval ``lo``/``hi``) against ``predicted``.

    Optional ``n_points`` (too few → inconclusive), ``n_capped`` (runs stopped by the step cap →
    inconclusive), ``band_lo``/``band_hi`` (the prediction's range over ID estimators, quoted in the reason).
    With threshold ``control``, a holds or partly needs the fitted interval to lie wholly outside the partly band of
    ``control_predicted`` (the prediction from a trivial control's ID).
    """
    found = _exponent(m, th)
    if not th.get("control") or found[0] not in (HOLDS, PARTLY):
        return found
    if finite_number(m.get("control_predicted")) is None:
        return INCONCLUSIVE, f"{found[1]}; but no trivial control was measured (an untrained copy's ID)", found[2]
    c, a = float(m["control_predicted"]), float(m["fitted"])
    lo_c, hi_c = sorted((c * (1 - th["partly_rel"]), c * (1 + th["partly_rel"])))
    lo, hi = finite_number(m.get("lo")), finite_number(m.get("hi"))
    lo, hi = (lo, hi) if lo is not None and hi is not None else (a, a)
    versus = (f"the untrained copy's ID predicts {short_number(c)}, partly band [{short_number(lo_c)}, "
              f"{short_number(hi_c)}]")
    if hi < lo_c or lo > hi_c:  # the fitted exponent and its whole interval miss the control's partly band
        return found[0], f"{found[1]}; {versus}: the fitted interval misses it", found[2]
    how = "holds the fitted exponent" if lo_c <= a <= hi_c else "overlaps the fitted interval"
    return INCONCLUSIVE, f"{found[1]}; but {versus}, which {how}: no evidence", found[2]


def _exponent(m: dict, th: dict) -> Judgement:
    """The exponent test of :func:`_exponent_match` on one prediction."""
    bad = missing_inputs(m, "fitted", "predicted")
    if bad:
        return bad
    a, p = float(m["fitted"]), float(m["predicted"])
    if p == 0:
        return INCONCLUSIVE, "the prediction is 0: no relative tolerance"
    rel = abs(a - p) / abs(p)
    band = ""
    if finite_number(m.get("band_lo")) is not None and finite_number(m.get("band_hi")) is not None:
        inside = m["band_lo"] <= a <= m["band_hi"]
        band = (f"; {'inside' if inside else 'outside'} the ID estimators' prediction band "
                f"[{short_number(m['band_lo'])}, {short_number(m['band_hi'])}]")
    if finite_number(th.get("paper_abs")) is not None:
        band += f"; {'within' if abs(a - p) <= th['paper_abs'] else 'outside'} the paper's ±{short_number(th['paper_abs'])}"
    margin = closest(rel_distance(rel, th["holds_rel"]), rel_distance(rel, th["partly_rel"]), width_margin(m, th, p))
    problem = fit_problem(m, th, p)
    if problem:
        return INCONCLUSIVE, problem + band, margin
    delta = f"fitted {short_number(a)} vs predicted {short_number(p)}: Δ = {a - p:+.3g} ({100 * rel:.0f} %)"
    if rel <= th["holds_rel"]:
        return HOLDS, delta + band, margin
    if rel <= th["partly_rel"]:
        return PARTLY, delta + band, margin
    return NOT_REPRODUCED, delta + band, margin


# ---------------------------------------------------------------------------------------------
# model-size exponent (Theorem 2 of paper B), judged only with a valid harness


def _describe_model_rate(th: dict, q: str) -> str:
    f = short_number(th["fraction"])
    return (f"inconclusive unless the positive control (a ReLU MLP) reaches ≥ {f} × its known rate in the same design "
            "(the harness does not reach the known rate) and a width passes the data check (its MSE falls by at most "
            "10 % with twice the samples; wider widths that fail are left out of the fit); then holds if the deciding "
            f"interval's lower end ≥ {f} × {q} and the untrained networks' interval lies wholly below it (a trivial "
            f"model must fail the claim); not reproduced if its upper end < {f} × {q}; inconclusive otherwise (the "
            "interval straddles the threshold, or fewer than 3 widths were fitted)")


@register_rule("model_rate", (HOLDS, NOT_REPRODUCED, INCONCLUSIVE), _describe_model_rate)
def _model_rate(m: dict, th: dict, q: str) -> Judgement:
    """``fitted``/``lo``/``hi`` (α̂_N and its deciding interval) against ``fraction`` × ``predicted``; ``control``
    (the positive control's α̂_N) against ``fraction`` × ``control_rate``; ``untrained_hi`` (the untrained
    networks' upper end) must lie below the threshold."""
    bad = missing_inputs(m, "predicted", "control_rate")
    if bad:
        return bad
    frac = float(th["fraction"])
    need, c_need = frac * float(m["predicted"]), frac * float(m["control_rate"])
    c = finite_number(m.get("control"))
    if c is None:
        return INCONCLUSIVE, "the positive control has no fit: the harness is not validated"
    if finite_number(m.get("control_data_ok")) == 0:
        return INCONCLUSIVE, ("the positive control is optimisation- or data-limited (no width passes the data check): "
                              "the harness is not validated")
    if c < c_need:
        return (INCONCLUSIVE, f"the harness does not reach the known rate: the control's α̂_N {short_number(c)} < "
                              f"{short_number(c_need)}", rel_distance(c, c_need))
    ok = finite_number(m.get("data_ok"))
    if ok is None or ok < 1:
        cmd = m.get("command")
        return INCONCLUSIVE, ("optimisation- or data-limited: no width passes the data check (its MSE still falls by "
                              "more than 10 % with twice the samples); a longer training budget would decide"
                              + (f" ({cmd})" if cmd else "")
                              if ok is not None else "the data check did not run: approximation-limited is not shown")
    bad = missing_inputs(m, "fitted", "lo", "hi")
    if bad:
        return INCONCLUSIVE, bad[1] + " (fewer than 3 widths fitted?)"
    a, lo, hi = float(m["fitted"]), float(m["lo"]), float(m["hi"])
    margin = closest(rel_distance(lo, need), rel_distance(hi, need))
    iv = f"α̂_N = {short_number(a)} [{short_number(lo)}, {short_number(hi)}]"
    if hi < need:
        return NOT_REPRODUCED, f"{iv}: upper end < {short_number(need)} = {short_number(frac)} × {q}", margin
    if lo < need:
        return INCONCLUSIVE, f"{iv} straddles {short_number(need)}: more seeds or widths would decide", margin
    u = finite_number(m.get("untrained_hi"))
    if u is None or u >= need:
        return (INCONCLUSIVE, f"{iv} ≥ {short_number(need)}, but the untrained networks' interval reaches "
                              f"{short_number(u) if u is not None else '(missing)'}: a trivial model is not excluded", margin)
    return HOLDS, f"{iv}: lower end ≥ {short_number(need)} = {short_number(frac)} × {q}; untrained ≤ {short_number(u)}", margin


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


# ---------------------------------------------------------------------------------------------
# estimates that agree across settings


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
    capped = budget_limited(m)
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
