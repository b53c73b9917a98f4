"""Log-log plots of a fitted scaling law against the data and the ID-based prediction.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit import FitResult
from ttlab.scaling.theory import alpha_d, alpha_n

__all__ = ["plot_fit", "predicted_exponent"]


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
