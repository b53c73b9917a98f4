"""The bookkeeping of the LM sweeps (ttlab.lm.experiments), pinned on plain run records: nothing trains.

Learning-rate choice per (size, seed) on the validation loss, the log-space seed average and its spread, the
continuation of step-capped runs (``_run_tasks`` replaced by a stand-in that records its calls), the tasks a sweep
asks for, the checks of its arguments and the ID headline figures. Every expected value is derived here by hand or
with numpy, not by calling the code under test a second time.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.lm import experiments as ex
from ttlab.lm.configs import GPTConfig, TrainConfig
from ttlab.lm.presets import Execution
from ttlab.scaling.analysis import step_capped

METRICS = ("mean_5_lowest_test", "test_loss", "test_loss_best")


# --------------------------------------------------------------------------------------- _pick_and_aggregate
def _run(size, seed, lr, val, loss, status="ok", **extra):
    """One run record as ``_run_tasks`` returns it (the fitted metric is ``mean_5_lowest_test``)."""
    shifted = (lambda d: None) if loss is None else (lambda d: loss + d)
    r = {"name": f"D{size}_s{seed}_lr{lr:g}", "train_tokens": size, "seed": seed, "lr": lr, "status": status,
         "best_val_loss": val, "mean_5_lowest_test": loss, "test_loss": shifted(0.25), "test_loss_best": shifted(0.5),
         "n_params": 1000 + seed, "n_params_non_embedding": 700 + seed}
    r.update(extra)
    return r


def _sweep():
    """Two sizes (given largest first). Size 200, seeds 0 and 1, two learning rates each: the lower validation
    loss picks lr 1e-3 for seed 0 and 3e-4 for seed 1, although the test loss would pick the other one both
    times; a failed run, a run with no test loss and one with a NaN test loss have the lowest validation loss of
    all and must be ignored. Size 100, seeds 2, 0, 1 (in that order) with one learning rate each."""
    return [
        _run(200, 0, 1e-3, 2.0, 3.0),
        _run(200, 0, 3e-4, 2.1, 2.5),                       # better test loss, worse validation loss
        _run(200, 1, 1e-3, 2.2, 2.0),                       # better test loss, worse validation loss
        _run(200, 1, 3e-4, 2.15, 4.0),
        _run(200, 0, 1e-2, 0.5, 1.0, status="failed"),      # a failed run never counts
        _run(200, 1, 1e-2, 0.5, None),                      # no test loss
        _run(200, 1, 3e-2, 0.4, float("nan")),              # NaN test loss
        _run(200, 0, 3e-2, 0.3, float("inf")),              # infinite test loss
        _run(100, 2, 1e-3, 3.0, 5.0),
        _run(100, 0, 1e-3, 3.1, 6.0, test_loss_best=None),  # test_loss_best missing for one seed
        _run(100, 1, 1e-3, 3.2, 7.0),
    ]


def test_pick_and_aggregate_chooses_on_validation_and_averages_seeds_in_log_space():
    runs = _sweep()
    points = ex._pick_and_aggregate(runs, "train_tokens", "mean_5_lowest_test")
    assert [p["train_tokens"] for p in points] == [100, 200]  # sorted by size, not in the order given
    small, large = points

    # size 200: seed 0 keeps lr 1e-3 (test 3.0), seed 1 keeps lr 3e-4 (test 4.0)
    chosen = np.array([3.0, 4.0])
    assert large["seeds"] == [0, 1] and large["lr"] == [1e-3, 3e-4]
    assert large["loss_per_seed"] == [3.0, 4.0]
    assert large["loss"] == pytest.approx(math.sqrt(3.0 * 4.0), rel=1e-15)  # the geometric mean, not 3.5
    assert large["loss"] == pytest.approx(float(np.exp(np.log(chosen).mean())), rel=1e-15)
    assert large["loss_std"] == pytest.approx(math.sqrt(0.5), rel=1e-15)  # sample sd of (3, 4): ddof = 1
    assert large["all_metrics"] == pytest.approx({"mean_5_lowest_test": 3.5, "test_loss": 3.75,
                                                  "test_loss_best": 4.0}, rel=1e-15)
    assert large["n_params"] == 1000 and large["n_params_non_embedding"] == 700 and large["train_tokens"] == 200

    # size 100: seeds in first-seen order, all three averaged; test_loss_best is missing for seed 0
    assert small["seeds"] == [2, 0, 1] and small["lr"] == [1e-3] * 3
    assert small["loss_per_seed"] == [5.0, 6.0, 7.0]
    assert small["loss"] == pytest.approx((5.0 * 6.0 * 7.0) ** (1 / 3), rel=1e-14)
    assert small["loss_std"] == pytest.approx(1.0, rel=1e-15)
    assert small["all_metrics"] == pytest.approx({"mean_5_lowest_test": 6.0, "test_loss": 6.25}, rel=1e-15)
    assert set(small["all_metrics"]) == {"mean_5_lowest_test", "test_loss"}
    assert small["n_params"] == 1002 and small["n_params_non_embedding"] == 702  # the first-seen seed's

    # the kept runs are marked, every other one (failed, no loss, NaN/inf loss, worse validation) is not
    assert [r["selected"] for r in runs] == [True, False, False, True, False, False, False, False, True, True, True]


def test_pick_and_aggregate_with_one_seed_reports_the_loss_itself_and_no_spread():
    v = 3.7
    assert float(np.exp(np.log(v))) != v  # the log round trip moves this value: a geometric mean would show
    runs = [_run(50, 7, 1e-3, 1.0, v), _run(50, 7, 3e-3, 1.2, 1.0), _run(25, 7, 1e-3, 1.5, 9.0)]
    points = ex._pick_and_aggregate(runs, "train_tokens", "mean_5_lowest_test")
    assert [(p["train_tokens"], p["loss"], p["loss_std"], p["seeds"], p["lr"]) for p in points] == [
        (25, 9.0, None, [7], [1e-3]), (50, v, None, [7], [1e-3])]
    assert points[1]["loss_per_seed"] == [v]


def test_pick_and_aggregate_fits_the_loss_it_is_asked_for():
    """With ``loss="test_loss"`` the points carry test_loss, and a run whose mean_5_lowest_test is None still
    counts; the choice of learning rate is still made on the validation loss."""
    runs = [_run(10, 0, 1e-3, 1.0, 2.0, mean_5_lowest_test=None), _run(10, 0, 3e-3, 1.1, 0.1),
            _run(10, 1, 1e-3, 1.0, 3.0)]
    (p,) = ex._pick_and_aggregate(runs, "train_tokens", "test_loss")
    assert p["loss_per_seed"] == [2.25, 3.25] and p["lr"] == [1e-3, 1e-3]
    assert p["loss"] == pytest.approx(math.sqrt(2.25 * 3.25), rel=1e-15)
    assert set(p["all_metrics"]) == {"test_loss", "test_loss_best"}


def test_pick_and_aggregate_by_model_size_and_with_nothing_usable():
    runs = [_run(10, 0, 1e-3, 1.0, 2.0, n_params=5000), _run(10, 0, 1e-3, 1.0, 3.0, n_params=800)]
    points = ex._pick_and_aggregate(runs, "n_params", "mean_5_lowest_test")
    assert [(p["n_params"], p["loss"]) for p in points] == [(800, 3.0), (5000, 2.0)]
    assert [p["train_tokens"] for p in points] == [10, 10]  # a model sweep's points keep their data size
    bad = [_run(10, 0, 1e-3, 1.0, 2.0, status="failed")]
    assert ex._pick_and_aggregate(bad, "train_tokens", "mean_5_lowest_test") == []
    assert bad[0]["selected"] is False


# ------------------------------------------------------------------------------------------ fit_loss_scaling
def test_fit_loss_scaling_needs_three_points_and_caps_the_offset_bootstrap(monkeypatch):
    x, y = np.array([100.0, 200.0, 400.0]), np.array([4.0, 3.0, 2.25])
    assert ex.fit_loss_scaling(x[:2], y[:2], 0) == {}
    fits = ex.fit_loss_scaling(x, y, 0)
    slope = np.polyfit(np.log(x), np.log(y), 1)[0]
    assert fits["power"]["params"]["alpha"] == pytest.approx(-slope, rel=1e-9)  # log(4/3)/log 2
    assert "error" in fits["offset"]  # 3 sizes: the offset form needs 4

    calls = []
    monkeypatch.setattr(ex, "power_law_fits", lambda x, y, **kw: calls.append(kw) or {"power": {}})
    ex.fit_loss_scaling(x, y, 1000)
    ex.fit_loss_scaling(x, y, 50)
    assert calls == [{"bootstrap": 1000, "bootstrap_offset": 200}, {"bootstrap": 50, "bootstrap_offset": 50}]


# ------------------------------------------------------------------------------------ _check_common / _train_for
def _error(fn, *args):
    with pytest.raises(TTLabInputError) as info:
        fn(*args)
    return str(info.value)


def test_check_common_accepts_valid_arguments_and_names_what_is_wrong():
    for protocol in ("converged", "early-stop", "budget"):
        for loss in METRICS:
            ex._check_common(protocol, loss, [0], None)
    ex._check_common("budget", "test_loss", (3,), [1e-3, 0.5, 2.0])
    assert _error(ex._check_common, "bogus", "test_loss", [0], None) == (
        "protocol must be one of converged, early-stop, budget, got 'bogus'.")
    assert _error(ex._check_common, "budget", "val_loss", [0], None) == (
        "loss must be one of mean_5_lowest_test, test_loss, test_loss_best, got 'val_loss'.")
    assert _error(ex._check_common, "budget", "test_loss", [], None) == "give at least one seed."
    for lrs in ([], [0.0], [-1e-3], [1e-3, -1e-3], [float("inf")], [float("nan")], [1e-3, float("inf")]):
        assert _error(ex._check_common, "budget", "test_loss", [0], lrs) == (
            f"learning rates must be positive numbers, got {list(lrs)}.")


def test_train_for_sets_what_the_protocol_and_the_loss_need():
    base = TrainConfig(max_iters=30, lr=2e-3)
    assert base.eval_test is False and base.patience is None
    # the mean of the 5 lowest test losses needs test evaluations; other losses do not
    got = ex._train_for("budget", base, "mean_5_lowest_test")
    assert got == TrainConfig(max_iters=30, lr=2e-3, eval_test=True, patience=None)
    assert ex._train_for("budget", TrainConfig(max_iters=30, lr=2e-3, eval_test=True), "test_loss").eval_test is True
    assert ex._train_for("budget", base, "test_loss") == base
    assert ex._train_for("budget", base, "test_loss_best") == base
    # early stopping protocols get a patience of 5 unless one is given; the budget protocol has none
    for protocol in ("converged", "early-stop"):
        assert ex._train_for(protocol, base, "test_loss") == TrainConfig(max_iters=30, lr=2e-3, patience=5)
        assert ex._train_for(protocol, TrainConfig(patience=3), "test_loss").patience == 3
    assert ex._train_for("budget", TrainConfig(patience=7), "test_loss") == TrainConfig(patience=None)
    assert ex._train_for("converged", base, "mean_5_lowest_test") == TrainConfig(max_iters=30, lr=2e-3,
                                                                                  eval_test=True, patience=5)


# ----------------------------------------------------------------------------------------------- _tasks_for
def test_tasks_for_makes_one_task_per_seed_and_learning_rate(tmp_path):
    model = GPTConfig(vocab_size=32, block_size=16, n_layer=1, n_head=2, n_embd=32)
    cfg = TrainConfig(max_iters=30, lr=2e-3, patience=5, max_tokens=999)
    tasks = ex._tasks_for("/data/x", tmp_path, "early-stop", model, cfg, [np.int64(0), 1], [1e-3, 3], "D999",
                          {"train_tokens": 999})
    expected = []
    for seed, lr, tag in ((0, 1e-3, "0.001"), (0, 3.0, "3"), (1, 1e-3, "0.001"), (1, 3.0, "3")):
        name = f"D999_s{seed}_lr{tag}"
        expected.append({
            "dataset_dir": "/data/x", "run_dir": str(tmp_path / "runs" / name), "protocol": "early-stop",
            "model": model.to_dict(),
            "train": TrainConfig(max_iters=30, lr=lr, patience=5, max_tokens=999, seed=seed).to_dict(),
            "label": {"name": name, "train_tokens": 999, "seed": seed, "lr": lr}})
    assert tasks == expected
    for t in tasks:  # plain Python numbers: the task keys of the cache are computed from these dicts
        assert type(t["label"]["seed"]) is int and type(t["label"]["lr"]) is float
        assert type(t["train"]["seed"]) is int and type(t["train"]["lr"]) is float
    # no learning rates given: the config's own, once per seed
    one = ex._tasks_for("/d", tmp_path, "budget", model, cfg, [4], None, "L1", {})
    assert [t["label"] for t in one] == [{"name": "L1_s4_lr0.002", "seed": 4, "lr": 0.002}]
    assert one[0]["train"]["lr"] == 0.002 and one[0]["train"]["seed"] == 4


# --------------------------------------------------------------------- _source_of / continuation_task / choose
def _task(tmp_path, name, protocol="early-stop", max_iters=40, **label):
    return {"dataset_dir": "/data", "run_dir": str(tmp_path / "runs" / name), "protocol": protocol,
            "model": {"n_layer": 1}, "train": {"max_iters": max_iters, "lr": 1e-3},
            "label": {"name": name, "seed": 0, "lr": 1e-3, **label}}


def test_continuation_task_is_the_capped_task_continued_to_twice_its_cap(tmp_path):
    out = tmp_path / "out"
    conv = _task(tmp_path, "D8_s0", protocol="converged", train_tokens=8)
    t1 = ex.continuation_task(conv, out)
    assert t1 == {"dataset_dir": "/data", "run_dir": str(out / "runs" / "D8_s0_cont80"), "protocol": "continue",
                  "model": {"n_layer": 1}, "train": {"max_iters": 40, "lr": 1e-3},
                  "source_dir": str(tmp_path / "runs" / "D8_s0" / "search"), "max_iters": 80,
                  "label": {"name": "D8_s0_cont80", "seed": 0, "lr": 1e-3, "train_tokens": 8,
                            "continued_from": "D8_s0", "max_iters": 80}}
    assert conv["label"] == {"name": "D8_s0", "seed": 0, "lr": 1e-3, "train_tokens": 8}  # left as it was
    # the next one doubles the continuation's cap (not the training config's) and keeps the original stem
    t2 = ex.continuation_task(t1, out)
    assert t2 == {**t1, "run_dir": str(out / "runs" / "D8_s0_cont160"), "source_dir": str(out / "runs" / "D8_s0_cont80"),
                  "max_iters": 160, "label": {**t1["label"], "name": "D8_s0_cont160", "max_iters": 160}}
    assert ex._source_of(t1) == t1["run_dir"] and ex._source_of(conv) == str(tmp_path / "runs" / "D8_s0" / "search")
    for protocol in ("early-stop", "budget"):
        plain = _task(tmp_path, "D8_s1", protocol=protocol)
        assert ex._source_of(plain) == plain["run_dir"]
        assert ex.continuation_task(plain, out)["source_dir"] == str(tmp_path / "runs" / "D8_s1")
    # a label whose max_iters is None falls back to the training config's
    none = _task(tmp_path, "x", max_iters=7)
    none["label"]["max_iters"] = None
    assert ex.continuation_task(none, out)["max_iters"] == 14


def test_choose_point_never_takes_a_failed_or_a_worse_continuation():
    capped = {"status": "ok", "best_val_loss": 3.0}
    better = {"status": "ok", "best_val_loss": 2.0}
    assert ex.choose_point(capped, better) == (better, capped)
    assert ex.choose_point(capped, {"status": "ok", "best_val_loss": 3.5})[0] is capped
    tie = {"status": "ok", "best_val_loss": 3.0}
    assert ex.choose_point(capped, tie)[0] is capped and ex.choose_point(capped, tie)[1] is tie
    failed_lower = {"status": "failed", "best_val_loss": 1.0}  # a failed run's numbers are never trusted
    assert ex.choose_point(capped, failed_lower) == (capped, failed_lower)


# ---------------------------------------------------------------------------------------------- _continue_capped
class _FakeRunner:
    """Stands in for ``_run_tasks``: records each call and returns the record ``outcome[name]`` for each task."""

    def __init__(self, outcome):
        self.outcome = outcome
        self.calls = []

    def __call__(self, tasks, out, backend, workers, threads_per_task, ray_address, progress):
        self.calls.append({"names": [t["label"]["name"] for t in tasks], "tasks": tasks, "out": out,
                           "backend": backend, "workers": workers, "threads": threads_per_task,
                           "ray_address": ray_address, "progress": progress})
        return [{**t["label"], "run_dir": t["run_dir"], **self.outcome[t["label"]["name"]]} for t in tasks]


def _rec(task, status="ok", **nums):
    return {**task["label"], "status": status, "run_dir": task["run_dir"], **nums}


def _setup(tmp_path):
    """A: converged, its search pass capped; its continuation converges with a lower validation loss.
    B: early-stopped (not capped). C: failed, although its record says max_iters. D: capped; continued, capped
    again, continued again: converges with a higher validation loss than D. E: capped; its continuation fails."""
    ta = _task(tmp_path, "A", protocol="converged")
    tb, tc, td, te = (_task(tmp_path, n) for n in "BCDE")
    tasks = [ta, tb, tc, td, te]
    runs = [_rec(ta, stop_reason="early_stop", schedule_search={"stop_reason": "max_iters"}, best_val_loss=3.0,
                 iters=30, best_iter=20, test_loss=3.3, mean_5_lowest_test=3.2, test_loss_best=3.1),
            _rec(tb, stop_reason="early_stop", best_val_loss=2.0, iters=10),
            _rec(tc, status="failed", stop_reason="max_iters"),
            _rec(td, stop_reason="max_iters", best_val_loss=2.5, iters=40, best_iter=40, test_loss=2.6),
            _rec(te, stop_reason="max_iters", best_val_loss=4.0, iters=40)]
    outcome = {
        "A_cont80": {"status": "ok", "stop_reason": "early_stop", "best_val_loss": 2.8, "iters": 60, "best_iter": 50,
                     "test_loss": 3.4, "mean_5_lowest_test": 3.3, "test_loss_best": 3.35},
        "D_cont80": {"status": "ok", "stop_reason": "max_iters", "best_val_loss": 2.4, "iters": 80},
        "D_cont160": {"status": "ok", "stop_reason": "early_stop", "best_val_loss": 2.6, "iters": 120,
                      "best_iter": 100, "test_loss": 2.0},
        "E_cont80": {"status": "failed", "error": "boom"},
    }
    return tasks, runs, outcome


def test_continue_capped_continues_capped_runs_and_keeps_the_better_point(tmp_path, monkeypatch):
    tasks, runs, outcome = _setup(tmp_path)
    original = [dict(r) for r in runs]
    fake = _FakeRunner(outcome)
    monkeypatch.setattr(ex, "_run_tasks", fake)
    progress_calls = []

    def progress(label, done, total):
        progress_calls.append((label, done, total))

    out = tmp_path / "out"
    execution = Execution(backend="ray", workers=3, threads_per_task=2, ray_address="host:1")
    superseded = ex._continue_capped(tasks, runs, out, execution, 5, progress)

    # round 1: the three capped finished runs; round 2: only D (A converged, E failed); then nothing is capped
    assert [c["names"] for c in fake.calls] == [["A_cont80", "D_cont80", "E_cont80"], ["D_cont160"]]
    for c in fake.calls:
        assert (c["out"], c["backend"], c["workers"], c["threads"], c["ray_address"]) == (out, "ray", 3, 2, "host:1")
        assert c["progress"] is progress
    assert fake.calls[0]["tasks"][0]["source_dir"] == str(tmp_path / "runs" / "A" / "search")
    assert fake.calls[1]["tasks"][0]["source_dir"] == str(out / "runs" / "D_cont80")
    assert fake.calls[1]["tasks"][0]["max_iters"] == 160
    assert progress_calls == [("continuing 3 capped run(s) at their final learning rate", 0, 3),
                              ("continuing 1 capped run(s) at their final learning rate", 0, 1)]

    keys = ("name", "iters", "stop_reason", "best_val_loss", "best_iter", "mean_5_lowest_test", "test_loss",
            "test_loss_best")
    a_cont = fake.calls[0]  # the records the stand-in returned are what is kept
    a_rec = {**outcome["A_cont80"], "name": "A_cont80", "seed": 0, "lr": 1e-3, "continued_from": "A", "max_iters": 80,
             "run_dir": str(out / "runs" / "A_cont80")}
    assert a_cont["tasks"][0]["label"]["name"] == "A_cont80"
    # A: the continuation has the lower validation loss (its test loss is higher: that plays no part)
    assert runs[0] == {**a_rec, "capped_point": {k: original[0].get(k) for k in keys},
                       "continued_point": {k: a_rec.get(k) for k in keys}, "point_chosen": "continued",
                       "continuation_stop_reason": "early_stop"}
    assert runs[0]["capped_point"]["best_val_loss"] == 3.0 and runs[0]["capped_point"]["best_iter"] == 20
    # B and C are untouched
    assert runs[1] == original[1] and runs[2] == original[2]
    # D: the last continuation (160) is compared with D itself, and D is kept
    d_last = {**outcome["D_cont160"], "name": "D_cont160", "seed": 0, "lr": 1e-3, "continued_from": "D",
              "max_iters": 160, "run_dir": str(out / "runs" / "D_cont160")}
    assert runs[3] == {**original[3], "capped_point": {k: original[3].get(k) for k in keys},
                       "continued_point": {k: d_last.get(k) for k in keys}, "point_chosen": "capped",
                       "continuation_stop_reason": "early_stop"}
    # E: its continuation failed: E is kept and no stop reason is reported for the continuation
    assert runs[4]["point_chosen"] == "capped" and runs[4]["continuation_stop_reason"] is None
    assert step_capped(runs[4])  # a failed continuation leaves the run capped: its sweep's claims stay inconclusive
    assert runs[4]["name"] == "E" and runs[4]["best_val_loss"] == 4.0
    assert runs[4]["continued_point"] == {"name": "E_cont80", **{k: None for k in keys if k != "name"}}

    d_mid = {**outcome["D_cont80"], "name": "D_cont80", "seed": 0, "lr": 1e-3, "continued_from": "D", "max_iters": 80,
             "run_dir": str(out / "runs" / "D_cont80")}
    e_cont = {**outcome["E_cont80"], "name": "E_cont80", "seed": 0, "lr": 1e-3, "continued_from": "E", "max_iters": 80,
              "run_dir": str(out / "runs" / "E_cont80")}
    assert superseded == [{**original[0], "superseded_by": "A_cont80"},
                          {**d_last, "superseded_by": "D"}, {**d_mid, "superseded_by": "D"},
                          {**e_cont, "superseded_by": "E"}]


def test_continue_capped_stops_after_the_doublings_it_is_given(tmp_path, monkeypatch):
    tasks, runs, outcome = _setup(tmp_path)
    original = [dict(r) for r in runs]
    fake = _FakeRunner(outcome)
    monkeypatch.setattr(ex, "_run_tasks", fake)
    assert ex._continue_capped(tasks, runs, tmp_path, Execution(), 0, None) == [] and fake.calls == []
    assert runs == original

    superseded = ex._continue_capped(tasks, runs, tmp_path, Execution(), 1, None)  # no progress callback
    assert [c["names"] for c in fake.calls] == [["A_cont80", "D_cont80", "E_cont80"]]
    assert fake.calls[0]["progress"] is None and fake.calls[0]["backend"] == "local"
    # one doubling: D's continuation to 80 steps is its last; its lower validation loss wins although it is capped
    assert runs[3]["point_chosen"] == "continued" and runs[3]["name"] == "D_cont80"
    assert runs[3]["continuation_stop_reason"] == "max_iters" and runs[3]["capped_point"]["name"] == "D"
    assert [s["name"] for s in superseded] == ["A", "D", "E_cont80"]
    assert [s["superseded_by"] for s in superseded] == ["A_cont80", "D_cont80", "E"]


def test_continue_capped_without_capped_runs_asks_for_nothing(tmp_path, monkeypatch):
    fake = _FakeRunner({})
    monkeypatch.setattr(ex, "_run_tasks", fake)
    t = _task(tmp_path, "B")
    runs = [_rec(t, stop_reason="early_stop", best_val_loss=1.0)]
    assert ex._continue_capped([t], runs, tmp_path, Execution(), 3, lambda *a: None) == []
    assert fake.calls == [] and "point_chosen" not in runs[0]


# ------------------------------------------------------------------------------------------------- _id_summary
def _row(**extra):
    return {"intrinsic_dim": 10.0, "intrinsic_dim_harmonic": 9.0, "alpha_d_pred": 0.1, "alpha_n_pred": 0.2,
            "alpha_d_pred_harmonic": 0.3, "alpha_n_pred_harmonic": 0.4, **extra}


def test_id_summary_reads_the_row_for_the_exponent_asked():
    assert ex._id_summary(None, "d") == {"intrinsic_dim": None, "alpha_pred": None, "alpha_pred_band": None}
    assert ex._id_summary(_row(), "d") == {"intrinsic_dim": 10.0, "intrinsic_dim_harmonic": 9.0, "alpha_pred": 0.1,
                                           "alpha_pred_harmonic": 0.3, "alpha_pred_band": None}
    assert ex._id_summary(_row(), "n") == {"intrinsic_dim": 10.0, "intrinsic_dim_harmonic": 9.0, "alpha_pred": 0.2,
                                           "alpha_pred_harmonic": 0.4, "alpha_pred_band": None}
    # estimators but no MLE: no band
    no_mle = _row(ids_by_estimator={"twonn": {"id": 8.0}, "tle": {"id": 12.0}})
    assert ex._id_summary(no_mle, "d")["alpha_pred_band"] is None
    assert ex._id_summary(_row(ids_by_estimator=None), "d")["alpha_pred_band"] is None


def test_id_summary_band_spans_the_estimators_with_a_positive_id():
    ests = {"mle": {"id": 10.0}, "twonn": {"id": 0.5}, "tle": {"id": 16.0}, "gride": {"id": None},
            "mom": {"id": 0.0}, "corrint": {"id": -3.0}, "danco": {"notes": "infeasible"}}
    used = {"mle": 10.0, "twonn": 0.5, "tle": 16.0}
    for sym, alpha in (("d", lambda d: 2 / (2 + d)), ("n", lambda d: 2 / d)):
        band = ex._id_summary(_row(ids_by_estimator=ests), sym)["alpha_pred_band"]
        assert band["kind"] == f"alpha_{sym}" and band["central_estimator"] == "mle"
        assert band["central"] == pytest.approx(alpha(10.0), rel=1e-12)
        assert band["lo"] == pytest.approx(alpha(16.0), rel=1e-12)  # the largest ID gives the smallest exponent
        assert band["hi"] == pytest.approx(alpha(0.5), rel=1e-12)
        assert {k: v["id"] for k, v in band["estimators"].items()} == used
        assert (band["id_lo"], band["id_hi"]) == (0.5, 16.0)
