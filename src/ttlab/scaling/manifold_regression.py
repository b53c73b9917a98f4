"""Theorem 1 of paper B tested directly: regression of β-Hölder targets on d-dimensional manifolds.

The squared generalisation error of a transformer should fall as n^(−α_D), α_D = 2β/(2β + d),
with the *intrinsic* dimension d, whatever the ambient dimension D. This module

1. builds the problems (:mod:`ttlab.scaling.targets`: sphere S^d isometrically embedded in R^D,
   random ridge targets with a power-law spectrum, label noise σ, clean test targets);
2. trains a regressor per (arch, d, D, n, seed, learning rate) — :func:`train_run`, a sweep task
   with AdamW, warm-up + cosine decay to zero, the best-validation checkpoint, and a flag for runs
   whose best step comes close to the step limit (``step_limited``: more steps could still help,
   so such sizes are left out of the slope fits);
3. runs a k-NN reference (:func:`knn_run`) on the same data — a model-free gauge of difficulty;
4. estimates the ID of every (d, D) point cloud with ttlab's MLE and predicts α_D from it;
5. fits α̂_D (power and offset forms, bootstrap CIs via :mod:`ttlab.scaling.fit`) and, when
   asked, α̂_N from a model-size sweep at the largest n; draws the figure.

Every task goes through :func:`ttlab.sweep.run_sweep`, so results are cached per run and a sweep
that is interrupted resumes where it stopped. :func:`run_manifold_sweep` is the one-call entry
point used by ``ttlab scaling manifold``.

The configuration (:class:`ManifoldSweepConfig`, :class:`TrainSettings`, the presets) is
:mod:`ttlab.scaling.manifold_config`'s and the ID estimates and fits (:func:`estimate_ids`, :func:`aggregate`)
:mod:`ttlab.scaling.manifold_analysis`'s; this module holds the sweep tasks (their cache keys
name this module), the plan, the cost estimate and the whole experiment. Size grids, learning-rate selection and
the power-law fits come from :mod:`ttlab.scaling.analysis`; every fitted exponent (α̂_D, α̂_N, the oracles') is
written with the keys of :class:`ttlab.scaling.analysis.FittedExponent` (bootstrap interval). The figure is
:func:`ttlab.scaling.figures.plot_manifold_scaling`. Configs validate when made (``__post_init__``).

May import: numpy, torch (inside the tasks), :mod:`ttlab.errors`, :mod:`ttlab.validation`, :mod:`ttlab.outputs`, :mod:`ttlab.provenance`,
:mod:`ttlab.sweep`, :mod:`ttlab.intrinsic_dim` and the other :mod:`ttlab.scaling` modules. Not :mod:`ttlab.lm` or
the CLI.
"""

from __future__ import annotations

import copy
import functools
import math
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.scaling.manifold_analysis import aggregate, estimate_ids
from ttlab.scaling.manifold_config import (
    DEFAULT_MAX_HOURS,
    DEFAULT_WORKERS,
    ORACLE_KS,
    ManifoldSweepConfig,
    TrainSettings,
)
from ttlab.scaling.regressor_config import RegressorConfig
from ttlab.scaling.targets import ManifoldProblem, make_problem, make_splits
from ttlab.sweep import MAX_WORKERS
from ttlab.validation import check_hours, check_int

__all__ = [
    "approx_run",
    "approximation_error",
    "check_max_hours",
    "estimate_cost",
    "execution_threads",
    "knn_run",
    "lr_at",
    "plan_tasks",
    "minutes_text",
    "run_manifold_experiment",
    "run_manifold_sweep",
    "scheduled_wall",
    "train_run",
]

SCHEMA = "ttlab.scaling.manifold/1"


# ---------------------------------------------------------------------------------------------
# tasks (module-level functions of a JSON config: picklable, cacheable)


@functools.lru_cache(maxsize=16)
def _cached_problem(d: int, ambient: int, manifold: str, beta: float, profile: str, n_features: int,
                    min_freq: float, max_freq: float, noise: float, problem_seed: int,
                    spectrum: str) -> ManifoldProblem:
    return make_problem(d, ambient, manifold=manifold, beta=beta, profile=profile, n_features=n_features,
                        min_freq=min_freq, max_freq=max_freq, noise=noise, problem_seed=problem_seed,
                        spectrum=spectrum)


def _problem_from(config: dict[str, Any]) -> ManifoldProblem:
    """The (per-process cached) problem of a task config; the problem is immutable."""
    p = config["problem"]
    return _cached_problem(
        int(config["d"]), int(config["ambient"]), p["manifold"], float(p["beta"]), p["profile"], int(p["n_features"]),
        float(p["min_freq"]), float(p["max_freq"]), float(p["noise"]), int(p["problem_seed"]),
        p.get("spectrum", "sampled"),
    )


def lr_at(it: int, base: float, warmup: int, total: int) -> float:
    """Learning rate at step ``it``: linear warm-up over ``warmup`` steps, then a cosine to zero at ``total``."""
    if it < warmup:
        return base * (it + 1) / warmup
    progress = (it - warmup) / max(1, total - warmup)
    return base * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def _mse(model: Any, x: Any, y: Any, batch: int = 4096) -> float:
    import torch

    with torch.no_grad():
        total = 0.0
        for a in range(0, x.shape[0], batch):
            total += float(((model(x[a:a + batch]) - y[a:a + batch]) ** 2).sum())
    return total / x.shape[0]


def _adamw(model: Any, lr: float, weight_decay: float) -> Any:
    """AdamW, fused where this torch build supports it on CPU (same maths, fewer kernel launches)."""
    import torch

    try:
        return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=weight_decay, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=weight_decay)


def train_run(config: dict[str, Any]) -> dict[str, Any]:
    """Train one regressor and return its test MSE against the clean target (a sweep task).

    ``config`` keys: ``d``, ``ambient``, ``n``, ``seed``, ``lr``, ``problem`` (make_problem
    arguments), ``model`` (:class:`RegressorConfig` fields), ``train`` (:class:`TrainSettings`
    fields), ``n_test``. The seed fixes the data, the initialisation and the batch order.
    """
    import torch

    t0 = time.perf_counter()
    ts = TrainSettings(**config["train"])
    mcfg = RegressorConfig(**config["model"])
    n, seed, lr = int(config["n"]), int(config["seed"]), float(config["lr"])
    problem = _problem_from(config)
    n_val = ts.n_val(n)
    data = make_splits(problem, n, n_val, int(config["n_test"]), seed)
    xt, yt = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    xv, yv = torch.from_numpy(data.x_val), torch.from_numpy(data.y_val)

    from ttlab.scaling.regressors import build_regressor, count_parameters, train_step

    with torch.random.fork_rng(devices=[]):  # seeded initialisation without touching the caller's RNG
        torch.manual_seed(seed)
        model = build_regressor(mcfg)
    opt = _adamw(model, lr, ts.weight_decay)
    steps = ts.steps(n)
    warmup = max(1, int(ts.warmup_frac * steps))
    eval_every = max(1, steps // ts.eval_points)
    gen = torch.Generator().manual_seed(seed)
    batch = min(ts.batch_size, n)

    model.eval()
    history = [[0, _mse(model, xv, yv)]]
    best_val, best_step = history[0][1], 0
    best_state = copy.deepcopy(model.state_dict())
    perm, pos = torch.randperm(n, generator=gen), 0
    stopped_early = diverged = False
    it = 0
    model.train()
    for it in range(steps):
        if pos + batch > n:
            perm, pos = torch.randperm(n, generator=gen), 0
        idx = perm[pos:pos + batch]
        pos += batch
        if train_step(model, opt, xt[idx], yt[idx], lr_at(it, lr, warmup, steps), ts.grad_clip) is None:
            diverged = True
            break
        step = it + 1
        if step % eval_every == 0 or step == steps:
            model.eval()
            val = _mse(model, xv, yv)
            model.train()
            history.append([step, val])
            if val < best_val:
                best_val, best_step = val, step
                best_state = copy.deepcopy(model.state_dict())
            elif step - best_step > ts.patience_frac * steps:
                stopped_early = True
                break
    model.load_state_dict(best_state)
    model.eval()
    test_mse = _mse(model, torch.from_numpy(data.x_test), torch.from_numpy(data.f_test))
    return {
        "test_mse": test_mse,
        "val_mse": best_val,
        "train_mse": _mse(model, xt, yt),
        "train_mse_clean": _mse(model, xt, torch.from_numpy(data.f_train)),
        "n_val": n_val,
        "n_params": count_parameters(model),
        "steps_planned": steps,
        "steps_run": history[-1][0] if not diverged else it,
        "best_step": best_step,
        "step_limited": bool(best_step > ts.limit_frac * ts.max_steps),
        "stopped_early": stopped_early,
        "diverged": diverged,
        "val_history": history,
        "seconds": time.perf_counter() - t0,
        "threads": torch.get_num_threads(),
    }


def knn_run(config: dict[str, Any]) -> dict[str, Any]:
    """The k-NN oracle (k chosen on validation from :data:`ORACLE_KS`) on the same splits as
    :func:`train_run` (a sweep task)."""
    from ttlab.scaling.targets import knn_regression

    t0 = time.perf_counter()
    ts = TrainSettings(**config["train"])
    n, seed = int(config["n"]), int(config["seed"])
    data = make_splits(_problem_from(config), n, ts.n_val(n), int(config["n_test"]), seed)
    out = knn_regression(data.x_train, data.y_train, data.x_val, data.y_val, data.x_test, data.f_test, ks=ORACLE_KS)
    out["seconds"] = time.perf_counter() - t0
    return out


def approximation_error(problem: ManifoldProblem, cells: int, n_test: int, seed: int) -> float:
    """Squared L2 error of the piecewise-constant approximation of the clean target on ``cells`` Voronoi cells.

    Centres: ``cells`` seeded points of the manifold; the value on a cell is the target at its centre.
    For a β-Hölder target on a d-dimensional manifold the error falls as cells^(−2β/d) (cell diameter
    ∝ cells^(−1/d)): the oracle of the approximation rate that α̂_N is compared with.
    """
    import torch

    check_int(cells, "cells", 1)
    centres = make_splits(problem, cells, 1, n_test, seed)
    c = torch.from_numpy(centres.x_train)
    fc = torch.from_numpy(centres.f_train)
    x, f = torch.from_numpy(centres.x_test), torch.from_numpy(centres.f_test)
    idx = torch.cat([torch.cdist(x[a:a + 1024], c).argmin(dim=1) for a in range(0, x.shape[0], 1024)])
    return float(((fc[idx] - f) ** 2).mean())


def approx_run(config: dict[str, Any]) -> dict[str, Any]:
    """:func:`approximation_error` of a task config with ``cells`` (a sweep task)."""
    t0 = time.perf_counter()
    err = approximation_error(_problem_from(config), int(config["cells"]), int(config["n_test"]), int(config["seed"]))
    return {"approx_mse": err, "seconds": time.perf_counter() - t0}


def _base_task(cfg: ManifoldSweepConfig, d: int, D: int, n: int, seed: int, beta: float, regime: str) -> dict[str, Any]:
    return {
        "d": d, "ambient": D, "n": n, "seed": seed, "n_test": cfg.n_test, "regime": regime,
        "problem": {"manifold": cfg.manifold, "beta": beta, "profile": cfg.profile, "n_features": cfg.n_features,
                    "min_freq": cfg.min_freq_of(d), "max_freq": cfg.max_freq, "noise": cfg.noise_of(regime),
                    "problem_seed": cfg.problem_seed, "spectrum": cfg.spectrum},
        "train": asdict(cfg.train),
    }


def plan_tasks(cfg: ManifoldSweepConfig) -> dict[str, list[dict[str, Any]]]:
    """The sweep's task configs: ``{"data": [...], "model": [...], "knn": [...], "approx": [...]}``.

    ``data``: every (arch, β, regime, d, D, n, seed, lr) at the base width; ``knn``: every (β, regime,
    d, n, oracle seed) at D = min(``ambients``) — the inputs at every D are the same intrinsic points
    under a similarity map, which leaves every neighbour order, hence the k-NN prediction, unchanged;
    ``model``: every (arch, β, d, width, seed, lr) at n = ``model_n``, D =
    min(``ambients``), regime ``model_regime``, plus the widest model at 2·``model_n`` (``"check": true``);
    ``approx``: the approximation oracle for every (β, d, cells).
    """
    data, model, knn, approx = [], [], [], []
    model_n = cfg.model_n or cfg.n_max
    D0 = min(cfg.ambients)
    for beta in cfg.betas:
        for regime in cfg.regimes:
            for d in cfg.ds:
                for D in cfg.ambients:
                    for seed in range(max(cfg.seeds, cfg.oracle_seeds if cfg.knn else 0)):
                        for n in cfg.sizes():
                            base = _base_task(cfg, d, D, n, seed, beta, regime)
                            if cfg.knn and D == D0:  # k-NN is invariant to the similarity embedding: one D
                                knn.append(base)
                            if seed >= cfg.seeds:
                                continue
                            for arch in cfg.archs:
                                for lr in cfg.lrs:
                                    data.append({**base, "lr": lr, "model": cfg.model_config(D, arch=arch).to_dict()})
        if not cfg.model_widths:
            continue
        for d in cfg.ds:
            for cells in cfg.approx_cells:
                approx.append({**_base_task(cfg, d, D0, cells, 0, beta, cfg.model_regime), "cells": cells})
            for arch in cfg.archs:
                for seed in range(cfg.seeds):
                    for w in cfg.model_widths:
                        for lr in cfg.lrs:
                            model.append({**_base_task(cfg, d, D0, model_n, seed, beta, cfg.model_regime), "lr": lr,
                                          "model": cfg.model_config(D0, w, arch).to_dict()})
                    for lr in cfg.lrs:  # the data-limit check: the widest model at twice the data
                        model.append({**_base_task(cfg, d, D0, 2 * model_n, seed, beta, cfg.model_regime), "lr": lr,
                                      "model": cfg.model_config(D0, max(cfg.model_widths), arch).to_dict(),
                                      "check": True})
    return {"data": data, "model": model, "knn": knn, "approx": approx}


# ---------------------------------------------------------------------------------------------
# cost


def _time_steps(mcfg: RegressorConfig, batch: int, threads: int, n_steps: int = 8) -> float:
    """Seconds per training step of ``mcfg`` at this batch size, measured with ``threads`` threads."""
    import torch

    from ttlab.scaling.regressors import build_regressor

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(0)
        model = build_regressor(mcfg)
        opt = _adamw(model, 1e-3, 0.0)
        x, y = torch.randn(batch, mcfg.ambient), torch.randn(batch)
        times = []
        for i in range(n_steps + 2):
            t = time.perf_counter()
            loss = torch.mean((model(x) - y) ** 2)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if i >= 2:
                times.append(time.perf_counter() - t)
        return float(np.median(times))
    finally:
        torch.set_num_threads(before)


def scheduled_wall(costs: list[float], workers: int) -> float:
    """Wall time of tasks costing ``costs`` seconds on ``workers`` parallel workers: longest-first list scheduling
    (no more lanes than tasks, so a huge worker count costs nothing)."""
    lanes = [0.0] * max(1, min(workers, len(costs)))
    for c in sorted(costs, reverse=True):
        lanes[lanes.index(min(lanes))] += c
    return max(lanes)


def estimate_cost(cfg: ManifoldSweepConfig, workers: int = 1, threads_per_task: int = 1,
                  step_seconds: dict[tuple[str, int, int], float] | None = None,
                  cache_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Estimated cost of a sweep from step times measured now (every run to its full schedule).

    Step times are measured here (a few steps per distinct (arch, D, width)) unless ``step_seconds``
    maps (arch, D, width) to seconds per step. Evaluation adds ``eval_points`` passes over the
    validation set (≈ one third of a training step per batch). Early stopping cuts the real cost;
    other work on the machine raises it. With ``cache_dir``, runs already cached there are counted
    separately and left out of the ``remaining_*`` figures.
    """
    from ttlab.sweep import cached_keys, task_key

    tasks = plan_tasks(cfg)
    runs = tasks["data"] + tasks["model"]
    done = cached_keys(train_run, runs, cache_dir) if cache_dir is not None else set()
    measured = dict(step_seconds or {})
    ts = cfg.train
    total = 0.0
    per_task = []
    remaining = []
    for t in runs:
        key = (t["model"]["arch"], t["ambient"], t["model"]["n_embd"])
        if key not in measured:
            measured[key] = _time_steps(RegressorConfig(**t["model"]), ts.batch_size, threads_per_task)
        n = t["n"]
        steps = ts.steps(n)
        batch = min(ts.batch_size, n)
        sec = measured[key] * (batch / ts.batch_size) ** 0.7
        eval_equiv = ts.eval_points * math.ceil(ts.n_val(n) / ts.batch_size) / 3.0
        cost = sec * (steps + eval_equiv) + 1.0  # + data generation and set-up
        per_task.append(cost)
        total += cost
        if task_key(train_run, t) not in done:
            remaining.append(cost)

    def wall(costs: list[float]) -> float:
        return scheduled_wall(costs, workers) + 5.0 * (workers > 1 and bool(costs))

    return {
        "n_train_runs": len(runs),
        "n_cached": len(runs) - len(remaining),
        "n_knn_runs": len(tasks["knn"]),
        "task_seconds": total,
        "wall_seconds": wall(per_task),
        "remaining_task_seconds": float(sum(remaining)),
        "remaining_wall_seconds": wall(remaining),
        "workers": workers,
        "threads_per_task": threads_per_task,
        "step_seconds": {f"{a},D={D},width={w}": s for (a, D, w), s in measured.items()},
        "note": "every run trained to its full schedule at the step times measured now; early stopping "
                "shortens runs, other jobs on the machine lengthen them",
    }


# ---------------------------------------------------------------------------------------------
# the whole experiment


def _run_rows(records: list[Any], kind: str) -> list[dict[str, Any]]:
    rows = []
    for rec in records:
        if not rec.ok:
            continue
        c = rec.config
        row = {"kind": kind, "d": c["d"], "ambient": c["ambient"], "n": c["n"], "seed": c["seed"], "key": rec.key,
               "beta": c["problem"]["beta"], "regime": c.get("regime"), "noise": c["problem"]["noise"], **rec.result}
        if kind == "approx":
            row["cells"] = c["cells"]
        if c.get("check"):
            row["check"] = True
        if kind in ("data", "model"):
            row.update({"arch": c["model"]["arch"], "width": c["model"]["n_embd"], "lr": c["lr"],
                        "model": c["model"]})
        rows.append(row)
    return rows


def run_manifold_sweep(
    cfg: ManifoldSweepConfig,
    out_dir: str | os.PathLike[str],
    *,
    backend: str = "local",
    workers: int = 1,
    threads_per_task: int | None = None,
    progress: Callable[[Any], None] | None = None,
    write: bool = True,
    ray_address: str | None = None,
) -> dict[str, Any]:
    """Run (or resume) the sweep; write ``results.json`` and ``manifold_scaling.png`` to ``out_dir``.

    Runs are cached under ``out_dir/cache``; re-running the same config reuses them (with either
    backend). Returns the payload written to ``results.json``. ``ray_address`` is the Ray
    cluster's address (``backend="ray"`` only: :class:`ttlab.sweep.RayBackend`).
    """
    from ttlab.provenance import atomic_savefig, atomic_write_json, versions
    from ttlab.sweep import resolve_backend, run_sweep, summarize

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise TTLabInputError(f"out_dir {out} exists and is not a directory", params=("out_dir",))
    t0 = time.perf_counter()
    tasks = plan_tasks(cfg)
    cache = out / "cache"
    kw = dict(backend=resolve_backend(backend, ray_address=ray_address), workers=workers,
              threads_per_task=threads_per_task, progress=progress)
    rec_data = run_sweep(train_run, tasks["data"] + tasks["model"], cache, **kw)
    rec_knn = run_sweep(knn_run, tasks["knn"], cache, **kw) if tasks["knn"] else []
    rec_approx = run_sweep(approx_run, tasks["approx"], cache, **kw) if tasks["approx"] else []
    n_data = len(tasks["data"])
    data_runs = _run_rows(rec_data[:n_data], "data")
    model_runs = _run_rows(rec_data[n_data:], "model")
    knn_runs = _run_rows(rec_knn, "knn")
    approx_runs = _run_rows(rec_approx, "approx")
    ids = estimate_ids(cfg)
    agg = aggregate(cfg, data_runs, model_runs, knn_runs, ids, approx_runs)
    summary = summarize(rec_data + rec_knn + rec_approx)
    payload: dict[str, Any] = {
        "schema": SCHEMA,
        "config": {**cfg.to_dict(), "backend": backend, "workers": workers, "threads_per_task": threads_per_task},
        "problems": [make_problem(d, D, manifold=cfg.manifold, beta=beta, profile=cfg.profile,
                                  n_features=cfg.n_features, min_freq=cfg.min_freq_of(d), max_freq=cfg.max_freq,
                                  noise=cfg.noise_of(rg), problem_seed=cfg.problem_seed,
                                  spectrum=cfg.spectrum).describe()
                     for beta in cfg.betas for rg in cfg.regimes for d in cfg.ds for D in cfg.ambients],
        "fits": agg["fits"],
        "model_fits": agg["model_fits"],
        "knn_fits": agg["knn_fits"],
        "approx_fits": agg["approx_fits"],
        "approx_runs": approx_runs,
        "intrinsic_dim": ids,
        "n_ref": agg["n_ref"],
        "runs": data_runs + model_runs,
        "knn_runs": knn_runs,
        "sweep": summary,
        "wall_seconds": time.perf_counter() - t0,
        "versions": versions(extra=("scikit-learn",)),
    }
    if write:
        payload["files"] = {"results": str(out / "results.json"), "figure": str(out / "manifold_scaling.png")}
        from ttlab.scaling.figures import plot_manifold_scaling

        fig = plot_manifold_scaling(payload)
        atomic_savefig(fig, out / "manifold_scaling.png", dpi=120)
        atomic_write_json(out / "results.json", payload)
    return payload


# ---------------------------------------------------------------------------------------------
# ``ttlab scaling manifold``: options checked, cost estimated and announced, sweep run


def minutes_text(seconds: float) -> str:
    """A duration as the cost messages show it: ``"12.5 min"`` from 90 s up, else ``"45 s"``."""
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def execution_threads(backend: str, ray_address: str | None, workers: int, threads: int | None) -> int:
    """Check the execution options (named as the CLI's); torch threads per task (default: cores // workers)."""
    from ttlab.sweep import check_backend

    check_backend(backend)
    if ray_address is not None and backend != "ray":
        raise TTLabInputError(f"ray_address needs backend ray (got backend {backend})", params=("ray_address", "backend"))
    if workers < 1:
        raise TTLabInputError(f"workers must be >= 1, got {workers}", params=("workers",))
    if workers > MAX_WORKERS:
        raise TTLabInputError(f"workers must be <= {MAX_WORKERS}, got {workers}", params=("workers",))
    if threads is not None:
        check_int(threads, "threads", 1, MAX_WORKERS)  # torch's thread count is a C int; no machine has more
    return threads if threads is not None else (max(1, (os.cpu_count() or 1) // workers) if workers > 1 else 1)


def check_max_hours(seconds: float, max_hours: float) -> None:
    """Refuse a sweep whose estimated remaining wall time exceeds ``max_hours`` (before any run starts)."""
    check_hours(max_hours)
    if seconds > max_hours * 3600:
        raise TTLabInputError(
            f"the sweep would take ≈ {minutes_text(seconds)} of wall time (estimated above), over max_hours "
            f"{max_hours:g}; shrink it (quick, fewer ds/ambients/seeds, a smaller n_max or max_steps), add "
            f"workers, or raise max_hours to {math.ceil(seconds / 3600):,} to run it anyway",
            params=("max_hours", "quick", "workers"))


def run_manifold_experiment(
    cfg: ManifoldSweepConfig,
    out: Path,
    *,
    quick: bool = False,
    backend: str = "local",
    workers: int = DEFAULT_WORKERS,
    threads: int | None = None,
    ray_address: str | None = None,
    max_hours: float = DEFAULT_MAX_HOURS,
    estimate_only: bool = False,
    on_estimate: Callable[[dict[str, Any], dict[str, Any] | None, int], None] | None = None,
    on_start: Callable[[dict[str, Any], int], None] | None = None,
    progress: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """``ttlab scaling manifold``: check ``out`` and the execution options, estimate the cost (and, with ``quick``,
    the full default sweep's) and hand it to ``on_estimate(cost, full_cost, threads_per_task)``; with
    ``estimate_only`` return ``{cost, full_sweep_cost, config}``. Otherwise refuse a sweep above ``max_hours``,
    call ``on_start(cost, threads_per_task)``, run :func:`run_manifold_sweep` and rewrite its ``results.json``
    with the estimates (``cost_estimate``, ``full_sweep_cost_estimate``); return that payload."""
    from ttlab.outputs import check_out_dir, hold_out_dir
    from ttlab.provenance import atomic_write_json

    check_out_dir(out)
    check_max_hours(0.0, max_hours)  # a bad limit is refused before the estimate, also with estimate_only
    tpt = execution_threads(backend, ray_address, workers, threads)
    cost = estimate_cost(cfg, workers=workers, threads_per_task=tpt, cache_dir=out / "cache")
    full_cost = estimate_cost(ManifoldSweepConfig(), workers=workers, threads_per_task=tpt) if quick else None
    if on_estimate is not None:
        on_estimate(cost, full_cost, tpt)
    if estimate_only:
        return {"cost": cost, "full_sweep_cost": full_cost, "config": cfg.to_dict()}
    check_max_hours(cost["remaining_wall_seconds"], max_hours)
    if on_start is not None:
        on_start(cost, tpt)
    with hold_out_dir(out):  # a second process on the same folder is refused at once
        payload = run_manifold_sweep(cfg, out, backend=backend, workers=workers, threads_per_task=tpt,
                                     progress=progress, ray_address=ray_address)
        payload["cost_estimate"] = cost
        if full_cost is not None:
            payload["full_sweep_cost_estimate"] = full_cost
        atomic_write_json(out / "results.json", payload)
    return payload
