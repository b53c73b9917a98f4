"""The vocabulary of verdicts: the four verdicts, the claim kinds, the rule registry (:data:`RULES`,
:func:`register_rule`) and the number helpers every rule shares (margins: :func:`rel_distance`, :func:`closest`).

The rules themselves live in :mod:`ttlab.reproduce.rules_thresholds`, :mod:`ttlab.reproduce.rules_rates`,
:mod:`ttlab.reproduce.rules_exponents`, :mod:`ttlab.reproduce.rules_shapes` and :mod:`ttlab.reproduce.rules_unjudged`;
claim records in :mod:`ttlab.reproduce.verdicts`, whose docstring describes all of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE = "holds", "partly", "not reproduced", "inconclusive"
VERDICTS = (HOLDS, PARTLY, NOT_REPRODUCED, INCONCLUSIVE)
PAPER_CLAIM, CHECK, ABLATION = "paper", "check", "ablation"
KINDS = (PAPER_CLAIM, CHECK, ABLATION)
"""What a claim is: a statement of the paper, a check of our own tools or run, or an ablation beyond the paper."""

Judgement = tuple  # (verdict, reason) or (verdict, reason, margin)
"""(verdict, reason[, margin]): ``margin`` is the relative distance of the deciding number to the nearest
threshold it was compared with (see :func:`closest`); a rule returning two items has no margin."""

NEAR = 0.10
"""A verdict whose margin is below this (within 10 % of a threshold) is flagged ``near_threshold``."""

SHAPE_SE_MULT = 2.0
"""Shape and trend rules (``monotone``, ``inner_peak``, the profile form of ``exceeds_control``) decide "holds" or
"not reproduced" only beyond this many combined standard errors: on pure noise a 1-SE rule decides about a third
of the time, a 2-SE rule ≤ 5 % (tests/reproduce/test_shape_noise.py measures it)."""


@dataclass(frozen=True)
class Rule:
    """A named verdict rule: ``judge(measured, thresholds, quantity) -> (verdict, reason[, margin])`` and
    ``describe(thresholds, quantity) -> text``; ``outcomes`` lists every verdict it can give."""

    name: str
    outcomes: tuple[str, ...]
    judge: Callable[[dict, dict, str], Judgement]
    describe: Callable[[dict, str], str]


RULES: dict[str, Rule] = {}


def register_rule(name: str, outcomes: Sequence[str], describe: Callable[[dict, str], str]):
    def deco(fn: Callable[[dict, dict, str], Judgement]) -> Callable[[dict, dict, str], Judgement]:
        RULES[name] = Rule(name=name, outcomes=tuple(outcomes), judge=fn, describe=describe)
        return fn

    return deco


def finite_number(x: Any) -> float | None:
    """A finite float, or None (missing, NaN, inf, not a number)."""
    if isinstance(x, bool) or x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def missing_inputs(measured: dict, *names: str) -> Judgement | None:
    gone = [n for n in names if finite_number(measured.get(n)) is None]
    if gone:
        return INCONCLUSIVE, f"missing or non-finite input: {', '.join(gone)}"
    return None


def capped_count(measured: dict) -> int:
    """``measured['n_capped']`` — how many of the judged runs or fits stopped at their step cap — as an int
    (0 when absent or not a positive finite number)."""
    n = finite_number(measured.get("n_capped"))
    return math.ceil(n) if n is not None and n > 0 else 0  # any positive count decides, as before


def budget_limited(m: dict) -> Judgement | None:
    """Inconclusive when ``measured['n_capped']`` > 0: values fitted on step-capped runs are budget-limited."""
    n = capped_count(m)
    if n:
        return INCONCLUSIVE, f"{n} of the compared values come from fits that include step-capped runs: budget-limited"
    return None


def short_number(x: float) -> str:
    return f"{x:.4g}"


def rel_distance(x: Any, t: Any, complement: bool = False) -> float | None:
    """Relative distance |x − t| / |t| of a deciding number ``x`` to a threshold ``t`` (None when either is
    not finite or ``t`` is 0: a comparison with 0 — a sign, "every case" — has no relative scale).

    ``complement``: measure on 1 − x against 1 − t (cosines, R², fractions near 1: a cosine of 0.9995 is
    half-way between the thresholds 0.999 and 1, not 0.05 % from 0.999)."""
    x, t = finite_number(x), finite_number(t)
    if x is None or t is None:
        return None
    if complement:
        x, t = 1.0 - x, 1.0 - t
    if t == 0:
        return None
    return abs(x - t) / abs(t)


def closest(*distances: float | None) -> float | None:
    """The margin of a verdict: the smallest of the relative distances given (None entries are skipped;
    None when there is none)."""
    ds = [d for d in distances if d is not None and math.isfinite(d)]
    return min(ds) if ds else None


def too_few_points(measured: dict, thresholds: dict) -> Judgement | None:
    """Inconclusive when ``measured['n']`` (how many items the value summarises) < ``thresholds['min_n']``."""
    if "n" not in measured:
        return None
    n, need = measured.get("n"), thresholds.get("min_n", 1)
    if finite_number(n) is None or n < need:
        return INCONCLUSIVE, f"only {n} item(s) to judge (need ≥ {need})"
    return None
