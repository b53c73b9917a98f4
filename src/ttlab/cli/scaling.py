"""`ttlab scaling …` — scaling exponents from the intrinsic dimension, and scaling-law fits (paper B).

Each command parses its options, calls one function of :mod:`ttlab.scaling` (:mod:`~ttlab.scaling.predictions`,
:func:`~ttlab.scaling.fit_csv.fit_csv`, :func:`~ttlab.scaling.manifold_regression.run_manifold_experiment`) and
prints its view (:mod:`ttlab.scaling.views`).
"""

from __future__ import annotations

from operator import attrgetter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from typer import Argument, Option

from ttlab.cli.common import (
    START_AGAIN,
    Json,
    OptFloat,
    OptInt,
    OptPath,
    OptStr,
    console_err,
    exit_on_interrupt,
    parse_list,
    print_causes,
    print_json,
    print_view,
    print_warnings,
    run_with_progress,
)
from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import PAPER
from ttlab.markup import markup, plain
from ttlab.scaling import views
from ttlab.scaling.fit import DEFAULT_BOOTSTRAP, DEFAULT_CI_LEVEL
from ttlab.scaling.fit_csv import BOOTSTRAP_MAX_HOURS, fit_csv
from ttlab.scaling.frontier import DEFAULT_FLOPS_PER_TOKEN
from ttlab.scaling.manifold_config import (
    DEFAULT_MAX_HOURS,
    DEFAULT_WORKERS,
    ManifoldSweepConfig,
    config_from_options,
    quick_config,
)
from ttlab.scaling.model_scaling_config import quick_model_config, standard_model_config
from ttlab.scaling.predictions import convert_exponents, predict_exponents, table1_payload
from ttlab.validation import parse_named_values

app = typer.Typer(
    help="Scaling laws from the intrinsic dimension of data (paper B): predicted exponents, "
    "ID-free conversions, Table 1, and fits of measured losses.",
    no_args_is_help=True,
)

BetaOpt = Annotated[float, Option("--beta", help="Hölder exponent β of the target, 0 < β ≤ 1.")]


@app.command()
def predict(
    intrinsic_dim: Annotated[OptFloat, Option("--id", help="Intrinsic dimension d of the data (> 0).")] = None,
    ids: Annotated[OptStr, Option(
        "--ids", help="Several estimates, e.g. mle=15.6,twonn=14.2,tle=16.1: a band of predictions (central from "
        "--central, range over the documented estimator set).")] = None,
    from_compare: Annotated[OptPath, Option(
        "--from-compare", help="The JSON of `ttlab id compare --out/--json`: a band from its estimates.")] = None,
    central: Annotated[str, Option(
        "--central", help=f"Estimator of the central prediction (the paper's: mle = MLE K={PAPER.k}, "
        "mean).")] = "mle_mean",
    beta: BetaOpt = 1.0,
    json_out: Json = False,
) -> None:
    """Predicted exponents from an intrinsic dimension: α_D = 2β/(2β+d), α_N = 2β/d; with --ids or
    --from-compare, a band: the central estimator's prediction and the min–max over the estimators
    mle, mle_harmonic, mle_median, twonn, gride, tle, mom, mada, mind_ml, corrint, danco, ess
    (PCA dimensions measure the linear span and are left out)."""
    out = predict_exponents(intrinsic_dim, ids, from_compare, beta=beta, central=central)
    print_json(out) if json_out else print_view(views.prediction_view(out, intrinsic_dim, beta))


@app.command()
def convert(
    alpha_n: Annotated[OptFloat, Option("--alpha-n", help="Model-scaling exponent α_N (> 0).")] = None,
    alpha_d: Annotated[OptFloat, Option("--alpha-d", help="Data-scaling exponent α_D (0 < α_D < 1).")] = None,
    beta: BetaOpt = 1.0,
    json_out: Json = False,
) -> None:
    """ID-free conversion between α_N and α_D (α_D = α_N/(1+α_N)), plus the implied ID at β."""
    out = convert_exponents(alpha_n, alpha_d, beta)
    print_json(out) if json_out else print_view(views.values_view("ID-free conversion", out))


@app.command()
def table1(
    beta: BetaOpt = 1.0,
    json_out: Json = False,
) -> None:
    """Recompute the paper's Table 1: ID-free predictions for Kaplan et al. 2020 and Chinchilla."""
    payload = table1_payload(beta)
    print_json(payload) if json_out else print_view(views.table1_view(payload, beta))


@app.command()
def fit(
    csv_file: Annotated[Path, Argument(metavar="FILE.csv|FOLDER", help="CSV file with a header row; or the folder "
                                       "(or results.json) of `ttlab lm data-sweep` / `model-sweep` / `suite`: its "
                                       "points' fields (train_tokens, params_non_embedding, loss, test_loss, …) are the "
                                       "columns; or a `ttlab lm train` run folder (or its metrics.csv): its learning "
                                       "curve (tokens_seen, val_loss, …), iteration 0 left out.")],
    x: Annotated[str, Option("--x", help="Column of the size variable (N for chinchilla).")],
    y: Annotated[str, Option("--y", help="Column of the loss.")],
    x2: Annotated[OptStr, Option("--x2", help="Column of D (chinchilla form only).")] = None,
    form: Annotated[str, Option("--form", help="power | offset | chinchilla.")] = "power",
    bootstrap: Annotated[OptInt, Option(
        "--bootstrap", help=f"Bootstrap replicates (default {DEFAULT_BOOTSTRAP['power']}; "
        f"{DEFAULT_BOOTSTRAP['chinchilla']} for chinchilla; 0 = none).")] = None,
    seed: Annotated[int, Option("--seed", help="Seed of the bootstrap.")] = 0,
    ci_level: Annotated[float, Option("--ci-level", help="Confidence level of the intervals.")] = DEFAULT_CI_LEVEL,
    bootstrap_method: Annotated[OptStr, Option(
        "--bootstrap-method", help="residual (fixed design) | pairs (resample rows). Default: residual for "
        "power/offset; pairs for chinchilla (its spread matches Besiroglu et al. 2024's published standard errors; "
        "residual is about 2x narrower there).")] = None,
    objective: Annotated[OptStr, Option(
        "--objective", help="chinchilla only: huber (default; summed Huber loss of log residuals, δ = 1e-3, Hoffmann "
        "et al. 2022) | huber-likelihood (Huber negative log-likelihood with a fitted scale σ, δ on r/σ; Besiroglu et "
        "al. 2024's replication).")] = None,
    n_starts: Annotated[OptInt, Option(
        "--n-starts", help="Optimiser starts kept from the grid (offset/chinchilla; default 4).")] = None,
    plot: Annotated[OptPath, Option("--plot", help="Write a log-log plot (png/pdf/svg).")] = None,
    intrinsic_dim: Annotated[OptFloat, Option("--id", help="Also compare with the exponent predicted from this ID.")] = None,
    beta: BetaOpt = 1.0,
    kind: Annotated[str, Option("--kind", help="data (x = data size, α_D) | model (x = parameters, α_N).")] = "data",
    out: Annotated[OptPath, Option("--out", help="Also write the result JSON to this file.")] = None,
    max_hours: Annotated[float, Option("--max-hours", help="Refuse a bootstrap estimated (by timing a few replicates "
                                       "first) above this many hours.")] = BOOTSTRAP_MAX_HOURS,
    predict: Annotated[OptStr, Option(
        "--predict", help="Predict the loss at new sizes named as the size columns, e.g. tokens=1e12 or N=1e10,D=2e11 "
        "(chinchilla): confidence interval (parameters), prediction interval (plus the residual scatter) and how many "
        "decades outside the fitted range the point lies.")] = None,
    method: Annotated[OptStr, Option(
        "--method", help="offset/chinchilla: grid (default; the best --n-starts points of a grid of starts — Epoch AI's "
        "for chinchilla) | varpro (variable projection: at each exponent (pair) of a fine grid the coefficients by "
        "non-negative least squares, the objective there, its best local minima refined; bootstrap refits do the "
        "same).")] = None,
    weights: Annotated[OptStr, Option(
        "--weights", help="Column of per-run weights (positive, finite): each run's loss term is multiplied by its "
        "weight (rescaled to mean 1). Not with --weight-by-compute.")] = None,
    weight_by_compute: Annotated[OptStr, Option(
        "--weight-by-compute", help="chinchilla only: sqrt | linear — weight each run by √C or by C, its compute "
        "C = k·N·D (rescaled to mean 1, so k drops out; OLMo-core's ladder fits weight by √(6ND)), to favour the "
        "large runs. Not with --weights.")] = None,
    asymmetry: Annotated[OptFloat, Option(
        "--asymmetry", help="offset/chinchilla: A ≥ 1 multiplies the loss term of each run the fit over-estimates "
        "(log L̂ > log L), for a lower envelope (OLMo-core's overestimate penalty; 1 = symmetric).")] = None,
    drop_highest: Annotated[int, Option(
        "--drop-highest", help="Leave out the K highest-loss runs before fitting (Epoch AI's replication drops 5); "
        "refused if too few runs are left.")] = 0,
    json_out: Json = False,
) -> None:
    """Fit a scaling law to CSV columns, with bootstrap intervals and goodness of fit."""
    payload = run_with_progress(
        fit_csv, on_interrupt=START_AGAIN, csv_file=csv_file, x=x, y=y, x2=x2, form=form, bootstrap=bootstrap,
        seed=seed, ci_level=ci_level, bootstrap_method=bootstrap_method, objective=objective, n_starts=n_starts,
        plot=plot, intrinsic_dim=intrinsic_dim, beta=beta, kind=kind, out=out, max_hours=max_hours,
        predict=None if predict is None else parse_named_values(predict, "predict", example="N=1e10,D=2e11",
                                                                what="size column"),
        method=method, weights=weights, asymmetry=asymmetry, drop_highest=drop_highest,
        weight_by_compute=weight_by_compute, note=lambda m: console_err.print(plain(m), highlight=False))
    print_warnings(payload["warnings"])
    print_json(payload) if json_out else print_view(views.fit_view(payload))


@app.command()
def frontier(
    source: Annotated[OptPath, Argument(metavar="[FILE.csv|FIT.json]", help="Runs to fit in the Chinchilla form "
                                        "(a CSV with columns N, D, loss: see --x, --x2, --y), or the JSON of a "
                                        "Chinchilla fit written by `ttlab scaling fit --out` (its bootstrap replicates "
                                        "give the intervals). Omit it to see only what --id predicts.")] = None,
    compute: Annotated[str, Option("--compute", help="Compute budgets in FLOPs, comma-separated (C = k·N·D).")]
    = "1e18,1e20,1e22,1e24",
    flops_per_token: Annotated[float, Option("--flops-per-token", help="k in C = k·N·D: FLOPs per parameter and "
                                             "training token (6: forward and backward of a dense transformer).")]
    = DEFAULT_FLOPS_PER_TOKEN,
    x: Annotated[str, Option("--x", help="CSV column of N (parameters).")] = "N",
    x2: Annotated[str, Option("--x2", help="CSV column of D (training tokens).")] = "D",
    y: Annotated[str, Option("--y", help="CSV column of the loss.")] = "loss",
    bootstrap: Annotated[OptInt, Option("--bootstrap", help=f"Bootstrap replicates of the fit of a CSV (default "
                                        f"{DEFAULT_BOOTSTRAP['chinchilla']}, pairs); the intervals of a, b, N_opt, "
                                        "D_opt and the loss are their percentile intervals.")] = None,
    seed: Annotated[int, Option("--seed", help="Seed of the bootstrap.")] = 0,
    ci_level: Annotated[float, Option("--ci-level", help="Confidence level of the intervals.")] = DEFAULT_CI_LEVEL,
    intrinsic_dim: Annotated[OptFloat, Option("--id", help="Intrinsic dimension d of the data: paper B predicts "
                                              "a = d/(2d+2β), b = 1 − a (α_N = 2β/d, α_D = 2β/(2β+d)).")] = None,
    from_compare: Annotated[OptPath, Option(
        "--from-compare", help="The JSON of `ttlab id compare --out`: a from its MLE (the paper's estimator) and "
        "the range of a over the band's estimators (instead of --id).")] = None,
    beta: BetaOpt = 1.0,
    plot: Annotated[OptPath, Option("--plot", help="Write the frontier in the (N, D) plane: iso-loss contours, "
                                    "iso-FLOP lines, the optima with their intervals, the runs (of the CSV, or those "
                                    "a fit JSON keeps), the IsoFLOP optima of --isoflop (png/pdf/svg).")] = None,
    isoflop: Annotated[OptPath, Option(
        "--isoflop", help="The JSON of `ttlab scaling isoflop --out`: its optimum N per budget (with its interval) is "
        "drawn on the plot, and set beside the fit's N_opt at the same budget (their ratio). Its k must be "
        "--flops-per-token.")] = None,
    out: Annotated[OptPath, Option("--out", help="Also write the result JSON to this file.")] = None,
    json_out: Json = False,
) -> None:
    """Compute-optimal N, D and loss for each compute budget from a Chinchilla-form fit (N_opt ∝ C^a, D_opt ∝ C^b,
    a = β/(α+β)), with bootstrap intervals; and the allocation an intrinsic dimension predicts (paper B)."""
    from ttlab.scaling.frontier_file import frontier_file

    budgets = parse_list(compute, "--compute", float) or ()
    payload = run_with_progress(
        frontier_file, on_interrupt=START_AGAIN, source=source, compute=budgets, x=x, x2=x2, y=y,
        flops_per_token=flops_per_token, bootstrap=bootstrap, seed=seed, ci_level=ci_level, intrinsic_dim=intrinsic_dim,
        from_compare=from_compare, beta=beta, plot=plot, out=out, isoflop=isoflop)
    print_json(payload) if json_out else print_view(views.frontier_view(payload))


@app.command()
def isoflop(
    csv_file: Annotated[Path, Argument(metavar="FILE.csv", help="Runs: one row per run with its size, compute budget "
                                       "and loss (several sizes per budget).")],
    x: Annotated[str, Option("--x", help="Column of the model size N.")] = "N",
    c: Annotated[str, Option("--c", help="Column of the compute budget C (FLOPs; runs of one budget share it).")] = "C",
    y: Annotated[str, Option("--y", help="Column of the loss.")] = "loss",
    bootstrap: Annotated[int, Option("--bootstrap", help="Bootstrap replicates (runs resampled within each "
                                     "budget).")] = 400,
    seed: Annotated[int, Option("--seed", help="Seed of the bootstrap.")] = 0,
    ci_level: Annotated[float, Option("--ci-level", help="Confidence level of the intervals.")] = DEFAULT_CI_LEVEL,
    flops_per_token: Annotated[float, Option("--flops-per-token", help="k in C = k·N·D that the budgets were computed "
                                             "with: gives D_opt = C/(k·N_opt); recorded, and `scaling frontier "
                                             "--isoflop` refuses a file of another k.")] = DEFAULT_FLOPS_PER_TOKEN,
    out: Annotated[OptPath, Option("--out", help="Also write the result JSON to this file (`scaling frontier "
                                   "--isoflop` draws it beside the parametric frontier).")] = None,
    json_out: Json = False,
) -> None:
    """Hoffmann et al.'s Approach 2: a parabola of loss against log N per compute budget, its vertex the optimal N,
    and N_opt ∝ C^a across budgets, with bootstrap intervals — no parametric loss law assumed."""
    from ttlab.scaling.isoflop import isoflop_file

    payload = isoflop_file(csv_file, x, c, y, bootstrap=bootstrap, seed=seed, ci_level=ci_level,
                           flops_per_token=flops_per_token, out=out)
    print_json(payload) if json_out else print_view(views.isoflop_view(payload))


# ---------------------------------------------------------------------------------------------
# ttlab scaling manifold — Theorem 1 tested directly (regression on low-dimensional manifolds)

_FULL, _QUICK = ManifoldSweepConfig(), quick_config()  # the presets the options' help quotes


def _text(value: Any) -> str:
    """A setting as its option is written: ``1,0.5``; ``none`` for an empty list."""
    if isinstance(value, tuple):
        return ",".join(map(_text, value)) or "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _preset(name: str) -> str:
    """``[full; quick: q]``: a setting (``train.max_steps`` reaches into the schedule) in both presets, read from them."""
    full, quick = (_text(attrgetter(name)(c)) for c in (_FULL, _QUICK))
    return escape(f"[{full}]" if full == quick else f"[{full}; quick: {quick}]")  # not rich markup: [softmax] is text


_QUICK_TEXT = (f"{_text(_QUICK.archs)}, β {_text(_QUICK.betas)}, {_text(_QUICK.regimes)}; d {_text(_QUICK.ds)}; "
               f"D {_text(_QUICK.ambients)}; {_QUICK.points} sizes {_QUICK.n_min}..{_QUICK.n_max}; {_QUICK.seeds} seed(s)")


@app.command()
def manifold(
    out: Annotated[Path, Option("--out", help="Output directory (results.json, manifold_scaling.png, cache/).")],
    d: Annotated[OptStr, Option("--d", help=f"Intrinsic dimensions d {_preset('ds')}.")] = None,
    ambient: Annotated[OptStr, Option("--ambient", help=f"Ambient dimensions D {_preset('ambients')}.")] = None,
    n_min: Annotated[OptInt, Option("--n-min", help=f"Smallest training-set size {_preset('n_min')}.")] = None,
    n_max: Annotated[OptInt, Option("--n-max", help=f"Largest training-set size {_preset('n_max')}.")] = None,
    points: Annotated[OptInt, Option("--points", help=f"Sizes on the geometric grid {_preset('points')}.")] = None,
    arch: Annotated[OptStr, Option(
        "--arch", help="Comma-separated: softmax | relu (paper's theory transformer) | mlp "
        f"{_preset('archs')}.")] = None,
    regime: Annotated[OptStr, Option(
        "--regime", help="Comma-separated: noisy (label noise --noise; claim α̂_D ≈ 2β/(2β+d)) | noiseless (σ = 0; "
        f"claim α̂_D ≥ 2β/(2β+d)) {_preset('regimes')}.")] = None,
    seeds: Annotated[OptInt, Option("--seeds", help=f"Seeds (data, init, batch order) per size {_preset('seeds')}.")] = None,
    oracle_seeds: Annotated[OptInt, Option(
        "--oracle-seeds", help="Seeds of the k-NN oracle (the first --seeds are the networks' splits) "
        f"{_preset('oracle_seeds')}.")] = None,
    backend: Annotated[str, Option(
        "--backend", help="Sweep backend: local (process pool) | ray (needs pip install 'ttlab[ray]').")] = "local",
    ray_address: Annotated[OptStr, Option(
        "--ray-address", help="With --backend ray: 'auto' or host:port of a running cluster (`ray start --head`); "
        "default: $RAY_ADDRESS, else a local Ray with workers × threads CPUs.")] = None,
    workers: Annotated[int, Option(
        "--workers", help="Parallel worker processes (1 = in-process; ray: tasks at once on a "
        "local Ray).")] = DEFAULT_WORKERS,
    threads: Annotated[OptInt, Option("--threads", help="Torch threads per task (default: cores // workers).")] = None,
    quick: Annotated[bool, Option(
        "--quick", help=f"Small preset: {_QUICK_TEXT}.")] = False,
    beta: Annotated[OptStr, Option("--beta", help=f"Hölder exponent(s) β of the target, 0 < β ≤ 1 {_preset('betas')}.")] = None,
    profile: Annotated[str, Option("--profile", help="Ridge profile: sin | cusp (β-Hölder cusps).")] = ManifoldSweepConfig.profile,
    manifold_name: Annotated[str, Option("--manifold", help="sphere | cube | nonlinear.")] = ManifoldSweepConfig.manifold,
    noise: Annotated[OptFloat, Option("--noise", help=f"Label-noise σ of the noisy regime (target variance 1) {_preset('noise')}.")] = None,
    spectrum: Annotated[OptStr, Option(
        "--spectrum", help="Target spectrum: weighted (log-spaced frequencies, amplitudes ∝ r^−β) | sampled (density ∝ "
        f"r^−(1+2β), equal amplitudes) {_preset('spectrum')}.")] = None,
    features: Annotated[OptInt, Option("--features", help=f"Ridge features K of the target {_preset('n_features')}.")] = None,
    min_freq: Annotated[OptFloat, Option("--min-freq", help="Smallest target frequency r_0 [max(1, d/2)].")] = None,
    max_freq: Annotated[OptFloat, Option("--max-freq", help=f"Largest target frequency R {_preset('max_freq')}.")] = None,
    lr: Annotated[OptStr, Option("--lr", help=f"AdamW learning rate(s) {_preset('lrs')}; several: chosen per size on validation.")] = None,
    width: Annotated[OptInt, Option("--width", help=f"Model width: n_embd / MLP hidden width {_preset('width')}.")] = None,
    depth: Annotated[OptInt, Option("--depth", help=f"Transformer blocks / MLP hidden layers {_preset('depth')}.")] = None,
    tokens: Annotated[OptInt, Option("--tokens", help=f"Transformer tokens: x cut into this many chunks {_preset('tokens')}.")] = None,
    max_steps: Annotated[OptInt, Option("--max-steps", help=f"Step limit per run {_preset('train.max_steps')}.")] = None,
    epochs: Annotated[OptFloat, Option("--epochs", help=f"Epochs per run below the step limit {_preset('train.epochs')}.")] = None,
    model_widths: Annotated[OptStr, Option(
        "--model-widths", help="Widths of a model-size sweep at n = --model-n (gives α̂_N) "
        f"{_preset('model_widths')}; 'none' to skip.")] = None,
    model_n: Annotated[OptInt, Option("--model-n", help="Training-set size of the model-size sweep [--n-max].")] = None,
    n_test: Annotated[OptInt, Option("--n-test", help=f"Test points (clean targets) per seed {_preset('n_test')}.")] = None,
    no_knn: Annotated[bool, Option("--no-knn", help="Skip the k-NN reference.")] = False,
    estimate_only: Annotated[bool, Option("--estimate-only", help="Print the cost estimate and stop.")] = False,
    max_hours: Annotated[float, Option(
        "--max-hours", help="Refuse sweeps whose estimated remaining wall time exceeds this "
        "many hours.")] = DEFAULT_MAX_HOURS,
    json_out: Json = False,
) -> None:
    """Regression on d-dimensional manifolds in R^D: does test MSE fall as n^(−2β/(2β+d))?"""
    from ttlab.scaling import manifold_regression as mr

    lists = {"ds": parse_list(d, "--d", int), "ambients": parse_list(ambient, "--ambient", int),
             "lrs": parse_list(lr, "--lr", float), "betas": parse_list(beta, "--beta", float),
             "archs": parse_list(arch, "--arch", str), "regimes": parse_list(regime, "--regime", str),
             "model_widths": () if (model_widths or "").strip().lower() == "none"
             else parse_list(model_widths, "--model-widths", int)}
    scalars = {**lists, "n_min": n_min, "n_max": n_max, "points": points, "seeds": seeds, "width": width, "depth": depth,
               "tokens": tokens, "n_features": features, "n_test": n_test, "model_n": model_n, "noise": noise,
               "min_freq": min_freq, "max_freq": max_freq, "spectrum": spectrum, "oracle_seeds": oracle_seeds,
               "profile": profile, "manifold": manifold_name, "knn": not no_knn}
    cfg = config_from_options(quick, scalars, max_steps=max_steps, epochs=epochs)
    with exit_on_interrupt():
        payload = mr.run_manifold_experiment(
            cfg, out, quick=quick, backend=backend, workers=workers, threads=threads, ray_address=ray_address,
            max_hours=max_hours, estimate_only=estimate_only, progress=lambda p: print_view([views.manifold_progress_line(p)], err=True),
            on_estimate=lambda cost, full, tpt: print_view(views.manifold_cost_view(cfg, out, cost, full, workers, tpt), err=True),
            on_start=lambda cost, tpt: print_view(views.ray_note_view(cost, backend, ray_address, workers * tpt), err=True))
    if json_out:
        print_json(payload)
    elif not estimate_only:
        print_view(views.manifold_view(payload))
    if not estimate_only and (failed := payload["sweep"]["n_failed"]):
        console_err.print(markup("[bold red]{} task(s) failed[/]; see 'sweep.failures' in {} (re-run the same command "
                                 "to retry them)", failed, out / "results.json"), highlight=False)
        print_causes((f["key"], f["error"]) for f in payload["sweep"].get("failures", []))
        raise typer.Exit(1)


_MS_STD = standard_model_config()
_MS_QUICK = quick_model_config()


def _ms_preset(name: str) -> str:
    """``[standard; quick: q]`` of a model-size setting, read from the two presets."""
    full, quick = (_text(getattr(c, name)) for c in (_MS_STD, _MS_QUICK))
    return escape(f"[{full}]" if full == quick else f"[{full}; quick: {quick}]")


@app.command("model-size")
def model_size(
    out: Annotated[Path, Option("--out", help="Output directory (results.json, model_scaling.png, cache/).")],
    quick: Annotated[bool, Option("--quick", help="The quick preset: d = 2, the smooth target, the control and the "
                                                  "softmax transformer, one seed (≈ 3 min on 2 cores).")] = False,
    ds: Annotated[OptStr, Option("--d", help=f"Intrinsic dimensions d of the sphere S^d {_ms_preset('ds')}.")] = None,
    targets: Annotated[OptStr, Option(
        "--targets", help=f"Comma-separated: smooth (C² field; 4/d reachable) | holder (β-Hölder: 2β/d sharp) "
        f"{_ms_preset('targets')}.")] = None,
    archs: Annotated[OptStr, Option(
        "--arch", help="Transformers judged, comma-separated: softmax | relu (the theory's ReLU attention); the "
        f"ReLU-MLP control always runs {_ms_preset('archs')}.")] = None,
    seeds: Annotated[OptInt, Option("--seeds", help=f"Seeds per transformer width {_ms_preset('seeds')}.")] = None,
    control_seeds: Annotated[OptInt, Option("--control-seeds", help=f"Seeds per control width {_ms_preset('control_seeds')}.")] = None,
    transformer_widths: Annotated[OptStr, Option("--widths", help=f"Transformer widths {_ms_preset('transformer_widths')}.")] = None,
    holder_beta: Annotated[OptFloat, Option("--holder-beta", help=f"β of the Hölder target, 0 < β ≤ 1 {_ms_preset('holder_beta')}.")] = None,
    control_spp: Annotated[OptFloat, Option(
        "--control-spp", help=f"Samples per parameter of the control {escape('[')}{_MS_STD.mlp_schedule.samples_per_param:g}].")] = None,
    transformer_spp: Annotated[OptFloat, Option(
        "--transformer-spp", help="Samples per parameter of the transformers "
        f"{escape('[')}{_MS_STD.transformer_schedule.samples_per_param:g}]; the control needed ≈ 16,000 to pass the data check.")] = None,
    device: Annotated[str, Option("--device", help="Where the networks train: cpu | cuda | cuda:N.")] = "cpu",
    backend: Annotated[str, Option("--backend", help="Sweep backend: local (process pool) | ray.")] = "local",
    ray_address: Annotated[OptStr, Option("--ray-address", help="With --backend ray: address of a running cluster.")] = None,
    workers: Annotated[int, Option("--workers", help="Parallel worker processes (one torch thread each).")] = DEFAULT_WORKERS,
    estimate_only: Annotated[bool, Option("--estimate-only", help="Print the cost estimate and stop.")] = False,
    max_hours: Annotated[float, Option("--max-hours", help="Refuse runs whose estimated wall time exceeds this many "
                                                           "hours.")] = DEFAULT_MAX_HOURS,
    json_out: Json = False,
) -> None:
    """Model-size scaling where approximation limits: does MSE fall as N^(−2β/d)? (online, noiseless samples;
    design and verdicts: docs/model_scaling.md; resumable: re-run the same command)."""
    from dataclasses import replace

    from ttlab.scaling.model_scaling import run_model_size_experiment

    base = quick_model_config() if quick else standard_model_config()
    over = {"ds": parse_list(ds, "--d", int), "targets": parse_list(targets, "--targets", str),
            "archs": parse_list(archs, "--arch", str),
            "transformer_widths": parse_list(transformer_widths, "--widths", int),
            "seeds": seeds, "control_seeds": control_seeds, "holder_beta": holder_beta}
    for field_name, flag, spp in (("mlp_schedule", "control_spp", control_spp),
                                  ("transformer_schedule", "transformer_spp", transformer_spp)):
        if spp is not None:
            try:
                over[field_name] = replace(getattr(base, field_name), samples_per_param=spp)
            except TTLabInputError as exc:
                raise TTLabInputError(str(exc), params=(flag,)) from None
    cfg = replace(base, device=device, **{k: v for k, v in over.items() if v is not None})
    with exit_on_interrupt():
        payload = run_model_size_experiment(
            cfg, out, backend=backend, workers=workers, ray_address=ray_address, max_hours=max_hours,
            estimate_only=estimate_only, on_estimate=lambda cost: print_view(views.model_size_cost_view(cost, out), err=True),
            progress=lambda p: print_view([views.model_size_progress_line(p)], err=True))
    if json_out:
        print_json(payload)
    elif not estimate_only:
        print_view(views.model_size_view(payload))
    if not estimate_only and (failed := payload["sweep"]["n_failed"]):
        console_err.print(markup("[bold red]{} task(s) failed[/]; re-run the same command to retry them", failed),
                          highlight=False)
        print_causes((f["key"], f["error"]) for f in payload["sweep"].get("failures", []))
        raise typer.Exit(1)
