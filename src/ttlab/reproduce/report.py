"""The report of ``ttlab reproduce``: a small block model rendered twice, as Markdown and as HTML.

A part's renderer returns a list of blocks — :class:`Heading`, :class:`Paragraph`, :class:`Table`,
:class:`Figure`, :class:`Bullets`, :class:`Claims`, :class:`Preformatted` — and this module wraps
the parts' sections into one document:

* ``report.md``: figures referenced by their path relative to the output directory (for diffs);
* ``report.html``: self-contained and readable offline — inline CSS, every figure embedded as a
  base64 ``data:`` URI, no scripts and no external resources.

Inline text may use ``backticks`` for code; nothing else is interpreted (HTML is escaped).
"""

from __future__ import annotations

import base64
import html
import math
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from ttlab.reproduce.registry import PAPERS, PARTS
from ttlab.reproduce.statements import group_statements, statement_headline
from ttlab.reproduce.verdict_base import NEAR
from ttlab.reproduce.verdicts import conditions_met, not_at_scale

__all__ = [
    "Block",
    "Bullets",
    "Claims",
    "Figure",
    "Heading",
    "Paragraph",
    "Preformatted",
    "Section",
    "Table",
    "build_sections",
    "fmt",
    "render_html",
    "render_markdown",
]


# ---------------------------------------------------------------------------------------------
# blocks


@dataclass
class Heading:
    """A heading inside a section (level 3 = a section's sub-heading, 4 below it)."""

    text: str
    level: int = 4


@dataclass
class Paragraph:
    """A paragraph of plain text (``backticks`` mark code)."""

    text: str


@dataclass
class Table:
    """A table; cells are formatted with :func:`fmt` (strings are kept as they are)."""

    header: list[str]
    rows: list[list[Any]]
    caption: str | None = None


@dataclass
class Figure:
    """An image file, ``path`` relative to the output directory."""

    path: str
    caption: str = ""


@dataclass
class Bullets:
    """A bullet list."""

    items: list[str]


@dataclass
class Claims:
    """The part's judged claim records (:mod:`ttlab.reproduce.verdicts`)."""

    claims: list[dict]


@dataclass
class Preformatted:
    """Verbatim text (tracebacks, configurations)."""

    text: str


Block = Union[Heading, Paragraph, Table, Figure, Bullets, Claims, Preformatted]


@dataclass
class Section:
    """One part's section of the report."""

    name: str
    title: str
    paper: str
    status: str
    wall_time_s: float | None
    reused: bool
    blocks: list[Block] = field(default_factory=list)


def fmt(v: Any, digits: int = 4) -> str:
    """A table cell: ``—`` for None/NaN, ``digits`` significant digits for floats."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "—"
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        return f"{v:.{digits}g}"
    return str(v)


# ---------------------------------------------------------------------------------------------
# the document model


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


def _summary_rows(results: dict) -> list[list[str]]:
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


def _header_blocks(results: dict) -> list[Block]:
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


def _parts_table(results: dict) -> Table:
    rows = []
    for name in _report_order(results) + [n for n in results["parts"] if n not in PARTS]:
        rec = results["parts"].get(name)
        if rec is None:
            continue
        t = rec.get("wall_time_s")
        rows.append([name, rec.get("paper", "?"), rec.get("title", name), rec["status"],
                     "—" if t is None else f"{t:.1f} s", "reused" if rec.get("reused") else "run now"])
    return Table(["part", "paper", "what", "status", "wall time", "this run"], rows)


# ---------------------------------------------------------------------------------------------
# Markdown


def _md_inline(text: str) -> str:
    return str(text).replace("\r", " ")


def _md_caption(text: str) -> str:
    """An italic caption line (asterisks inside are escaped so they cannot close the emphasis)."""
    return "*" + _md_inline(text).replace("*", "\\*").replace("\n", " ") + "*"


def _md_cell(v: Any) -> str:
    return _md_inline(fmt(v)).replace("|", "\\|").replace("\n", " ")


def _md_block(b: Block, out: Path) -> list[str]:
    if isinstance(b, Heading):
        return ["#" * max(3, min(6, b.level)) + " " + b.text, ""]
    if isinstance(b, Paragraph):
        return [_md_inline(b.text), ""]
    if isinstance(b, Table):
        lines = ["| " + " | ".join(_md_cell(h) for h in b.header) + " |",
                 "|" + "---|" * len(b.header)]
        lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows]
        if b.caption:
            lines += ["", _md_caption(b.caption)]
        return lines + [""]
    if isinstance(b, Figure):
        alt = (b.caption or Path(b.path).name).replace("[", "(").replace("]", ")").replace("\n", " ")
        lines = [f"![{alt}]({b.path})"]
        if not (out / b.path).is_file():
            lines.append(f"(figure missing: {b.path})")
        if b.caption:
            lines += ["", _md_caption(b.caption)]
        return lines + [""]
    if isinstance(b, Bullets):
        return [f"- {_md_inline(i)}" for i in b.items] + [""]
    if isinstance(b, Claims):
        if not b.claims:
            return []
        lines = ["| claim | verdict | flags | measured | why |", "|---|---|---|---|---|"]
        lines += [f"| {_md_cell(c['statement'])} | **{_md_cell(c['verdict'])}** | {_md_cell(claim_flags(c))} | "
                  f"{_md_cell(c['summary'])} | {_md_cell(c['reason'])} |" for c in b.claims]
        lines += ["", "Rules:", "", *[f"- {c['statement']}: {c['rule']}" for c in b.claims]]
        return lines + [""]
    if isinstance(b, Preformatted):
        return ["```text", b.text.rstrip("\n"), "```", ""]
    raise TypeError(f"unknown report block {type(b).__name__}")


def render_markdown(results: dict, out: str | Path, sections: list[Section] | None = None) -> str:
    """The report as Markdown; figures are referenced by their path relative to ``out``."""
    out = Path(out)
    sections = build_sections(results) if sections is None else sections
    lines = ["# ttlab reproduction report", ""]
    for b in _header_blocks(results):
        lines += _md_block(b, out)
    lines += ["## Summary of verdicts", ""]
    lines += _md_block(Table(["paper", "part", "kind", "claim", "verdict", "flags", "measured"], _summary_rows(results)),
                       out)
    lines += _md_block(_parts_table(results), out)
    for paper, heading in PAPERS.items():
        secs = [s for s in sections if s.paper == paper]
        if not secs:
            continue
        lines += [f"## {heading}", ""]
        for s in secs:
            lines += [f"### {s.title}", "", _section_meta(s), ""]
            for b in s.blocks:
                lines += _md_block(b, out)
    other = [s for s in sections if s.paper not in PAPERS]
    for s in other:
        lines += [f"## {s.title}", "", _section_meta(s), ""]
        for b in s.blocks:
            lines += _md_block(b, out)
    lines += _md_tail(results, out)
    return "\n".join(lines).rstrip("\n") + "\n"


def _section_meta(s: Section) -> str:
    t = "—" if s.wall_time_s is None else f"{s.wall_time_s:.1f} s"
    how = "reused from an earlier run" if s.reused else "run now"
    return f"Part `{s.name}` — status {s.status}, wall time {t} ({how})."


def _tail_blocks(results: dict) -> list[Block]:
    blocks: list[Block] = []
    missing = results.get("not_run") or []
    if missing:
        blocks += [Heading("Parts not in this report", 2),
                   Paragraph("Registered parts that were neither run now nor found finished in this directory "
                             "(run them with `--part NAME`): " + ", ".join(f"`{n}`" for n in missing) + ".")]
    v = results.get("versions", {})
    blocks += [Heading("Reproducibility", 2),
               Paragraph("Every number above, the configuration, seeds, versions and the wall time of each part "
                         "are in `results.json`; each part's record is in `parts/<name>.json`."),
               Table(["package", "version"], [[k, val] for k, val in v.items()])]
    return blocks


def _md_tail(results: dict, out: Path) -> list[str]:
    lines: list[str] = []
    for b in _tail_blocks(results):
        if isinstance(b, Heading):
            lines += ["## " + b.text, ""]
        else:
            lines += _md_block(b, out)
    return lines


# ---------------------------------------------------------------------------------------------
# HTML

_CSS = """
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#1d1d1f;line-height:1.45}
h1{border-bottom:2px solid #444;padding-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #bbb}
h3{margin-top:1.6em}table{border-collapse:collapse;margin:.6em 0 1em;font-size:.92em}
th,td{border:1px solid #ccc;padding:.25em .55em;text-align:left;vertical-align:top}th{background:#f1f1f1}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.v-holds{background:#d8f5d8;font-weight:600}.v-partly{background:#fff1c2;font-weight:600}
.v-not{background:#fbd5d5;font-weight:600}.v-inc{background:#dde6f3;font-weight:600}.v-failed{background:#e8c7ff;font-weight:600}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:.9em;color:#555}
pre{background:#f6f6f6;padding:.7em;overflow-x:auto;font-size:.85em}code{background:#f3f3f3;padding:0 .2em}
.meta{color:#666;font-size:.9em}.missing{color:#b00;font-weight:600}.rules{font-size:.88em;color:#444}
"""

_NUMERIC = re.compile(r"^[−+-]?(\d[\d,]*\.?\d*(e[+-]?\d+)?|\.\d+)\s*(%|s)?$", re.IGNORECASE)


def _h_inline(text: Any) -> str:
    s = html.escape(str(text), quote=False)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", s)


def _verdict_class(v: str) -> str:
    return {"holds": "v-holds", "partly": "v-partly", "not reproduced": "v-not", "inconclusive": "v-inc",
            "failed": "v-failed"}.get(v, "")


def _h_cell(v: Any, tag: str = "td", verdict: bool = False) -> str:
    text = fmt(v)
    cls = []
    if verdict and _verdict_class(text):
        cls.append(_verdict_class(text))
    elif tag == "td" and _NUMERIC.match(text):
        cls.append("num")
    attr = f' class="{" ".join(cls)}"' if cls else ""
    return f"<{tag}{attr}>{_h_inline(text)}</{tag}>"


_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
         ".svg": "image/svg+xml", ".webp": "image/webp"}


def _h_figure(b: Figure, out: Path) -> str:
    path = out / b.path
    mime = _MIME.get(path.suffix.lower())
    cap = f"<figcaption>{_h_inline(b.caption)}</figcaption>" if b.caption else ""
    if mime is None or not path.is_file():
        why = "unsupported image type" if mime is None else "file not found"
        return f'<p class="missing">Figure missing ({why}): {_h_inline(b.path)}</p>{cap}'
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    alt = html.escape(b.caption or path.name, quote=True)
    return f'<figure><img alt="{alt}" src="data:{mime};base64,{data}">{cap}</figure>'


def _h_block(b: Block, out: Path) -> str:
    if isinstance(b, Heading):
        lvl = max(2, min(6, b.level))
        return f"<h{lvl}>{_h_inline(b.text)}</h{lvl}>"
    if isinstance(b, Paragraph):
        return f"<p>{_h_inline(b.text)}</p>"
    if isinstance(b, Table):
        verdict_cols = {i for i, h in enumerate(b.header) if h in ("verdict", "status")}
        head = "".join(_h_cell(h, "th") for h in b.header)
        body = "".join("<tr>" + "".join(_h_cell(c, verdict=i in verdict_cols) for i, c in enumerate(row)) + "</tr>"
                       for row in b.rows)
        cap = f"<caption>{_h_inline(b.caption)}</caption>" if b.caption else ""
        return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if isinstance(b, Figure):
        return _h_figure(b, out)
    if isinstance(b, Bullets):
        return "<ul>" + "".join(f"<li>{_h_inline(i)}</li>" for i in b.items) + "</ul>"
    if isinstance(b, Claims):
        if not b.claims:
            return ""
        rows = "".join(
            f"<tr><td>{_h_inline(c['statement'])}</td>{_h_cell(c['verdict'], verdict=True)}"
            f"<td>{_h_inline(claim_flags(c))}</td>"
            f"<td>{_h_inline(c['summary'])}</td><td>{_h_inline(c['reason'])}</td></tr>" for c in b.claims)
        table = (f"<table><thead><tr><th>claim</th><th>verdict</th><th>flags</th><th>measured</th><th>why</th></tr></thead>"
                 f"<tbody>{rows}</tbody></table>")
        return table + ('<div class="rules">Rules:<ul>'
                        + "".join(f"<li>{_h_inline(c['statement'])}: {_h_inline(c['rule'])}</li>" for c in b.claims)
                        + "</ul></div>")
    if isinstance(b, Preformatted):
        return f"<pre>{html.escape(b.text)}</pre>"
    raise TypeError(f"unknown report block {type(b).__name__}")


def render_html(results: dict, out: str | Path, sections: list[Section] | None = None) -> str:
    """The report as one self-contained HTML page (inline CSS, figures as base64 data URIs)."""
    out = Path(out)
    sections = build_sections(results) if sections is None else sections
    body: list[str] = ["<h1>ttlab reproduction report</h1>"]
    body += [_h_block(b, out) for b in _header_blocks(results)]
    body += ['<h2 id="summary">Summary of verdicts</h2>',
             _h_block(Table(["paper", "part", "kind", "claim", "verdict", "flags", "measured"], _summary_rows(results)),
                      out),
             _h_block(_parts_table(results), out)]
    for paper, heading in PAPERS.items():
        secs = [s for s in sections if s.paper == paper]
        if not secs:
            continue
        body.append(f'<h2 id="paper-{paper}">{_h_inline(heading)}</h2>')
        for s in secs:
            body.append(f'<section id="part-{html.escape(s.name)}"><h3>{_h_inline(s.title)}</h3>'
                        f'<p class="meta">{_h_inline(_section_meta(s))}</p>')
            body += [_h_block(b, out) for b in s.blocks]
            body.append("</section>")
    for s in [s for s in sections if s.paper not in PAPERS]:
        body.append(f'<section id="part-{html.escape(s.name)}"><h2>{_h_inline(s.title)}</h2>'
                    f'<p class="meta">{_h_inline(_section_meta(s))}</p>')
        body += [_h_block(b, out) for b in s.blocks]
        body.append("</section>")
    body += [_h_block(b, out) for b in _tail_blocks(results)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>ttlab reproduction report</title>"
            f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
