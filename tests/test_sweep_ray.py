"""ttlab.sweep's "ray" backend: same records as "local", shared cache and resume, failures, threads.

One local Ray (2 CPUs) serves the whole module; starting it takes most of this file's time. The
tests that need Ray skip when it is not installed (``pip install 'ttlab[ray]'``); the error users
get without it is tested either way.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.test_sweep import configs, counting_task, n_calls
from ttlab.errors import TTLabInputError
from ttlab.sweep import RayBackend, resolve_backend, run_sweep, summarize
from ttlab.sweep import ray as sweep_ray

MINI = ("--d", "1", "--ambient", "8", "--n-min", "48", "--n-max", "192", "--points", "3", "--seeds", "1",
        "--arch", "mlp", "--width", "8", "--max-steps", "20", "--epochs", "2", "--features", "32",
        "--n-test", "128", "--no-knn", "--json")


def crashing_task(config: dict) -> dict:
    """Kills its own worker process (a segfault or the OOM killer would look the same to Ray)."""
    calls = Path(config["calls"])
    calls.mkdir(parents=True, exist_ok=True)
    (calls / f"crash-{len(list(calls.glob('crash-*')))}").touch()
    os._exit(3)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray with 2 CPUs, started the way run_sweep starts one (quiet, no dashboard, small store)."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # left over from another test module in this process
        ray.shutdown()
    sweep_ray._connect_ray(None, 2)  # what run_sweep(backend="ray", workers=2, threads_per_task=1) does
    assert ray.is_initialized() and ray.cluster_resources()["CPU"] == 2
    yield ray
    ray.shutdown()
    sweep_ray._ray_started.clear()


# workers × threads = 2 CPUs: the size of the fixture's Ray, which run_sweep then reuses (another
# size would make run_sweep restart its local Ray, which takes seconds)
SIZE = {"workers": 2, "threads_per_task": 1}
RAY = {"backend": "ray", **SIZE}


def _strip(records):
    return [(r.key, r.ok, r.result and {k: v for k, v in r.result.items() if k != "pid"}) for r in records]


def test_ray_gives_the_same_records_as_local_and_runs_elsewhere(ray_cluster, tmp_path):
    calls = tmp_path / "calls"
    cfgs = configs(calls, 5)
    local = run_sweep(counting_task, cfgs, tmp_path / "local")
    seen = []
    remote = run_sweep(counting_task, cfgs, tmp_path / "ray", **RAY, progress=seen.append)
    assert _strip(remote) == _strip(local) and all(r.ok and not r.cached for r in remote)
    assert os.getpid() not in {r.result["pid"] for r in remote}  # really ran in Ray workers
    assert sorted(p.done for p in seen) == [1, 2, 3, 4, 5] and seen[-1].total == 5
    stored = json.loads((tmp_path / "ray" / f"{remote[2].key}.json").read_text())  # cached by run_sweep as for local
    assert stored["status"] == "ok" and stored["result"]["draw"] == local[2].result["draw"]
    assert "torch" in stored["versions"]


def test_ray_resumes_from_the_cache_shared_with_local(ray_cluster, tmp_path):
    calls, cache = tmp_path / "calls", tmp_path / "cache"
    run_sweep(counting_task, configs(calls, 2), cache)  # two tasks done by the local backend
    mixed = run_sweep(counting_task, configs(calls, 5), cache, **RAY)
    assert [r.cached for r in mixed] == [True, True, False, False, False] and all(r.ok for r in mixed)
    assert [n_calls(calls, i) for i in range(5)] == [1] * 5  # nothing ran twice
    again = run_sweep(counting_task, configs(calls, 5), cache, **RAY)
    assert all(r.cached for r in again) and n_calls(calls) == 5
    assert [r.result for r in again] == [r.result for r in mixed]


def test_ray_workers_honour_threads_per_task(ray_cluster, tmp_path):
    calls = tmp_path / "calls"
    cfgs = [{"calls": str(calls), "i": 20 + k, "torch": True} for k in range(2)]
    (two,) = run_sweep(counting_task, cfgs[:1], tmp_path / "two", backend="ray", workers=1, threads_per_task=2)
    assert two.result["threads"] == 2 and two.threads == 2
    one = run_sweep(counting_task, cfgs, tmp_path / "one", **RAY)
    assert [r.result["threads"] for r in one] == [1, 1]  # also in the worker that ran with 2 before
    # tasks that no node can take would wait forever in Ray: refused up front
    with pytest.raises(TTLabInputError, match=r"asks Ray for 3 CPU\(s\) \(threads_per_task\) but the largest node"):
        sweep_ray._check_ray_resources(ray_cluster, 3, 0)
    with pytest.raises(TTLabInputError, match=r"asks Ray for 1 GPU\(s\) \(gpus_per_task\)"):
        run_sweep(counting_task, cfgs, tmp_path / "gpu", backend=RayBackend(gpus_per_task=1), **SIZE)
    assert n_calls(calls) == 3


def test_a_ray_the_caller_started_is_used_as_it_is(ray_cluster, tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_ray, "_ray_started", {})  # as if the caller had run ray.init() itself
    gcs = ray_cluster.get_runtime_context().gcs_address
    recs = run_sweep(counting_task, configs(tmp_path / "calls", 2), tmp_path / "cache", backend="ray")  # 1 CPU asked
    assert all(r.ok for r in recs) and ray_cluster.get_runtime_context().gcs_address == gcs  # not restarted
    assert ray_cluster.cluster_resources()["CPU"] == 2


def test_cli_manifold_passes_the_ray_options_to_the_sweep(run_cli, tmp_path, monkeypatch):
    """The wiring only (a real manifold sweep on Ray costs ~20 s here, mostly worker imports)."""
    pytest.importorskip("ray")
    from ttlab.scaling import manifold_regression as mr
    from ttlab.scaling.manifold_config import quick_config

    seen = {}

    def fake_sweep(cfg, out, **kw):
        seen.update(kw)
        return {"sweep": {"n_failed": 0}}

    monkeypatch.setattr(mr, "run_manifold_sweep", fake_sweep)
    res = run_cli("scaling", "manifold", *MINI, "--backend", "ray", "--ray-address", "auto", "--workers", "2",
                  "--out", tmp_path / "o")
    assert res.code == 0, res.err
    assert seen["backend"] == "ray" and seen["ray_address"] == "auto" and seen["workers"] == 2
    # and run_manifold_sweep hands ray_address on to run_sweep, which checks it before running anything
    monkeypatch.undo()
    cfg = quick_config()
    with pytest.raises(TTLabInputError, match="ray_address is only used by backend='ray'"):
        mr.run_manifold_sweep(cfg, tmp_path / "o2", backend="local", ray_address="auto")
    assert not (tmp_path / "o2").exists()


# the tests below kill Ray workers (a crash, a forced cancel): later tasks pay for new workers


def test_ray_failures_are_recorded_and_the_others_finish(ray_cluster, tmp_path):
    calls = tmp_path / "calls"
    cfgs = configs(calls, 4)
    cfgs[1] = {**cfgs[1], "fail": True}
    recs = run_sweep(counting_task, cfgs, tmp_path / "cache", backend=RayBackend(max_retries=0), **SIZE)
    assert [r.ok for r in recs] == [True, False, True, True]
    assert "ValueError: task 1 was told to fail" in recs[1].error and "Traceback" in recs[1].error
    assert n_calls(calls, 1) == 1  # a task's own exception is not retried by Ray
    assert summarize(recs)["n_failed"] == 1
    # a worker that dies is retried max_retries times, then the task is recorded as failed
    (crashed,) = run_sweep(crashing_task, [{"calls": str(calls)}], tmp_path / "cache",
                           backend=RayBackend(max_retries=1), **SIZE)
    assert not crashed.ok and "Ray could not finish the task" in crashed.error and "max_retries" in crashed.error
    assert len(list(calls.glob("crash-*"))) == 2


def test_ray_task_interrupt_stops_the_sweep_and_keeps_finished_work(ray_cluster, tmp_path):
    calls, cache = tmp_path / "calls", tmp_path / "cache"
    calls.mkdir()
    (calls / "interrupt-2").touch()  # task 2 raises KeyboardInterrupt inside its Ray worker
    with pytest.raises(KeyboardInterrupt):
        run_sweep(counting_task, configs(calls), cache, **RAY)
    stored = {json.loads(p.read_text())["config"]["i"] for p in cache.glob("*.json")}
    assert 2 not in stored
    (calls / "interrupt-2").unlink()
    resumed = run_sweep(counting_task, configs(calls), cache, **RAY)
    assert [r.cached for r in resumed] == [i in stored for i in range(4)] and all(r.ok for r in resumed)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"max_retries": -1}, "max_retries must be an integer >= 0"),
        ({"max_retries": True}, "max_retries must be an integer >= 0"),
        ({"gpus_per_task": -0.5}, "gpus_per_task must be a number >= 0"),
        ({"gpus_per_task": float("nan")}, "gpus_per_task must be a number >= 0"),
        ({"gpus_per_task": 1.5}, "must be a whole number"),
        ({"address": ""}, "ray_address must be None, 'auto' or 'host:port'"),
        ({"address": 6379}, "ray_address must be None, 'auto' or 'host:port'"),
    ],
)
def test_bad_ray_options_are_rejected_when_the_backend_is_made(options, match):
    with pytest.raises(TTLabInputError, match=match):
        RayBackend(**options)  # before any sweep: nothing can run with them


def test_backend_names_and_the_ray_address_resolve_to_backend_objects(tmp_path):
    assert resolve_backend("ray", ray_address=" auto ") == RayBackend(address="auto")
    assert resolve_backend("ray") == RayBackend() and RayBackend().max_retries == 2
    with pytest.raises(TTLabInputError, match="ray_address is only used by backend='ray', not 'local'"):
        resolve_backend("local", ray_address="auto")
    with pytest.raises(TTLabInputError, match="carries its own options"):
        resolve_backend(RayBackend(), ray_address="auto")
    with pytest.raises(TTLabInputError, match="ray_address must be None"):
        resolve_backend("ray", ray_address="")
    with pytest.raises(TTLabInputError, match="RayBackend.address="):
        run_sweep(counting_task, configs(tmp_path / "calls"), tmp_path / "cache", backend=object())
    with pytest.raises(TypeError):  # Ray-only options live on RayBackend, not on run_sweep
        run_sweep(counting_task, configs(tmp_path / "calls"), tmp_path / "cache", ray_address="auto")
    assert n_calls(tmp_path / "calls") == 0


def test_unreachable_ray_address_fails_fast(tmp_path):
    pytest.importorskip("ray")
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(TTLabInputError, match=f"cannot reach the Ray cluster at 127.0.0.1:{port}"):
        sweep_ray._check_ray_address(f"127.0.0.1:{port}")
    with pytest.raises(TTLabInputError, match="ray_address must be 'auto', 'host:port'"):
        sweep_ray._check_ray_address("nonsense")


def test_importing_the_sweep_package_imports_neither_ray_nor_torch():
    import subprocess

    code = ("import sys, ttlab.sweep, ttlab.sweep.ray, ttlab.sweep.local; ttlab.sweep.RayBackend(address='auto'); "
            "print('ray' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_cli_without_ray_says_how_to_install_it(run_cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    res = run_cli("scaling", "manifold", *MINI, "--backend", "ray", "--out", tmp_path / "o")
    assert res.code == 2 and "pip install 'ttlab[ray]'" in res.err.replace("\n", " ")
    assert not (tmp_path / "o" / "results.json").exists()
