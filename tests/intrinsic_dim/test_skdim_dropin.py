"""scikit-dimension's shipped test files, run with ``skdim.id`` replaced by :mod:`ttlab.intrinsic_dim.skdim`.

Each test module is read from the installed scikit-dimension package (never copied here) and run with
``pytest.main`` in this process, while ``skdim.id`` (the attribute and ``sys.modules['skdim.id']``), its private
submodules' estimator classes (``skdim.id._PCA.lPCA``, ...) and ``skdim.asPointwise`` are the drop-in's; the
originals are restored afterwards. The outcome of every test is compared with the list of known failures in
docs/scikit_dimension.md ("A drop-in for skdim.id"): a new failure, or a documented one that now passes, fails here.
"""

from __future__ import annotations

import os
import re
import sys
import types
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

skdim = pytest.importorskip("skdim")
pytest.importorskip("sklearn")


import ttlab.intrinsic_dim.skdim as dropin  # noqa: E402
from ttlab.intrinsic_dim.gride import gride_mle  # noqa: E402

SKDIM_TESTS = Path(skdim.__file__).parent / "tests"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "scikit_dimension.md"
FILES = ("test_reference", "test_results", "test_twonn_gride", "test_lpca_rank", "test_dancofit", "test_fork_ph",
         "test_all_params")
ID_NAMES = tuple(sorted(n for n, o in vars(skdim.id).items() if isinstance(o, type)))
"""The estimator classes ``skdim.id`` exports."""
OVERRIDES = {"_gride": gride_mle}
"""Private skdim helpers the tests call for numbers, computed by ttlab instead."""


def _fake_id() -> types.ModuleType:
    mod = types.ModuleType("skdim.id")
    for name in ID_NAMES:
        setattr(mod, name, getattr(dropin, name))
    mod.__all__ = list(ID_NAMES)
    return mod


def _fake_submodule(real: types.ModuleType) -> types.ModuleType:
    mod = types.ModuleType(real.__name__)
    mod.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")})
    for name in ID_NAMES:
        if name in vars(mod):
            setattr(mod, name, getattr(dropin, name))
    for name, value in OVERRIDES.items():
        if name in vars(mod):
            setattr(mod, name, value)
    return mod


@contextmanager
def dropin_in_place_of_skdim_id() -> Iterator[None]:
    """``skdim.id`` -> the drop-in, inside this process; everything restored on exit."""
    saved = {k: v for k, v in sys.modules.items() if k == "skdim.id" or k.startswith(("skdim.id.", "skdim.tests"))}
    saved_attrs = (skdim.id, skdim.asPointwise)
    try:
        for key in saved:
            if key.startswith("skdim.tests"):
                del sys.modules[key]
        sys.modules["skdim.id"] = fake = _fake_id()
        for key, real in saved.items():
            if key.startswith("skdim.id."):
                sys.modules[key] = sub = _fake_submodule(real)
                setattr(fake, key.rsplit(".", 1)[1], sub)
        skdim.id, skdim.asPointwise = fake, dropin.asPointwise
        yield
    finally:
        for key in [k for k in sys.modules if k == "skdim.id" or k.startswith(("skdim.id.", "skdim.tests"))]:
            del sys.modules[key]
        sys.modules.update(saved)
        skdim.id, skdim.asPointwise = saved_attrs


class _Outcomes:
    """pytest plugin: the outcome of each test (``failed`` if its setup, call or teardown failed)."""

    def __init__(self) -> None:
        self.outcome: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        name = report.nodeid.split("::", 1)[-1]
        if report.failed:
            self.outcome[name] = "failed"
        elif report.when == "call" or (report.skipped and name not in self.outcome):
            self.outcome.setdefault(name, report.outcome)

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.outcome["<collection>"] = "failed"


def run_file(name: str) -> dict[str, str]:
    """Outcome of each test of scikit-dimension's ``tests/<name>.py`` against the drop-in."""
    import skdim.id._DANCo  # noqa: F401  (the private submodules the tests import, loaded before the swap)
    import skdim.id._GRIDE  # noqa: F401
    import skdim.id._PCA  # noqa: F401
    import skdim.id._PH  # noqa: F401
    import skdim.id._TwoNN  # noqa: F401

    plugin = _Outcomes()
    args = [str(SKDIM_TESTS / f"{name}.py"), "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-c", os.devnull,
            "--rootdir", str(SKDIM_TESTS), "-W", "ignore", "--no-header", "-rN", "--tb=line"]
    with dropin_in_place_of_skdim_id():
        pytest.main(args, plugins=[plugin])
    return plugin.outcome


def documented_failures() -> dict[str, set[str]]:
    """``{file: {test, ...}}`` from the table of docs/scikit_dimension.md's drop-in section."""
    out: dict[str, set[str]] = {}
    for file, test in re.findall(r"^\| `(test_\w+)\.py` \| `([^`]+)` \|", DOCS.read_text(), flags=re.M):
        out.setdefault(file, set()).add(test)
    return out


@pytest.mark.parametrize("name", FILES)
def test_skdim_shipped_tests_against_the_dropin(name: str) -> None:
    outcome = run_file(name)
    assert outcome, f"no test of {name}.py ran"
    failed = {t for t, o in outcome.items() if o == "failed"}
    passed = sum(o == "passed" for o in outcome.values())
    print(f"{name}.py: {passed} passed, {len(failed)} failed of {len(outcome)}")
    expected = documented_failures().get(name, set())
    assert not failed - expected, f"{name}.py: undocumented failures {sorted(failed - expected)}"
    assert not expected - failed, f"{name}.py: documented failures that now pass {sorted(expected - failed)}"


def test_the_dropin_exports_skdim_ids_classes() -> None:
    assert set(ID_NAMES) <= set(dropin.__all__)
    assert sys.modules["skdim.id"] is skdim.id
