"""The Markdown writer of the ``ttlab reproduce`` report (``report.md``): figures referenced by their path relative
to the output directory, for diffs. Headings a contents entry links to get an explicit anchor (``<a id="…"></a>`` on
the line before them), so the links do not depend on how a viewer derives ids from heading text.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ttlab.reproduce.registry import PAPERS
from ttlab.reproduce.report_blocks import (
    Block,
    Bullets,
    Claims,
    Contents,
    Figure,
    Heading,
    Paragraph,
    Preformatted,
    Section,
    Table,
    fmt,
)
from ttlab.reproduce.report_document import (
    SUMMARY_ANCHOR,
    build_sections,
    claim_flags,
    opening_blocks,
    paper_anchor,
    part_anchor,
    parts_table,
    section_meta,
    summary_rows,
    tail_blocks,
)

__all__ = ["render_markdown"]


def _md_inline(text: str) -> str:
    return str(text).replace("\r", " ")


def _md_caption(text: str) -> str:
    """An italic caption line (asterisks inside are escaped so they cannot close the emphasis)."""
    return "*" + _md_inline(text).replace("*", "\\*").replace("\n", " ") + "*"


def _md_cell(v: Any) -> str:
    return _md_inline(fmt(v)).replace("|", "\\|").replace("\n", " ")


def _md_anchor(anchor: str) -> list[str]:
    """An explicit anchor for the heading on the following line (a link to ``#anchor`` lands there)."""
    return [f'<a id="{html.escape(anchor, quote=True)}"></a>', ""]


def _md_contents(b: Contents) -> list[str]:
    lines = [*_md_anchor(b.anchor), f"## {b.title}", ""]
    for level, text, anchor in b.entries:
        label = _md_inline(text).replace("[", "\\[").replace("]", "\\]").replace("\n", " ")
        lines.append("  " * (max(1, level) - 1) + f"- [{label}](#{anchor})")
    return lines + [""]


def _md_block(b: Block, out: Path) -> list[str]:
    if isinstance(b, Heading):
        return ([] if b.anchor is None else _md_anchor(b.anchor)) + ["#" * max(2, min(6, b.level)) + " " + b.text, ""]
    if isinstance(b, Contents):
        return _md_contents(b)
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
    for b in opening_blocks(results, sections):
        lines += _md_block(b, out)
    lines += [*_md_anchor(SUMMARY_ANCHOR), "## Summary of verdicts", ""]
    lines += _md_block(Table(["paper", "part", "kind", "claim", "verdict", "flags", "measured"], summary_rows(results)),
                       out)
    lines += _md_block(parts_table(results), out)
    for paper, heading in PAPERS.items():
        secs = [s for s in sections if s.paper == paper]
        if not secs:
            continue
        lines += [*_md_anchor(paper_anchor(paper)), f"## {heading}", ""]
        for s in secs:
            lines += [*_md_anchor(part_anchor(s.name)), f"### {s.title}", "", section_meta(s), ""]
            for b in s.blocks:
                lines += _md_block(b, out)
    other = [s for s in sections if s.paper not in PAPERS]
    for s in other:
        lines += [*_md_anchor(part_anchor(s.name)), f"## {s.title}", "", section_meta(s), ""]
        for b in s.blocks:
            lines += _md_block(b, out)
    for b in tail_blocks(results):
        lines += _md_block(b, out)
    return "\n".join(lines).rstrip("\n") + "\n"
