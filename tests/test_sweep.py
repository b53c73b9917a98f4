"""ttlab.sweep: stable keys, on-disk caching and resume, failure isolation, process pool = in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.sweep import (
    LocalBackend,
    available_backends,
    check_backend,
    execute_task,
    load_record,
    run_sweep,
    summarize,
    task_key,
    task_name,
)

# ------------------------------------------------------------------------------ task functions
# (module level, so that spawned worker processes can import them)


def counting_task(config: dict) -> dict:
    """Leaves one file per call in config['calls'], stops or fails on request, returns a seeded draw."""
    calls = Path(config["calls"])
    calls.mkdir(parents=True, exist_ok=True)
    i = config["i"]
    (calls / f"{i}-{len(list(calls.glob(f'{i}-*')))}-{os.getpid()}").touch()
    if (calls / f"interrupt-{i}").exists():
        raise KeyboardInterrupt
    if config.get("fail"):
        raise ValueError(f"task {i} was told to fail")
    rng = np.random.default_rng(i)
    out = {"i": i, "draw": rng.standard_normal(3).tolist(), "pid": os.getpid()}
    if config.get("torch"):
        import torch

        out["threads"] = torch.get_num_threads()
    return out


def other_task(config: dict) -> dict:
    return {}


@task_name("tests.old_place:counting_task")
def moved_counting_task(config: dict) -> dict:
    """counting_task as if moved here from ``tests.old_place``: its keys are the old ones."""
    return counting_task(config)


def unjsonable_task(config: dict) -> object:
    return {"value": object()}


def n_calls(calls: Path, i: int | None = None) -> int:
    pattern = "*-*-*" if i is None else f"{i}-*-*"
    return len(list(calls.glob(pattern)))


def configs(calls: Path, n: int = 4, **extra) -> list[dict]:
    return [{"calls": str(calls), "i": i, **extra} for i in range(n)]


# ------------------------------------------------------------------------------ keys


def test_a_named_task_keeps_its_old_keys_and_cache_after_a_move(tmp_path):
    cfg = configs(tmp_path / "calls", 2)
    assert task_key(moved_counting_task, cfg[0]) == task_key("tests.old_place:counting_task", cfg[0])
    assert task_key(moved_counting_task, cfg[0]) != task_key(counting_task, cfg[0])
    old = run_sweep(moved_counting_task, cfg, tmp_path / "cache")
    assert old[0].fn == "tests.old_place:counting_task" and n_calls(tmp_path / "calls") == 2
    again = run_sweep(moved_counting_task, cfg, tmp_path / "cache")  # found under the old name: no new calls
    assert all(r.cached for r in again) and n_calls(tmp_path / "calls") == 2
    with pytest.raises(TTLabInputError, match="package.module:function"):
        task_name("no_colon")


def test_keys_are_stable_and_discriminating(tmp_path):
    a = {"x": 1, "y": [1, 2], "z": {"b": 2.5, "a": None}}
    b = {"z": {"a": None, "b": 2.5}, "y": [1, 2], "x": 1}  # same content, different order
    assert task_key(counting_task, a) == task_key(counting_task, b)
    assert task_key(counting_task, a) != task_key(counting_task, {**a, "x": 2})
    assert task_key(counting_task, a) != task_key(other_task, a)
    assert task_key(counting_task, a) == task_key("tests.test_sweep:counting_task", a)
    # a fixed value: the key scheme must not drift between versions or processes (hash seeds)
    code = ("from tests.test_sweep import counting_task; from ttlab.sweep import task_key; "
            "print(task_key(counting_task, {'x': 1, 'y': [1, 2], 'z': {'b': 2.5, 'a': None}}))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == task_key(counting_task, a)
    assert len(task_key(counting_task, a)) == 20 and int(task_key(counting_task, a), 16) >= 0
    # literal values (computed before ttlab.sweep became a package): cached work is found under these names
    assert task_key(counting_task, a) == "b61fa43e9757f2754736"
    assert task_key("ttlab.lm.sweeps:train_task", {"a": 1.5, "b": "x"}) == "498a32f5d063cb01a389"
    assert task_key(moved_counting_task, {"i": 0}) == "ea6c90995386ec04b2b0"


def test_bad_tasks_and_configs_are_rejected(tmp_path):
    with pytest.raises(TTLabInputError, match="lambda or a nested function"):
        run_sweep(lambda c: c, [{}], tmp_path)

    def nested(c):
        return c

    with pytest.raises(TTLabInputError, match="module-level"):
        task_key(nested, {})
    with pytest.raises(TTLabInputError, match="JSON-able"):
        task_key(counting_task, {"x": object()})
    with pytest.raises(TTLabInputError, match="JSON-able"):
        task_key(counting_task, {"x": float("nan")})
    with pytest.raises(TTLabInputError, match="must be a dict"):
        task_key(counting_task, [1, 2])
    with pytest.raises(TTLabInputError, match="workers must be an integer >= 1"):
        run_sweep(counting_task, configs(tmp_path), tmp_path / "c", workers=0)
    with pytest.raises(TTLabInputError, match="unknown sweep backend 'slurm'"):
        run_sweep(counting_task, configs(tmp_path), tmp_path / "c", backend="slurm")


def test_ray_backend_without_ray_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed (more in test_sweep_ray.py)
    with pytest.raises(TTLabInputError, match=r"needs Ray, which is not installed; install it with pip install 'ttlab\[ray\]'"):
        run_sweep(counting_task, configs(tmp_path / "calls"), tmp_path / "cache", backend="ray")
    with pytest.raises(TTLabInputError, match="not installed"):
        check_backend("ray")
    assert n_calls(tmp_path / "calls") == 0
    assert available_backends() == ["local"]


class ReversedBackend:
    """A backend object of the caller's own: runs the pending tasks here, last one first."""

    name = "reversed"

    def __init__(self, drop_last: bool = False) -> None:
        self.drop_last = drop_last

    def check(self) -> None:
        pass

    def run(self, tasks, workers, threads, on_done) -> None:
        for task in reversed(tasks[:-1] if self.drop_last else tasks):
            on_done(execute_task(task, threads))


def test_a_backend_object_runs_the_tasks_and_the_runner_keeps_order_and_cache(tmp_path):
    calls, cache = tmp_path / "calls", tmp_path / "cache"
    recs = run_sweep(counting_task, configs(calls, 3), cache, backend=ReversedBackend())
    assert [r.result["i"] for r in recs] == [0, 1, 2] and all(r.ok and not r.cached for r in recs)
    again = run_sweep(counting_task, configs(calls, 3), cache, backend=LocalBackend())
    assert all(r.cached for r in again) and n_calls(calls) == 3
    with pytest.raises(RuntimeError, match="sweep backend 'reversed' returned no record for 1 task"):
        run_sweep(counting_task, configs(calls, 5), cache, backend=ReversedBackend(drop_last=True))


# ------------------------------------------------------------------------------ caching and resume


def test_second_run_uses_the_cache_and_does_not_call_again(tmp_path):
    calls, cache = tmp_path / "calls", tmp_path / "cache"
    seen = []
    first = run_sweep(counting_task, configs(calls), cache, progress=seen.append)
    assert n_calls(calls) == 4
    assert [r.result["i"] for r in first] == [0, 1, 2, 3] and all(r.ok and not r.cached for r in first)
    assert [p.done for p in seen] == [1, 2, 3, 4] and seen[-1].total == 4
    assert sorted(p.name for p in cache.glob("*.json")) == sorted(f"{r.key}.json" for r in first)
    stored = json.loads((cache / f"{first[2].key}.json").read_text())
    assert stored["status"] == "ok" and stored["config"]["i"] == 2 and "torch" in stored["versions"]

    second = run_sweep(counting_task, configs(calls), cache)
    assert n_calls(calls) == 4  # nothing ran again
    assert all(r.cached for r in second)
    assert [r.result for r in second] == [r.result for r in first]

    # extending the grid runs only the new task; duplicates run once
    third = run_sweep(counting_task, configs(calls, 5) + configs(calls, 2), cache)
    assert n_calls(calls) == 5 and n_calls(calls, 4) == 1
    assert len(third) == 7 and third[5].result == third[0].result


@pytest.mark.parametrize("workers", [1, 2])
def test_interrupted_sweep_keeps_finished_work_and_resumes(tmp_path, workers):
    calls, cache = tmp_path / "calls", tmp_path / "cache"
    calls.mkdir()
    (calls / "interrupt-2").touch()  # task 2 behaves like Ctrl-C (in a worker process when workers=2)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(counting_task, configs(calls), cache, workers=workers, threads_per_task=1)
    stored = {json.loads(p.read_text())["config"]["i"] for p in cache.glob("*.json")}
    assert {0, 1} <= stored and 2 not in stored  # finished tasks were kept, the interrupted one was not
    if workers == 1:
        assert stored == {0, 1}
    (calls / "interrupt-2").unlink()
    resumed = run_sweep(counting_task, configs(calls), cache)
    assert [r.cached for r in resumed] == [i in stored for i in range(4)] and all(r.ok for r in resumed)
    assert [n_calls(calls, i) for i in range(3)] == [1, 1, 2]  # 2 was started twice, 0 and 1 once


def test_corrupt_cache_file_is_recomputed(tmp_path):
    calls, cache = tmp_path / "calls", tmp_path / "cache"
    first = run_sweep(counting_task, configs(calls, 2), cache)
    (cache / f"{first[1].key}.json").write_text("{not json")
    assert load_record(cache / f"{first[1].key}.json") is None
    again = run_sweep(counting_task, configs(calls, 2), cache)
    assert [r.cached for r in again] == [True, False] and again[1].result == first[1].result


# ------------------------------------------------------------------------------ failures


def test_a_failing_task_is_recorded_without_losing_the_others(tmp_path):
    calls, cache = tmp_path / "calls", tmp_path / "cache"
    cfgs = configs(calls)
    cfgs[1] = {**cfgs[1], "fail": True}
    recs = run_sweep(counting_task, cfgs, cache)
    assert [r.ok for r in recs] == [True, False, True, True]
    assert recs[1].result is None and "ValueError: task 1 was told to fail" in recs[1].error
    assert "Traceback" in recs[1].error
    s = summarize(recs)
    assert s["n_failed"] == 1 and s["n_ok"] == 3 and s["failures"][0]["error"] == "ValueError: task 1 was told to fail"
    assert json.loads((cache / f"{recs[1].key}.json").read_text())["status"] == "failed"
    # failed tasks are retried on the next run (and only they), unless retry_failed=False
    run_sweep(counting_task, cfgs, cache, retry_failed=False)
    assert n_calls(calls) == 4
    again = run_sweep(counting_task, cfgs, cache)
    assert n_calls(calls) == 5 and n_calls(calls, 1) == 2 and not again[1].ok


def test_unjsonable_result_fails_cleanly(tmp_path):
    (rec,) = run_sweep(unjsonable_task, [{"a": 1}], tmp_path)
    assert not rec.ok and "serialise" in rec.error


# ------------------------------------------------------------------------------ process pool


def test_pool_gives_the_same_results_as_in_process_and_limits_threads(tmp_path):
    import torch

    calls = tmp_path / "calls"
    cfgs = configs(calls, 4)
    cfgs[3] = {**cfgs[3], "fail": True}
    cfgs += [{"calls": str(calls), "i": 10 + k, "torch": True} for k in range(2)]
    before = torch.get_num_threads()
    serial = run_sweep(counting_task, cfgs, tmp_path / "serial", workers=1, threads_per_task=1)
    assert torch.get_num_threads() == before  # restored after in-process tasks
    pooled = run_sweep(counting_task, cfgs, tmp_path / "pooled", workers=2, threads_per_task=1)

    def strip(recs):
        return [(r.key, r.ok, r.result and {k: v for k, v in r.result.items() if k != "pid"}) for r in recs]

    assert strip(serial) == strip(pooled)
    assert not pooled[3].ok and "told to fail" in pooled[3].error  # failure isolated in a worker too
    assert {r.result["pid"] for r in serial if r.ok} == {os.getpid()}
    assert os.getpid() not in {r.result["pid"] for r in pooled if r.ok}  # really ran in other processes
    assert [r.result["threads"] for r in serial[4:]] == [1, 1]
    assert [r.result["threads"] for r in pooled[4:]] == [1, 1] and pooled[4].threads == 1
