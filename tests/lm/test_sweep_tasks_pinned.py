"""The training tasks every sweep preset produces, pinned byte for byte.

A sweep's runs are cached under keys computed from the task configs (model, train, label; see
:func:`ttlab.sweep.keys.task_key`), so any change of these dicts — a default moved, a field renamed, a value
restated differently — would silently retrain every cached run. The hashes below were computed at commit 93608c3
(before the presets were restructured); the data preparation and the sweep runner are stubbed, so nothing trains.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ttlab.sweep.keys import canonical_json, key_name

N_TRAIN = 1_000_000  # training tokens of the stubbed corpus (the full data preset's sizes depend on it)
VOCAB = 777  # vocabulary of the stubbed tokenizer


class _Captured(Exception):
    """Raised by the stubbed runner once it has the tasks: the sweep stops there."""


class _StubData:
    root = Path("/stub/dataset")
    vocab_size = VOCAB
    key = "stub"

    def n_tokens(self, split: str) -> int:
        return N_TRAIN


class _StubPrepared:
    data = _StubData()

    def describe(self) -> dict:
        return {}


@pytest.fixture
def capture(monkeypatch, tmp_path):
    """Stub prepare_data and run_sweep; returns the dict the first run_sweep call fills (fn, tasks)."""
    got: dict = {}

    def fake_prepare(*args, **kwargs):
        return _StubPrepared()

    def fake_run_sweep(fn, tasks, cache_dir, **kwargs):
        got["fn"] = key_name(fn)
        got["tasks"] = [dict(t) for t in tasks]
        raise _Captured

    monkeypatch.setattr("ttlab.lm.data.prepare_data", fake_prepare)
    monkeypatch.setattr("ttlab.sweep.run_sweep", fake_run_sweep)
    return got


def _digest(got: dict, out: Path) -> str:
    """sha256 of the canonical JSON of the tasks, dataset_dir and run_dir replaced by placeholders."""
    assert got["fn"] == "ttlab.lm.sweeps:train_task"
    tasks = []
    for t in got["tasks"]:
        assert t["dataset_dir"] == str(_StubData.root) and Path(t["run_dir"]).parent == out / "runs"
        tasks.append({**t, "dataset_dir": "<dataset>", "run_dir": "<out>/runs/" + Path(t["run_dir"]).name})
    return hashlib.sha256(canonical_json(tasks).encode("utf-8")).hexdigest()


PINNED = {
    ("data", "full"): "580f088a76a627fd44e90bd0fd85ccaa4df127e3f37efdc41ed4a31e56af0661",
    ("data", "quick"): "1dbc333dcead3c0f445083ccba34638fa2b95208a2a1164fb27b4e18fc671cf0",
    ("data", "standard"): "0d6b85fdde5285723b78c4322c30903315f1eef112820efbfbbe9d8b55e7de9d",
    ("model", "full"): "1f23a1a49148abeebff709f8d30d021005e487d34378eb275fcacc3f7be38a7a",
    ("model", "quick"): "f51a1157bc06c32a79822ef375116580811a14cf1bda1f97dfdb438f883373ec",
    ("model", "standard"): "f51a1157bc06c32a79822ef375116580811a14cf1bda1f97dfdb438f883373ec",
}


@pytest.mark.parametrize("kind,preset", sorted(PINNED))
def test_preset_tasks_are_unchanged(capture, tmp_path, kind, preset):
    from ttlab.lm.experiments import run_data_sweep, run_model_sweep
    from ttlab.lm.presets import sweep_kwargs

    out = tmp_path / "sweep"
    kw = sweep_kwargs(kind, preset)
    with pytest.raises(_Captured):
        (run_data_sweep if kind == "data" else run_model_sweep)(out, **kw)
    assert _digest(capture, out) == PINNED[(kind, preset)]


PINNED_TINY = {
    "data": "2be8aa78caeff35f996029af784285cdfa785261bfaec13a0a5b7c1ee55359f1",
    "model": "deccce64a736310fa21512d47f6cbceda62b52dded776e68a6d1f9c13c527ce9",
}


@pytest.mark.parametrize("kind", ["data", "model"])
def test_reproduce_tiny_tasks_are_unchanged(capture, tmp_path, kind):
    """The tiny sizes of ``ttlab reproduce`` (flat overrides of the quick preset)."""
    from ttlab.lm.experiments import run_data_sweep, run_model_sweep
    from ttlab.lm.presets import IDOptions, sweep_kwargs

    tiny = {"data": dict(corpus="builtin:sotu", max_docs=24, vocab_size=300, model=(1, 2, 32), block_size=16,
                         sizes=(400, 1500, 5000), max_iters=12, eval_interval=6, eval_iters=2, warmup_iters=2,
                         batch_size=4, test_max_tokens=2000, protocol="budget", workers=1, seeds=(0,), cap_doublings=0),
            "model": dict(corpus="builtin:sotu", max_docs=24, vocab_size=300, models=((1, 2, 16), (1, 2, 32), (1, 2, 48)),
                          block_size=16, max_tokens=5000, max_iters=12, eval_interval=6, eval_iters=2, warmup_iters=2,
                          batch_size=4, test_max_tokens=2000, protocol="budget", workers=1, lr=3e-3, lrs=(1e-3, 3e-3))}
    out = tmp_path / "sweep"
    kw = sweep_kwargs(kind, "quick", **tiny[kind], id_options=IDOptions(windows_per_doc=4, tokens_per_doc=12,
                                                                         batch_size=200, k=10))
    with pytest.raises(_Captured):
        (run_data_sweep if kind == "data" else run_model_sweep)(out, **kw)
    assert _digest(capture, out) == PINNED_TINY[kind]


PINNED_CLI = {
    "data-sweep": "2f0ffa769ea89e63bf928e69b8dcad1fe0828987b7ebfc6ed8a6d7f8677bde34",
    "data-sweep --quick": "f8a55114d4cca9a73d919efb759bd1b5ddfc6008613b0b33ca9e221e6f6db323",
    "model-sweep": "c41ffb27ab8b219c31c41d6d3f1a45fd7c261026faa5fdc07151bfdc54089184",
    "model-sweep --quick": "f2e63529337caa27df92722184dca8a411db1402b2b53a6001811c5e27c00fbf",
}
CLI_ARGS = {
    "data-sweep": ("--model", "2x2x16", "--sizes", "1000,2000,4000", "--max-iters", "77", "--lr", "0.004", "--seeds",
                   "3,4", "--patience", "2", "--warmup-iters", "7", "--eval-interval", "11", "--eval-iters", "3",
                   "--batch-size", "5", "--test-max-tokens", "999", "--block-size", "24", "--protocol", "early-stop"),
    "model-sweep": ("--models", "1x2x16,2x2x32,nano", "--max-tokens", "50000", "--max-iters", "55", "--lrs",
                    "0.001,0.002", "--seeds", "0", "--protocol", "converged", "--loss", "test_loss"),
}


@pytest.mark.parametrize("case", sorted(PINNED_CLI))
def test_cli_tasks_are_unchanged(capture, run_cli, tmp_path, case):
    """`ttlab lm data-sweep | model-sweep` with and without --quick: every option reaches the task configs."""
    command, *quick = case.split()
    out = tmp_path / "sweep"
    with pytest.raises(_Captured):
        run_cli("lm", command, "--out", out, *quick, *CLI_ARGS[command])
    assert _digest(capture, out) == PINNED_CLI[case]


def test_task_functions_keep_their_keys():
    """The sweep tasks of the sweeps and the suite keep their cache keys' names (their modules were split)."""
    from ttlab.lm.experiments import train_task
    from ttlab.lm.suite import evaluate_task

    assert key_name(train_task) == "ttlab.lm.sweeps:train_task"
    assert key_name(evaluate_task) == "ttlab.lm.suite:evaluate_task"
