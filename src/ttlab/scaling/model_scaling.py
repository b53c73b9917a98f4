"""Theorem 2 of paper B tested where it can be: model-size scaling in the approximation-limited regime.

Squared error ∝ N^(−2β/d) (α_N = 2β/d) is a statement about approximation: it shows only when data never limit
the fit. So every network here is trained *online* on fresh, noiseless samples (never reused) of a target on the
sphere S^d embedded isometrically in R^16, and scored by its normalised MSE (MSE / Var f) on a fixed clean test
set. The design — targets, control, oracles, thresholds — is declared in ``docs/model_scaling.md`` before any run:

1. targets (:mod:`ttlab.scaling.lattice_fields`): a smooth C² field (where ReLU networks reach 4/d: 2β/d with the
   effective β = 2 of a piecewise-linear model, so 2β/d with β = 1 is a bound) and a β-Hölder multi-scale field
   (where 2β/d is the sharp rate);
2. the positive control, a ReLU MLP [16, w, w, 1] on a ×1.3 width grid with ≥ 900 samples per parameter: the
   harness is valid at (target, d) only where it reaches ≥ 0.8 × its known rate;
3. the transformers (softmax, and the theory's ReLU attention of Definition 1), ≥ 2 seeds per width;
4. checks per run: the widest width re-run with twice the samples (the data check), the float32 floor, the
   untrained networks (the trivial control), MLE on the inputs; oracles on the same N axis
   (:func:`ttlab.scaling.model_scaling_tasks.oracle_errors`);
5. fits (:func:`ttlab.scaling.model_scaling_analysis.fit_exponent`): α̂_N over log parameter count with a seed
   bootstrap, the t-interval and a leave-one-width-out range.

:func:`run_model_scaling` runs (or resumes) everything through :func:`ttlab.sweep.run_sweep` and writes
``results.json`` and ``model_scaling.png``; :func:`estimate_cost` says what it will cost before any work.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.scaling.model_scaling_analysis import MIN_SIZES, data_check, fit_exponent
from ttlab.scaling.model_scaling_config import CONTROL_ARCH, ModelScalingConfig
from ttlab.scaling.regressor_config import RegressorConfig

__all__ = ["SCHEMA", "VALID_FRACTION", "aggregate", "estimate_cost", "input_ids", "data_checks", "oracle_sizes",
           "pending_checks", "plan_tasks",
           "run_model_scaling", "run_model_size_experiment"]

SCHEMA = "ttlab.scaling.model_size/1"
ORACLE_FIT = "least squares on the centre and 8 points per parameter"
"""How the oracles' pieces are fitted (part of their task configs, so a change of method re-runs them)."""
CHECK_SEED = 0
"""The seed whose run is repeated with twice the samples by the data check."""
VALID_FRACTION = 0.8
"""The declared threshold: the control must reach this fraction of its known rate for the harness to be valid,
and a network's lower bound this fraction of 2β/d for the claim to hold."""


def _base(cfg: ModelScalingConfig, target: str, d: int) -> dict[str, Any]:
    base = {"target": cfg.target_params(target, d), "ambient": cfg.ambient, "n_test": cfg.n_test,
            "target_name": target}
    if cfg.device != "cpu":  # only then: CPU runs keep their cache keys
        base["device"] = cfg.device
    return base


def param_count(cfg: ModelScalingConfig, arch: str, width: int) -> int:
    return _count(cfg.model_config(arch, width))


@functools.lru_cache(maxsize=256)
def _count(mcfg: RegressorConfig) -> int:
    """Parameters of the network ``mcfg`` (built once per architecture, then remembered)."""
    import torch

    from ttlab.scaling.regressors import build_regressor, count_parameters

    with torch.random.fork_rng(devices=[]):
        return count_parameters(build_regressor(mcfg))


def oracle_sizes(cfg: ModelScalingConfig) -> list[int]:
    """The oracles' N axis: ``oracle_points`` log-spaced sizes over every network's parameter counts."""
    counts = [param_count(cfg, a, w) for a in cfg.all_archs() for w in cfg.widths(a)]
    return sorted({int(round(x)) for x in np.geomspace(min(counts), max(counts), cfg.oracle_points)})


def plan_tasks(cfg: ModelScalingConfig) -> dict[str, list[dict[str, Any]]]:
    """Task configs: ``train`` (every target, d, arch, width, seed; plus the widest width at twice the samples,
    ``"check": true``, when ``cfg.check`` — narrower widths are checked later only where the wider fail:
    :func:`pending_checks`) and ``oracle`` (every target, d, oracle size)."""
    train, oracle = [], []
    sizes = oracle_sizes(cfg)
    for target in cfg.targets:
        for d in cfg.ds:
            base = _base(cfg, target, d)
            for arch in cfg.all_archs(target):
                sched = asdict(cfg.schedule(arch))
                widths = cfg.widths(arch)
                for seed in range(cfg.n_seeds(arch)):
                    for w in widths:
                        train.append({**base, "arch": arch, "width": w, "seed": seed,
                                      "model": cfg.model_config(arch, w).to_dict(), "schedule": sched})
                if cfg.check:
                    train.append(_check_task(cfg, target, d, arch, max(widths), CHECK_SEED))
            oracle += [{**base, "n_params": n, "seed": 0, "fit": ORACLE_FIT} for n in sizes]
    return {"train": train, "oracle": oracle}


# ---------------------------------------------------------------------------------------------
# cost


def _step_seconds(cfg: ModelScalingConfig, arch: str, width: int, batch: int, target: str, d: int) -> float:
    """Seconds of one training step at ``batch`` (sampling included), measured now on one thread."""
    import torch

    from ttlab.scaling.model_scaling_tasks import problem_of
    from ttlab.scaling.regressors import build_regressor

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        problem = problem_of(_base(cfg, target, d))
        gen = torch.Generator().manual_seed(0)
        with torch.random.fork_rng(devices=[]):
            model = build_regressor(cfg.model_config(arch, width))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        times = []
        for i in range(5):
            t = time.perf_counter()
            x, _, y = problem.sample(gen, batch)
            loss = torch.mean((model(x) - y) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if i >= 1:
                times.append(time.perf_counter() - t)
        return float(np.median(times))
    finally:
        torch.set_num_threads(before)


def estimate_cost(cfg: ModelScalingConfig, workers: int = 1,
                  cache_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Estimated cost from step times measured now (the smallest and widest width of each arch at each (target,
    d), interpolated linearly in parameter count between them); runs cached in ``cache_dir`` are left out of the
    ``remaining_*`` figures. Oracles are counted at 3 s per size."""
    from ttlab.scaling.manifold_regression import scheduled_wall
    from ttlab.scaling.model_scaling_tasks import online_run
    from ttlab.sweep import cached_keys, task_key

    tasks = plan_tasks(cfg)
    done = cached_keys(online_run, tasks["train"], cache_dir) if cache_dir is not None else set()
    per, remaining = [], []
    probe: dict[tuple[str, str, int], tuple[float, float, float, float]] = {}
    for t in tasks["train"]:
        arch, target, d = t["arch"], t["target_name"], t["target"]["d"]
        key = (arch, target, d)
        sched = cfg.schedule(arch)
        if key not in probe:
            lo_w, hi_w = min(cfg.widths(arch)), max(cfg.widths(arch))
            probe[key] = (param_count(cfg, arch, lo_w), _step_seconds(cfg, arch, lo_w, sched.batch_large, target, d),
                          param_count(cfg, arch, hi_w), _step_seconds(cfg, arch, hi_w, sched.batch_large, target, d))
        n0, s0, n1, s1 = probe[key]
        n = param_count(cfg, arch, t["width"])
        sec_large = s0 + (s1 - s0) * (n - n0) / max(1, n1 - n0)
        small, large = sched.steps(sched.samples(n, float(t.get("sample_scale", 1.0))))
        cost = sec_large * (large + 0.5 * small) + 1.0
        per.append(cost)
        if task_key(online_run, t) not in done:
            remaining.append(cost)
    oracle = 3.0 * len(tasks["oracle"])

    def wall(costs: list[float]) -> float:
        return scheduled_wall(costs + [oracle / max(1, workers)] * max(1, min(workers, len(costs) + 1)), workers)

    return {"n_train_runs": len(tasks["train"]), "n_cached": len(tasks["train"]) - len(remaining),
            "n_oracle_runs": len(tasks["oracle"]), "task_seconds": float(sum(per)) + oracle,
            "wall_seconds": wall(per), "remaining_wall_seconds": wall(remaining), "workers": workers,
            "note": "step times measured now on one thread; other jobs on the machine lengthen the runs"}


# ---------------------------------------------------------------------------------------------
# aggregation


def _rate(target: str, beta: float, d: int) -> dict[str, float]:
    return {"alpha_pred": 2.0 * beta / d, "alpha_4d": 4.0 / d, "alpha_2d": 2.0 / d,
            "control_rate": 4.0 / d if target == "smooth" else 2.0 * beta / d}


def data_checks(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The data check of one (target, d, arch), walked down from the widest width: a width whose MSE (seed
    :data:`CHECK_SEED`) falls by more than 10 % with twice the samples is left out and the next widest is checked,
    until one passes or fewer than 3 widths would remain. ``needs``: the width whose check has not run yet (None when the walk is complete)."""
    main = [r for r in runs if not r.get("check")]
    widths = sorted({r["width"] for r in main}, reverse=True)
    checks: list[dict[str, Any]] = []
    excluded: list[int] = []
    needs = None
    for w in widths:
        if len(widths) - len(excluded) < MIN_SIZES:
            break
        doubled = [r["nmse"] for r in runs if r.get("check") and r["width"] == w]
        if not doubled:
            needs = w
            break
        checks.append({**data_check([r["nmse"] for r in main if r["width"] == w and r["seed"] == CHECK_SEED], doubled),
                       "width": w})
        if not checks[-1]["limited"]:
            break
        excluded.append(w)
    passed = bool(checks) and checks[-1]["limited"] is False
    return {"checks": checks, "excluded": excluded, "passed": passed, "needs": needs}


def _arch_summary(cfg: ModelScalingConfig, runs: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """Fit, data checks and untrained control of one (target, d, arch) from its run rows."""
    main = [r for r in runs if not r.get("check")]
    dc = data_checks(runs) if cfg.check else {"checks": [], "excluded": [], "passed": None, "needs": None}
    kept = [r for r in main if r["width"] not in dc["excluded"]]
    fit = fit_exponent([r["n_params"] for r in kept], [r["nmse"] for r in kept], bootstrap=cfg.bootstrap, seed=seed)
    untrained = fit_exponent([r["n_params"] for r in main], [r["nmse_init"] for r in main], bootstrap=cfg.bootstrap,
                             seed=seed)
    return {"fit": fit, "data_checks": dc["checks"], "data_check": dc["checks"][-1] if dc["checks"] else None,
            "data_check_passed": dc["passed"], "excluded_widths": dc["excluded"], "untrained": untrained,
            "n_runs": len(main), "widths": sorted({r["width"] for r in main}),
            "n_params": sorted({r["n_params"] for r in main})}


def _check_task(cfg: ModelScalingConfig, target: str, d: int, arch: str, width: int, seed: int) -> dict[str, Any]:
    return {**_base(cfg, target, d), "arch": arch, "width": width, "seed": seed, "check": True, "sample_scale": 2.0,
            "model": cfg.model_config(arch, width).to_dict(), "schedule": asdict(cfg.schedule(arch))}


def pending_checks(cfg: ModelScalingConfig, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The data-check runs the walk down the widths asks for next (every seed of each width it needs)."""
    out = []
    for target in cfg.targets:
        for d in cfg.ds:
            for arch in cfg.all_archs(target):
                runs = [r for r in rows if (r["target_name"], r["d"], r["arch"]) == (target, d, arch)]
                need = data_checks(runs)["needs"] if runs and cfg.check else None
                if need is not None:
                    out.append(_check_task(cfg, target, d, arch, need, CHECK_SEED))
    return out


def aggregate(cfg: ModelScalingConfig, train_rows: list[dict[str, Any]],
              oracle_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (target, d): the predictions, the oracles' fits and, per architecture, the fit."""
    out = []
    for ti, target in enumerate(cfg.targets):
        for d in cfg.ds:
            beta = cfg.beta_of(target)
            entry: dict[str, Any] = {"target": target, "d": d, "beta": beta, **_rate(target, beta, d), "archs": {}}
            orc = sorted((r for r in oracle_rows if r["target_name"] == target and r["d"] == d),
                         key=lambda r: r["n_params"])
            entry["oracles"] = {name: fit_exponent([r["n_params"] for r in orc], [r[f"nmse_{name}"] for r in orc],
                                                   bootstrap=0) for name in ("constant", "linear")}
            entry["oracle_points"] = [{"n_params": r["n_params"], "constant": r["nmse_constant"],
                                       "linear": r["nmse_linear"]} for r in orc]
            for ai, arch in enumerate(cfg.all_archs(target)):
                runs = [r for r in train_rows if (r["target_name"], r["d"], r["arch"]) == (target, d, arch)]
                if runs:
                    entry["archs"][arch] = _arch_summary(cfg, runs, seed=1000 * ti + 10 * d + ai)
            ctrl = entry["archs"].get(CONTROL_ARCH, {})
            a = ctrl.get("fit", {}).get("alpha_hat")
            entry["harness_valid"] = None if a is None or ctrl.get("data_check_passed") is False else bool(
                a >= VALID_FRACTION * entry["control_rate"])
            out.append(entry)
    return out


def _rows(records: list[Any], kind: str) -> list[dict[str, Any]]:
    rows = []
    for rec in records:
        if not rec.ok:
            continue
        c = rec.config
        row = {"target_name": c["target_name"], "d": c["target"]["d"], "key": rec.key, **rec.result}
        if kind == "train":
            row.update({"arch": c["arch"], "width": c["width"], "seed": c["seed"], "check": bool(c.get("check"))})
        else:
            row["n_params"] = c["n_params"]
        rows.append(row)
    return rows


def input_ids(cfg: ModelScalingConfig) -> list[dict[str, Any]]:
    """MLE (K = 20) and TwoNN on ``id_points`` inputs of each d: the inputs' intrinsic dimension is d."""
    import torch

    from ttlab.intrinsic_dim import MLE, TwoNN
    from ttlab.scaling.model_scaling_tasks import problem_of

    out = []
    for d in cfg.ds:
        problem = problem_of(_base(cfg, cfg.targets[0], d))
        x, _, _ = problem.sample(torch.Generator().manual_seed(cfg.problem_seed + 7), cfg.id_points)
        X = x.double().numpy()
        out.append({"d": d, "ambient": cfg.ambient, "n": cfg.id_points, "mle": float(MLE(k=20).fit(X).dimension_),
                    "twonn": float(TwoNN().fit(X).dimension_)})
    return out


def run_model_scaling(
    cfg: ModelScalingConfig,
    out_dir: str | os.PathLike[str],
    *,
    backend: str = "local",
    workers: int = 1,
    progress: Callable[[Any], None] | None = None,
    ray_address: str | None = None,
) -> dict[str, Any]:
    """Run (or resume) the experiment; write ``results.json`` and ``model_scaling.png`` to ``out_dir``.

    Runs are cached under ``out_dir/cache`` (one file per finished run), so an interrupted call resumes where it
    stopped and finished runs are never lost. Each task runs on one torch thread. Returns the payload.
    """
    from ttlab.provenance import atomic_savefig, atomic_write_json, versions
    from ttlab.scaling.model_scaling_tasks import online_run, oracle_run
    from ttlab.sweep import resolve_backend, run_sweep, summarize

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise TTLabInputError(f"out_dir {out} exists and is not a directory", params=("out_dir",))
    t0 = time.perf_counter()
    tasks = plan_tasks(cfg)
    kw = dict(backend=resolve_backend(backend, ray_address=ray_address), workers=workers, threads_per_task=1,
              progress=progress)
    rec_train = run_sweep(online_run, tasks["train"], out / "cache", **kw)
    train_rows = _rows(rec_train, "train")
    for _ in range(max(len(cfg.mlp_widths), len(cfg.transformer_widths))):  # the data check walks down the widths
        extra = pending_checks(cfg, train_rows)
        if not extra:
            break
        more = run_sweep(online_run, extra, out / "cache", **kw)
        rec_train += more
        train_rows += _rows(more, "train")
    rec_oracle = run_sweep(oracle_run, tasks["oracle"], out / "cache", **kw)
    oracle_rows = _rows(rec_oracle, "oracle")
    payload: dict[str, Any] = {
        "schema": SCHEMA,
        "config": {**cfg.to_dict(), "backend": backend, "workers": workers},
        "problems": [_base(cfg, t, d)["target"] for t in cfg.targets for d in cfg.ds],
        "results": aggregate(cfg, train_rows, oracle_rows),
        "input_ids": input_ids(cfg),
        "runs": train_rows,
        "oracle_runs": oracle_rows,
        "sweep": summarize(rec_train + rec_oracle),
        "wall_seconds": time.perf_counter() - t0,
        "versions": versions(),
    }
    from ttlab.scaling.figures import plot_model_scaling

    payload["files"] = {"results": str(out / "results.json"), "figure": str(out / "model_scaling.png")}
    atomic_savefig(plot_model_scaling(payload), out / "model_scaling.png", dpi=110)
    atomic_write_json(out / "results.json", payload)
    return payload


def run_model_size_experiment(
    cfg: ModelScalingConfig,
    out: Path,
    *,
    backend: str = "local",
    workers: int = 2,
    ray_address: str | None = None,
    max_hours: float = 2.0,
    estimate_only: bool = False,
    on_estimate: Callable[[dict[str, Any]], None] | None = None,
    progress: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """``ttlab scaling model-size``: check ``out`` and the execution options, estimate the cost and hand it to
    ``on_estimate(cost)``; with ``estimate_only`` return ``{cost, config}``. Otherwise refuse a run whose remaining
    wall time exceeds ``max_hours`` (before any work), hold ``out`` for the run (:func:`ttlab.outputs.hold_out_dir`:
    a second process is refused), run :func:`run_model_scaling` and return its payload with the estimate
    (``cost_estimate``)."""
    from ttlab.outputs import check_out_dir, hold_out_dir
    from ttlab.provenance import atomic_write_json
    from ttlab.scaling.manifold_regression import check_max_hours, execution_threads

    check_out_dir(out)
    check_max_hours(0.0, max_hours)  # a bad limit is refused before the estimate, also with estimate_only
    execution_threads(backend, ray_address, workers, None)
    if cfg.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise TTLabInputError(f"device {cfg.device!r} asked for, but torch sees no CUDA GPU here; use device 'cpu'",
                                  params=("device",))
    cost = estimate_cost(cfg, workers=workers, cache_dir=out / "cache")
    if on_estimate is not None:
        on_estimate(cost)
    if estimate_only:
        return {"cost": cost, "config": cfg.to_dict()}
    check_max_hours(cost["remaining_wall_seconds"], max_hours)
    with hold_out_dir(out):  # a second process on the same folder is refused at once
        payload = run_model_scaling(cfg, out, backend=backend, workers=workers, progress=progress,
                                    ray_address=ray_address)
        payload["cost_estimate"] = cost
        atomic_write_json(out / "results.json", payload)
    return payload
