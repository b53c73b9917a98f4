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
import unicodedata
from typing import Any

from rich.markup import escape
from rich.text import Text

__all__ = ["markup", "plain", "printable", "safe"]

_HIDDEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # control, format (zero-width, bidirectional overrides), surrogates, separators


def printable(text: str) -> str:
    """``text`` with every character a console would hide, merge or reorder written as its escape (``\\x00``,
    ``\\u200b``, ``\\u202e``): control characters but the line break and the tab, format characters (zero-width
    spaces, bidirectional overrides, byte-order marks), lone surrogates and line/paragraph separators. A token
    shown as ``\\x00`` is one token, not two separated by a space; a right-to-left override cannot reorder the line."""
    if text.isprintable() or all(unicodedata.category(c) not in _HIDDEN or c in "\n\t" for c in text):
        return text
    return "".join(c if c in "\n\t" or unicodedata.category(c) not in _HIDDEN
                   else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") for c in text)


def safe(value: Any) -> Any:
    """``value`` ready for a markup template: real numbers unchanged (so ``{:.3f}`` and ``{:,}`` still apply),
    anything else as its ``str`` with its hidden characters (:func:`printable`) and rich's markup escaped."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return value
    return escape(printable(str(value)))


def markup(template: str, /, *values: Any, **named: Any) -> Text:
    """``Text`` from the rich markup ``template`` (a constant: styles such as ``[bold]…[/]`` are its own) with
    its ``{}`` / ``{name}`` fields filled by ``values`` / ``named``, each passed through :func:`safe` — so a value
    containing ``[``…``]`` is shown as it is, never read as a style or a closing tag."""
    return Text.from_markup(template.format(*(safe(v) for v in values),
                                            **{k: safe(v) for k, v in named.items()}))


def plain(value: Any, style: str = "") -> Text:
    """``str(value)`` as ``Text`` that rich never reads as markup (table cells and titles that show a name), its
    hidden characters escaped (:func:`printable`)."""
    return Text(printable(str(value)), style=style)
