"""The layout of paper A's package (issue 25): no import cycle, the CLI's defaults from cheap modules, and the
one address per name of the split modules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import ttlab.ntp

NTP = Path(ttlab.ntp.__file__).parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(NTP.parent.parent).with_suffix("")
    name = ".".join(rel.parts)
    return name.removesuffix(".__init__")


def _ntp_imports() -> dict[str, set[str]]:
    """ttlab.ntp module → the ttlab.ntp modules it imports anywhere (function-local and TYPE_CHECKING too)."""
    modules = {_module_name(p): p for p in NTP.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and not name.startswith(t + "."):  # a package's own __init__ is no partner
                    graph[name].add(t)
    return graph


def test_no_import_cycle_inside_ttlab_ntp():
    graph = _ntp_imports()
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> None:
        for n in sorted(graph[m]):
            assert n not in path, "import cycle: " + " → ".join(path[path.index(n):] + [n])
            if n not in done:
                visit(n, path + [n])
        done.add(m)

    for m in sorted(graph):
        visit(m, [m])


def test_the_cli_reads_its_defaults_without_numpy_or_torch():
    code = "import sys, ttlab.ntp.config, ttlab.ntp.limits; print('numpy' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_the_split_modules_keep_one_address_per_name():
    """The maxmargin package gathers its solvers; the modules themselves re-export nothing of each other."""
    from ttlab.ntp import cost, generate, limits, maxmargin, train
    from ttlab.ntp.maxmargin import kq, ov, qp, sparse

    assert maxmargin.max_margin_ov is ov.max_margin_ov and maxmargin.max_margin_kq is kq.max_margin_kq
    assert maxmargin.MaxMarginSolution is qp.MaxMarginSolution and maxmargin.solve_ldp is qp.solve_ldp
    assert maxmargin.kq_column_closed_form is kq.kq_column_closed_form
    assert maxmargin.sparse_max_margin_kq is sparse.sparse_max_margin_kq
    assert maxmargin.SparseMaxMargin is sparse.SparseMaxMargin
    gone = {train: ("FIGURE2_NORM_RATIOS", "IMPLS", "INITS", "OPTIMIZERS", "SCHEDULES"),
            cost: ("CHECK_BYTES_PER_TOKEN", "require_readable")}
    assert [(m.__name__, n) for m, names in gone.items() for n in names if hasattr(m, n)] == []
    assert "RandomSpec" not in generate.__all__
    assert limits.DEFAULT_MEMORY_LIMIT_GIB == 4.0 and limits.MATERIALIZE_LIMIT == 2048
