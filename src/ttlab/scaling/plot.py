"""Log-log plots of a fitted scaling law against the data and the ID-based prediction.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit import FitResult
from ttlab.scaling.theory import alpha_d, alpha_n

__all__ = ["plot_fit", "plot_frontier", "predicted_exponent"]


def predicted_exponent(intrinsic_dim: float, beta: float = 1.0, kind: Literal["data", "model"] = "data") -> float:
    """α_D(d, β) for ``kind="data"`` (x = data size) or α_N(d, β) for ``kind="model"`` (x = parameters)."""
    if kind == "data":
        return alpha_d(intrinsic_dim, beta)
    if kind == "model":
        return alpha_n(intrinsic_dim, beta)
    raise TTLabInputError(f"kind must be 'data' or 'model', got {kind!r}")


def _new_figure(figsize: tuple[float, float]) -> Any:
    # A bare Figure with an Agg canvas: no pyplot global state, no GUI backend.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def plot_fit(
    fit: FitResult,
    x: ArrayLike,
    y: ArrayLike,
    *,
    x2: ArrayLike | None = None,
    intrinsic_dim: float | None = None,
    beta: float = 1.0,
    kind: Literal["data", "model"] = "data",
    ax: Any = None,
    xlabel: str | None = None,
    ylabel: str = "loss",
    title: str | None = None,
) -> Any:
    """Observed points, the fitted curve and (given ``intrinsic_dim``) the predicted line, log-log.

    The predicted line has the theory's exponent (α_D for ``kind="data"``, α_N for ``"model"``)
    and is anchored to the fitted curve at the geometric mean of ``x``; for the offset form only
    the reducible part L − E follows the predicted exponent. For the Chinchilla form, loss is
    plotted against N (``x``) with one fitted curve per distinct D (``x2``, at most 8 drawn).
    Returns the matplotlib ``Figure`` (drawn on ``ax`` when given).
    """
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.ndim != 1 or xa.shape != ya.shape or xa.size == 0:
        raise TTLabInputError(f"x and y must be non-empty 1-D arrays of equal length, got {xa.shape} and {ya.shape}")
    if np.any(~np.isfinite(xa)) or np.any(xa <= 0) or np.any(~np.isfinite(ya)) or np.any(ya <= 0):
        raise TTLabInputError("x and y must be finite and > 0 for a log-log plot")
    if ax is None:
        fig = _new_figure((6.0, 4.2))
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    grid = np.geomspace(xa.min(), xa.max(), 200)
    pfmt = ", ".join(f"{k}={v:.3g}" for k, v in fit.params.items())

    if fit.form == "chinchilla":
        if x2 is None:
            raise TTLabInputError("the chinchilla form needs x2 (data size D) to plot")
        if intrinsic_dim is not None:
            raise TTLabInputError("the predicted line is drawn only for the power and offset forms")
        da = np.asarray(x2, dtype=float)
        if da.shape != xa.shape or np.any(~np.isfinite(da)) or np.any(da <= 0):
            raise TTLabInputError("x2 must be finite, > 0 and as long as x")
        levels = np.unique(da)
        sc = ax.scatter(xa, ya, c=np.log10(da), cmap="viridis", s=18, label="observed", zorder=3)
        fig.colorbar(sc, ax=ax, label="log10 D")
        shown = levels if levels.size <= 8 else levels[np.linspace(0, levels.size - 1, 8).round().astype(int)]
        cmap = sc.get_cmap()
        norm = sc.norm
        for k, d in enumerate(shown):
            ax.plot(
                grid, fit.predict(grid, np.full_like(grid, d)), color=cmap(norm(np.log10(d))), lw=1.2,
                label=f"fit ({pfmt})" if k == 0 else None,
            )
    else:
        ax.scatter(xa, ya, color="black", s=22, label="observed", zorder=3)
        ax.plot(grid, fit.predict(grid), color="tab:blue", lw=1.8, label=f"fit: {fit.form} ({pfmt})")
        if intrinsic_dim is not None:
            a_pred = predicted_exponent(intrinsic_dim, beta, kind)
            x0 = float(np.exp(np.mean(np.log(xa))))
            l0 = float(fit.predict(np.array([x0]))[0])
            floor = fit.params.get("E", 0.0)
            pred = floor + (l0 - floor) * (grid / x0) ** (-a_pred)
            name = "α_D" if kind == "data" else "α_N"
            ax.plot(grid, pred, color="tab:red", lw=1.5, ls="--",
                    label=f"predicted from ID d={intrinsic_dim:.3g}, β={beta:g}: {name}={a_pred:.3f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _pos: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.set_xlabel(xlabel or ("N (parameters)" if fit.form == "chinchilla" else "x"))
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def _isoflop_optima(isoflop: Sequence[dict[str, Any]] | None, k: float) -> list[tuple[float, float, Any]]:
    """(C, N_opt, its interval or None) of each IsoFLOP budget with an optimum."""
    return [(float(e["compute"]), float(e["n_opt"]["value"]), e["n_opt"].get("ci"))
            for e in (isoflop or []) if e.get("n_opt")]


def plot_frontier(frontier: Any, data: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, *,
                  predicted: dict[str, float] | None = None, isoflop: Sequence[dict[str, Any]] | None = None,
                  ax: Any = None) -> Any:
    """The compute-optimal frontier of a :class:`~ttlab.scaling.frontier.Frontier` in the (N, D) plane, log-log:
    iso-loss contours of the fitted L(N, D), the iso-FLOP line N·D = C/k and the optimum of each budget (with its
    interval for N_opt), the frontier N_opt(C) through them, the runs (``data`` = N, D, loss) coloured by loss, the
    slope the ID predicts (``predicted``, through the first optimum), and the optima of IsoFLOP profiles (``isoflop``:
    the ``budgets`` of :class:`~ttlab.scaling.isoflop.IsoflopResult` or of its JSON, each ``compute`` with its ``n_opt``
    ``{"value", "ci"}`` or None) on their iso-FLOP lines, with their intervals. Returns the ``Figure`` (on ``ax`` when
    given)."""
    if ax is None:
        fig = _new_figure((6.4, 4.8))
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    p, k = frontier.params, frontier.flops_per_token
    ns = np.array([e["n_opt"]["value"] for e in frontier.budgets])
    ds = np.array([e["d_opt"]["value"] for e in frontier.budgets])
    iso = _isoflop_optima(isoflop, k)
    iso_n = np.array([n for _, n, _ in iso])
    iso_d = np.array([c / k / n for c, n, _ in iso])
    budgets = [e["compute"] for e in frontier.budgets] + [c for c, _, _ in iso]  # the line spans the IsoFLOP budgets too
    along_c = np.geomspace(min(budgets), max(budgets), 50) / k
    along_n = frontier.coefficient * along_c ** frontier.a["value"]  # N_opt = G·(C/k)^a
    pts_n = np.concatenate([ns, iso_n, along_n] + ([] if data is None else [data[0]]))
    pts_d = np.concatenate([ds, iso_d, along_c / along_n] + ([] if data is None else [data[1]]))
    n_lo, n_hi = np.log10(pts_n.min()) - 0.5, np.log10(pts_n.max()) + 0.5
    d_lo, d_hi = np.log10(pts_d.min()) - 0.5, np.log10(pts_d.max()) + 0.5
    gn, gd = np.meshgrid(np.logspace(n_lo, n_hi, 200), np.logspace(d_lo, d_hi, 200))
    loss = p["E"] + p["A"] * gn ** -p["alpha"] + p["B"] * gd ** -p["beta"]
    cs = ax.contour(gn, gd, loss, levels=np.quantile(loss, np.linspace(0.05, 0.9, 8)), colors="0.75", linewidths=0.8)
    ax.clabel(cs, fontsize=6, fmt="%.3g")
    line_n = np.logspace(n_lo, n_hi, 50)
    for e in frontier.budgets:
        ax.plot(line_n, e["compute"] / k / line_n, color="0.85", lw=0.8, ls=":")
        ci = e["n_opt"]["ci"]
        if ci:
            ax.plot(ci, [e["compute"] / k / c for c in ci], color="tab:red", lw=3, alpha=0.35)
    ax.plot(along_n, along_c / along_n, "-", color="tab:red", lw=1.6,
            label=f"frontier: N_opt ∝ C^{frontier.a['value']:.3f}, D_opt ∝ C^{frontier.b['value']:.3f}")
    ax.plot(ns, ds, "o", color="tab:red", ms=4)
    if data is not None:
        sc = ax.scatter(data[0], data[1], c=data[2], cmap="viridis", s=16, zorder=3, label="runs")
        fig.colorbar(sc, ax=ax, label="loss")
    if iso:
        _draw_isoflop(ax, iso, k, line_n)
    if predicted is not None:  # the ID predicts the slope of the frontier, d log D / d log N = b / a
        slope = predicted["b"] / predicted["a"]
        ax.plot(ns, ds[0] * (ns / ns[0]) ** slope, color="tab:purple", ls="--", lw=1.2,
                label=f"ID d = {predicted['id']:.3g} predicts a = {predicted['a']:.3f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(10 ** n_lo, 10 ** n_hi)
    ax.set_ylim(10 ** d_lo, 10 ** d_hi)
    ax.set_xlabel("parameters N")
    ax.set_ylabel("training tokens D")
    ax.set_title(f"Compute-optimal frontier (C = {k:g}·N·D)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    return fig


def _draw_isoflop(ax: Any, iso: list[tuple[float, float, Any]], k: float, line_n: np.ndarray) -> None:
    """The IsoFLOP optima on their iso-FLOP lines (dash-dotted), each with its interval along the line."""
    for c, _, ci in iso:
        ax.plot(line_n, c / k / line_n, color="0.6", lw=0.7, ls="-.")
        if ci:
            along = np.geomspace(ci[0], ci[1], 20)
            ax.plot(along, c / k / along, color="black", lw=1.4, alpha=0.6)
    ax.plot([n for _, n, _ in iso], [c / k / n for c, n, _ in iso], "D", color="black", ms=5, mfc="white", zorder=4,
            label="IsoFLOP optima (parabolas, Approach 2)")
