"""The package's layering, checked on the source (ast; nothing is imported):

* no import cycle between ttlab modules, function-local imports included;
* what may import what (``ttlab/__init__.py``): the shared modules import only each other; ``ntp`` and ``sweep``
  only the shared modules; ``intrinsic_dim`` → ``scaling`` → ``lm`` each the ones before it and ``sweep``;
  ``reproduce`` every library package; only ``cli`` (and ``python -m ttlab.lm``) imports ``cli``;
* no module imports another module's private names (``_name``), nor a private module of another package;
* one address per name: outside the packages' ``__init__`` no module re-exports another's names (its ``__all__`` lists
  only what it defines, and no import is kept with ``noqa: F401``);
* no module over 800 lines (400 in reproduce and intrinsic_dim) and no function over 90 lines.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
SHARED = {"ttlab", "ttlab.errors", "ttlab.configs", "ttlab.provenance", "ttlab.outputs", "ttlab.validation",
          "ttlab.markup"}
LIBRARY = ("ntp", "sweep", "intrinsic_dim", "scaling", "lm")
MAY_IMPORT = {  # top-level package -> the packages it may import besides itself and the shared modules
    "shared": set(),
    "ntp": set(),
    "sweep": set(),
    "intrinsic_dim": {"sweep"},
    "scaling": {"sweep", "intrinsic_dim"},
    "lm": {"sweep", "intrinsic_dim", "scaling"},
    "reproduce": set(LIBRARY),
    "cli": set(LIBRARY) | {"reproduce"},
}
EXCEPTIONS = {
    ("ttlab.intrinsic_dim.compare", "ttlab.scaling.theory"),  # the exponent each estimate predicts, read lazily
    ("ttlab.intrinsic_dim.figures", "ttlab.scaling.band"),  # `id compare --plot` draws scaling predict's band, lazily
    ("ttlab.lm.__main__", "ttlab.cli"),  # `python -m ttlab.lm` is the CLI's entry point for torchrun
    ("ttlab", "ttlab.lm.text_exponents"),  # ttlab.predict_exponents, the researcher's one call, loaded on first use
}
MAX_MODULE_LINES = 800
# Rooms sized by what they hold (issue 32): the reproduce parts and the ID estimators, one family per module.
ROOM_LINES = {"ttlab.reproduce": 400, "ttlab.intrinsic_dim": 400}
MAX_FUNCTION_LINES = 90


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "ttlab").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The ttlab module that ``name`` (a module or ``module.attribute``) lives in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> list[tuple[str, list[str], int]]:
    """(imported module, imported names, line) for every import of ttlab in the module, wherever it is."""
    out = []
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.startswith("ttlab")]
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_pkg else module.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
            if base.startswith("ttlab"):
                out.append((base, [a.name for a in node.names], node.lineno))
    return out


def _edges() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for mod, path in MODULES.items():
        for base, names, _ in _imports(mod, path):
            targets = [_resolve(f"{base}.{n}") for n in names] if names else [_resolve(base)]
            if names and base in MODULES and all(f"{base}.{n}" not in MODULES for n in names):
                targets.append(base)
            graph[mod] |= {t for t in targets if t and t != mod}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def _package(module: str) -> str:
    if module in SHARED:
        return "shared"
    return module.split(".")[1]


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert _cycles(_edges()) == []


def test_what_may_import_what():
    bad = []
    for mod, targets in _edges().items():
        pkg = _package(mod)
        for t in targets:
            tp = _package(t)
            if tp in (pkg, "shared") or tp in MAY_IMPORT[pkg] or (mod, t) in EXCEPTIONS:
                continue
            bad.append(f"{mod} imports {t}")
    assert bad == []


def test_no_private_imports_across_modules():
    bad = []
    for mod, path in MODULES.items():
        for base, names, line in _imports(mod, path):
            target = _resolve(base)
            for n in names:
                full = f"{base}.{n}"
                private_name = n.startswith("_") and not n.startswith("__") and full not in MODULES
                if private_name and target != mod:
                    bad.append(f"{mod}:{line} imports {n} from {base}")
            mods = [f"{base}.{n}" for n in names if f"{base}.{n}" in MODULES] or [base]
            for m in mods:
                leaf = m.rpartition(".")
                if leaf[2].startswith("_") and not leaf[2].startswith("__") and not mod.startswith(leaf[0]):
                    bad.append(f"{mod}:{line} imports the private module {m}")
    assert bad == []


def _defined(tree: ast.Module) -> set[str]:
    """The names a module's top level (its ``if``/``try`` blocks included) defines; imports are not definitions."""
    out: set[str] = set()
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.If, ast.Try)):
            todo += node.body + node.orelse + getattr(node, "finalbody", [])
            todo += [n for h in getattr(node, "handlers", []) for n in h.body]
    return out


def test_one_address_per_name():
    bad = []
    for mod, path in MODULES.items():
        if path.name == "__init__.py":
            continue
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        defined = _defined(tree)
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                bad += [f"{mod}.__all__ lists {e.value}, defined elsewhere" for e in node.value.elts
                        if e.value not in defined]
        bad += [f"{mod}:{i} keeps an unused import" for i, line in enumerate(text.splitlines(), 1)
                if "noqa: F401" in line]
    assert bad == []


def test_module_and_function_sizes():
    big, long = [], []
    for mod, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        cap = next((n for room, n in ROOM_LINES.items() if mod == room or mod.startswith(room + ".")),
                   MAX_MODULE_LINES)
        if text.count("\n") > cap:
            big.append(f"{mod}: {text.count(chr(10))} lines (at most {cap})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{mod}.{node.name}: {n} lines")
    assert big == [] and long == []


def test_no_module_restates_its_imports():
    """What a module imports is stated once, by its import statements and the rules above; a prose "Imports:" line in a
    docstring went stale where nothing checked it (issue 32), so there is none."""
    stale = [name for name, path in MODULES.items() if re.search(r"^Imports:", path.read_text(encoding="utf-8"), re.M)]
    assert stale == []


def test_no_test_imports_a_private_name():
    """Tests use the library's public names: a private helper a test needs is made public, so that it has one
    address and a name that says what it is."""
    found = []
    for path in sorted((SRC.parent / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ttlab"):
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                if private or any(p.startswith("_") and not p.startswith("__") for p in node.module.split(".")):
                    found.append(f"{path.name}:{node.lineno} {node.module} {private}")
    assert found == []
