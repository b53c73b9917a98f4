"""The HTML writer of the ``ttlab reproduce`` report (``report.html``): one self-contained page, readable offline —
inline CSS, every figure embedded as a base64 ``data:`` URI, no scripts and no external resources.
"""

from __future__ import annotations

import base64
import html
import re
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

__all__ = ["render_html"]

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
nav.toc{background:#f7f7f9;border:1px solid #ddd;padding:.2em 1em .6em;margin:1em 0}nav.toc ul{margin:.2em 0}
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


def _h_id(anchor: str | None) -> str:
    return "" if anchor is None else f' id="{html.escape(anchor, quote=True)}"'


def _h_contents(b: Contents) -> str:
    """The contents as nested lists: a level-2 entry goes in a list under the level-1 entry before it."""
    groups: list[tuple[str, list[str]]] = []
    for level, text, anchor in b.entries:
        link = f'<a href="#{html.escape(anchor, quote=True)}">{_h_inline(text)}</a>'
        if level <= 1 or not groups:
            groups.append((link, []))
        else:
            groups[-1][1].append(link)
    items = "".join("<li>" + link + ("<ul>" + "".join(f"<li>{k}</li>" for k in kids) + "</ul>" if kids else "")
                    + "</li>" for link, kids in groups)
    return f'<nav class="toc"{_h_id(b.anchor)}><h2>{_h_inline(b.title)}</h2><ul>{items}</ul></nav>'


def _h_block(b: Block, out: Path) -> str:
    if isinstance(b, Heading):
        lvl = max(2, min(6, b.level))
        return f"<h{lvl}{_h_id(b.anchor)}>{_h_inline(b.text)}</h{lvl}>"
    if isinstance(b, Contents):
        return _h_contents(b)
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
    body += [_h_block(b, out) for b in opening_blocks(results, sections)]
    body += [f'<h2{_h_id(SUMMARY_ANCHOR)}>Summary of verdicts</h2>',
             _h_block(Table(["paper", "part", "kind", "claim", "verdict", "flags", "measured"], summary_rows(results)),
                      out),
             _h_block(parts_table(results), out)]
    for paper, heading in PAPERS.items():
        secs = [s for s in sections if s.paper == paper]
        if not secs:
            continue
        body.append(f'<h2{_h_id(paper_anchor(paper))}>{_h_inline(heading)}</h2>')
        for s in secs:
            body.append(f'<section{_h_id(part_anchor(s.name))}><h3>{_h_inline(s.title)}</h3>'
                        f'<p class="meta">{_h_inline(section_meta(s))}</p>')
            body += [_h_block(b, out) for b in s.blocks]
            body.append("</section>")
    for s in [s for s in sections if s.paper not in PAPERS]:
        body.append(f'<section{_h_id(part_anchor(s.name))}><h2>{_h_inline(s.title)}</h2>'
                    f'<p class="meta">{_h_inline(section_meta(s))}</p>')
        body += [_h_block(b, out) for b in s.blocks]
        body.append("</section>")
    body += [_h_block(b, out) for b in tail_blocks(results)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>ttlab reproduction report</title>"
            f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
