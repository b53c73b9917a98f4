"""scikit-dimension's own installed tests, run against ttlab (conformance).

The test modules that check estimator numbers — ``test_reference.py`` (reference values from R
intrinsicDimension / ider / PCAtools / scran, DADApy, randomly and the original MATLAB code),
``test_results.py`` and ``test_twonn_gride.py`` — are read from the installed scikit-dimension
package (never copied into this repository), with ``skdim.id.<Estimator>`` replaced by the ttlab-backed
shims of :mod:`tests.intrinsic_dim.skdim_shim`. Every top-level statement of each test function is
run on its own: an assertion either passes, fails (a real disagreement: the test fails), or reaches a
documented difference (the shim raises ``Documented``; listed in docs/scikit_dimension.md,
"Conformance"). ``test_zz_conformance_ledger`` checks the tally.
The other installed modules (test_all_params.py, test_fork_ph.py, test_dancofit.py, test_lpca_rank.py) run against
the drop-in :mod:`ttlab.intrinsic_dim.skdim` in test_skdim_dropin.py; test_fork_datasets.py tests scikit-dimension's
data generators (not estimators).
"""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import pytest

skdim = pytest.importorskip("skdim")
pytest.importorskip("sklearn")

from tests.intrinsic_dim import skdim_shim  # noqa: E402

SKDIM_TESTS = Path(skdim.__file__).parent / "tests"
MODULES = ("test_reference", "test_results", "test_twonn_gride")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "scikit_dimension.md"


class Ledger:
    """Tally of the assertions run: passed, and reached a documented difference (by key)."""

    def __init__(self) -> None:
        self.passed: list[tuple[str, int]] = []
        self.documented: list[tuple[str, int, str]] = []
        self.calls: list[str] = []
        self._key: str | None = None
        self._tainted: set[str] = set()

    def begin(self, name: str) -> None:
        self.calls.append(name)
        self._key, self._tainted = None, set()

    def ok(self, name: str, line: int, is_assertion: bool) -> None:
        if is_assertion:
            self.passed.append((name, line))

    def blocked(self, loads: tuple[str, ...], name: str, line: int, is_assertion: bool) -> bool:
        """A statement that reads a value an earlier documented difference left unset is not run (and
        counts as that difference)."""
        if not self._tainted.intersection(loads):
            return False
        if is_assertion:
            self.documented.append((name, line, str(self._key)))
        return True

    def caught(self, exc: BaseException, name: str, line: int, is_assertion: bool, stores: tuple[str, ...]) -> None:
        """A documented difference: the names the statement would have set are left unset."""
        self._key = exc.key  # type: ignore[attr-defined]
        self._tainted.update(stores)
        if is_assertion:
            self.documented.append((name, line, self._key))


LEDGER = Ledger()


def _is_assertion(stmt: ast.stmt) -> bool:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            f = ast.unparse(node.func)
            if "assert" in f or f.endswith((".raises", ".warns", "check_estimator")):
                return True
    return False


def _names(stmt: ast.stmt) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Names a statement reads, and names it sets (assigned, or mutated by a method call like ``a.append``)."""
    loads, stores = set(), set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            (stores if isinstance(node.ctx, ast.Store) else loads).add(node.id)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            f = node.value.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                stores.add(f.value.id)
    return tuple(sorted(loads)), tuple(sorted(stores))


class _Adapt(ast.NodeTransformer):
    """``import skdim`` / ``from skdim.id... import X`` -> the shims; each test statement guarded."""

    def visit_Import(self, node: ast.Import) -> ast.AST:
        if [a.name for a in node.names] == ["skdim"]:
            return ast.parse("skdim = _SHIM").body[0]
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        if node.module and node.module.startswith("skdim.id"):
            return ast.parse("\n".join(f"{a.asname or a.name} = _SHIM.id.{a.name}" for a in node.names)).body
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if not node.name.startswith("test_"):
            return node
        name = node.name
        body: list[ast.stmt] = ast.parse(f"_LEDGER.begin({name!r})").body
        for stmt in node.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):  # docstring
                continue
            a = _is_assertion(stmt)
            loads, stores = _names(stmt)
            guard = ast.parse(
                f"if not _LEDGER.blocked({loads!r}, {name!r}, {stmt.lineno}, {a}):\n"
                "    try:\n        pass\n"
                "    except _DOCUMENTED as _e:\n"
                f"        _LEDGER.caught(_e, {name!r}, {stmt.lineno}, {a}, {stores!r})\n"
                f"    else:\n        _LEDGER.ok({name!r}, {stmt.lineno}, {a})"
            ).body[0]
            guard.body[0].body = [stmt]
            body.append(guard)
        node.body = body
        return node


def _load(name: str) -> types.ModuleType:
    path = SKDIM_TESTS / f"{name}.py"
    tree = _Adapt().visit(ast.parse(path.read_text(), filename=str(path)))
    ast.fix_missing_locations(tree)
    mod = types.ModuleType(f"skdim_conformance_{name}")
    mod.__file__ = str(path)
    mod.__dict__.update(_SHIM=skdim_shim.build(), _LEDGER=LEDGER, _DOCUMENTED=skdim_shim.Documented)
    exec(compile(tree, str(path), "exec"), mod.__dict__)
    if "check_estimator" in mod.__dict__:
        mod.check_estimator = _check_ttlab_estimator
    return mod


def _check_ttlab_estimator(est, **kw):
    """scikit-learn's ``check_estimator`` on the ttlab estimator behind a shim."""
    from sklearn.utils.estimator_checks import check_estimator

    return check_estimator(est.to_ttlab(), **kw)


_N_FUNCS = 0
for _name in MODULES:
    _mod = _load(_name)
    for _attr, _obj in vars(_mod).items():
        if _attr.startswith("test_") and callable(_obj):
            globals()[f"test_{_name.removeprefix('test_')}__{_attr.removeprefix('test_')}"] = _obj
            _N_FUNCS += 1
        elif _attr == "data":
            globals()["data"] = _obj  # test_results' fixture


def test_zz_conformance_ledger(request):
    """Every difference met is documented in docs/scikit_dimension.md; nothing documented is stale."""
    print(tally())
    doc = DOCS.read_text()
    seen = {key for _, _, key in LEDGER.documented}
    for key in seen:
        assert f"`{key}`" in doc, f"difference {key!r} is not documented in {DOCS.name}"
    documented_keys = set(re.findall(r"^\| `([a-zA-Z_-]+)` \|", doc, flags=re.M))
    assert documented_keys == set(skdim_shim.DIFFERENCES) | set(skdim_shim.MISSING), "docs and shim disagree"
    if len(set(LEDGER.calls)) < _N_FUNCS:
        pytest.skip("only part of the conformance tests ran (-k / -x): staleness not checked")
    stale = set(skdim_shim.DIFFERENCES) - seen
    assert not stale, f"deliberate differences that no test meets any more: {stale}"
    assert LEDGER.passed, "no assertion ran"
    count = f"{len(LEDGER.passed)} assertions pass, {len(LEDGER.documented)} reach a documented difference"
    assert count in doc, f"update the count in {DOCS.name}: {count}"


def tally() -> str:
    """``passed / documented`` assertions and the documented ones by key (for the report)."""
    from collections import Counter

    by_key = Counter(key for _, _, key in LEDGER.documented)
    return f"{len(LEDGER.passed)} passed, {len(LEDGER.documented)} documented: {dict(sorted(by_key.items()))}"
