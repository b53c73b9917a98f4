"""The blocks of the ``ttlab reproduce`` report: what a part's renderer returns.

A part's renderer returns a list of blocks — :class:`Heading`, :class:`Paragraph`, :class:`Table`,
:class:`Figure`, :class:`Bullets`, :class:`Claims`, :class:`Preformatted` (the report's opening adds
:class:`Contents`) — which
:mod:`ttlab.reproduce.report_document` gathers into one :class:`Section` per part, and
:mod:`ttlab.reproduce.report_markdown` and :mod:`ttlab.reproduce.report_html` render twice:

* ``report.md``: figures referenced by their path relative to the output directory (for diffs);
* ``report.html``: self-contained and readable offline — inline CSS, every figure embedded as a
  base64 ``data:`` URI, no scripts and no external resources.

Inline text may use ``backticks`` for code; nothing else is interpreted (HTML is escaped).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

__all__ = [
    "Block",
    "Bullets",
    "Claims",
    "Contents",
    "Figure",
    "Heading",
    "Paragraph",
    "Preformatted",
    "Section",
    "Table",
    "fmt",
]


@dataclass
class Heading:
    """A heading inside a section (level 3 = a section's sub-heading, 4 below it; the report's own are level 2).
    ``anchor``: the id a link to it uses (``#anchor``; HTML: the heading's ``id``, Markdown: an explicit
    ``<a id>`` before it)."""

    text: str
    level: int = 4
    anchor: str | None = None


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


@dataclass
class Contents:
    """The report's table of contents: ``entries`` are ``(level, text, anchor)`` — level 1 a heading of the report,
    2 a section under it — each a link to ``#anchor``; the block itself is reached at ``#{anchor}``."""

    entries: list[tuple[int, str, str]]
    title: str = "Contents"
    anchor: str = "contents"


Block = Union[Heading, Paragraph, Table, Figure, Bullets, Claims, Preformatted, Contents]


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
