"""Continuing a step-capped run at its final learning rate (ttlab.lm.continuation) and how a sweep keeps the point."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from ttlab.errors import TTLabInputError


def _capped(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg, **over):
    from ttlab.lm.trainer import train

    cfg = replace(tiny_train_cfg, max_iters=20, patience=50, keep_best=True, **over)
    res = train(token_data, tiny_model_cfg, cfg, tmp_path / "capped")
    assert res.summary["stop_reason"] == "max_iters"
    return cfg, res


def test_a_continuation_is_the_uninterrupted_run_with_a_constant_tail(tmp_path, token_data, tiny_model_cfg,
                                                                       tiny_train_cfg):
    """Capped at 20 then continued to 40 equals, bit for bit, one run of 40 steps whose schedule ends at 20:
    the weights, optimizer moments and data stream are carried over and the tail runs at the final LR."""
    from ttlab.lm.continuation import continue_run
    from ttlab.lm.trainer import train

    cfg, capped = _capped(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg)
    cont = continue_run(token_data, tiny_model_cfg, tmp_path / "capped", tmp_path / "cont", 40)
    ref = train(token_data, tiny_model_cfg, replace(cfg, max_iters=40, lr_decay_iters=20), tmp_path / "ref")
    key = [repr((h["iter"], h["train_loss"], h["val_loss"], h["lr"])) for h in ref.history]  # repr: NaN at 0
    assert [repr((h["iter"], h["train_loss"], h["val_loss"], h["lr"])) for h in cont.history] == key
    assert cont.summary["ddp"]["param_sha256_per_rank"] == ref.summary["ddp"]["param_sha256_per_rank"]
    assert cont.test_loss == ref.test_loss and cont.summary["iters"] == 40
    tail = [h["lr"] for h in cont.history if h["iter"] > 20]
    assert tail and all(lr == pytest.approx(cfg.final_lr) for lr in tail)
    assert cont.summary["extra"]["continuation"] == {"continued_from": str(tmp_path / "capped"), "continued_at": 20}
    assert (tmp_path / "cont" / "config.json").exists() and (tmp_path / "cont" / "best.pt").exists()
    # the source is left as it was; calling again returns the finished continuation
    assert capped.summary["iters"] == 20 and (tmp_path / "capped" / "result.json").exists()
    again = continue_run(token_data, tiny_model_cfg, tmp_path / "capped", tmp_path / "cont", 40)
    assert again.test_loss == cont.test_loss


def test_a_continuation_stops_when_early_stopping_fires(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg):
    """Patience counts on from the source: with no evaluation counted as an improvement (huge min_delta) the
    continuation stops at the first evaluations past the cap, far below its own cap."""
    from ttlab.lm.checkpoint import load_checkpoint_state, save_torch_atomic
    from ttlab.lm.continuation import continue_run

    _capped(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg, min_delta=1e9)
    state = load_checkpoint_state(tmp_path / "capped" / "ckpt.pt")
    assert state["since_best"] == 2  # evaluations at 10 and 20 without improvement (iteration 0 set the best)
    # patience 3 (the source ran with 50, so that it hit its cap): one more evaluation without improvement stops it
    state["train_config"] = {**state["train_config"], "patience": 3}
    save_torch_atomic(state, tmp_path / "capped" / "ckpt.pt")
    cont = continue_run(token_data, tiny_model_cfg, tmp_path / "capped", tmp_path / "cont", 400)
    assert cont.summary["stop_reason"] == "early_stop" and cont.summary["iters"] == 30


def test_continuation_refuses_what_it_cannot_continue(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg):
    from ttlab.lm.continuation import continuation_config, continue_run
    from ttlab.lm.trainer import train

    cfg, _ = _capped(tmp_path, token_data, tiny_model_cfg, tiny_train_cfg)
    for bad in (20, 10, 20.5, True):
        with pytest.raises(TTLabInputError, match="max_iters must be an integer above the source run's cap 20"):
            continuation_config(cfg, bad)  # type: ignore[arg-type]
    with pytest.raises(TTLabInputError, match="no patience"):
        continuation_config(replace(cfg, patience=None), 40)
    assert continuation_config(cfg, 40) == replace(cfg, max_iters=40, lr_decay_iters=20)
    assert continuation_config(replace(cfg, lr_decay_iters=12), 40).lr_decay_iters == 12
    with pytest.raises(TTLabInputError, match="needs its own folder"):
        continue_run(token_data, tiny_model_cfg, tmp_path / "capped", tmp_path / "capped", 40)
    with pytest.raises(TTLabInputError, match="holds no ckpt.pt"):
        continue_run(token_data, tiny_model_cfg, tmp_path / "nothing", tmp_path / "c0", 40)
    early = train(token_data, tiny_model_cfg, replace(cfg, patience=1, min_delta=1e9), tmp_path / "early")
    assert early.summary["stop_reason"] == "early_stop"
    with pytest.raises(TTLabInputError, match="did not stop at its step cap"):
        continue_run(token_data, tiny_model_cfg, tmp_path / "early", tmp_path / "c1", 40)
    continue_run(token_data, tiny_model_cfg, tmp_path / "capped", tmp_path / "c2", 30)
    with pytest.raises(TTLabInputError, match="holds a continuation to 30 steps, not 40"):
        continue_run(token_data, tiny_model_cfg, tmp_path / "capped", tmp_path / "c2", 40)


def test_the_point_is_chosen_by_validation_loss_never_by_test_loss():
    from ttlab.lm.experiments import choose_point

    capped = {"status": "ok", "best_val_loss": 3.0, "test_loss": 3.5, "mean_5_lowest_test": 3.5}
    better_val = {"status": "ok", "best_val_loss": 2.9, "test_loss": 3.9, "mean_5_lowest_test": 3.9}
    better_test = {"status": "ok", "best_val_loss": 3.1, "test_loss": 3.0, "mean_5_lowest_test": 3.0}
    assert choose_point(capped, better_val) == (better_val, capped)
    assert choose_point(capped, better_test) == (capped, better_test)
    assert choose_point(capped, {**better_val, "best_val_loss": 3.0})[0] is capped  # a tie keeps the capped run
    failed = {"status": "failed", "best_val_loss": None}
    assert choose_point(capped, failed) == (capped, failed)


def test_continuation_tasks_start_from_the_pass_that_hit_the_cap(tmp_path):
    """A converged run's cap is its search pass's: the continuation starts from run_dir/search; a chain doubles
    the previous continuation's cap and keeps the original run's stem."""
    from ttlab.lm.experiments import continuation_task

    conv = {"protocol": "converged", "run_dir": str(tmp_path / "runs" / "D1_s0"), "train": {"max_iters": 4000},
            "label": {"name": "D1_s0", "train_tokens": 1}}
    t1 = continuation_task(conv, tmp_path)
    assert t1["protocol"] == "continue" and t1["source_dir"] == str(tmp_path / "runs" / "D1_s0" / "search")
    assert t1["max_iters"] == 8000 and t1["label"]["name"] == "D1_s0_cont8000" and t1["label"]["train_tokens"] == 1
    t2 = continuation_task(t1, tmp_path)
    assert t2["source_dir"] == t1["run_dir"] and t2["max_iters"] == 16000
    assert t2["label"]["name"] == "D1_s0_cont16000" and t2["label"]["continued_from"] == "D1_s0"
    early = continuation_task({**conv, "protocol": "early-stop"}, tmp_path)
    assert early["source_dir"] == conv["run_dir"]


def test_step_capped_reads_the_last_continuation():
    from ttlab.scaling.analysis import step_capped

    capped = {"stop_reason": "max_iters", "schedule_search": {"stop_reason": "max_iters"}}
    cont = {"continued_point": {"name": "x_cont8000", "iters": 4050}}
    assert step_capped(capped)
    assert not step_capped({**capped, **cont, "continuation_stop_reason": "early_stop"})
    assert step_capped({"stop_reason": "early_stop", **cont, "continuation_stop_reason": "max_iters"})
    assert step_capped({**capped, **cont, "continuation_stop_reason": None})  # a failed continuation leaves it capped
    # a record that carries the continuation keys empty (the part's slimmed runs) was not continued: its own pass decides
    empty = {"continued_point": None, "continuation_stop_reason": None, "capped_point": None}
    assert not step_capped({"stop_reason": "early_stop", **empty})
    assert not step_capped({"stop_reason": "max_iters", "schedule_search": {"stop_reason": "early_stop"}, **empty})
    assert step_capped({"stop_reason": "max_iters", **empty})


def test_a_converged_sweep_continues_the_search_pass(tmp_path, monkeypatch):
    """Under the converged protocol the cap is the search pass's: its checkpoint is what a continuation resumes."""
    from tests.tiny_sweep import tiny_data_sweep
    from ttlab.lm.configs import TrainConfig

    monkeypatch.setenv("TTLAB_CACHE", str(tmp_path / "cache"))
    res = tiny_data_sweep(tmp_path / "s", protocol="converged", cap_doublings=1,
                          train=TrainConfig(batch_size=4, max_iters=6, warmup_iters=1, eval_interval=3, eval_iters=2,
                                            patience=50, test_max_tokens=500, lr=3e-3))
    for r in res["runs"]:
        cont = r["continued_point"]
        assert r["capped_point"]["iters"] <= 6 and cont["iters"] == 12
        summary = json.loads((tmp_path / "s" / "runs" / cont["name"] / "result.json").read_text())
        src = tmp_path / "s" / "runs" / r["capped_point"]["name"] / "search"
        assert summary["extra"]["continuation"] == {"continued_from": str(src), "continued_at": 6}


def test_the_report_says_which_point_was_kept_and_why():
    from ttlab.reproduce.parts import common_lm_sweep

    kept = {"capped_point": {"best_val_loss": 3.6649, "iters": 4000}, "point_chosen": "continued",
            "continued_point": {"best_val_loss": 3.65241, "iters": 4050}, "continuation_stop_reason": "early_stop"}
    assert common_lm_sweep.continuation_note(kept) == ("continued point kept (best validation 3.665 capped, 3.652 continued "
                                                       "to step 4050, stopped by early_stop)")
    failed = {**kept, "point_chosen": "capped", "continuation_stop_reason": None}
    assert common_lm_sweep.continuation_note(failed).endswith("stopped by nothing: the continuation failed)")
    assert common_lm_sweep.continuation_note({"capped_point": None}) == ""
