"""The trainer: schedule, learning, files, determinism, exact resume, early stopping, --max-tokens."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.lm.checkpoint import load_model, load_run
from ttlab.lm.configs import TrainConfig
from ttlab.lm.data import write_token_dataset
from ttlab.lm.evaluation import METRICS_COLUMNS, mean_lowest, params_digest
from ttlab.lm.trainer import train, train_converged

from .conftest import pattern_docs


def read_metrics(path):
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    return [{k: float(v) for k, v in r.items()} for r in rows]


def test_schedule_warmup_cosine_floor():
    c = TrainConfig(lr=1e-3, min_lr=1e-4, warmup_iters=10, max_iters=110)
    assert c.lr_at(0) == pytest.approx(1e-3 / 11) and c.lr_at(9) == pytest.approx(1e-3 * 10 / 11)
    assert c.lr_at(10) == pytest.approx(1e-3)
    assert c.lr_at(60) == pytest.approx(1e-4 + 0.5 * 9e-4)  # halfway through the cosine
    assert c.lr_at(110) == c.lr_at(500) == pytest.approx(1e-4)
    lrs = [c.lr_at(i) for i in range(10, 111)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:]))
    short = replace(c, lr_decay_iters=60)  # schedule length independent of max_iters
    assert short.lr_at(60) == pytest.approx(1e-4) and short.lr_at(35) == pytest.approx(1e-4 + 0.5 * 9e-4)
    assert TrainConfig(lr=2e-3).final_lr == pytest.approx(2e-4)
    with pytest.raises(TTLabInputError, match="batch_size must be an integer >= 1"):
        TrainConfig(batch_size=0)
    with pytest.raises(TTLabInputError, match="min_lr must be in"):
        TrainConfig(lr=1e-3, min_lr=1e-2)


def test_trains_and_writes_the_run_folder(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg):
    res = train(token_data, tiny_model_cfg, tiny_train_cfg, tmp_path / "run")
    out = tmp_path / "run"
    assert res.status == "finished" and res.iters == 40
    for name in ("ckpt.pt", "best.pt", "metrics.csv", "result.json", "config.json"):
        assert (out / name).exists(), name
    rows = read_metrics(out / "metrics.csv")
    with open(out / "metrics.csv") as fh:
        assert tuple(next(csv.reader(fh))) == METRICS_COLUMNS
    assert [r["iter"] for r in rows] == [0, 10, 20, 30, 40]
    assert repr(res) == (f"TrainResult(finished after 40 iterations, val {res.history[-1]['val_loss']:.4f}, test "
                         f"{res.test_loss:.4f}; 5 evaluations; {out})")  # one line, not the history
    assert json.loads(json.dumps(res.to_dict()))["history"][-1]["iter"] == 40
    assert list(res.to_frame()["iter"]) == [0, 10, 20, 30, 40]
    assert [r["tokens_seen"] for r in rows] == [i * 8 * 16 for i in (0, 10, 20, 30, 40)]
    assert math.isnan(rows[0]["train_loss"]) and rows[0]["val_loss"] == pytest.approx(math.log(32), abs=0.15)
    assert rows[-1]["val_loss"] < rows[0]["val_loss"] - 1.0  # the pattern is learnable
    s = json.loads((out / "result.json").read_text())
    vals = [r["val_loss"] for r in rows]
    assert s["final_val_loss"] == pytest.approx(vals[-1]) and s["best_val_loss"] == pytest.approx(min(vals))
    assert s["mean_5_lowest_val"] == pytest.approx(np.mean(sorted(vals[1:])[:5]))  # the untrained model never counts
    assert s["test_loss"] < rows[0]["val_loss"] - 1.0 and s["test_windows"] == (token_data.n_tokens("test") - 1) // 16
    assert s["stop_reason"] == "max_iters" and s["model"] == tiny_model_cfg.to_dict()
    assert s["train"]["lr"] == tiny_train_cfg.lr and "torch" in s["versions"] and "tokenizers" in s["versions"]
    assert s["tokens_per_s"] > 0 and s["wall_time_s"] >= s["train_time_s"] > 0
    assert s["ddp"]["world_size"] == 1 and s["ddp"]["ranks_agree"]
    m, meta = load_model(out)
    assert meta["iter"] == 40 and params_digest(m) == s["ddp"]["param_sha256_per_rank"][0]
    best, bmeta = load_model(out, which="best")
    assert bmeta["val_loss"] == pytest.approx(s["best_val_loss"])
    run = load_run(out)
    assert run.result["iters"] == 40 and run.config["model"]["n_embd"] == 32


def test_same_seed_same_result_other_seed_differs(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg):
    cfg = replace(tiny_train_cfg, max_iters=20)
    a = train(token_data, tiny_model_cfg, cfg, tmp_path / "a")
    b = train(token_data, tiny_model_cfg, cfg, tmp_path / "b")
    c = train(token_data, tiny_model_cfg, replace(cfg, seed=1), tmp_path / "c")
    key = lambda r: [(h["train_loss"], h["val_loss"]) for h in r.history]  # noqa: E731
    assert key(a)[1:] == key(b)[1:] and a.test_loss == b.test_loss
    assert key(a)[1:] != key(c)[1:]


@pytest.mark.parametrize("how", ["signal", "crash"])
def test_resume_is_exact(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg, how):
    """An interrupted run, resumed, gives the same losses and weights as an uninterrupted one."""
    cfg = tiny_train_cfg
    full = train(token_data, tiny_model_cfg, cfg, tmp_path / "full")

    class Crash(RuntimeError):
        pass

    def stopper(it):
        if it == 27:  # between two evaluations (every 10 steps)
            if how == "crash":
                raise Crash  # no chance to save: resume restarts from the checkpoint of step 20
            return True  # graceful stop (as on SIGINT/SIGTERM): state saved at step 27
        return False

    out = tmp_path / "part"
    if how == "crash":
        with pytest.raises(Crash):
            train(token_data, tiny_model_cfg, cfg, out, should_stop=stopper)
        assert torch.load(out / "ckpt.pt", weights_only=False)["iter"] == 20
    else:
        part = train(token_data, tiny_model_cfg, cfg, out, should_stop=stopper)
        assert part.status == "interrupted" and part.iters == 27 and not (out / "result.json").exists()
    with pytest.raises(TTLabInputError, match="already holds a run"):
        train(token_data, tiny_model_cfg, cfg, out)
    resumed = train(token_data, tiny_model_cfg, cfg, out, resume=True)
    assert resumed.status == "finished"
    assert _same_but_time(out, tmp_path / "full")
    assert resumed.summary["ddp"]["param_sha256_per_rank"] == full.summary["ddp"]["param_sha256_per_rank"]
    assert resumed.test_loss == full.test_loss and resumed.summary["resumed_at"] == [27 if how == "signal" else 20]
    # resuming a finished run returns it without training
    again = train(token_data, tiny_model_cfg, cfg, out, resume=True)
    assert again.summary == json.loads((out / "result.json").read_text())


def _same_but_time(a, b):
    ra, rb = read_metrics(a / "metrics.csv"), read_metrics(b / "metrics.csv")
    strip = lambda rows: [{k: v for k, v in r.items() if k != "elapsed_s"} for r in rows]  # noqa: E731
    nan_eq = lambda x, y: (x == y) or (math.isnan(x) and math.isnan(y))  # noqa: E731
    assert len(ra) == len(rb)
    for x, y in zip(strip(ra), strip(rb)):
        assert all(nan_eq(x[k], y[k]) for k in x), (x, y)
    return True


def test_resume_refuses_a_changed_config(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg):
    cfg = replace(tiny_train_cfg, max_iters=10)
    train(token_data, tiny_model_cfg, cfg, tmp_path / "r", should_stop=lambda it: it == 5)
    with pytest.raises(TTLabInputError, match=r"differs from the checkpoint's in lr \(0.003 → 0.001\)"):
        train(token_data, tiny_model_cfg, replace(cfg, lr=1e-3), tmp_path / "r", resume=True)
    with pytest.raises(TTLabInputError, match="model config differs.*n_embd"):
        train(token_data, tiny_model_cfg.replace(n_embd=16), cfg, tmp_path / "r", resume=True)
    # runtime-only settings may change
    assert train(token_data, tiny_model_cfg, replace(cfg, device="auto", compile=False), tmp_path / "r",
                 resume=True).status == "finished"


def test_early_stopping_and_best_checkpoint(tmp_path, tiny_model_cfg):
    """Few training tokens + a large constant learning rate → overfitting → early stop at the best val."""
    vocab = 32
    rng = np.random.default_rng(0)
    docs = {"train": [rng.integers(0, vocab - 1, 120).tolist()], "val": [rng.integers(0, vocab - 1, 400).tolist()],
            "test": [rng.integers(0, vocab - 1, 400).tolist()]}
    data = write_token_dataset(tmp_path / "d", docs, vocab_size=vocab, eot_id=vocab - 1)
    cfg = TrainConfig(batch_size=8, max_iters=400, lr=1e-2, min_lr=1e-2, warmup_iters=0, eval_interval=10, eval_iters=4,
                      patience=3, device="cpu", threads=1)
    res = train(data, tiny_model_cfg, cfg, tmp_path / "run")
    s = res.summary
    vals = [r["val_loss"] for r in res.history]
    assert s["stop_reason"] == "early_stop" and s["iters"] < 400
    assert s["best_iter"] == res.history[int(np.argmin(vals))]["iter"] and s["iters"] == s["best_iter"] + 30
    assert s["test_loss_best"] < s["test_loss"]  # the best-val checkpoint generalises better than the last one
    assert s["epochs"] > 10


def test_max_tokens_limits_training_to_a_prefix(tmp_path, tiny_model_cfg, tiny_train_cfg):
    """Two datasets that agree on the first N training tokens give the same training with --max-tokens N."""
    base = pattern_docs(10, 100, 32, 0)
    other = base[:3] + pattern_docs(7, 100, 32, 5)  # same first 3 documents = first 303 tokens
    evald = {"val": pattern_docs(3, 100, 32, 1), "test": pattern_docs(3, 100, 32, 2)}
    d1 = write_token_dataset(tmp_path / "d1", {"train": base, **evald}, vocab_size=32, eot_id=31)
    d2 = write_token_dataset(tmp_path / "d2", {"train": other, **evald}, vocab_size=32, eot_id=31)
    cfg = replace(tiny_train_cfg, max_iters=20, max_tokens=300)
    r1 = train(d1, tiny_model_cfg, cfg, tmp_path / "r1")
    r2 = train(d2, tiny_model_cfg, cfg, tmp_path / "r2")
    assert r1.summary["ddp"]["param_sha256_per_rank"] == r2.summary["ddp"]["param_sha256_per_rank"]
    full1 = train(d1, tiny_model_cfg, replace(cfg, max_tokens=None), tmp_path / "f1")
    full2 = train(d2, tiny_model_cfg, replace(cfg, max_tokens=None), tmp_path / "f2")
    assert full1.summary["ddp"]["param_sha256_per_rank"] != full2.summary["ddp"]["param_sha256_per_rank"]
    assert r1.summary["data"]["train_tokens_used"] == 300 and r1.summary["epochs"] == pytest.approx(20 * 8 * 16 / 300)
    with pytest.raises(TTLabInputError, match="max_tokens 5000 exceeds the 1010 training tokens") as info:
        train(d1, tiny_model_cfg, replace(cfg, max_tokens=5000), tmp_path / "x")
    assert info.value.params == ("max_tokens",)
    with pytest.raises(TTLabInputError, match="fewer than block_size"):
        train(d1, tiny_model_cfg, replace(cfg, max_tokens=10), tmp_path / "y")


def test_two_pass_sets_the_schedule_length_to_the_stopping_point(tmp_path, tiny_model_cfg):
    vocab = 32
    rng = np.random.default_rng(1)
    docs = {"train": [rng.integers(0, vocab - 1, 150).tolist()], "val": [rng.integers(0, vocab - 1, 300).tolist()],
            "test": [rng.integers(0, vocab - 1, 300).tolist()]}
    data = write_token_dataset(tmp_path / "d", docs, vocab_size=vocab, eot_id=vocab - 1)
    cfg = TrainConfig(batch_size=8, max_iters=300, lr=1e-2, warmup_iters=5, eval_interval=10, eval_iters=4,
                      patience=3, device="cpu", threads=1)
    res = train_converged(data, tiny_model_cfg, cfg, tmp_path / "run")
    search = json.loads((tmp_path / "run" / "search" / "result.json").read_text())
    stop = max(search["best_iter"], 5 + 10)
    assert search["stop_reason"] == "early_stop"
    assert res.summary["train"]["max_iters"] == res.summary["train"]["lr_decay_iters"] == stop == res.iters
    assert res.summary["extra"]["schedule_search"]["best_iter"] == search["best_iter"]
    assert res.summary["train"]["patience"] is None
    assert res.summary["train"]["eval_interval"] == min(10, stop // 10) and res.summary["n_evals"] >= 10


def test_mean_lowest():
    assert mean_lowest([5, 1, 4, 2, 3, 9, float("nan")], 5) == pytest.approx(3.0)
    assert mean_lowest([2.0, 1.0], 5) == pytest.approx(1.5)
    assert math.isnan(mean_lowest([], 5))


def test_bad_inputs(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg):
    with pytest.raises(TTLabInputError, match="smaller than the data's"):
        train(token_data, tiny_model_cfg.replace(vocab_size=8), tiny_train_cfg, tmp_path / "a")
    small_val = write_token_dataset(tmp_path / "sv", {"train": [[1] * 100], "val": [[1] * 5], "test": []}, 32, 31)
    with pytest.raises(TTLabInputError, match="validation split has 6 tokens"):
        train(small_val, tiny_model_cfg, tiny_train_cfg, tmp_path / "b")
    with pytest.raises(TTLabInputError, match="checkpoint .* not found"):
        load_model(tmp_path / "nothing")


def test_resume_after_a_crash_before_result_json(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg):
    """A crash between the last checkpoint and result.json: resuming trains no further steps."""
    first = train(token_data, tiny_model_cfg, tiny_train_cfg, tmp_path / "r")
    (tmp_path / "r" / "result.json").unlink()
    again = train(token_data, tiny_model_cfg, tiny_train_cfg, tmp_path / "r", resume=True)
    assert again.iters == first.iters == 40 and again.test_loss == first.test_loss
    assert again.summary["tokens_seen"] == first.summary["tokens_seen"] and len(again.history) == len(first.history)
    assert json.loads((tmp_path / "r" / "result.json").read_text())["iters"] == 40


def test_train_config_dict_round_trip_is_strict():
    """TrainConfig.to_dict / from_dict (ttlab.configs.DictConfig): exact round trip, unknown keys and bad values raise."""
    cfg = TrainConfig(batch_size=3, lr=2e-3, patience=4, threads=1)
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    assert cfg.to_dict()["patience"] == 4
    with pytest.raises(TTLabInputError, match="unknown TrainConfig field"):
        TrainConfig.from_dict({**cfg.to_dict(), "learning_rate": 1.0})
    with pytest.raises(TTLabInputError, match="batch_size"):
        TrainConfig.from_dict({**cfg.to_dict(), "batch_size": 0})
