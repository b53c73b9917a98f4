"""The document of the ``ttlab reproduce`` report, shared by its Markdown and HTML writers: one :class:`Section` per
part (:func:`build_sections`), the opening (:func:`opening_blocks`: each paper's bottom line, the contents, then the
header — run, verdict headline, statements, claims not judged at this scale, flags), the summary of verdicts, the
table of parts and the tail (parts not run, reproducibility). Every heading a contents entry links to has its anchor
here (:func:`part_anchor`, :func:`paper_anchor` and the ``*_ANCHOR`` constants); both writers use them.
"""

from __future__ import annotations

import traceback

from ttlab.reproduce.registry import PAPERS, PARTS
from ttlab.reproduce.report_blocks import Block, Contents, Heading, Paragraph, Preformatted, Section, Table
from ttlab.reproduce.report_bottom_line import BOTTOM_LINE_ANCHOR, bottom_line_anchor, bottom_line_blocks, paper_topic
from ttlab.reproduce.statements import group_statements, statement_headline
from ttlab.reproduce.verdict_base import NEAR
from ttlab.reproduce.verdicts import conditions_met, not_at_scale

__all__ = [
    "NEAR_MARK",
    "NOT_RUN_ANCHOR",
    "OUTSIDE_MARK",
    "REPRODUCIBILITY_ANCHOR",
    "RUN_ANCHOR",
    "SUMMARY_ANCHOR",
    "build_sections",
    "claim_flags",
    "contents",
    "header_blocks",
    "opening_blocks",
    "paper_anchor",
    "part_anchor",
    "parts_table",
    "run_conditions",
    "section_meta",
    "summary_rows",
    "tail_blocks",
]

RUN_ANCHOR, SUMMARY_ANCHOR = "run", "summary"
NOT_RUN_ANCHOR, REPRODUCIBILITY_ANCHOR = "not-run", "reproducibility"


def part_anchor(name: str) -> str:
    """The id of part ``name``'s section (``part-lm_data_scaling``)."""
    return f"part-{name}"


def paper_anchor(paper: str) -> str:
    """The id of ``paper``'s heading above its parts' sections (``paper-B``)."""
    return f"paper-{paper}"


def contents(results: dict, sections: list[Section]) -> Contents:
    """The table of contents: the bottom line (one entry per paper), the run and verdict counts, the summary of
    verdicts, each paper's heading with its parts' sections (a part without a result says so), the sections of parts
    of no paper, the parts not run and the reproducibility section — every entry a link to the anchor its writer
    gives that heading."""
    entries = [(1, "Bottom line", BOTTOM_LINE_ANCHOR)]
    entries += [(2, paper_topic(p), bottom_line_anchor(p)) for p in PAPERS]
    entries += [(1, "Run and verdict counts", RUN_ANCHOR), (1, "Summary of verdicts", SUMMARY_ANCHOR)]

    def entry(s: Section, level: int) -> tuple[int, str, str]:
        return level, s.title + ("" if s.status == "ok" else f" ({s.status})"), part_anchor(s.name)

    for paper, heading in PAPERS.items():
        secs = [s for s in sections if s.paper == paper]
        if secs:
            entries += [(1, heading, paper_anchor(paper))] + [entry(s, 2) for s in secs]
    entries += [entry(s, 1) for s in sections if s.paper not in PAPERS]
    if results.get("not_run"):
        entries.append((1, "Parts not in this report", NOT_RUN_ANCHOR))
    entries.append((1, "Reproducibility", REPRODUCIBILITY_ANCHOR))
    return Contents(entries)


def opening_blocks(results: dict, sections: list[Section]) -> list[Block]:
    """What the report opens with, before the summary of verdicts: each paper's bottom line, the contents, then the
    run and verdict counts (:func:`header_blocks`)."""
    return [*bottom_line_blocks(results), contents(results, sections),
            Heading("Run and verdict counts", 2, anchor=RUN_ANCHOR), *header_blocks(results)]


def _failed_blocks(rec: dict) -> list[Block]:
    if rec.get("status") == "interrupted":
        return [Paragraph(f"This part was INTERRUPTED after {rec.get('wall_time_s', 0.0):.1f} s and has no result; "
                          "re-run the same command to run it again.")]
    return [
        Paragraph(f"This part FAILED after {rec.get('wall_time_s', 0.0):.1f} s: {rec.get('error', 'unknown error')}"),
        Preformatted(rec.get("traceback") or rec.get("error") or ""),
    ]


def build_sections(results: dict) -> list[Section]:
    """One :class:`Section` per part in ``results['parts']``, in the registry's report order.

    A renderer that raises yields a section holding the error (recorded in
    ``results['render_errors']``) instead of breaking the report.
    """
    order = {name: i for i, name in enumerate(_report_order(results))}
    sections = []
    errors = results.setdefault("render_errors", {})
    for name in sorted(results["parts"], key=lambda n: order.get(n, len(order))):
        rec = results["parts"][name]
        part = PARTS.get(name)
        title = rec.get("title") or (part.title if part else name)
        paper = rec.get("paper") or (part.paper if part else "?")
        sec = Section(name=name, title=title, paper=paper, status=rec["status"], wall_time_s=rec.get("wall_time_s"),
                      reused=bool(rec.get("reused")))
        if rec["status"] != "ok":
            sec.blocks = _failed_blocks(rec)
        elif part is None:
            sec.blocks = [Paragraph("No renderer is registered for this part; its numbers are in results.json.")]
        else:
            try:
                sec.blocks = list(part.render(rec["result"]))
                errors.pop(name, None)
            except Exception as exc:  # noqa: BLE001 - one bad renderer must not lose the report
                errors[name] = f"{type(exc).__name__}: {exc}"
                sec.blocks = [Paragraph(f"Rendering this part failed: {type(exc).__name__}: {exc}. "
                                        "Its numbers are in results.json."),
                              Preformatted(traceback.format_exc())]
        sections.append(sec)
    return sections


NEAR_MARK, OUTSIDE_MARK = "≈", "†"


def claim_flags(c: dict) -> str:
    """The markers of a claim in the report: ``≈`` when its verdict lies within 10 % of a threshold (with the
    margin), ``†`` when it was judged outside its theorem's conditions; empty otherwise."""
    flags = []
    if c.get("near_threshold"):
        flags.append(f"{NEAR_MARK} {100 * float(c['margin']):.1f} % from a threshold")
    if conditions_met(c) is False:
        flags.append(f"{OUTSIDE_MARK} outside the theorem's conditions")
    return "; ".join(flags)


def _report_order(results: dict) -> list[str]:
    from ttlab.reproduce.registry import part_names

    return part_names()


def summary_rows(results: dict) -> list[list[str]]:
    """The rows of the summary of verdicts: one per claim of every part, one per failed part."""
    rows = []
    for name in _report_order(results) + [n for n in results["parts"] if n not in PARTS]:
        rec = results["parts"].get(name)
        if rec is None:
            continue
        if rec["status"] != "ok":
            rows.append([rec.get("paper", "?"), name, "—", f"(part {rec['status']})", "failed", "", rec.get("error", "")])
            continue
        for c in rec["result"].get("claims", []):
            rows.append([rec.get("paper", "?"), name, c.get("kind", "check"), c["statement"], c["verdict"],
                         claim_flags(c), c["summary"]])
    return rows


def run_conditions(results: dict) -> str:
    """One sentence: the commit the run came from, this invocation's wall time and the machine's load during it."""
    run = results["run"]
    src = run.get("source") or {}
    code = (f"commit `{src['commit'][:12]}`" + (" with uncommitted changes" if src.get("dirty") else "")
            if src.get("commit") else f"no commit recorded ({src.get('why', 'unknown')})")
    ends = [x[0] for x in (run.get("load_avg_at_part_ends") or {}).values() if x]
    load = ", ".join(s for s in (
        f"{run['load_avg_start'][0]:.2f} at the start" if run.get("load_avg_start") else "",
        f"{min(ends):.2f}–{max(ends):.2f} at the ends of the {len(ends)} part(s) run" if ends else "",
        f"{run['load_avg_end'][0]:.2f} at the end" if run.get("load_avg_end") else "") if s)
    wall = results.get("wall_time_s")
    return (f"Run from {code} on {run.get('cpus') or '?'} CPU(s); this invocation took "
            f"{'—' if wall is None else f'{wall:.0f} s'} wall; load average (1 min): {load or 'not available'}.")


def _not_at_scale_blocks(claims: list[dict]) -> list[Block]:
    """The claims this scale cannot judge, apart from the counts: what each needs and the command that judges it."""
    rows = [[c["id"], c["statement"], str((c.get("measured") or {}).get("why", "")),
             f"`{(c.get('measured') or {}).get('command', '')}`"] for c in not_at_scale(claims)]
    if not rows:
        return []
    return [Table(["claim", "statement", "what it needs", "command that would judge it"], rows,
                  caption="Not judged at this scale (not counted above).")]


def _statement_blocks(claims: list[dict]) -> list[Block]:
    """The statements judged in several cases, each with its cases' verdicts (the rule that combines them beneath)."""
    rows = [[s["id"], s["kind"], s["verdict"], f"{s['n_decided']} of {s['n_cases']}",
             "; ".join(f"{c['id']}: {c['verdict']}" + (" (not judged at this scale)" if c["not_at_scale"] else "")
                       for c in s["cases"])]
            for s in group_statements(claims) if s["n_cases"] > 1]
    if not rows:
        return []
    return [Table(["statement", "kind", "verdict", "cases decided", "cases"], rows,
                  caption="Statements judged in several cases (each corpus, dimension, network, budget or suite a case; "
                          "the claims below are the cases). A statement's verdict: inconclusive when no case is "
                          "decided; the decided cases' verdict when they agree; partly when they disagree. Cases not "
                          "judged at this scale do not vote.")]


def header_blocks(results: dict) -> list[Block]:
    """The report's opening blocks: the run, the verdict headline, the statements, the claims not judged at this
    scale, the flags and how verdicts are computed."""
    cfg = results.get("config", {})
    parts = results["parts"]
    n_failed = sum(p["status"] != "ok" for p in parts.values())
    v = results.get("versions", {})
    blocks: list[Block] = [
        Paragraph(
            f"Mode `{results.get('mode')}`, seed {cfg.get('seed', 0)}, backend `{cfg.get('backend', 'local')}`; "
            f"ttlab {v.get('ttlab', '?')}, Python {v.get('python', '?')}, torch {v.get('torch', '?')}; "
            f"generated {results.get('generated_at', '')}. "
            f"{len(parts)} part(s), {n_failed} failed. Sum of part wall times "
            f"{sum(p.get('wall_time_s') or 0.0 for p in parts.values()):.0f} s."
        ),
    ]
    if results.get("run"):
        blocks.append(Paragraph(run_conditions(results)))
    blocks += [
        Paragraph(statement_headline(results.get("claims", []))),
        *_statement_blocks(results.get("claims", [])),
        *_not_at_scale_blocks(results.get("claims", [])),
        Paragraph(_flags_sentence(results.get("claims", []))),
        Paragraph(
            "Verdicts are computed from the measured numbers by the rule printed under each claim (never "
            "written by hand), and recomputed whenever this report is written: holds = the measured figure "
            "meets the claim's threshold; partly = it meets a looser one or only some cases do; not reproduced "
            "= neither; inconclusive = the measurement cannot tell (too few points, an interval wider than the "
            "tolerance, step-capped runs, missing inputs), with the reason given."
        ),
    ]
    return blocks


def _flags_sentence(claims: list[dict]) -> str:
    """How many verdicts are near a threshold and how many claims were judged outside their theorem's conditions."""
    near = [c for c in claims if c.get("near_threshold")]
    outside = [c for c in claims if conditions_met(c) is False]
    inside = [c for c in claims if conditions_met(c) is True]
    return (f"Flags: {len(near)} verdict(s) lie within {100 * NEAR:.0f} % of a threshold (marked {NEAR_MARK}, with the "
            "relative distance of the deciding number to the nearest threshold): a small change of the measurement "
            f"could change them. {len(outside)} claim(s) were judged outside the conditions of the theorem they test "
            f"(marked {OUTSIDE_MARK}; the required and actual values are in the claim's `measured.conditions`), "
            f"{len(inside)} inside them; a verdict outside the conditions tests the statement beyond what the theorem "
            "guarantees.")


def parts_table(results: dict) -> Table:
    """The table of parts: paper, title, status, wall time and whether each was reused."""
    rows = []
    for name in _report_order(results) + [n for n in results["parts"] if n not in PARTS]:
        rec = results["parts"].get(name)
        if rec is None:
            continue
        t = rec.get("wall_time_s")
        rows.append([name, rec.get("paper", "?"), rec.get("title", name), rec["status"],
                     "—" if t is None else f"{t:.1f} s", "reused" if rec.get("reused") else "run now"])
    return Table(["part", "paper", "what", "status", "wall time", "this run"], rows)


def section_meta(s: Section) -> str:
    """The line under a section's title: its part, status and wall time, and whether it was reused."""
    t = "—" if s.wall_time_s is None else f"{s.wall_time_s:.1f} s"
    how = "reused from an earlier run" if s.reused else "run now"
    return f"Part `{s.name}` — status {s.status}, wall time {t} ({how})."


def tail_blocks(results: dict) -> list[Block]:
    """The report's closing blocks: the registered parts not in it, and where every number is kept."""
    blocks: list[Block] = []
    missing = results.get("not_run") or []
    if missing:
        blocks += [Heading("Parts not in this report", 2, anchor=NOT_RUN_ANCHOR),
                   Paragraph("Registered parts that were neither run now nor found finished in this directory "
                             "(run them with `--part NAME`): " + ", ".join(f"`{n}`" for n in missing) + ".")]
    v = results.get("versions", {})
    blocks += [Heading("Reproducibility", 2, anchor=REPRODUCIBILITY_ANCHOR),
               Paragraph("Every number above, the configuration, seeds, versions and the wall time of each part "
                         "are in `results.json`; each part's record is in `parts/<name>.json`."),
               Table(["package", "version"], [[k, val] for k, val in v.items()])]
    return blocks
