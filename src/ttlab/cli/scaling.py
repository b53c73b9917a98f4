"""`ttlab scaling …` — scaling exponents from the intrinsic dimension, and scaling-law fits (paper B)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from ttlab.cli._common import console, print_json
from ttlab.errors import TTLabInputError
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
    intrinsic_dim: Annotated[float, typer.Option("--id", help="Intrinsic dimension d of the data (> 0).")],
    beta: BetaOpt = 1.0,
    json_out: JsonOpt = False,
) -> None:
    """Predicted exponents from an intrinsic dimension: α_D = 2β/(2β+d), α_N = 2β/d."""
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
        str, typer.Option("--bootstrap-method", help="residual (fixed design) | pairs (resample rows).")
    ] = "residual",
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
    if n_starts is not None and form == "power":
        raise TTLabInputError("--n-starts is only used by the offset and chinchilla forms (power is closed-form)")
    if plot is not None:
        _check_plot_suffix(plot)
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
        "bootstrap_method": bootstrap_method,
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
    g = p["goodness_of_fit"]
    console.print(
        f"R² (log) = {g['r2_log']:.5f}   RMSE (log) = {g['rmse_log']:.4g}   RMSE = {g['rmse']:.4g}   "
        f"bootstrap: {p['bootstrap']['n_used']} × {p['bootstrap']['method']}, seed {p['bootstrap']['seed']}"
    )
    if "prediction" in p:
        pr = p["prediction"]
        console.print(
            f"predicted α from d = {pr['id']:g} (β = {pr['beta']:g}, {pr['kind']}): "
            f"{pr['alpha_predicted']:.4f}; fitted {pr['alpha_fitted']:.4f}"
        )
    if "plot" in p:
        console.print(f"plot written to {p['plot']}")
