"""Figures of paper B's scaling experiments: LM data/model sweeps, ID ablations, the manifold sweep.

Each function draws from the JSON-ready result dict its experiment writes (:mod:`ttlab.lm.experiments`,
:mod:`ttlab.scaling.manifold_regression`) and returns or saves a matplotlib figure; exponents are read
with the keys of :class:`ttlab.scaling.analysis.FittedExponent`. The generic fit plot is
:func:`ttlab.scaling.plot.plot_fit`.

May import: numpy, matplotlib (lazily, inside the functions; bare ``Figure`` objects, no pyplot state),
:mod:`ttlab.scaling.theory`, :mod:`ttlab.provenance`. Not torch or the experiment modules.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["measured_ylim", "plot_id_ablations", "plot_lm_scaling", "plot_manifold_scaling", "plot_model_scaling"]


def _figure(figsize: tuple[float, float], layout: str | None = None) -> Any:
    """A bare Figure with an Agg canvas: no pyplot global state, no GUI backend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: str | Path) -> Path:
    from ttlab.provenance import atomic_savefig

    atomic_savefig(fig, path, dpi=120)
    return Path(path)


# ------------------------------------------------------------------------------- LM sweeps (paper B, Fig. 2–4)
LOG_MARGIN = 0.2
"""The y axis of a log-log scaling plot spans the measured losses plus this fraction of their log range on each side
(at least 0.02 decades): a prediction line that runs far away is clipped, never the measured points squeezed."""


def measured_ylim(values: Sequence[float]) -> tuple[float, float]:
    """Limits of a log y axis around the positive finite ``values`` (:data:`LOG_MARGIN` on each side)."""
    v = np.log10([x for x in values if np.isfinite(x) and x > 0])
    pad = max((v.max() - v.min()) * LOG_MARGIN, 0.02)
    return 10 ** (v.min() - pad), 10 ** (v.max() + pad)


def plot_lm_scaling(result: dict[str, Any], path: str | Path) -> Path:
    """Figure 2/3-like plot of an LM data or model sweep: test loss vs data (or model) size, log-log, with
    the fitted power law, the slope predicted from the ID (through the fitted point of the largest size)
    and per-seed points."""
    data_kind = result["kind"] == "data_sweep"
    xk = "train_tokens" if data_kind else "params_non_embedding"
    pts = result["points"]
    x = np.array([p[xk] for p in pts], dtype=float)
    y = np.array([p["loss"] for p in pts])
    fig = _figure((5.6, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    for p in pts:
        ax.scatter([p[xk]] * len(p["loss_per_seed"]), p["loss_per_seed"], s=10, color="0.6", zorder=2)
    ax.scatter(x, y, color="C0", zorder=3, label=f"test loss ({result['config']['loss']})")
    grid = np.geomspace(x.min(), x.max(), 100)
    power = result["fits"].get("power") or {}
    if "params" in power:
        A, a = power["params"]["A"], power["params"]["alpha"]
        ci = result.get("alpha_hat_ci")
        lab = f"fit: α̂ = {a:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        ax.plot(grid, A * grid ** (-a), color="C0", lw=1.5, label=lab)
        pred = result.get("alpha_pred")
        if pred is not None:
            anchor_x, anchor_y = x[-1], A * x[-1] ** (-a)
            sym = "α_D" if data_kind else "α_N"
            ax.plot(grid, anchor_y * (grid / anchor_x) ** (-pred), color="C3", ls="--", lw=1.2,
                    label=f"predicted {sym} = {pred:.3f} (ID {result['intrinsic_dim']:.2f})")
    off = result["fits"].get("offset", {})
    if "params" in off:
        E, B, b = off["params"]["E"], off["params"]["A"], off["params"]["alpha"]
        ax.plot(grid, E + B * grid ** (-b), color="C2", ls=":", lw=1.2, label=f"E + A·x^−α: α = {b:.3f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(*measured_ylim([v for p in pts for v in (p["loss"], *p["loss_per_seed"])]))
    ax.set_xlabel("training tokens D" if data_kind else "non-embedding parameters N")
    ax.set_ylabel("test loss (nats/token)")
    corpus = result["config"]["data"]["corpus"]
    ax.set_title(f"{'Data' if data_kind else 'Model'} scaling on {corpus}", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def _id_lines(ax: Any, xs: list[float], rows: list[dict[str, Any]], mean_label: str = "mean",
              harmonic_label: str = "harmonic") -> None:
    """The mean-rule and the harmonic-rule ID of ``rows`` against ``xs``."""
    ax.plot(xs, [r["intrinsic_dim"] for r in rows], "o-", label=mean_label)
    ax.plot(xs, [r["intrinsic_dim_harmonic"] for r in rows], "s--", label=harmonic_label)


def plot_id_ablations(result: dict[str, Any], path: str | Path) -> Path:
    """Figure 4-like panels: ID vs model size, vs layer, vs context position (mean and harmonic rules)."""
    from matplotlib.ticker import MaxNLocator

    fig = _figure((12, 3.6))
    axes = fig.subplots(1, 3)
    bm = result["by_model"]
    by_data = bool(bm) and "train_tokens" in bm[0]  # the same model trained on several data sizes
    xk = "train_tokens" if by_data else "params_non_embedding"
    ax = axes[0]
    _id_lines(ax, [r[xk] for r in bm], bm, "MLE, mean", "MLE, harmonic")
    if not by_data:
        for r in bm:
            ax.annotate(f"{r['n_layer']}L/{r['n_embd']}", (r[xk], r["intrinsic_dim"]), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("training tokens" if by_data else "non-embedding parameters")
    ax.set_ylabel("intrinsic dimension (final layer)")
    ax.set_title("ID vs training data" if by_data else "ID vs model size / width", fontsize=10)
    rows = result["per_layer"]["rows"]
    _id_lines(axes[1], [r["layer"] for r in rows], rows)
    axes[1].set_xlabel("layer (0 = embeddings, last = after final LN)")
    axes[1].xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[1].set_title("ID across layers", fontsize=10)
    rows = result["per_position"]["rows"]
    _id_lines(axes[2], [0.5 * (r["positions"][0] + r["positions"][1]) for r in rows], rows)
    axes[2].set_xlabel("position in the context window (range centre)")
    axes[2].set_title("ID vs context position", fontsize=10)
    for a in axes:
        a.legend(fontsize=7)
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


# ------------------------------------------------------------------------------- manifold regression sweep
def _log_axes(ax: Any, xticks: list[float] | None = None) -> None:
    """Log-log axes with plain tick labels (x ticks at ``xticks``; minor y labels at 2 and 5)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _p: f"{v:g}")

    def two_five(v: float, _p: Any) -> str:
        return f"{v:g}" if v > 0 and round(v / 10 ** math.floor(math.log10(v))) in (2, 5) else ""

    if xticks:
        ax.set_xticks(xticks)
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(FuncFormatter(two_five))


def _fit_and_theory_lines(ax: Any, grid: np.ndarray, x0: float, fit: tuple[float, float], pred: float, color: str,
                          label: str, lw: tuple[float, float]) -> None:
    """The fitted power law ``fit = (A, α̂)`` over ``grid`` and the theory's slope ``pred`` through the fit at ``x0``."""
    A, a = fit
    ax.plot(grid, A * grid ** (-a), color=color, lw=lw[0], label=label)
    ax.plot(grid, A * x0 ** (-a) * (grid / x0) ** (-pred), color=color, lw=lw[1], ls="--")


def _rate_panel(ax: Any, payload: dict[str, Any], beta: float, regime: str, D: int, colors: dict[int, str]) -> None:
    """Test MSE vs n per d at one (β, regime, D) for the first arch, with the k-NN oracle."""
    cfg = payload["config"]
    arch = cfg["archs"][0]
    for f in payload["fits"]:
        if (f["arch"], f["beta"], f["regime"], f["ambient"]) != (arch, beta, regime, D) or not f.get("points"):
            continue
        c = colors[f["d"]]
        for p in f["points"]:
            ax.scatter([p["n"]] * len(p["test_mse"]), p["test_mse"], s=22,
                       facecolors="none" if p["step_limited"] else c, edgecolors=c, zorder=3)
        if f["alpha_hat"] is not None:
            xs = np.asarray(f["sizes_fitted"], dtype=float)
            _fit_and_theory_lines(ax, np.geomspace(xs.min(), xs.max(), 50), float(np.exp(np.mean(np.log(xs)))),
                                  (f["fit_details"]["power"]["params"]["A"], f["alpha_hat"]), f["alpha_pred"], c,
                                  f"d={f['d']}: α̂={f['alpha_hat']:.2f} (pred {f['alpha_pred']:.2f})", (1.6, 1.1))
    for k in payload.get("knn_fits", []):
        if (k["beta"], k["regime"], k["ambient"]) == (beta, regime, D) and k.get("points"):
            ax.scatter([p["n"] for p in k["points"]], [p["test_mse_geomean"] for p in k["points"]],
                       marker="x", s=16, color=colors[k["d"]], alpha=0.6, zorder=2,
                       label=f"d={k['d']}: oracle {k['alpha_hat']:.2f}" if k.get("alpha_hat") is not None else None)
    _log_axes(ax, cfg["sizes"])
    ax.set_xlabel("training samples n")
    ax.tick_params(axis="x", labelrotation=45, labelsize=8)
    ax.set_ylabel("test MSE (clean target)")
    ax.set_title(f"{arch}, D = {D}, β = {beta:g}, {regime}  (— fit, -- theory, × k-NN oracle)", fontsize=8)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6)


def _alpha_panel(ax: Any, payload: dict[str, Any], beta: float, regime: str) -> None:
    """Every arch's α̂_D with its interval per (d, D), the oracle's slope and the theory's curves."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    from ttlab.scaling.theory import alpha_d, alpha_n

    cfg = payload["config"]
    dgrid = np.linspace(min(cfg["ds"]) * 0.8, max(cfg["ds"]) * 1.2, 100)
    ax.plot(dgrid, [alpha_d(v, beta) for v in dgrid], color="black", lw=1.2, label="theory 2β/(2β+d)")
    if regime == "noiseless":
        ax.plot(dgrid, [alpha_n(v, beta) for v in dgrid], color="black", lw=1.0, ls=":", label="noiseless minimax 2β/d")
    markers = ["o", "s", "^", "D", "v"]
    series = [(arch, D) for arch in cfg["archs"] for D in cfg["ambients"]]
    for j, (arch, D) in enumerate(series):
        rows = [f for f in payload["fits"] if (f["arch"], f["beta"], f["regime"], f["ambient"]) ==
                (arch, beta, regime, D) and f["alpha_hat"] is not None]
        if not rows:
            continue
        ds = np.array([f["d"] for f in rows], dtype=float) * (1 + 0.03 * (j - (len(series) - 1) / 2))
        a = np.array([f["alpha_hat"] for f in rows])
        ci = [f.get("alpha_hat_ci") or [None, None] for f in rows]
        lo = np.array([c[0] if c[0] is not None else np.nan for c in ci])
        hi = np.array([c[1] if c[1] is not None else np.nan for c in ci])
        ax.errorbar(ds, a, yerr=[np.nan_to_num(a - lo), np.nan_to_num(hi - a)], fmt=markers[j % 5], ms=5,
                    capsize=3, label=f"α̂_D ({arch}, D={D})")
    krows = [k for k in payload.get("knn_fits", []) if (k["beta"], k["regime"]) == (beta, regime)
             and k.get("alpha_hat") is not None]
    if krows:
        ax.scatter([k["d"] for k in krows], [k["alpha_hat"] for k in krows], marker="x", color="gray", label="k-NN oracle")
    ax.set_xscale("log", base=2)
    ax.set_xticks(cfg["ds"])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("intrinsic dimension d")
    ax.set_ylabel("data-scaling exponent α_D")
    ax.set_title(f"fitted vs predicted α_D (β = {beta:g}, {regime})", fontsize=9)
    ax.legend(fontsize=6, loc="upper right")


def _model_panel(ax: Any, model_fits: list[dict[str, Any]]) -> None:
    """Test MSE vs parameters per (arch, β, d) of the model-size sweep, fitted and theory (2β/d) slopes."""
    all_y: list[float] = []
    for i, f in enumerate(model_fits):
        if not f.get("points"):
            continue
        c = f"C{i % 10}"
        xs = [p["n_params"] for p in f["points"] for _ in p["test_mse"]]
        ys = [v for p in f["points"] for v in p["test_mse"]]
        ax.scatter(xs, ys, color=c, s=18)
        all_y += ys
        if f["alpha_hat"] is not None:
            grid = np.geomspace(min(xs), max(xs), 50)
            _fit_and_theory_lines(ax, grid, float(np.exp(np.mean(np.log(grid)))), (f["A"], f["alpha_hat"]),
                                  f["alpha_pred"], c, f"{f['arch']} β={f['beta']:g} d={f['d']}: "
                                  f"α̂_N={f['alpha_hat']:.2f} (pred {f['alpha_pred']:.2f})", (1.4, 1.0))
    _log_axes(ax)
    if all_y:  # the theory's steep lines would otherwise stretch the axis far beyond the data
        ax.set_ylim(min(all_y) / 2, max(all_y) * 2)
    ax.set_xlabel("parameters N")
    ax.set_ylabel("test MSE")
    ax.set_title(f"model-size sweep at n = {model_fits[0]['n']}, {model_fits[0]['regime']} "
                 "(— fit, -- theory 2β/d)", fontsize=8)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6)


def plot_manifold_scaling(payload: dict[str, Any]) -> Any:
    """Test MSE vs n per d (one panel per D, one row per (β, regime)) with the k-NN oracle, fitted and
    theory slopes; α̂_D vs d per row; with a model-size sweep, test MSE vs parameters.

    Filled markers: sizes used in the fit; open markers: step-limited sizes (left out). Solid line: the
    fitted power law of the first arch; dashed: the theory's slope 2β/(2β+d) through the fit's
    midpoint; grey crosses: the k-NN oracle. α̂_D panel: every arch's α̂_D with its CI per (d, D), the
    oracle's slope (×), the curve 2β/(2β+d) and, for the noiseless regime, 2β/d (dotted).
    Returns a matplotlib ``Figure``.
    """
    cfg = payload["config"]
    ambients = cfg["ambients"]
    combos = [(b, rg) for b in cfg["betas"] for rg in cfg["regimes"]]
    has_model = bool(payload.get("model_fits"))
    ncols = len(ambients) + 1 + has_model
    nrows = len(combos)
    fig = _figure((4.6 * ncols, 4.3 * nrows), layout="constrained")
    colors = {d: f"C{i}" for i, d in enumerate(cfg["ds"])}
    for row, (beta, regime) in enumerate(combos):
        for i, D in enumerate(ambients):
            _rate_panel(fig.add_subplot(nrows, ncols, row * ncols + i + 1), payload, beta, regime, D, colors)
        _alpha_panel(fig.add_subplot(nrows, ncols, row * ncols + len(ambients) + 1), payload, beta, regime)
    if has_model:
        _model_panel(fig.add_subplot(nrows, ncols, ncols), payload["model_fits"])
    return fig


# ------------------------------------------------------------------------------- model size (Theorem 2)


def _slope_guide(ax: Any, x0: float, y0: float, x1: float, alpha: float, **kw: Any) -> None:
    """A reference line of slope −``alpha`` (log-log) from (x0, y0) to x1."""
    ax.plot([x0, x1], [y0, y0 * (x1 / x0) ** (-alpha)], **kw)


def plot_model_scaling(payload: dict[str, Any]) -> Any:
    """Normalised test MSE against parameter count N, one panel per (target, d): every network (seed means and
    seeds), its fitted power law, the piecewise-constant and piecewise-linear oracles, and slopes 2β/d and 4/d."""
    results = payload["results"]
    runs = payload["runs"]
    fig = _figure((4.6 * len(results), 4.2), layout="constrained")
    for i, e in enumerate(results):
        ax = fig.add_subplot(1, len(results), i + 1)
        xs_all: list[float] = []
        anchor: tuple[float, float] | None = None  # the slope guides start at the control's smallest model
        for j, (arch, s) in enumerate(e["archs"].items()):
            mine = [r for r in runs if (r["target_name"], r["d"], r["arch"]) == (e["target"], e["d"], arch)
                    and not r.get("check") and r["nmse"] > 0]
            ns = sorted({r["n_params"] for r in mine})
            means = [float(np.exp(np.mean([np.log(r["nmse"]) for r in mine if r["n_params"] == n]))) for n in ns]
            ax.scatter([r["n_params"] for r in mine], [r["nmse"] for r in mine], s=8, color=f"C{j}", alpha=0.4)
            fit = s["fit"]
            label = f"{arch}" + (f": α̂ {fit['alpha_hat']:.2f}" if "alpha_hat" in fit else "")
            ax.plot(ns, means, "o-", ms=4, color=f"C{j}", label=label)
            xs_all += ns
            if anchor is None and ns:
                anchor = (ns[0], means[0])
        for name, style in (("constant", ":"), ("linear", "--")):
            pts = e["oracle_points"]
            f = e["oracles"][name]
            lab = f"oracle, piecewise-{name}" + (f": {f['alpha_hat']:.2f}" if "alpha_hat" in f else "")
            ax.plot([p["n_params"] for p in pts], [p[name] for p in pts], style, color="0.35", label=lab)
        if anchor is not None:
            x0, y0 = anchor
            x1 = max(xs_all)
            _slope_guide(ax, x0, y0, x1, e["alpha_pred"], color="k", lw=0.8, label=f"slope 2β/d = {e['alpha_pred']:.2f}")
            _slope_guide(ax, x0, y0, x1, e["alpha_4d"], color="r", lw=0.8, label=f"slope 4/d = {e['alpha_4d']:.2f}")
        ax.set(xscale="log", yscale="log", xlabel="parameters N", ylabel="test MSE / Var f",
               title=f"{e['target']} target (β = {e['beta']:g}), d = {e['d']}")
        ax.legend(fontsize=6.5, loc="lower left")
    return fig
