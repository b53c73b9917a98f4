"""Each paper's bottom line, first in the ``ttlab reproduce`` report (:func:`bottom_line_blocks`): what was judged,
what held, what this run's mode cannot judge and which mode does, and where the paper's central claim is judged.

Every sentence is computed from the results dict it describes, with the headline's own functions:
:func:`~ttlab.reproduce.statements.statement_headline` on the paper's claims (what was judged),
:func:`~ttlab.reproduce.statements.group_statements` (what held), :func:`~ttlab.reproduce.verdicts.mode_that_judges`
(the mode a claim's record names as the one that judges it), :func:`~ttlab.reproduce.verdicts.not_at_scale` (claims no
mode of this machine reaches, with the command their records give), the parts' records (parts that judged nothing in
this mode quote their own note; parts not in the report are named) and
:data:`~ttlab.reproduce.statements.CENTRAL_STATEMENTS` (the statements that judge a paper's central claim). Nothing
here counts verdicts by itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from ttlab.reproduce.registry import PAPERS, PARTS
from ttlab.reproduce.report_blocks import Block, Bullets, Heading, Paragraph
from ttlab.reproduce.statements import CENTRAL_STATEMENTS, group_statements, statement_headline, statement_id
from ttlab.reproduce.verdict_base import HOLDS, KINDS, NOT_REPRODUCED, PAPER_CLAIM, PARTLY
from ttlab.reproduce.verdicts import count_by_kind, counts_text, mode_that_judges, not_at_scale

__all__ = ["BOTTOM_LINE_ANCHOR", "bottom_line_anchor", "bottom_line_blocks", "paper_bottom_line", "paper_claims",
           "paper_topic"]

BOTTOM_LINE_ANCHOR = "bottom-line"
"""The id of the report's bottom-line heading; each paper's is :func:`bottom_line_anchor`."""


def bottom_line_anchor(paper: str) -> str:
    """The id of ``paper``'s bottom line (``bottom-line-A``)."""
    return f"{BOTTOM_LINE_ANCHOR}-{paper}"


def paper_topic(paper: str) -> str:
    """``"Paper A: next-token prediction"``: the paper's letter and its topic from :data:`PAPERS`."""
    heading = PAPERS.get(paper, "")
    topic = heading.split(" — ", 1)[1].split(" (", 1)[0] if " — " in heading else ""
    return f"Paper {paper}: {topic}" if topic else f"Paper {paper}"


def paper_claims(results: dict, paper: str) -> list[dict]:
    """The claim records of ``results["claims"]`` that belong to ``paper`` (the paper of the part they come from)."""
    parts = results.get("parts", {})
    return [c for c in results.get("claims", [])
            if (c.get("paper") or (parts.get(c.get("part")) or {}).get("paper")) == paper]


def _codes(items: Iterable[object]) -> str:
    return ", ".join(f"`{x}`" for x in items)


def _case(c: dict) -> str:
    """A claim id, with its kind unless it is a paper claim."""
    kind = c.get("kind") if c.get("kind") in KINDS else "check"
    return f"`{c['id']}`" + ("" if kind == PAPER_CLAIM else f" ({kind})")


def _parts_of(results: dict, paper: str) -> dict[str, dict]:
    return {n: r for n, r in results.get("parts", {}).items() if r.get("paper") == paper}


def _judged(results: dict, paper: str, claims: list[dict]) -> str:
    """What was judged: the parts in the report and the headline's counts on this paper's claims."""
    recs = _parts_of(results, paper)
    bad = [f"`{n}` ({r.get('status')})" for n, r in recs.items() if r.get("status") != "ok"]
    ran = f"{len(recs)} part(s) in this report: {_codes(recs)}" + (
        f"; without a result: {', '.join(bad)}" if bad else "")
    return f"What was judged ({ran}). {statement_headline(claims)}"


def _held(claims: list[dict]) -> str:
    """The paper's statements that hold, hold partly and are not reproduced (ids with where the paper states them)."""
    stmts = [s for s in group_statements(claims) if s["kind"] == PAPER_CLAIM and not s["not_at_scale"]]
    cite: dict[str, str] = {}
    for c in claims:
        cite.setdefault(statement_id(c["id"]), str(c.get("cite") or ""))

    def listing(verdict: str) -> str:
        ids = [s["id"] for s in stmts if s["verdict"] == verdict]
        return ", ".join(f"`{x}`" + (f" ({cite[x]})" if cite.get(x) else "") for x in ids) or "none"

    return (f"What held: {listing(HOLDS)}. Partly: {listing(PARTLY)}. Not reproduced: {listing(NOT_REPRODUCED)}. "
            "(The other paper statements are inconclusive, each with its reason in the part's section.)")


def _not_in_this_mode(results: dict, paper: str, claims: list[dict]) -> str:
    """What this run's mode cannot judge: claims whose record names the mode that judges them, claims not judged at
    this scale (with the command their records give), parts that judged nothing here and parts not in the report."""
    mode = results.get("mode", "?")
    apart = not_at_scale(claims)
    apart_ids = {c["id"] for c in apart}
    by_mode: dict[str, list[dict]] = {}
    for c in claims:
        m = mode_that_judges(c)
        if m and c["id"] not in apart_ids:
            by_mode.setdefault(m, []).append(c)
    pieces = []
    for m, cs in by_mode.items():
        own = " (this run's own mode: what it lacked is in each claim's reason)" if m == mode else ""
        pieces.append(f"{len(cs)} case(s) that this run could not judge name `--{m}` as the mode that judges them"
                      f"{own}: {', '.join(_case(c) for c in cs)}")
    if apart:
        commands = dict.fromkeys(str((c.get("measured") or {}).get("command") or "") for c in apart)
        pieces.append(f"{len(apart)} case(s) are not judged at this scale ({', '.join(_case(c) for c in apart)}); "
                      "what would judge them, as their records say: " + "; ".join(f"`{x}`" for x in commands if x))
    for name, rec in _parts_of(results, paper).items():
        skipped = rec.get("result", {}).get("skipped") if isinstance(rec.get("result"), dict) else None
        if rec.get("status") == "ok" and skipped:
            pieces.append(f"part `{name}` judged nothing in `{mode}` mode: {str(skipped).rstrip('.')}")
    missing = [n for n in results.get("not_run") or [] if n in PARTS and PARTS[n].paper == paper]
    if missing:
        pieces.append(f"part(s) not in this report: {_codes(missing)} (run them with `--part NAME`)")
    if not pieces:
        return (f"What `{mode}` mode cannot judge: nothing in this paper's records — no claim names another mode, "
                "none is listed as not judged at this scale, and every part of the paper is in the report.")
    return f"What `{mode}` mode cannot judge, and what does: " + "; ".join(pieces) + "."


def _central(results: dict, paper: str, claims: list[dict]) -> str | None:
    """Where the paper's central claim (:data:`CENTRAL_STATEMENTS`) is judged: by which part, in which mode, with what
    verdict; None when the paper declares none."""
    if paper not in CENTRAL_STATEMENTS:
        return None
    what, sids = CENTRAL_STATEMENTS[paper]
    mode = results.get("mode", "?")
    stmts = {s["id"]: s for s in group_statements(claims)}
    by_id = {c["id"]: c for c in claims}
    pieces = []
    for sid in sids:
        s = stmts.get(sid)
        if s is None:
            part = sid.split(".", 1)[0]
            rec = results.get("parts", {}).get(part)
            state = (f"is not in this report (run it with `--part {part}`)" if rec is None else
                     f"has no claims in this report (status {rec.get('status')})")
            pieces.append(f"`{sid}` is judged by part `{part}`, which {state}")
            continue
        cases = [by_id[c["id"]] for c in s["cases"]]
        parts = dict.fromkeys(str(c.get("part") or sid.split(".", 1)[0]) for c in cases)
        counts = counts_text(count_by_kind(cases)[s["kind"]])
        text = (f"`{sid}` in part {_codes(parts)}, in this `{mode}` run: " +
                ("not judged at this scale" if s["not_at_scale"] else
                 f"{s['verdict']} ({s['n_cases']} case(s): {counts})"))
        needing = [c for c in cases if mode_that_judges(c)]
        if needing:
            flags = _codes(f"--{m}" for m in dict.fromkeys(mode_that_judges(c) for c in needing))
            text += (f"; `{mode}` mode cannot judge {len(needing)} of its case(s) ({', '.join(_case(c) for c in needing)})"
                     f": their records name {flags} as the mode that judges them")
        pieces.append(text)
    return f"Central claim — {what}: " + "; ".join(pieces) + "."


def paper_bottom_line(results: dict, paper: str) -> list[Block]:
    """``paper``'s bottom line: what was judged, what held, what this mode cannot judge and which mode does, and where
    its central claim is judged — or, when the run has no part of the paper, that it has none."""
    claims = paper_claims(results, paper)
    central = _central(results, paper, claims)
    if not _parts_of(results, paper):
        registered = [n for n, p in PARTS.items() if p.paper == paper]
        text = (f"No part of paper {paper} is in this report: this `{results.get('mode', '?')}` run ran none of its "
                f"parts ({_codes(registered) or 'none registered'}); run them with `--part NAME`.")
        blocks: list[Block] = [Paragraph(text)]
        return blocks + ([Bullets([central])] if central else [])
    items = [_judged(results, paper, claims), _held(claims), _not_in_this_mode(results, paper, claims)]
    return [Bullets(items + ([central] if central else []))]


def bottom_line_blocks(results: dict) -> list[Block]:
    """The report's first section: one bottom line per paper of :data:`PAPERS`, computed from ``results``."""
    blocks: list[Block] = [
        Heading("Bottom line", 2, anchor=BOTTOM_LINE_ANCHOR),
        Paragraph(f"Each paper in this `{results.get('mode', '?')}` run, computed from the claims judged below: what "
                  "was judged, what held, what this mode cannot judge and which mode does, and where a paper's central "
                  "claim is judged. The details follow the contents."),
    ]
    for paper in PAPERS:
        blocks += [Heading(paper_topic(paper), 3, anchor=bottom_line_anchor(paper)), *paper_bottom_line(results, paper)]
    return blocks
