"""Console text that cannot be broken by what it shows.

Rich reads ``[...]`` in a string as markup: a file named ``a[/x].npy`` interpolated into ``"[bold]{file}[/]"``
ends the command in a ``MarkupError`` at print time, and one named ``[red]x`` changes the colour of the line.
The views therefore never put a value into markup themselves: :func:`markup` fills a template's ``{}`` fields
with values escaped for rich (numbers are formatted as the field says), and :func:`plain` wraps a value as text
that is never read as markup (table cells, titles). ``tests/test_markup.py`` checks that no view or command
builds markup from an f-string, and renders the views with ``[/x]`` in every name they show.
"""

from __future__ import annotations

import numbers
from typing import Any

from rich.markup import escape
from rich.text import Text

__all__ = ["markup", "plain", "safe"]


def safe(value: Any) -> Any:
    """``value`` ready for a markup template: real numbers unchanged (so ``{:.3f}`` and ``{:,}`` still apply),
    anything else as its ``str`` with rich's markup escaped."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return value
    return escape(str(value))


def markup(template: str, /, *values: Any, **named: Any) -> Text:
    """``Text`` from the rich markup ``template`` (a constant: styles such as ``[bold]…[/]`` are its own) with
    its ``{}`` / ``{name}`` fields filled by ``values`` / ``named``, each passed through :func:`safe` — so a value
    containing ``[``…``]`` is shown as it is, never read as a style or a closing tag."""
    return Text.from_markup(template.format(*(safe(v) for v in values),
                                            **{k: safe(v) for k, v in named.items()}))


def plain(value: Any, style: str = "") -> Text:
    """``str(value)`` as ``Text`` that rich never reads as markup (table cells and titles that show a name)."""
    return Text(str(value), style=style)
