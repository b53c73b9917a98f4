"""The verdict rules that judge nothing: ``unjudgeable`` (the inputs a claim needs are missing) and
``not_at_this_scale`` (the run cannot reach the claim's regime; listed apart from the counts). Both are always
inconclusive, with the reason.
"""

from __future__ import annotations

from ttlab.reproduce.verdict_base import INCONCLUSIVE, Judgement, register_rule


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
