"""Console text cannot be broken by what it shows (``ttlab.markup``): the helpers escape, no view or command builds
rich markup from an f-string or a variable (a static check over src/), and the commands that show a user's names
print them as they are — a file ``a[/x].npy``, a CSV column ``tok[/x]``, tokens ``[red]`` and ``[/x]``."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from rich.text import Text

from tests.conftest import view_text
from ttlab.markup import markup, plain, safe

SRC = Path(__file__).resolve().parents[1] / "src" / "ttlab"
NASTY = "a[/x]b[bold]c"


def test_markup_escapes_values_and_keeps_the_templates_styles_and_number_formats():
    t = markup("[bold]{}[/]: {:.3f} ({:,} points) {name}", NASTY, 2.0, 12345, name="[/]")
    assert t.plain == f"{NASTY}: 2.000 (12,345 points) [/]"
    assert any(str(s.style) == "bold" and t.plain[s.start:s.end] == NASTY for s in t.spans)
    assert markup("{:.2f}", np.float64(1.234)).plain == "1.23" and safe(True) == "True" and safe(3) == 3
    assert plain("[red]x[/]").plain == "[red]x[/]" and plain("y", "bold").style == "bold"
    with pytest.raises(Exception):  # the unescaped form is what breaks: the check below is about a real hazard
        Text.from_markup(f"[bold]{NASTY}[/]").plain  # noqa: B018


CONSOLE_PRINT = {"print"}
TABLE_CALLS = {"add_row", "add_column", "Table"}
SAFE_CALLS = {"plain", "markup", "Text", "assemble", "format", "duration", "_num", "num", "format_loss"}


def _is_numeric_fstring(node: ast.AST) -> bool:
    """An f-string whose every field has a format spec (``{x:.3f}``): numbers only, no names."""
    return isinstance(node, ast.JoinedStr) and all(
        v.format_spec is not None for v in node.values if isinstance(v, ast.FormattedValue))


def _safe_text(node: ast.AST) -> bool:
    """Text that rich may read as markup without risk: a constant, a numeric f-string, a call of a safe builder,
    either branch of a conditional, or a list/starred/sum of such."""
    if isinstance(node, ast.Constant):  # a constant's markup is the author's own
        return True
    if isinstance(node, ast.JoinedStr):
        return _is_numeric_fstring(node)
    if isinstance(node, ast.Call):
        f = node.func
        return (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "") in SAFE_CALLS
    if isinstance(node, ast.IfExp):
        return _safe_text(node.body) and _safe_text(node.orelse)
    if isinstance(node, ast.Starred):
        return _safe_text(node.value)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_safe_text(e) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _safe_text(node.left) and _safe_text(node.right)
    if isinstance(node, ast.GeneratorExp):
        return _safe_text(node.elt)
    return False


def _constant_template(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.IfExp):
        return _constant_template(node.body) and _constant_template(node.orelse)
    return isinstance(node, ast.Name)  # a local bound to constant templates (checked where it is bound)


def markup_hazards(path: Path) -> list[str]:
    """Every place in ``path`` where a value can reach rich markup unescaped (``file:line: what``)."""
    out, source = [], path.read_text(encoding="utf-8")
    rich_tables = "from rich.table import Table" in source  # the report's own Table (reproduce.report_blocks) is not rich
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        where = f"{path.name}:{node.lineno}"
        if name == "from_markup":
            out.append(f"{where}: Text.from_markup (use ttlab.markup.markup)")
        elif name == "markup" and node.args and not _constant_template(node.args[0]):
            out.append(f"{where}: markup() with a template that is not a constant")
        elif name in CONSOLE_PRINT and isinstance(f, ast.Attribute) and "console" in ast.unparse(f.value):
            if node.args and not (_safe_text(node.args[0]) or isinstance(node.args[0], ast.Name)):
                out.append(f"{where}: console.print of {ast.unparse(node.args[0])[:50]}")
        elif name in TABLE_CALLS and rich_tables:
            cells = list(node.args) + [k.value for k in node.keywords if k.arg in ("title", "caption")]
            if name == "add_column":  # headers: constants or loop names over them; an f-string must be numeric
                cells = [c for c in node.args[:1] if not isinstance(c, ast.Name)]
            out += [f"{where}: {name} cell {ast.unparse(c)[:50]}" for c in cells if not _safe_text(c)]
    return out


def test_no_view_or_command_puts_a_value_into_markup_unescaped():
    skip = {SRC / "markup.py", SRC / "reproduce" / "report_html.py"}  # the helpers; report_html.py writes HTML
    files = [p for p in sorted(SRC.rglob("*.py")) if p not in skip
             and ("views" in p.name or p.parent.name == "cli" or "view" in p.read_text(encoding="utf-8"))]
    assert len(files) >= 10
    hazards = [h for p in files for h in markup_hazards(p)]
    assert hazards == []


def test_the_static_check_finds_each_kind_of_hazard(tmp_path):
    bad = tmp_path / "bad_views.py"
    bad.write_text("from rich.table import Table\nfrom rich.text import Text\n"
                   "def v(name, x):\n"
                   "    a = Text.from_markup(f'[bold]{name}[/]')\n"
                   "    b = markup(f'{name}')\n"
                   "    console.print(f'wrote {name}')\n"
                   "    t = Table(title=f'{name} fit')\n"
                   "    t.add_row(name, str(x), f'{x:.3f}', plain(name))\n"
                   "    t.add_column(f'{name}')\n", encoding="utf-8")
    found = markup_hazards(bad)
    assert [h.split(": ", 1)[1].split(" ")[0] for h in found] == [
        "Text.from_markup", "markup()", "console.print", "Table", "add_row", "add_row", "add_column"]


def test_id_estimate_and_compare_print_a_bracketed_file_name(run_cli, tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "a[").mkdir()  # the path a[/x].npy: a folder "a[" holding "x].npy"
    f = tmp_path / "a[/x].npy"
    np.save(f, rng.normal(size=(300, 3)))
    r = run_cli("id", "estimate", f, "--k", "10")
    assert r.code == 0, r.err
    assert "a[/x].npy" in r.out
    r = run_cli("id", "compare", f, "--methods", "mle,twonn")
    assert r.code == 0, r.err
    assert "a[/x].npy" in " ".join(r.out.split())


def test_scaling_fit_prints_bracketed_column_and_file_names(run_cli, tmp_path):
    n = np.geomspace(1e4, 1e7, 8)
    (tmp_path / "runs[").mkdir()
    f = tmp_path / "runs[/x].csv"
    f.write_text("tok[/x],loss\n" + "".join(f"{a:.6g},{3 * a ** -0.1:.6g}\n" for a in n), encoding="utf-8")
    r = run_cli("scaling", "fit", f, "--x", "tok[/x]", "--y", "loss", "--form", "power", "--bootstrap", "50")
    assert r.code == 0, r.err
    assert "tok[/x]" in r.out


def test_ntp_check_prints_bracketed_tokens(run_cli, tmp_path):
    (tmp_path / "toy[").mkdir()
    f = tmp_path / "toy[/x].txt"
    f.write_text("[red] [/x] b\n[red] c b\n", encoding="utf-8")
    r = run_cli("ntp", "check", f)
    assert r.code in (0, 1, 2), r.err
    text = " ".join((r.out + r.err).split())
    assert "toy[/x].txt" in text and "[red]" in text and "Traceback" not in text


def test_views_show_bracketed_names_as_they_are():
    from types import SimpleNamespace

    from ttlab.lm.views import build_view, failures_view, interrupted_view
    from ttlab.reproduce.views import estimate_view, warnings_view
    from ttlab.scaling.views import values_view

    texts = [
        view_text(build_view(NASTY, {"n_docs": 1, "n_chars": 2, "file": "c.txt", "bytes_file": 3, "licence": NASTY}, NASTY)),
        view_text(interrupted_view(SimpleNamespace(iters=4, out_dir=NASTY))),
        view_text(failures_view({"n_failed": 1, "runs": [{"name": NASTY, "status": "failed"}]})),
        view_text(estimate_view({"parts": [{"part": NASTY, "seconds": 5, "cached": False},
                                           {"part": "y", "seconds": 5, "cached": True}], "total_seconds": 5},
                                "quick", Path(NASTY))),
        view_text(values_view(NASTY, {NASTY: NASTY}), cells=True),
        view_text(warnings_view(Path(NASTY), [], "standard")),
    ]
    for t in texts[:-1]:
        assert NASTY in t


def test_hidden_characters_are_shown_escaped(run_cli, tmp_path):
    """A NUL printed as a space made one token read as two; zero-width and right-to-left-override characters printed
    raw and reordered the line: the console shows them as escapes (issue 33 item 9), line breaks and tabs stay."""
    from ttlab.markup import printable

    assert printable("a\x00b") == "a\\x00b" and printable("x\u200by") == "x\\u200by"
    assert printable("\u202eabc") == "\\u202eabc" and printable("ok\ttab\nnaïve 日本") == "ok\ttab\nnaïve 日本"
    assert plain("a\x00b").plain == "a\\x00b" and markup("[bold]{}[/]", "\u202e").plain == "\\u202e"
    f = tmp_path / "odd.txt"
    f.write_text("a\x00b c => d\nx\u200by c => d\n\u202eabc => d\n", encoding="utf-8")
    r = run_cli("ntp", "check", f)
    text = r.out + r.err
    assert "a\\x00b" in text and "x\\u200by" in text and "\\u202eabc" in text
    assert not any(c in text for c in "\x00\u200b\u202e") and "Traceback" not in text
