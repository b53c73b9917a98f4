"""Output that survives logs: without a terminal (a log file, a pipe, CI, SLURM; pytest's captured stdout is one) the
tables print at full width, never cut to 80 columns (``1.0000…``, ``mle_harmo…``); a narrow ``$COLUMNS`` folds a cell
onto more lines, never cuts it."""

from __future__ import annotations

import io

import numpy as np
import pytest

from ttlab.cli.common import LOG_WIDTH, LogConsole

NANOGPT_CSV = "params,val_loss\n124e6,3.12\n350e6,2.84\n774e6,2.67\n1558e6,2.54\n"


@pytest.fixture
def no_columns(monkeypatch):
    """No ``$COLUMNS`` and no colour forcing: the output is a log's."""
    for name in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def points(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "points.npy"
    np.save(path, rng.standard_normal((300, 3)) @ rng.standard_normal((3, 40)))
    return path


@pytest.fixture
def nano_csv(tmp_path):
    path = tmp_path / "gpt2.csv"
    path.write_text(NANOGPT_CSV)
    return path


def _cells(out: str) -> list[str]:
    """The table rows of ``out`` (lines with a cell border)."""
    return [line for line in out.splitlines() if "│" in line]


def test_reproduce_list_is_whole_in_a_log(run_cli, no_columns):
    res = run_cli("reproduce", "--list")
    assert res.code == 0, res.err
    assert _cells(res.out) and "…" not in res.out
    row = next(line for line in _cells(res.out) if line.startswith("│ model_scaling "))
    assert "Theorem 2 decided: model-size scaling in the approximation-limited regime, with a positive control" in row


def test_table1_is_whole_in_a_log(run_cli, no_columns):
    res = run_cli("scaling", "table1")
    assert res.code == 0, res.err
    assert "…" not in res.out
    row = next(line for line in _cells(res.out) if "α_N predicted" in line)
    assert "0.1050" in row and "0.3889" in row


def test_id_compare_is_whole_in_a_log(run_cli, no_columns, points):
    """Seven columns (batched) and a long note: at 80 columns this cut ``mle_harmonic`` to ``mle_harmo…``."""
    args = ("id", "compare", points, "--batch-size", "60")
    rows = {r["method"]: r for r in run_cli(*args, "--json").json()["rows"]}
    res = run_cli(*args)
    assert res.code == 0, res.err
    assert "…" not in res.out
    row = next(line for line in _cells(res.out) if "mle_harmonic" in line)
    assert f"{rows['mle_harmonic']['dimension']:.3f}" in row
    note = next(line for line in _cells(res.out) if " mom " in line)
    assert "needs at least 101 points per batch." in note


def test_scaling_fit_is_whole_in_a_log(run_cli, no_columns, nano_csv):
    args = ("scaling", "fit", nano_csv, "--x", "params", "--y", "val_loss", "--bootstrap", "50", "--seed", "1")
    fit = run_cli(*args, "--json").json()
    res = run_cli(*args)
    assert res.code == 0, res.err
    assert "…" not in res.out
    lo, hi = fit["ci"]["alpha"]
    row = next(line for line in _cells(res.out) if "alpha" in line)
    assert f"{fit['params']['alpha']:.6g}" in row and f"[{lo:.6g}, {hi:.6g}]" in row


@pytest.mark.parametrize("args", [("reproduce", "--list"), ("scaling", "table1")])
def test_a_narrow_columns_folds_cells_and_never_cuts_them(run_cli, no_columns, monkeypatch, args):
    """``$COLUMNS`` is obeyed without a terminal too; a table wider than it folds its cells (no ``…``)."""
    monkeypatch.setenv("COLUMNS", "40")
    res = run_cli(*args)
    assert res.code == 0, res.err
    assert "…" not in res.out
    assert max(len(line) for line in res.out.splitlines()) <= 40


def test_log_console_width(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")  # colours forced in CI: still a log's width, not rich's 80
    assert LogConsole(file=io.StringIO()).width == LOG_WIDTH
    monkeypatch.setenv("COLUMNS", "132")
    assert LogConsole(file=io.StringIO()).width == 132
