"""Data- and model-scaling sweeps of GPT models on real text, and the ID ablations (paper B, Figures 2–4).

:func:`run_data_sweep` trains the same model on geometrically spaced amounts of training data
(``max_tokens``), :func:`run_model_sweep` trains models of several sizes on the same data. Every run
is a task of :func:`ttlab.sweep.run_sweep` (``local`` process pool or ``ray``), cached in
``DIR/tasks`` and resumed from its own checkpoint in ``DIR/runs/<name>`` when a sweep is
interrupted. The corpus is tokenized once, before the tasks start (on a cluster the cache folder must
be on a shared file system).

Training protocols (stated in results.json):

* ``converged`` — :func:`ttlab.lm.train_converged`: early stopping on validation under a schedule of
  ``max_iters`` steps, then a retrain with the cosine schedule ending at the stopping point (the protocol a
  fair small-scale data sweep needs; two passes).
* ``early-stop`` — one pass, early stopping on validation (patience), the best-validation weights
  are scored.
* ``budget`` — one pass of exactly ``max_iters`` steps (a fixed token budget per run).

Test loss per run: ``test_loss`` (final weights, all test windows), ``test_loss_best`` (best-validation
weights) and ``mean_5_lowest_test`` (mean of the 5 lowest test losses over the periodic
evaluations, the authors' choice; needs ``eval_test``). With several learning rates, each (size,
seed) keeps the one with the lowest best validation loss; seeds are averaged in log space. The fitted
exponent is the slope magnitude of log loss vs log size (power form; 95 % interval: the OLS
t-interval below 6 points, where a bootstrap is degenerate, else the bootstrap) and, as a
secondary estimate, the exponent of E + A·x^(−α).

ID: the final-layer embeddings of the largest run on its test split, the paper's protocol (batches
of ``batch_size``, MLE with ``k`` neighbours, arithmetic mean), and the harmonic (MacKay–Ghahramani)
combination as a second figure; predicted α_D = 2/(2+d), α_N = 2/d (β = 1).

The settings — typed presets that contain the runs' TrainConfig, SweepData, Execution and IDOptions
(:class:`DataSweepPreset`, :class:`ModelSweepPreset`, :func:`sweep_kwargs`) — are :mod:`ttlab.lm.presets`'s;
:func:`run_preset_sweep` runs a preset with overrides (the CLI's one call). Text such as
``"4x4x128"`` or ``"0,1"`` is parsed by the CLI (:mod:`ttlab.cli.lm_sweeps`), not here. Size grids, learning-rate
selection and the exponent fits come from :mod:`ttlab.scaling.analysis` (the JSON keys of a fitted exponent are
:class:`ttlab.scaling.analysis.FittedExponent`'s), the figures from :mod:`ttlab.scaling.figures`.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.lm.configs import DEFAULT_MODEL, GPTConfig, TrainConfig
from ttlab.lm.model import GPT
from ttlab.lm.presets import (
    BOOTSTRAP,
    DEFAULT_LOSS,
    LOSS_METRICS,
    MIN_TOKENS,
    N_SIZES,
    PROTOCOLS,
    DataSweepPreset,
    Execution,
    IDOptions,
    SweepData,
    SweepPreset,
)
from ttlab.lm.train_corpus import check_train_memory
from ttlab.provenance import atomic_write_json, versions
from ttlab.scaling.analysis import best_by, exponent_summary, geometric_sizes, power_law_fits, step_capped
from ttlab.scaling.figures import plot_id_ablations, plot_lm_scaling
from ttlab.sweep import task_name

__all__ = [
    "run_preset_sweep",
    "sweep_summary",
    "ablations_summary",
    "fit_loss_scaling",
    "id_ablations",
    "measure_run_id",
    "run_data_sweep",
    "run_model_sweep",
    "train_seed_replicates",
    "train_task",
]

ProgressFn = Callable[[str, int, int], None]  # (stage label, done, total)


# ------------------------------------------------------------------------------------------- tasks
@task_name("ttlab.lm.sweeps:train_task")  # its name before the module was renamed: cached runs keep their keys
def train_task(config: dict[str, Any]) -> dict[str, Any]:
    """One training run of a sweep (a :func:`ttlab.sweep.run_sweep` task; resumes its checkpoint)."""
    from ttlab.lm.continuation import continue_run
    from ttlab.lm.data import TokenizedCorpus
    from ttlab.lm.trainer import train, train_converged

    data = TokenizedCorpus(config["dataset_dir"])
    model_cfg = GPTConfig.from_dict(config["model"])
    cfg = TrainConfig.from_dict(config["train"])
    out = Path(config["run_dir"])
    extra = {"sweep": config.get("label", {})}
    if config["protocol"] == "continue":
        res = continue_run(data, model_cfg, config["source_dir"], out, int(config["max_iters"]), runtime=cfg,
                           extra=extra)
    elif config["protocol"] == "converged":
        res = train_converged(data, model_cfg, cfg, out, resume=True, extra=extra)
    else:
        res = train(data, model_cfg, cfg, out, resume=True, extra=extra)
    if res.status != "finished":
        # Ctrl-C stopped the run at a checkpoint: stop the whole sweep (a failed task would let the next one start)
        raise KeyboardInterrupt(f"run {out} was interrupted; run the sweep again to resume it")
    s = res.summary
    keep = ("test_loss", "test_loss_best", "mean_5_lowest_test", "mean_5_lowest_val", "best_val_loss", "final_val_loss",
            "best_iter", "iters", "epochs", "tokens_seen", "stop_reason", "n_params", "n_params_non_embedding",
            "wall_time_s", "tokens_per_s")
    out_d = {k: s.get(k) for k in keep}
    out_d["train_tokens"] = s["data"]["train_tokens_used"]
    out_d["run_dir"] = str(out)
    if "schedule_search" in s.get("extra", {}):
        out_d["schedule_search"] = s["extra"]["schedule_search"]
    return out_d


def _run_tasks(tasks: list[dict[str, Any]], out: Path, backend: str, workers: int, threads_per_task: int | None,
               ray_address: str | None, progress: ProgressFn | None) -> list[dict[str, Any]]:
    from ttlab.sweep import resolve_backend, run_sweep

    kw: dict[str, Any] = dict(backend=resolve_backend(backend, ray_address=ray_address), workers=workers,
                              threads_per_task=threads_per_task)
    if progress:
        progress("training", 0, len(tasks))
        kw["progress"] = lambda p: progress("training", p.done, p.total)
    records = run_sweep(train_task, tasks, out / "tasks", **kw)
    runs = []
    for task, rec in zip(tasks, records):
        row = {**task["label"], "status": rec.status, "cached": rec.cached, "run_dir": task["run_dir"]}
        if rec.ok:
            row.update(rec.result)
        else:
            row["error"] = (rec.error or "").strip().splitlines()[-1] if rec.error else "failed"
        runs.append(row)
    return runs


def _prepare(data: SweepData, progress: ProgressFn | None) -> Any:
    from ttlab.lm.data import prepare_data

    if progress:
        progress("preparing data", 0, 1)
    prep = prepare_data(data.corpus_spec(), vocab_size=data.vocab_size, cache_dir=data.cache_dir)
    if progress:
        progress("preparing data", 1, 1)
    return prep


def _check_common(protocol: str, loss: str, seeds: Sequence[int], lrs: Sequence[float] | None) -> None:
    if protocol not in PROTOCOLS:
        raise TTLabInputError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}.")
    if loss not in LOSS_METRICS:
        raise TTLabInputError(f"loss must be one of {', '.join(LOSS_METRICS)}, got {loss!r}.")
    if not seeds:
        raise TTLabInputError("give at least one seed.")
    if lrs is not None and (not lrs or any(not (x > 0 and math.isfinite(x)) for x in lrs)):
        raise TTLabInputError(f"learning rates must be positive numbers, got {list(lrs)}.")


def _check_memory(models: Sequence[GPTConfig], train: TrainConfig, vocab_size: int) -> None:
    """Before the data: every model of a CPU sweep fits this machine's memory (:func:`check_train_memory`)."""
    import torch

    if train.device.startswith("cuda") or (train.device == "auto" and torch.cuda.is_available()):
        return
    for m in models:
        check_train_memory(m.replace(vocab_size=max(m.vocab_size, vocab_size)), train)


def _train_for(protocol: str, train: TrainConfig, loss: str) -> TrainConfig:
    cfg = train
    if loss == "mean_5_lowest_test" and not cfg.eval_test:
        cfg = replace(cfg, eval_test=True)
    if protocol in ("converged", "early-stop") and cfg.patience is None:
        cfg = replace(cfg, patience=5)
    if protocol == "budget":
        cfg = replace(cfg, patience=None)
    return cfg


def _pick_and_aggregate(runs: list[dict[str, Any]], x_key: str, loss: str) -> list[dict[str, Any]]:
    """Best learning rate per (x, seed) by best validation loss; seeds averaged in log space."""
    ok = [r for r in runs if r["status"] == "ok" and r.get(loss) is not None and math.isfinite(r[loss])]
    best = best_by(ok, lambda r: (r[x_key], r["seed"]), "best_val_loss")
    for r in runs:
        r["selected"] = any(r is b for b in best.values())
    points = []
    for x in sorted({k[0] for k in best}):
        rs = [best[k] for k in best if k[0] == x]
        losses = np.array([r[loss] for r in rs])
        points.append({
            x_key: x,
            "loss": float(losses[0]) if len(losses) == 1 else float(np.exp(np.mean(np.log(losses)))),
            "loss_per_seed": losses.tolist(),
            "loss_std": float(losses.std(ddof=1)) if len(losses) > 1 else None,
            "seeds": [r["seed"] for r in rs],
            "lr": [r["lr"] for r in rs],
            "all_metrics": {m: float(np.mean([r[m] for r in rs])) for m in LOSS_METRICS
                            if all(r.get(m) is not None for r in rs)},
            "n_params": rs[0].get("n_params"),
            "n_params_non_embedding": rs[0].get("n_params_non_embedding"),
            "train_tokens": rs[0].get("train_tokens"),
        })
    return points


def fit_loss_scaling(x: np.ndarray, y: np.ndarray, bootstrap: int) -> dict[str, Any]:
    """Power and offset fits of loss against size (:func:`ttlab.scaling.analysis.power_law_fits`; the offset
    fit resamples at most 200 times); ``{}`` below 3 points."""
    if len(x) < 3:
        return {}
    return power_law_fits(x, y, bootstrap=bootstrap, bootstrap_offset=min(bootstrap, 200))


# ---------------------------------------------------------------------------------------------- ID
def measure_run_id(run_dir: str | Path, opts: IDOptions = IDOptions(), *, layers: Sequence[int] | str | None = None,
                   position_edges: Sequence[int] | None = None, corpus: str | None = None,
                   band: bool = False, which: str = "final", shuffle_tokens: bool = False) -> dict[str, Any]:
    """Embed a run's split (its own token dataset unless ``corpus``) and estimate the ID of ``opts.layer``
    (or every layer in ``layers``, ``"all"`` for 0 … n_layer; or every position group) with the mean and the
    harmonic rule.

    Controls, on the same windows, positions, K and batches: ``which="init"`` embeds with the untrained
    weights the run started from (:func:`ttlab.lm.checkpoint.load_model`); ``shuffle_tokens=True`` permutes each
    window's tokens first (:attr:`ttlab.lm.configs.EmbedConfig.shuffle_tokens`). Both are recorded in ``options``.

    ``band=True`` also runs every estimator of :data:`ttlab.scaling.band.BAND_ESTIMATORS` on the same
    vectors and batches (``intrinsic_dim.compare``, one shared neighbour search) and stores them in
    each row as ``ids_by_estimator`` ``{name: {"id", "std", "seconds", "notes"}}``."""
    from ttlab.lm.configs import EmbedConfig
    from ttlab.lm.embed import embed_corpus, open_embedding_model, text_intrinsic_dimension

    model = open_embedding_model(run_dir, which=which)
    context = opts.context or model.max_context
    if isinstance(layers, str) and layers != "all":
        raise TTLabInputError(f"layers must be a sequence of layer indices or 'all', got {layers!r}.")
    layer_list = None if layers == "all" else tuple(layers) if layers is not None else (opts.layer,)
    cfg = EmbedConfig(layers=layer_list, tokens_per_doc=opts.tokens_per_doc, context=context, window=opts.window,
                      windows_per_doc=opts.windows_per_doc, max_docs=opts.max_docs, seed=opts.seed, split=opts.split,
                      batch_docs=32, position_edges=tuple(position_edges) if position_edges is not None else None,
                      shuffle_tokens=shuffle_tokens)
    emb = embed_corpus(model, corpus, cfg)
    groups = [None] if position_edges is None else sorted(set(int(g) for g in emb.group))
    rows = []
    for layer in emb.layers:
        for g in groups:
            est = {}
            for average in dict.fromkeys((opts.average, "harmonic")):
                est[average] = text_intrinsic_dimension(emb, layer, batch_size=opts.batch_size, k=opts.k, average=average,
                                                        seed=opts.seed, group=g)
            main = est[opts.average]
            row = {"layer": layer, "group": g, "n_vectors": main["n_vectors"], "batch_size": main["batch_size"],
                   "n_duplicates_removed": main["n_duplicates_removed"],
                   "intrinsic_dim": main["intrinsic_dim"], "intrinsic_dim_std": main["intrinsic_dim_std"],
                   "intrinsic_dim_harmonic": est["harmonic"]["intrinsic_dim"],
                   "alpha_d_pred": main["alpha_d_pred"], "alpha_n_pred": main["alpha_n_pred"],
                   "alpha_d_pred_harmonic": est["harmonic"]["alpha_d_pred"],
                   "alpha_n_pred_harmonic": est["harmonic"]["alpha_n_pred"]}
            if g is not None:
                row["positions"] = [int(position_edges[g]), int(position_edges[g + 1])]  # type: ignore[index]
            if band:
                row["ids_by_estimator"] = _ids_by_estimator(emb, layer, g, opts, main["batch_size"])
            rows.append(row)
    return {"run_dir": str(run_dir), "options": {**asdict(opts), "context": context, "layer_convention": emb.meta["model"]["layer_convention"],
                                                 "final_norm_in_last_layer": emb.meta["model"]["final_norm_in_last_layer"],
                                                 "unbiased": False, "weights": which, "shuffle_tokens": shuffle_tokens},
            "n_docs": emb.meta["n_docs"], "n_windows": emb.meta["n_windows"], "n_layer": emb.meta["model"]["n_layer"],
            "width": emb.meta["model"]["width"], "rows": rows}


def _ids_by_estimator(emb: Any, layer: int, group: int | None, opts: IDOptions, batch_size: int) -> dict[str, Any]:
    """Every band estimator on one layer's vectors, with the batches of the main (MLE) estimate."""
    from ttlab.intrinsic_dim import compare
    from ttlab.scaling.band import BAND_ESTIMATORS

    X = emb.layer(layer)
    if group is not None:
        X = X[emb.group == group]
    with warnings.catch_warnings():  # duplicates are counted in the row already
        warnings.simplefilter("ignore")
        res = compare(X, list(BAND_ESTIMATORS), batch_size=batch_size, seed=opts.seed, skip_infeasible=True)
    return {r.method: {"id": r.dimension, "std": r.dimension_std, "seconds": r.seconds, "notes": r.notes}
            for r in res.rows}


# ------------------------------------------------------------------------- shared by both sweeps
def _tasks_for(dataset_dir: str, out: Path, protocol: str, model_cfg: GPTConfig, cfg: TrainConfig, seeds: Sequence[int],
               lrs: Sequence[float] | None, stem: str, label: dict[str, Any]) -> list[dict[str, Any]]:
    """One training task per (seed, learning rate) of one model shape and data size."""
    tasks = []
    for seed, lr in itertools.product(seeds, lrs or (cfg.lr,)):
        name = f"{stem}_s{seed}_lr{lr:g}"
        tasks.append({"dataset_dir": dataset_dir, "run_dir": str(out / "runs" / name), "protocol": protocol,
                      "model": model_cfg.to_dict(), "train": replace(cfg, seed=int(seed), lr=float(lr)).to_dict(),
                      "label": {"name": name, **label, "seed": int(seed), "lr": float(lr)}})
    return tasks


POINT_KEYS = ("name", "iters", "stop_reason", "best_val_loss", "best_iter", *LOSS_METRICS)
"""What a run's record keeps of a capped point and of its continuation (``capped_point``, ``continued_point``)."""


def _source_of(task: dict[str, Any]) -> str:
    """The folder whose last checkpoint a continuation starts from: a converged run's search pass (the pass that
    hit the cap), else the run folder itself."""
    return str(Path(task["run_dir"]) / "search") if task["protocol"] == "converged" else task["run_dir"]


def continuation_task(task: dict[str, Any], out: Path) -> dict[str, Any]:
    """The task that continues ``task``'s capped run at its final learning rate up to twice its cap."""
    cap = 2 * int(task["label"].get("max_iters") or task["train"]["max_iters"])
    stem = task["label"].get("continued_from") or task["label"]["name"]
    name = f"{stem}_cont{cap}"
    return {**task, "protocol": "continue", "source_dir": _source_of(task), "max_iters": cap,
            "run_dir": str(out / "runs" / name),
            "label": {**task["label"], "name": name, "continued_from": stem, "max_iters": cap}}


def choose_point(capped: dict[str, Any], continued: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(chosen, other)``: of a capped run and its continuation, the one with the lower best validation loss
    (the capped run on a tie; a failed continuation is never chosen). Test losses play no part."""
    if continued["status"] != "ok" or not continued["best_val_loss"] < capped["best_val_loss"]:
        return capped, continued
    return continued, capped


def _continue_capped(tasks: list[dict[str, Any]], runs: list[dict[str, Any]], out: Path, ex: Execution,
                     doublings: int, progress: ProgressFn | None) -> list[dict[str, Any]]:
    """Continue every finished run that stopped at its step cap (:mod:`ttlab.lm.continuation`: from its last
    checkpoint, at its final learning rate, until early stopping fires), up to ``doublings`` times, each time
    to twice the previous cap; keep of the capped run and its last continuation the one with the lower best
    validation loss (:func:`choose_point`).

    ``runs`` is updated in place: the kept record carries ``capped_point`` and ``continued_point`` (both sets
    of numbers), ``point_chosen`` (``"capped"`` or ``"continued"``) and ``continuation_stop_reason`` (whether
    the continuation converged: :func:`step_capped` reads it). Returns the records not kept, each with
    ``superseded_by``."""
    last = {i: (t, r) for i, (t, r) in enumerate(zip(tasks, runs))}
    continued: dict[int, list[dict[str, Any]]] = {}
    for _ in range(doublings):
        idx = [i for i, (_t, r) in last.items() if r["status"] == "ok" and step_capped(r)]
        if not idx:
            break
        new_tasks = [continuation_task(last[i][0], out) for i in idx]
        if progress:
            progress(f"continuing {len(idx)} capped run(s) at their final learning rate", 0, len(idx))
        new_runs = _run_tasks(new_tasks, out, ex.backend, ex.workers, ex.threads_per_task, ex.ray_address, progress)
        for i, t, r in zip(idx, new_tasks, new_runs):
            last[i] = (t, r)
            continued.setdefault(i, []).append(r)
    superseded: list[dict[str, Any]] = []
    for i, chain in continued.items():
        chosen, other = choose_point(runs[i], chain[-1])
        kept = {**chosen, "capped_point": {k: runs[i].get(k) for k in POINT_KEYS},
                "continued_point": {k: chain[-1].get(k) for k in POINT_KEYS},
                "point_chosen": "continued" if chosen is chain[-1] else "capped",
                "continuation_stop_reason": chain[-1].get("stop_reason") if chain[-1]["status"] == "ok" else None}
        superseded += [{**r, "superseded_by": kept["name"]} for r in (other, *chain[:-1])]
        runs[i] = kept
    return superseded


def _fitted_result(kind: str, runs: list[dict[str, Any]], x_key: str, loss: str, bootstrap: int) -> dict[str, Any]:
    """Points (best lr per x and seed, seeds averaged), the power/offset fits and α̂ with its interval."""
    points = _pick_and_aggregate(runs, x_key, loss)
    x = np.array([p[x_key] for p in points], dtype=float)
    fits = fit_loss_scaling(x, np.array([p["loss"] for p in points]), bootstrap)
    return {"kind": kind, "runs": runs, "points": points, "fits": fits,
            "n_failed": sum(r["status"] != "ok" for r in runs), **exponent_summary(fits)}


def _id_summary(row: dict[str, Any] | None, sym: str) -> dict[str, Any]:
    """The headline ID figures of one measured row; α_pred is α_D (``sym="d"``) or α_N (``"n"``)."""
    if row is None:
        return {"intrinsic_dim": None, "alpha_pred": None, "alpha_pred_band": None}
    out = {"intrinsic_dim": row["intrinsic_dim"], "intrinsic_dim_harmonic": row["intrinsic_dim_harmonic"],
           "alpha_pred": row[f"alpha_{sym}_pred"], "alpha_pred_harmonic": row[f"alpha_{sym}_pred_harmonic"],
           "alpha_pred_band": None}
    ids = {k: v["id"] for k, v in (row.get("ids_by_estimator") or {}).items() if v.get("id") is not None and v["id"] > 0}
    if "mle" in ids:
        from ttlab.scaling.band import prediction_band

        out["alpha_pred_band"] = prediction_band(ids, central="mle_mean").for_exponent(f"alpha_{sym}")
    return out


def _finish(result: dict[str, Any], config: dict[str, Any], out: Path, figure: str | None, t0: float) -> dict[str, Any]:
    """Add config, versions and wall time; draw the figure; write results.json atomically."""
    result["config"] = config
    result["versions"] = versions()
    result["wall_time_s"] = time.perf_counter() - t0
    if figure is not None:
        result["figure"] = figure
        plot_lm_scaling(result, out / figure)
    atomic_write_json(out / "results.json", result)
    return result


def _run_config(data: SweepData, prep: Any, cfg: TrainConfig, seeds: Sequence[int], lrs: Sequence[float] | None,
                protocol: str, loss: str, id_options: IDOptions, bootstrap: int, ex: Execution) -> dict[str, Any]:
    return {"data": asdict(data), "data_summary": prep.describe(), "train": cfg.to_dict(), "seeds": list(seeds),
            "lrs": list(lrs or (cfg.lr,)), "protocol": protocol, "loss": loss, "id_options": asdict(id_options),
            "bootstrap": bootstrap, "backend": ex.backend, "workers": ex.workers, "threads_per_task": ex.threads_per_task}


# ------------------------------------------------------------------------------------ data sweep
def run_data_sweep(
    out_dir: str | Path,
    *,
    data: SweepData = SweepData(),
    model: GPTConfig | None = None,
    train: TrainConfig = TrainConfig(),
    sizes: Sequence[int] | None = None,
    n_sizes: int = N_SIZES,
    min_tokens: int = MIN_TOKENS,
    seeds: Sequence[int] = (0,),
    lrs: Sequence[float] | None = None,
    protocol: str = "converged",
    loss: str = DEFAULT_LOSS,
    id_options: IDOptions = IDOptions(),
    bootstrap: int = BOOTSTRAP,
    execution: Execution = Execution(),
    progress: ProgressFn | None = None,
    cap_doublings: int = 0,
) -> dict[str, Any]:
    """Train one model shape on geometrically spaced data sizes; fit α̂_D; predict α_D from the ID.

    ``cap_doublings``: a run that stops at its step cap (not by early stopping, :func:`step_capped`) is continued
    from its last checkpoint at its final learning rate until early stopping fires, up to this many times to
    twice the previous cap (:mod:`ttlab.lm.continuation`); of the capped run and its continuation the one with
    the lower validation loss is kept, with both sets of numbers (``capped_point``, ``continued_point``); the
    other is listed in ``superseded_runs``.

    Writes ``DIR/results.json`` (keys ``runs``, ``points``, ``alpha_hat``, ``alpha_hat_ci``,
    ``intrinsic_dim``, ``alpha_pred``, ``alpha_pred_band``, ``fits``, ``id``, ``config``, ``versions``) and
    ``DIR/data_scaling.png``; returns the same dict. ``alpha_pred_band`` (see
    :meth:`ttlab.scaling.band.PredictionBand.for_exponent`) is the α_D band over the estimators
    stored in ``id.rows[0].ids_by_estimator``, measured on the same embedding batches.
    """
    _check_common(protocol, loss, seeds, lrs)
    if isinstance(cap_doublings, bool) or not isinstance(cap_doublings, int) or cap_doublings < 0:
        raise TTLabInputError(f"cap_doublings must be an integer >= 0 (continuations of a step-capped run, each to "
                              f"twice the previous cap), got {cap_doublings!r}.")
    _check_memory([model or GPTConfig.from_preset(DEFAULT_MODEL)], train, data.vocab_size)
    t0 = time.perf_counter()
    out = Path(out_dir)
    prep = _prepare(data, progress)
    n_avail = prep.data.n_tokens("train")
    model_cfg = (model or GPTConfig.from_preset(DEFAULT_MODEL, vocab_size=prep.data.vocab_size)).replace(vocab_size=prep.data.vocab_size)
    if sizes is None:
        sizes = geometric_sizes(min(min_tokens, n_avail), n_avail, n_sizes)
    sizes = sorted(set(int(s) for s in sizes))
    if len(sizes) < 3:
        raise TTLabInputError(f"a data sweep needs at least 3 distinct sizes to fit a slope with a CI, got {sizes}.")
    too_big = [s for s in sizes if s > n_avail]
    if too_big:
        raise TTLabInputError(f"data size(s) {too_big} exceed the {n_avail:,} training tokens of {data.corpus}.")
    too_small = [s for s in sizes if s < model_cfg.block_size + 1]
    if too_small:
        raise TTLabInputError(f"data size(s) {too_small} are smaller than block_size + 1 = {model_cfg.block_size + 1}.")
    cfg = _train_for(protocol, train, loss)
    tasks = [t for size in sizes
             for t in _tasks_for(str(prep.data.root), out, protocol, model_cfg, replace(cfg, max_tokens=size), seeds, lrs,
                                 f"D{size}",
                                 {"train_tokens": size})]
    ex = execution
    runs = _run_tasks(tasks, out, ex.backend, ex.workers, ex.threads_per_task, ex.ray_address, progress)
    superseded = _continue_capped(tasks, runs, out, ex, cap_doublings, progress)
    result = _fitted_result("data_sweep", runs, "train_tokens", loss, bootstrap)
    result["superseded_runs"] = superseded
    points = result["points"]
    x = np.array([p["train_tokens"] for p in points], dtype=float)
    result["fits_by_metric"] = {m: fit_loss_scaling(x, np.array([p["all_metrics"][m] for p in points]), 0)
                                for m in LOSS_METRICS if points and all(m in p["all_metrics"] for p in points)}
    # ID of the largest run's embeddings
    result["id"] = None
    largest = [r for r in runs if r.get("selected") and r["train_tokens"] == (max(x) if len(x) else None)]
    if largest:
        if progress:
            progress("embedding + ID", 0, 1)
        result["id"] = measure_run_id(largest[0]["run_dir"], id_options, band=True)
        if progress:
            progress("embedding + ID", 1, 1)
    result.update(_id_summary(result["id"]["rows"][0] if result["id"] else None, "d"))
    config = {**_run_config(data, prep, cfg, seeds, lrs, protocol, loss, id_options, bootstrap, execution),
              "model": model_cfg.to_dict(), "sizes": sizes, "orders_of_magnitude": float(np.log10(max(sizes) / min(sizes))),
              "cap_doublings": cap_doublings}
    return _finish(result, config, out, "data_scaling.png" if len(points) >= 2 else None, t0)


def train_seed_replicates(sweep: dict[str, Any], train_tokens: int, seeds: Sequence[int], out_dir: str | Path, *,
                          execution: Execution = Execution(), progress: ProgressFn | None = None) -> list[dict[str, Any]]:
    """Further seeds of one data size of a finished data sweep (``sweep``: its results dict), trained with the
    sweep's own settings — protocol, model, training config, the learning rate it selected at that size — and
    continued when capped as the sweep's were (its ``cap_doublings``); cached and resumable in ``out_dir``.
    Returns one run record per seed (the kept point of each, as in ``sweep["runs"]``)."""
    c = sweep["config"]
    chosen = [r for r in sweep["runs"] if r.get("selected") and r.get("train_tokens") == train_tokens]
    if not chosen:
        sizes = sorted({r.get("train_tokens") for r in sweep["runs"] if r.get("selected")})
        raise TTLabInputError(f"the sweep has no selected run at {train_tokens} training tokens (it has {sizes}).")
    if not seeds:
        return []
    out = Path(out_dir)
    cfg = replace(TrainConfig.from_dict(c["train"]), max_tokens=int(train_tokens))
    tasks = _tasks_for(c["data_summary"]["dataset_dir"], out, c["protocol"], GPTConfig.from_dict(c["model"]), cfg,
                       seeds, [chosen[0]["lr"]], f"D{train_tokens}", {"train_tokens": train_tokens})
    ex = execution
    runs = _run_tasks(tasks, out, ex.backend, ex.workers, ex.threads_per_task, ex.ray_address, progress)
    _continue_capped(tasks, runs, out, ex, int(c.get("cap_doublings") or 0), progress)
    return runs


# ----------------------------------------------------------------------------------- model sweep
def run_model_sweep(
    out_dir: str | Path,
    *,
    models: Sequence[GPTConfig],
    data: SweepData = SweepData(),
    train: TrainConfig = TrainConfig(),
    max_tokens: int | None = None,
    seeds: Sequence[int] = (0,),
    lrs: Sequence[float] | None = None,
    protocol: str = "converged",
    loss: str = DEFAULT_LOSS,
    id_options: IDOptions = IDOptions(),
    measure_id: bool = True,
    bootstrap: int = BOOTSTRAP,
    execution: Execution = Execution(),
    progress: ProgressFn | None = None,
) -> dict[str, Any]:
    """Train several model sizes on the same data; fit α̂_N against non-embedding parameters; compare
    with α_N = 2/d from each model's ID (the width ablation comes with it).

    Writes ``DIR/results.json`` (``runs``, ``points``, ``alpha_hat``, ``alpha_hat_ci``, ``intrinsic_dim``,
    ``alpha_pred``, ``alpha_pred_band`` (α_N band over the largest model's ``ids_by_estimator``), ``id_by_model``, …) and ``DIR/model_scaling.png``.
    """
    _check_common(protocol, loss, seeds, lrs)
    if len(models) < 3:
        raise TTLabInputError(f"a model sweep needs at least 3 model sizes (4+ recommended) to fit a slope with a CI, got {len(models)}.")
    _check_memory(models, train, data.vocab_size)
    t0 = time.perf_counter()
    out = Path(out_dir)
    prep = _prepare(data, progress)
    n_avail = prep.data.n_tokens("train")
    if max_tokens is not None and max_tokens > n_avail:
        raise TTLabInputError(f"max_tokens {max_tokens:,} exceeds the {n_avail:,} training tokens of {data.corpus}.")
    cfg = _train_for(protocol, replace(train, max_tokens=max_tokens), loss)
    cfgs = [m.replace(vocab_size=prep.data.vocab_size) for m in models]
    tasks = [t for m in cfgs
             for t in _tasks_for(str(prep.data.root), out, protocol, m, cfg, seeds, lrs, f"L{m.n_layer}_H{m.n_head}_E{m.n_embd}",
                                 {"n_layer": m.n_layer, "n_head": m.n_head, "n_embd": m.n_embd,
                                  "params_non_embedding": GPT(m).num_params(non_embedding=True)})]
    ex = execution
    runs = _run_tasks(tasks, out, ex.backend, ex.workers, ex.threads_per_task, ex.ray_address, progress)
    result = _fitted_result("model_sweep", runs, "params_non_embedding", loss, bootstrap)
    id_by_model = []
    if measure_id:
        selected = [r for r in runs if r.get("selected") and r["seed"] == min(seeds)]
        for i, r in enumerate(sorted(selected, key=lambda r: r["params_non_embedding"])):
            if progress:
                progress("embedding + ID", i, len(selected))
            idr = measure_run_id(r["run_dir"], id_options, band=i == len(selected) - 1)  # band: largest model
            id_by_model.append({"name": r["name"], "n_layer": r["n_layer"], "n_embd": r["n_embd"],
                                "params_non_embedding": r["params_non_embedding"], **idr["rows"][0]})
        if progress:
            progress("embedding + ID", len(selected), len(selected))
    result["id_by_model"] = id_by_model
    result.update(_id_summary(id_by_model[-1] if id_by_model else None, "n"))
    config = {**_run_config(data, prep, cfg, seeds, lrs, protocol, loss, id_options, bootstrap, execution),
              "models": [m.to_dict() for m in cfgs], "max_tokens": max_tokens}
    return _finish(result, config, out, "model_scaling.png", t0)


def run_preset_sweep(preset: SweepPreset, out_dir: str | Path, *, loss: str = DEFAULT_LOSS,
                     progress: ProgressFn | None = None, bootstrap: int = BOOTSTRAP) -> dict[str, Any]:
    """``ttlab lm data-sweep | model-sweep`` and ``ttlab reproduce``'s LM sweeps: the sweep ``preset``
    (:func:`ttlab.lm.presets.sweep_preset`, with the caller's overrides) run by :func:`run_data_sweep` (a
    :class:`DataSweepPreset`) or :func:`run_model_sweep`, with ``bootstrap`` replicates of the exponent fit."""
    run = run_data_sweep if isinstance(preset, DataSweepPreset) else run_model_sweep
    return run(out_dir=out_dir, loss=loss, progress=progress, bootstrap=bootstrap, **preset.kwargs())


# -------------------------------------------------------------------------------------- ablations
def id_ablations(
    run_dirs: Sequence[str | Path],
    out_dir: str | Path,
    *,
    id_options: IDOptions = IDOptions(),
    position_edges: Sequence[int] | None = None,
    progress: ProgressFn | None = None,
) -> dict[str, Any]:
    """Figure 4 at our scale: ID vs model (width/size), vs layer (deepest run), vs context position
    (deepest run; ``position_edges`` default: 4 geometric ranges of the block). Writes
    ``DIR/id_ablations.json`` and ``DIR/id_ablations.png``."""
    from ttlab.lm.checkpoint import load_model

    if not run_dirs:
        raise TTLabInputError("give at least one run folder.")
    t0 = time.perf_counter()
    out = Path(out_dir)
    infos = []
    for d in run_dirs:
        m, _ = load_model(d)
        infos.append((Path(d), m.config, m.num_params(non_embedding=True)))
    infos.sort(key=lambda t: t[2])
    total = len(infos) + 2
    by_model = []
    for i, (d, c, n) in enumerate(infos):
        if progress:
            progress("ID ablations", i, total)
        r = measure_run_id(d, id_options)["rows"][0]
        by_model.append({"run_dir": str(d), "n_layer": c.n_layer, "n_embd": c.n_embd, "params_non_embedding": n, **r})
    deep_dir, deep_cfg, _ = max(infos, key=lambda t: (t[1].n_layer, t[2]))
    if progress:
        progress("ID ablations", len(infos), total)
    per_layer = measure_run_id(deep_dir, id_options, layers=list(range(deep_cfg.n_layer + 1)))["rows"]
    block = id_options.context or deep_cfg.block_size
    if position_edges is None:
        edges = sorted({0, *[int(round(e)) for e in np.geomspace(max(2, block // 16), block, 4)]})
        position_edges = edges
    if progress:
        progress("ID ablations", len(infos) + 1, total)
    per_position = measure_run_id(deep_dir, id_options, position_edges=position_edges)["rows"]
    result = {"by_model": by_model, "per_layer": {"run_dir": str(deep_dir), "rows": per_layer},
              "per_position": {"run_dir": str(deep_dir), "edges": list(position_edges), "rows": per_position},
              "id_options": asdict(id_options), "versions": versions(), "wall_time_s": time.perf_counter() - t0,
              "figure": "id_ablations.png"}
    plot_id_ablations(result, out / "id_ablations.png")
    atomic_write_json(out / "id_ablations.json", result)
    if progress:
        progress("ID ablations", total, total)
    return result


# ------------------------------------------------------------------------------------ summaries
def sweep_summary(res: dict[str, Any], out: str | Path) -> list[str]:
    """Plain-text lines summing up a data or model sweep's result (points, α̂ with its interval, the ID's prediction
    and band, the files written), as ``ttlab lm data-sweep | model-sweep`` prints them."""
    sym = "D" if res["kind"] == "data_sweep" else "N"
    lines = [f"  {sym} = {p['train_tokens'] if sym == 'D' else p['params_non_embedding']:>11,d}: test loss {p['loss']:.4f}"
             for p in res["points"]]
    a, ci = res["alpha_hat"], res["alpha_hat_ci"]
    if a is not None:
        lines.append(f"α̂_{sym} = {a:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "") + " (log-log slope)" +
                     (f"; offset form α = {res['alpha_hat_offset']:.3f}" if res.get("alpha_hat_offset") else ""))
    if res.get("intrinsic_dim") is not None:
        lines.append(f"ID {res['intrinsic_dim']:.2f} (harmonic {res['intrinsic_dim_harmonic']:.2f}) → predicted "
                     f"α_{sym} = {res['alpha_pred']:.3f} (harmonic {res['alpha_pred_harmonic']:.3f})")
    band = res.get("alpha_pred_band")
    if band:
        lines.append(f"band over {len(band['estimators'])} ID estimators: α_{sym} {band['lo']:.3f} – {band['hi']:.3f} "
                     f"(ID {band['id_lo']:.2f} – {band['id_hi']:.2f}; central {band['central']:.3f} from MLE "
                     f"K={PAPER.k} {PAPER.average})")
    return lines + [f"wrote {out}/results.json and {out}/{res.get('figure', '')} in {res['wall_time_s']:.0f} s"]


def ablations_summary(res: dict[str, Any], out: str | Path) -> list[str]:
    """Plain-text lines summing up :func:`id_ablations`' result (ID by model, per layer, per position)."""
    return [*(f"  {r['n_layer']} layers × {r['n_embd']}: ID {r['intrinsic_dim']:.2f} (harmonic "
              f"{r['intrinsic_dim_harmonic']:.2f})" for r in res["by_model"]),
            "  per layer: " + ", ".join(f"{r['layer']}: {r['intrinsic_dim']:.2f}" for r in res["per_layer"]["rows"]),
            "  per position: " + ", ".join(f"{r['positions'][0]}–{r['positions'][1]}: {r['intrinsic_dim']:.2f}"
                                           for r in res["per_position"]["rows"]),
            f"wrote {out}/id_ablations.json and {out}/id_ablations.png"]
