"""`ttlab scaling …` — scaling exponents from the intrinsic dimension, and scaling-law fits (paper B).

May import: typer, rich, :mod:`ttlab.cli._common` (option-text parsing), :mod:`ttlab.errors`, :mod:`ttlab.outputs`,
:mod:`ttlab.provenance`, :mod:`ttlab.sweep`, :mod:`ttlab.scaling` and :mod:`ttlab.intrinsic_dim` (the paper's K).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from ttlab.cli._common import console, console_err, exit_on_interrupt, parse_list, print_causes, print_json
from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import PAPER
from ttlab.outputs import check_out_dir, check_out_file
from ttlab.provenance import atomic_savefig, atomic_write_json, versions
from ttlab.scaling import fit as _fit
from ttlab.scaling import theory
from ttlab.scaling.io import read_columns_csv

app = typer.Typer(
    help="Scaling laws from the intrinsic dimension of data (paper B): predicted exponents, "
    "ID-free conversions, Table 1, and fits of measured losses.",
    no_args_is_help=True,
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
BetaOpt = Annotated[float, typer.Option("--beta", help="Hölder exponent β of the target, 0 < β ≤ 1.")]

_DEFAULT_BOOTSTRAP = {"power": 1000, "offset": 1000, "chinchilla": 200}


def _fmt(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _kv_table(title: str, rows: dict[str, Any]) -> Table:
    t = Table(title=title, show_header=True)
    t.add_column("quantity")
    t.add_column("value", justify="right")
    for k, v in rows.items():
        t.add_row(k, _fmt(v))
    return t


@app.command()
def predict(
    intrinsic_dim: Annotated[Optional[float], typer.Option("--id", help="Intrinsic dimension d of the data (> 0).")] = None,
    ids: Annotated[
        Optional[str],
        typer.Option("--ids", help="Several estimates, e.g. mle=15.6,twonn=14.2,tle=16.1: a band of predictions "
                                   "(central from --central, range over the documented estimator set)."),
    ] = None,
    from_compare: Annotated[
        Optional[Path], typer.Option("--from-compare", help="The JSON of `ttlab id compare --out/--json`: a band from its estimates.")
    ] = None,
    central: Annotated[str, typer.Option("--central", help=f"Estimator of the central prediction (the paper's: mle = MLE K={PAPER.k}, mean).")] = "mle_mean",
    beta: BetaOpt = 1.0,
    json_out: JsonOpt = False,
) -> None:
    """Predicted exponents from an intrinsic dimension: α_D = 2β/(2β+d), α_N = 2β/d; with --ids or
    --from-compare, a band: the central estimator's prediction and the min–max over the estimators
    mle, mle_harmonic, mle_median, twonn, gride, tle, mom, mada, mind_ml, corrint, danco, ess
    (PCA dimensions measure the linear span and are left out)."""
    from ttlab.scaling.band import ids_from_compare_json, parse_ids, prediction_band

    given = sum(x is not None for x in (intrinsic_dim, ids, from_compare))
    if given != 1:
        raise TTLabInputError("give exactly one of --id, --ids or --from-compare")
    if intrinsic_dim is not None:
        out = {
            "id": intrinsic_dim,
            "beta": beta,
            "alpha_d": theory.alpha_d(intrinsic_dim, beta),
            "alpha_n": theory.alpha_n(intrinsic_dim, beta),
            "alpha_n_sharma_kaplan": theory.alpha_n_sharma_kaplan(intrinsic_dim),
        }
        if json_out:
            print_json(out)
        else:
            console.print(_kv_table(f"Predicted scaling exponents for d = {intrinsic_dim:g}, β = {beta:g}", out))
        return
    source = "--ids"
    if ids is not None:
        estimates = parse_ids(ids)
    else:
        estimates, _ = ids_from_compare_json(from_compare)  # type: ignore[arg-type]
        source = str(from_compare)
    band = prediction_band(estimates, beta=beta, central=central)
    payload = {"source": source, **band.to_dict()}
    if json_out:
        print_json(payload)
        return
    t = Table(title=f"Predicted exponents, β = {beta:g}: central from {band.central_estimator}, band over "
                    f"{len(band.estimator_set)} estimator(s)")
    for col in ("", "d", "α_D", "α_N"):
        t.add_column(col, justify="left" if not col else "right")
    t.add_row(f"central ({band.central_estimator})", f"{band.central['id']:.3f}", f"{band.central['alpha_d']:.4f}",
              f"{band.central['alpha_n']:.4f}")
    t.add_row("band low (largest d)", f"{band.lo['id']:.3f}", f"{band.lo['alpha_d']:.4f}", f"{band.lo['alpha_n']:.4f}")
    t.add_row("band high (smallest d)", f"{band.hi['id']:.3f}", f"{band.hi['alpha_d']:.4f}", f"{band.hi['alpha_n']:.4f}")
    for name, v in band.estimators.items():
        t.add_row(f"  {name}", f"{v['id']:.3f}", f"{v['alpha_d']:.4f}", f"{v['alpha_n']:.4f}")
    console.print(t)
    if band.not_in_band:
        console.print(f"not in the band (not manifold-dimension estimators of the set): {', '.join(band.not_in_band)}")


@app.command()
def convert(
    alpha_n: Annotated[Optional[float], typer.Option("--alpha-n", help="Model-scaling exponent α_N (> 0).")] = None,
    alpha_d: Annotated[Optional[float], typer.Option("--alpha-d", help="Data-scaling exponent α_D (0 < α_D < 1).")] = None,
    beta: BetaOpt = 1.0,
    json_out: JsonOpt = False,
) -> None:
    """ID-free conversion between α_N and α_D (α_D = α_N/(1+α_N)), plus the implied ID at β."""
    if (alpha_n is None) == (alpha_d is None):
        raise TTLabInputError("give exactly one of --alpha-n or --alpha-d")
    if alpha_n is not None:
        out = {
            "given": "alpha_n",
            "alpha_n": alpha_n,
            "alpha_d": theory.alpha_d_from_alpha_n(alpha_n),
            "implied_id": theory.id_from_alpha_n(alpha_n, beta),
        }
    else:
        out = {
            "given": "alpha_d",
            "alpha_d": alpha_d,
            "alpha_n": theory.alpha_n_from_alpha_d(alpha_d),
            "implied_id": theory.id_from_alpha_d(alpha_d, beta),
        }
    out["beta"] = beta
    if json_out:
        print_json(out)
    else:
        console.print(_kv_table("ID-free conversion", out))


@app.command()
def table1(
    beta: BetaOpt = 1.0,
    json_out: JsonOpt = False,
) -> None:
    """Recompute the paper's Table 1: ID-free predictions for Kaplan et al. 2020 and Chinchilla."""
    rows = [r.to_dict() for r in theory.table1(beta=beta)]
    if json_out:
        print_json(
            {
                "rows": rows,
                "beta": beta,
                "formulas": {
                    "alpha_d_predicted_from_alpha_n": "alpha_n / (1 + alpha_n)",
                    "alpha_n_predicted_from_alpha_d": "alpha_d / (1 - alpha_d)",
                    "id_from_alpha_n": "2 beta / alpha_n",
                    "id_from_alpha_d": "2 beta (1 - alpha_d) / alpha_d",
                    "id_from_alpha_n_sharma_kaplan": "4 / alpha_n",
                    "alpha_n_sharma_kaplan_from_id_of_alpha_d": "4 / id_from_alpha_d",
                },
            }
        )
        return
    t = Table(title=f"Table 1 recomputed: ID-free scaling exponents (β = {beta:g})")
    t.add_column("quantity")
    for r in rows:
        t.add_column(r["short_name"], justify="right")
    labels = (
        ("alpha_n_observed", "α_N observed", ".4f"),
        ("alpha_n_predicted_from_alpha_d", "α_N predicted = α_D/(1−α_D)", ".4f"),
        ("alpha_d_observed", "α_D observed", ".4f"),
        ("alpha_d_predicted_from_alpha_n", "α_D predicted = α_N/(1+α_N)", ".4f"),
        ("id_from_alpha_n", "d implied by α_N (2β/α_N)", ".2f"),
        ("id_from_alpha_d", "d implied by α_D (2β(1−α_D)/α_D)", ".2f"),
        ("id_from_alpha_n_sharma_kaplan", "d implied by α_N, Sharma–Kaplan (4/α_N)", ".2f"),
        ("alpha_n_sharma_kaplan_from_id_of_alpha_d", "α_N Sharma–Kaplan at d(α_D) (4/d)", ".4f"),
    )
    for key, label, fmt in labels:
        t.add_row(label, *(format(r[key], fmt) for r in rows))
    console.print(t)


@app.command()
def fit(
    csv_file: Annotated[Path, typer.Argument(help="CSV file with a header row.", metavar="FILE.csv")],
    x: Annotated[str, typer.Option("--x", help="Column of the size variable (N for chinchilla).")],
    y: Annotated[str, typer.Option("--y", help="Column of the loss.")],
    x2: Annotated[Optional[str], typer.Option("--x2", help="Column of D (chinchilla form only).")] = None,
    form: Annotated[str, typer.Option("--form", help="power | offset | chinchilla.")] = "power",
    bootstrap: Annotated[
        Optional[int],
        typer.Option("--bootstrap", help="Bootstrap replicates (default 1000; 200 for chinchilla; 0 = none)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    ci_level: Annotated[float, typer.Option("--ci-level", help="Confidence level of the intervals.")] = 0.95,
    bootstrap_method: Annotated[
        Optional[str],
        typer.Option("--bootstrap-method", help="residual (fixed design) | pairs (resample rows). Default: residual "
                     "for power/offset; pairs for chinchilla (its spread matches Besiroglu et al. 2024's published "
                     "standard errors; residual is about 2x narrower there)."),
    ] = None,
    objective: Annotated[
        Optional[str],
        typer.Option("--objective", help="chinchilla only: huber (default; summed Huber loss of log residuals, "
                     "δ = 1e-3, Hoffmann et al. 2022) | huber-likelihood (Huber negative log-likelihood with a "
                     "fitted scale σ, δ on r/σ; Besiroglu et al. 2024's replication)."),
    ] = None,
    n_starts: Annotated[
        Optional[int],
        typer.Option("--n-starts", help="Optimiser starts kept from the grid (offset/chinchilla; default 4)."),
    ] = None,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="Write a log-log plot (png/pdf/svg).")] = None,
    intrinsic_dim: Annotated[
        Optional[float], typer.Option("--id", help="Also compare with the exponent predicted from this ID.")
    ] = None,
    beta: BetaOpt = 1.0,
    kind: Annotated[str, typer.Option("--kind", help="data (x = data size, α_D) | model (x = parameters, α_N).")] = "data",
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write the result JSON to this file.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Fit a scaling law to CSV columns, with bootstrap intervals and goodness of fit."""
    if form not in _fit.FORMS:
        raise TTLabInputError(f"unknown --form {form!r}; choose one of {', '.join(_fit.FORMS)}")
    if form == "chinchilla" and x2 is None:
        raise TTLabInputError("--form chinchilla needs --x2 COL (data size D) besides --x (N) and --y (loss)")
    if form != "chinchilla" and x2 is not None:
        raise TTLabInputError(f"--x2 is only used by --form chinchilla, not by --form {form}")
    if kind not in ("data", "model"):
        raise TTLabInputError(f"--kind must be 'data' or 'model', got {kind!r}")
    if intrinsic_dim is not None and form == "chinchilla":
        raise TTLabInputError("--id (a predicted exponent) is supported for the power and offset forms only")
    if objective is not None and objective not in _fit.OBJECTIVES:
        raise TTLabInputError(f"unknown --objective {objective!r}; choose one of {', '.join(_fit.OBJECTIVES)}")
    if objective is not None and form != "chinchilla":
        raise TTLabInputError(f"--objective is only used by --form chinchilla, not by --form {form}")
    if n_starts is not None and form == "power":
        raise TTLabInputError("--n-starts is only used by the offset and chinchilla forms (power is closed-form)")
    if plot is not None:
        _check_plot_suffix(plot)
        check_out_file(plot, option="--plot", inputs=(csv_file,))
    if out is not None:
        check_out_file(out, inputs=(csv_file,))
    n_boot = _DEFAULT_BOOTSTRAP[form] if bootstrap is None else bootstrap

    cols = [x, y] + ([x2] if x2 is not None else [])
    if len(set(cols)) != len(cols):
        raise TTLabInputError(f"--x, --y and --x2 must name different columns, got {cols}")
    data = read_columns_csv(csv_file, cols)
    n_min = _fit.MIN_POINTS[form]
    if data[x].size < n_min:
        raise TTLabInputError(
            f"{csv_file}: the {form} form needs at least {n_min} data rows, the file has {data[x].size}"
        )
    extra: dict[str, Any] = {} if n_starts is None else {"n_starts": n_starts}
    if objective is not None:
        extra["objective"] = objective
    result = _fit.fit_scaling_law(
        form, data[x], data[y], data[x2] if x2 is not None else None,
        bootstrap=n_boot, seed=seed, ci_level=ci_level, bootstrap_method=bootstrap_method, **extra,
    )
    payload = result.to_dict()
    if intrinsic_dim is not None:
        from ttlab.scaling.plot import predicted_exponent

        a_pred = predicted_exponent(intrinsic_dim, beta, kind)  # type: ignore[arg-type]
        payload["prediction"] = {
            "id": intrinsic_dim,
            "beta": beta,
            "kind": kind,
            "alpha_predicted": a_pred,
            "alpha_fitted": result.params["alpha"],
            "fitted_minus_predicted": result.params["alpha"] - a_pred,
            "predicted_in_ci": (
                result.ci["alpha"][0] <= a_pred <= result.ci["alpha"][1] if "alpha" in result.ci else None
            ),
        }
    payload["config"] = {
        "command": "ttlab scaling fit",
        "csv": str(csv_file),
        "x": x,
        "y": y,
        "x2": x2,
        "form": form,
        "bootstrap": n_boot,
        "bootstrap_method": result.config["bootstrap_method"],
        "objective": result.config.get("objective"),
        "seed": seed,
        "ci_level": ci_level,
        "n_starts": result.config.get("n_starts"),
        "id": intrinsic_dim,
        "beta": beta,
        "kind": kind,
        "plot": str(plot) if plot is not None else None,
    }
    payload["versions"] = versions()
    if plot is not None:
        from ttlab.scaling.plot import plot_fit

        fig = plot_fit(
            result, data[x], data[y], x2=data[x2] if x2 is not None else None,
            intrinsic_dim=intrinsic_dim, beta=beta, kind=kind,  # type: ignore[arg-type]
            xlabel=x, ylabel=y, title=f"{csv_file.name}: {form} fit",
        )
        atomic_savefig(fig, plot, dpi=120)
        payload["plot"] = str(plot)
    if out is not None:
        atomic_write_json(out, payload)
    for note in result.warnings:
        console_err.print(f"[yellow]warning:[/] {note}", highlight=False, soft_wrap=True)
    if json_out:
        print_json(payload)
        return
    _print_fit(payload)


def _check_plot_suffix(path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    supported = FigureCanvasAgg(Figure()).get_supported_filetypes()
    suffix = path.suffix.lstrip(".").lower()
    if suffix not in supported:
        raise TTLabInputError(
            f"--plot {path}: unsupported image format {suffix or '(none)'!r}; use one of "
            f"{', '.join(sorted(supported))}"
        )


def _print_fit(p: dict[str, Any]) -> None:
    t = Table(title=f"{p['form']} fit of {p['config']['y']} vs {p['config']['x']} "
              f"({p['n_points']} points)")
    t.add_column("parameter")
    t.add_column("estimate", justify="right")
    t.add_column(f"{p['ci_level']:.0%} bootstrap CI", justify="right")
    for k, v in p["params"].items():
        lo_hi = p["ci"].get(k)
        t.add_row(k, f"{v:.6g}", f"[{lo_hi[0]:.6g}, {lo_hi[1]:.6g}]" if lo_hi else "—")
    console.print(t)
    g = {k: ("n/a" if v is None else format(v, ".5f" if k == "r2_log" else ".4g"))
         for k, v in p["goodness_of_fit"].items()}
    console.print(
        f"R² (log) = {g['r2_log']}   RMSE (log) = {g['rmse_log']}   RMSE = {g['rmse']}   "
        f"bootstrap: {p['bootstrap']['n_used']} × {p['bootstrap']['method']}, seed {p['bootstrap']['seed']}"
    )
    if p["fit_config"].get("objective"):
        scale = p["optimizer"].get("scale")
        console.print(f"objective: {p['fit_config']['objective']} (δ = {p['fit_config']['huber_delta']:g})"
                      + ("" if scale is None else f", fitted scale σ = {scale:.4g}"))
    if "prediction" in p:
        pr = p["prediction"]
        console.print(
            f"predicted α from d = {pr['id']:g} (β = {pr['beta']:g}, {pr['kind']}): "
            f"{pr['alpha_predicted']:.4f}; fitted {pr['alpha_fitted']:.4f}"
        )
    if not p.get("identifiable", True):
        console.print("[bold yellow]not identifiable[/]: see the warnings above; the parameters are not meaningful "
                      "one by one.")
    if "plot" in p:
        console.print(f"plot written to {p['plot']}")


# ---------------------------------------------------------------------------------------------
# ttlab scaling manifold — Theorem 1 tested directly (regression on low-dimensional manifolds)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


@app.command()
def manifold(
    out: Annotated[Path, typer.Option("--out", help="Output directory (results.json, manifold_scaling.png, cache/).")],
    d: Annotated[Optional[str], typer.Option("--d", help="Intrinsic dimensions d [1,2,4; quick: 2,4].")] = None,
    ambient: Annotated[Optional[str], typer.Option("--ambient", help="Ambient dimensions D [16,128,768; quick: 16,128].")] = None,
    n_min: Annotated[Optional[int], typer.Option("--n-min", help="Smallest training-set size [64; quick: 128].")] = None,
    n_max: Annotated[Optional[int], typer.Option("--n-max", help="Largest training-set size [8192; quick: 2048].")] = None,
    points: Annotated[Optional[int], typer.Option("--points", help="Sizes on the geometric grid [8; quick: 5].")] = None,
    arch: Annotated[
        Optional[str],
        typer.Option("--arch", help="Comma-separated: softmax | relu (paper's theory transformer) | mlp "
                     "[softmax,relu,mlp; quick: softmax]."),
    ] = None,
    regime: Annotated[
        Optional[str],
        typer.Option("--regime", help="Comma-separated: noisy (label noise --noise; claim α̂_D ≈ 2β/(2β+d)) | noiseless "
                     "(σ = 0; claim α̂_D ≥ 2β/(2β+d)) [noisy,noiseless; quick: noisy]."),
    ] = None,
    seeds: Annotated[Optional[int], typer.Option("--seeds", help="Seeds (data, init, batch order) per size [2; quick: 1].")] = None,
    oracle_seeds: Annotated[
        Optional[int], typer.Option("--oracle-seeds", help="Seeds of the k-NN oracle (the first --seeds are the networks' "
                                    "splits) [6; quick: 4].")
    ] = None,
    backend: Annotated[
        str, typer.Option("--backend", help="Sweep backend: local (process pool) | ray (needs pip install 'ttlab[ray]').")
    ] = "local",
    ray_address: Annotated[
        Optional[str],
        typer.Option("--ray-address", help="With --backend ray: 'auto' or host:port of a running cluster (`ray start "
                     "--head`); default: $RAY_ADDRESS, else a local Ray with workers × threads CPUs."),
    ] = None,
    workers: Annotated[
        int, typer.Option("--workers", help="Parallel worker processes (1 = in-process; ray: tasks at once on a local Ray).")
    ] = 2,
    threads: Annotated[
        Optional[int], typer.Option("--threads", help="Torch threads per task (default: cores // workers).")
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="Small preset: softmax, β 1, noisy; d 2,4; D 16,128; 5 sizes 128..2048; 1 seed.")
    ] = False,
    beta: Annotated[
        Optional[str], typer.Option("--beta", help="Hölder exponent(s) β of the target, 0 < β ≤ 1 [1,0.5; quick: 1].")
    ] = None,
    profile: Annotated[str, typer.Option("--profile", help="Ridge profile: sin | cusp (β-Hölder cusps).")] = "sin",
    manifold_name: Annotated[str, typer.Option("--manifold", help="sphere | cube | nonlinear.")] = "sphere",
    noise: Annotated[
        Optional[float], typer.Option("--noise", help="Label-noise σ of the noisy regime (target variance 1) [1].")
    ] = None,
    spectrum: Annotated[
        Optional[str], typer.Option("--spectrum", help="Target spectrum: weighted (log-spaced frequencies, amplitudes "
                                    "∝ r^−β) | sampled (density ∝ r^−(1+2β), equal amplitudes) [weighted].")
    ] = None,
    features: Annotated[Optional[int], typer.Option("--features", help="Ridge features K of the target [1024].")] = None,
    min_freq: Annotated[Optional[float], typer.Option("--min-freq", help="Smallest target frequency r_0 [max(1, d/2)].")] = None,
    max_freq: Annotated[Optional[float], typer.Option("--max-freq", help="Largest target frequency R [1024].")] = None,
    lr: Annotated[
        Optional[str], typer.Option("--lr", help="AdamW learning rate(s) [0.002]; several: chosen per size on validation.")
    ] = None,
    width: Annotated[Optional[int], typer.Option("--width", help="Model width: n_embd / MLP hidden width [64; quick: 32].")] = None,
    depth: Annotated[Optional[int], typer.Option("--depth", help="Transformer blocks / MLP hidden layers [2].")] = None,
    tokens: Annotated[Optional[int], typer.Option("--tokens", help="Transformer tokens: x cut into this many chunks [8; quick: 4].")] = None,
    max_steps: Annotated[Optional[int], typer.Option("--max-steps", help="Step limit per run [4000; quick: 1000].")] = None,
    epochs: Annotated[Optional[float], typer.Option("--epochs", help="Epochs per run below the step limit [100; quick: 30].")] = None,
    model_widths: Annotated[
        Optional[str], typer.Option("--model-widths", help="Widths of a model-size sweep at n = --model-n (gives α̂_N) "
                                    "[8,16,32,64,128; quick: none]; 'none' to skip.")
    ] = None,
    model_n: Annotated[
        Optional[int], typer.Option("--model-n", help="Training-set size of the model-size sweep [--n-max].")
    ] = None,
    n_test: Annotated[Optional[int], typer.Option("--n-test", help="Test points (clean targets) per seed [4096; quick: 2048].")] = None,
    no_knn: Annotated[bool, typer.Option("--no-knn", help="Skip the k-NN reference.")] = False,
    estimate_only: Annotated[bool, typer.Option("--estimate-only", help="Print the cost estimate and stop.")] = False,
    max_hours: Annotated[float, typer.Option("--max-hours", help="Refuse sweeps whose estimated remaining wall time "
                                             "exceeds this many hours.")] = 24.0,
    json_out: JsonOpt = False,
) -> None:
    """Regression on d-dimensional manifolds in R^D: does test MSE fall as n^(−2β/(2β+d))?"""
    from ttlab.scaling import manifold_regression as mr

    texts = {"ds": d, "ambients": ambient, "lrs": lr, "betas": beta, "archs": arch, "regimes": regime,
             "model_widths": model_widths}
    scalars = {"n_min": n_min, "n_max": n_max, "points": points, "seeds": seeds, "width": width, "depth": depth,
               "tokens": tokens, "n_features": features, "n_test": n_test, "model_n": model_n, "noise": noise,
               "min_freq": min_freq, "max_freq": max_freq, "spectrum": spectrum, "oracle_seeds": oracle_seeds,
               "profile": profile, "manifold": manifold_name, "knn": not no_knn}
    cfg = _manifold_config(quick, texts, scalars, max_steps=max_steps, epochs=epochs)
    check_out_dir(out)
    tpt = _threads_per_task(backend, ray_address, workers, threads)
    cost, full_cost = _print_manifold_cost(cfg, out, quick, workers, tpt)
    if estimate_only:
        if json_out:
            print_json({"cost": cost, "full_sweep_cost": full_cost, "config": cfg.to_dict()})
        return
    _require_hours(cost["remaining_wall_seconds"], max_hours)
    if backend == "ray" and cost["n_cached"] < cost["n_train_runs"] + cost["n_knn_runs"]:
        import os

        where = ray_address or os.environ.get("RAY_ADDRESS") or f"a local Ray with {workers * tpt} CPU(s)"
        console_err.print(f"running on Ray: {where} (a new local Ray takes several seconds to start)", highlight=False)
    with exit_on_interrupt():
        payload = mr.run_manifold_sweep(cfg, out, backend=backend, workers=workers, threads_per_task=tpt,
                                        progress=_print_manifold_progress, ray_address=ray_address)
    payload["cost_estimate"] = cost
    if full_cost is not None:
        payload["full_sweep_cost_estimate"] = full_cost
    atomic_write_json(out / "results.json", payload)
    failed = payload["sweep"]["n_failed"]
    if json_out:
        print_json(payload)
    else:
        _print_manifold(payload)
    if failed:
        console_err.print(f"[bold red]{failed} task(s) failed[/]; see 'sweep.failures' in {out / 'results.json'} "
                          "(re-run the same command to retry them)", highlight=False)
        print_causes((f["key"], f["error"]) for f in payload["sweep"].get("failures", []))
        raise typer.Exit(1)


_MANIFOLD_LISTS = {"ds": ("--d", int), "ambients": ("--ambient", int), "lrs": ("--lr", float),
                   "betas": ("--beta", float), "archs": ("--arch", str), "regimes": ("--regime", str),
                   "model_widths": ("--model-widths", int)}


def _manifold_config(quick: bool, texts: dict[str, str | None], scalars: dict[str, Any], *, max_steps: int | None,
                     epochs: float | None) -> Any:
    """The sweep config: the preset (``--quick`` or the full default) with the options given (comma lists in
    ``texts``, parsed here; ``--model-widths none`` is an empty list)."""
    from dataclasses import replace

    from ttlab.scaling import manifold_regression as mr

    base = mr.quick_config() if quick else mr.ManifoldSweepConfig()
    train = base.train
    if max_steps is not None:
        train = replace(train, max_steps=max_steps, min_steps=min(train.min_steps, max_steps))
    if epochs is not None:
        train = replace(train, epochs=epochs)
    over: dict[str, Any] = {"train": train, **{k: v for k, v in scalars.items() if v is not None}}
    for key, text in texts.items():
        option, item = _MANIFOLD_LISTS[key]
        if key == "model_widths" and text is not None and text.strip().lower() == "none":
            over[key] = ()
        elif (values := parse_list(text, option, item)) is not None:
            over[key] = values
    if "n_min" in over and "n_max" not in over and over["n_min"] > base.n_max:
        raise TTLabInputError(f"--n-min {over['n_min']} is above the default --n-max {base.n_max}; give --n-max too")
    return replace(base, **over)


def _threads_per_task(backend: str, ray_address: str | None, workers: int, threads: int | None) -> int:
    """Check the execution options; torch threads per task (default: cores // workers)."""
    import os

    from ttlab.sweep import check_backend

    check_backend(backend)
    if ray_address is not None and backend != "ray":
        raise TTLabInputError(f"--ray-address needs --backend ray (got --backend {backend})")
    if workers < 1:
        raise TTLabInputError(f"--workers must be >= 1, got {workers}")
    if threads is not None and threads < 1:
        raise TTLabInputError(f"--threads must be >= 1, got {threads}")
    return threads if threads is not None else (max(1, (os.cpu_count() or 1) // workers) if workers > 1 else 1)


def _require_hours(seconds: float, max_hours: float) -> None:
    """Refuse a sweep whose estimated remaining wall time exceeds ``max_hours`` (before any run starts)."""
    import math

    if not (math.isfinite(max_hours) and max_hours > 0):
        raise TTLabInputError(f"--max-hours must be a positive number (got {max_hours})")
    if seconds > max_hours * 3600:
        raise TTLabInputError(
            f"the sweep would take ≈ {_minutes(seconds)} of wall time (estimated above), over --max-hours {max_hours:g}; "
            f"shrink it (--quick, fewer --d/--ambient/--seeds, a smaller --n-max or --max-steps), add --workers, or "
            f"raise --max-hours to {math.ceil(seconds / 3600):,} to run it anyway")


def _print_manifold_cost(cfg: Any, out: Path, quick: bool, workers: int, tpt: int) -> tuple[dict, dict | None]:
    """Estimate and print the sweep's cost (and, with --quick, the full default sweep's)."""
    from ttlab.scaling import manifold_regression as mr

    cost = mr.estimate_cost(cfg, workers=workers, threads_per_task=tpt, cache_dir=out / "cache")
    msg = (f"[bold]manifold sweep[/]: {cost['n_train_runs']} training runs ({','.join(cfg.archs)}, "
           f"β={list(cfg.betas)}, {','.join(cfg.regimes)}, d={list(cfg.ds)}, D={list(cfg.ambients)}, n={cfg.sizes()}, "
           f"{cfg.seeds} seed(s), lr={list(cfg.lrs)}) + {cost['n_knn_runs']} k-NN oracle runs; estimated cost ≈ {_minutes(cost['task_seconds'])} of task time, "
           f"≈ {_minutes(cost['wall_seconds'])} wall on {workers} worker(s) × {tpt} thread(s) "
           "(full schedules at the step times measured now; early stopping shortens, a busy machine lengthens)")
    if cost["n_cached"]:
        msg += (f"; {cost['n_cached']} run(s) already in {out / 'cache'}, remaining ≈ "
                f"{_minutes(cost['remaining_wall_seconds'])} wall")
    console_err.print(msg, highlight=False)
    full_cost = None
    if quick:
        full = mr.ManifoldSweepConfig()
        full_cost = mr.estimate_cost(full, workers=workers, threads_per_task=tpt)
        console_err.print(
            f"full default sweep ({','.join(full.archs)}, β={list(full.betas)}, {','.join(full.regimes)}, "
            f"d={list(full.ds)}, D={list(full.ambients)}, {full.points} sizes {full.n_min}..{full.n_max}, {full.seeds} "
            f"seeds, model widths {list(full.model_widths)}): {full_cost['n_train_runs']} runs, estimated ≈ "
            f"{_minutes(full_cost['wall_seconds'])} wall on {workers} worker(s)", highlight=False)
    return cost, full_cost


def _print_manifold_progress(p: Any) -> None:
    """One line per finished sweep task."""
    r = p.record
    c = r.config
    what = ("approx. oracle" if "cells" in c else "k-NN oracle" if "model" not in c
            else f"{c['model']['arch']} w={c['model']['n_embd']}")
    state = "cached" if r.cached else ("ok" if r.ok else "FAILED")
    extra = f"test MSE {r.result.get('test_mse', r.result.get('approx_mse')):.4g}" if r.ok else ((r.error or "").strip().splitlines() or [""])[-1]
    console_err.print(f"[{p.done}/{p.total}] {what} β={c['problem']['beta']:g} {c.get('regime')} d={c['d']} "
                      f"D={c['ambient']} n={c['n']} seed={c['seed']}: "
                      f"{state} ({r.seconds:.1f} s) {extra}", highlight=False, markup=False)


def _print_manifold(p: dict[str, Any]) -> None:
    from rich import box

    from ttlab.scaling.manifold_regression import ORACLE_TOL, design_check

    def num(v: Any, fmt: str = ".3f") -> str:
        return "—" if v is None else format(v, fmt)

    groups: dict[tuple, list[dict[str, Any]]] = {}
    for f in p["fits"]:  # one narrow table per (arch, β, regime)
        groups.setdefault((f["arch"], f["beta"], f["regime"]), []).append(f)
    for (arch, beta, regime), fits in groups.items():
        noiseless = regime == "noiseless"
        t = Table(title=f"Data scaling on manifolds ({arch}, β = {beta:g}, {regime})", box=box.SIMPLE_HEAD,
                  padding=(0, 1), show_edge=False)
        for col in ["d", "D", "α̂", "CI", "oracle", "design", "theory"] + (["2β/d"] if noiseless else []) + ["MSE"]:
            t.add_column(col, justify="right", no_wrap=True)
        for f in fits:
            ci = f.get("alpha_hat_ci") or [None, None]
            ok, _ = design_check(f)
            cells = [str(f["d"]), str(f["ambient"]), num(f["alpha_hat"], ".2f") + ("*" if f.get("includes_step_limited")
                                                                                   else ""),
                     f"{num(ci[0], '.2f')}-{num(ci[1], '.2f')}", num(f.get("oracle_alpha"), ".2f"),
                     "—" if ok is None else ("pass" if ok else "FAIL"), num(f["alpha_pred"], ".2f")]
            cells += [num(f.get("alpha_noiseless"), ".2f")] if noiseless else []
            t.add_row(*cells, num(f.get("mse_at_n_ref"), ".3g"))
        console.print(t)
    console.print(f"α̂: fitted slope of test MSE vs n (CI 95%); oracle: k-NN slope on the same splits; design: oracle "
                  f"within ±{ORACLE_TOL:g} of 2β/(2β+d) (noisy) or ≥ 2β/(2β+d) − {ORACLE_TOL:g} (noiseless); theory: "
                  f"2β/(2β+d); 2β/d: noiseless minimax rate; MSE: at n = {p['n_ref']}; *: fit includes step-limited "
                  "sizes", highlight=False)
    for m in p.get("model_fits", []):
        dc = m.get("data_check") or {}
        ci = m.get("alpha_hat_ci") or [None, None]
        console.print(f"model size ({m['arch']}, β={m['beta']:g}, {m['regime']}) at n = {m['n']}, d={m['d']} "
                      f"D={m['ambient']}: α̂_N = {num(m['alpha_hat'])} [{num(ci[0])}, {num(ci[1])}] vs "
                      f"2β/d = {m['alpha_pred']:.3f}; approximation oracle {num(m.get('oracle_alpha'))}; widest model's "
                      f"MSE at 2n / at n = {num(dc.get('ratio'))}"
                      + (" (includes step-limited widths)" if m.get("includes_step_limited") else ""))
    console.print(f"wrote {p['files']['results']} and {p['files']['figure']} in {p['wall_seconds']:.0f} s")
