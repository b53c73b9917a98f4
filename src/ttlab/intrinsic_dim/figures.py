"""The figures of `ttlab id compare --plot` and `ttlab id scale --plot`.

:func:`compare_figure`: every estimator's intrinsic dimension with its spread over the batches of the paper's
protocol (and its own interval, for the estimators that give one), and the scaling exponents each estimate predicts,
α_D = 2β/(2β + d̂) and α_N = 2β/d̂ (:func:`ttlab.intrinsic_dim.compare.predicted_exponents`), with the prediction band
that `ttlab scaling predict --from-compare` reports (:func:`ttlab.scaling.prediction_band`, read when drawing: the
one import of ``ttlab.scaling`` here, as :mod:`ttlab.intrinsic_dim.compare` reads ``ttlab.scaling.theory``).

:func:`id_scale_figure`: the ID against the scale ``r`` it is read at (:func:`ttlab.intrinsic_dim.scale.id_scale`),
log ``r`` axis: 2NN on decimated subsets (± the standard error of the mean over subsets) and GRIDE across neighbour
orders (± its standard error).

matplotlib is imported when a figure is drawn (the command line imports this package when it starts).
"""

from __future__ import annotations

import math
from typing import Any

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.compare import CompareResult, CompareRow, predicted_exponents
from ttlab.intrinsic_dim.scale import IDScaleResult

__all__ = ["compare_figure", "id_scale_figure"]


def _spread(row: CompareRow) -> float:
    """The row's standard deviation over batches (0 without batches)."""
    return row.dimension_std if row.batches is not None and len(row.batches) > 1 else 0.0


def _label(row: CompareRow) -> str:
    """The estimator's name, with † when the table has notes on it."""
    return row.method + (" †" if row.notes else "")


def _id_panel(ax: Any, rows: list[CompareRow], res: CompareResult) -> None:
    """d̂ per estimator (one row each, compare's order top down), ± the std over batches and each batch's estimate, and
    the interval of the estimators that give one (just below their row)."""
    import numpy as np

    y = np.arange(len(rows))
    d = np.array([r.dimension for r in rows], dtype=float)
    spread = np.array([_spread(r) for r in rows])
    labelled = False
    for yi, r in zip(y, rows):
        if r.batches is not None and len(r.batches) > 1:
            ax.plot(r.batches, [yi] * len(r.batches), "|", color="0.55", ms=8,
                    label=None if labelled else "one batch's estimate")
            labelled = True
    has_spread = bool((spread > 0).any())
    ax.errorbar(d, y, xerr=spread if has_spread else None, fmt="o", color="C0", ecolor="C0", capsize=3,
                label="d̂ ± std over batches" if has_spread else "d̂ (one batch: no spread; --paper or --batch-size)")
    own = [(yi + 0.2, r.interval) for yi, r in zip(y, rows) if r.interval is not None]
    if own:
        levels = ", ".join(sorted({f"{iv['level']:.0%}" for _, iv in own}))
        ax.hlines([yi for yi, _ in own], [iv["low"] for _, iv in own], [iv["high"] for _, iv in own], color="C1",
                  lw=2.5, label=f"the estimator's own {levels} interval (posterior; Cramér–Rao)")
    median = float(np.median(d))
    ax.axvline(median, color="k", ls="--", lw=0.8, label=f"median over estimators {median:.2f}")
    ax.set_yticks(y, [_label(r) for r in rows], parse_math=False)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # compare's first estimator on top
    ax.set_xlabel("intrinsic dimension d̂")
    batches = f", {res.n_batches} batches of {res.batch_size}" if res.batch_size is not None else ""
    ax.set_title(f"ID estimates ({res.n_used:,} of {res.n_points:,} points{batches}, metric {res.metric})",
                 fontsize=9, parse_math=False)
    ax.legend(fontsize=7, loc="best")
    ax.grid(axis="x", alpha=0.3)


def _exponent_interval(d: float, spread: float, beta: float, which: int) -> tuple[float, float]:
    """The exponent (0: α_D, 1: α_N) at d̂ + spread and at d̂ − spread (the latter at d̂ when d̂ − spread ≤ 0)."""
    low = predicted_exponents(d + spread, beta)[which]
    high = predicted_exponents(d - spread, beta)[which] if d - spread > 0 else predicted_exponents(d, beta)[which]
    return float(low if low is not None else math.nan), float(high if high is not None else math.nan)


def _band(res: CompareResult) -> Any:
    """The :func:`ttlab.scaling.prediction_band` of ``res`` (what `ttlab scaling predict --from-compare` reports), or
    None without the paper's estimator (its central one) among the results."""
    from ttlab.scaling.band import prediction_band

    try:
        return prediction_band(res.ids(), res.beta)
    except TTLabInputError:
        return None


def _exponent_panel(ax: Any, rows: list[CompareRow], res: CompareResult) -> None:
    """α_D and α_N per estimator (over the estimate's spread) and the prediction band (shaded: the min–max over
    :data:`ttlab.scaling.BAND_ESTIMATORS`; a line: the paper's estimator)."""
    import numpy as np

    y = np.arange(len(rows))
    band = _band(res)
    for which, (kind, name, color, marker, off) in enumerate([("alpha_d", "α_D", "C2", "o", -0.12),
                                                                ("alpha_n", "α_N", "C3", "s", 0.12)]):
        values = np.array([(r.alpha_d, r.alpha_n)[which] for r in rows], dtype=float)
        ivals = np.array([_exponent_interval(float(r.dimension), _spread(r), res.beta, which) for r in rows])  # type: ignore[arg-type]
        err = np.vstack([values - ivals[:, 0], ivals[:, 1] - values])
        ax.errorbar(values, y + off, xerr=err if (err > 0).any() else None, fmt=marker, color=color, capsize=2,
                    ms=5, label=f"{name} = " + ("2β/(2β + d̂)" if which == 0 else "2β/d̂"))
        if band is not None:
            ax.axvspan(band.lo[kind], band.hi[kind], color=color, alpha=0.12,
                       label=f"{name} band over {len(band.estimator_set)} estimators {band.lo[kind]:.3f}–"
                       f"{band.hi[kind]:.3f}")
            ax.axvline(band.central[kind], color=color, lw=1, label=f"{name} of {band.central_estimator} "
                       f"(the paper's) {band.central[kind]:.3f}")
    ax.set_xlabel(f"predicted scaling exponent (β = {res.beta:g})")
    ax.set_title("exponents the estimates predict (Havrilla & Liao, Theorems 1–2)" +
                 ("" if band is not None else "; no band without mle"), fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.grid(axis="x", alpha=0.3)


def compare_figure(res: CompareResult, *, ax: Any = None, ax_exponents: Any = None, title: str | None = None) -> Any:
    """Every estimator of ``res`` (:func:`ttlab.intrinsic_dim.compare`) with a number: d̂, ± its standard deviation over
    the batches and each batch's estimate (with the paper's protocol), the median over estimators; beside it the
    exponents α_D and α_N each estimate predicts, over d̂ ± std, with the prediction band of
    :func:`ttlab.scaling.prediction_band` (min–max over its estimator set, shaded; the paper's MLE, a line; no band
    when ``res`` has no MLE row).
    Estimators without a number are named under the figure; † marks those with notes (see the table or the JSON).

    Without ``ax`` a new figure of the two panels; with ``ax`` the ID panel is drawn there, and the exponents on
    ``ax_exponents`` when given. Returns the matplotlib ``Figure``."""
    rows = [r for r in res.rows if r.dimension is not None]
    if not rows:
        raise TTLabInputError("no estimator produced a number: nothing to draw")
    if ax is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(12, max(3.2, 1.6 + 0.38 * len(rows))), layout="constrained")
        FigureCanvasAgg(fig)
        ax, ax_exponents = fig.subplots(1, 2, sharey=True)
    else:
        fig = ax.figure
    _id_panel(ax, rows, res)
    if ax_exponents is not None:
        _exponent_panel(ax_exponents, rows, res)
    missing = [r.method for r in res.rows if r.dimension is None]
    notes = ([f"no estimate: {', '.join(missing)}"] if missing else []) + \
        (["† notes in the table (--json: notes)"] if any(r.notes for r in rows) else [])
    heading = title or "intrinsic dimension by estimator"
    fig.suptitle(heading + (f" — {'; '.join(notes)}" if notes else ""), fontsize=10, parse_math=False)
    return fig



def id_scale_figure(res: IDScaleResult, *, ax: Any = None, title: str | None = None) -> Any:
    """The ID against the scale ``r`` of ``res`` (:func:`ttlab.intrinsic_dim.scale.id_scale`), ``r`` on a log axis:
    2NN on the decimated subsets (the mean over subsets ± its standard error, each point labelled with the subset
    size) and GRIDE at n1 = 1, 2, 4, … (± its standard error, labelled with n1). Read the plateau (the module
    docstring of :mod:`ttlab.intrinsic_dim.scale`).

    Without ``ax`` a new figure; returns the matplotlib ``Figure``."""
    if not res.twonn and not res.gride:
        raise TTLabInputError("the ID-scale result has no estimate: nothing to draw")
    if ax is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7.5, 4.6), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    if res.twonn:
        r = [row.radius for row in res.twonn]
        ax.errorbar(r, [row.dimension for row in res.twonn], yerr=[row.dimension_sem for row in res.twonn], fmt="o-",
                    color="C0", capsize=3, label="2NN on N/2^i-point subsets (mean ± s.e.m. over subsets)")
        for row in res.twonn:
            ax.annotate(f"{row.n_points:,}", (row.radius, row.dimension), textcoords="offset points", xytext=(0, 7),
                        ha="center", fontsize=6, color="C0")
    if res.gride:
        ax.errorbar([g.radius for g in res.gride], [g.dimension for g in res.gride],
                    yerr=[g.error for g in res.gride], fmt="s--", color="C1", capsize=3, ms=4,
                    label="GRIDE, n2 = 2 n1 (± standard error)")
        for g in res.gride:
            ax.annotate(f"n1={g.n1}", (g.radius, g.dimension), textcoords="offset points", xytext=(0, -11),
                        ha="center", fontsize=6, color="C1")
    ax.set_xscale("log")
    ax.set_xlabel(f"scale r: mean distance of the two neighbours each ratio reads ({res.metric})")
    ax.set_ylabel("intrinsic dimension")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="best")
    ax.set_title(title or f"ID against scale ({res.n_points:,} points × {res.n_features}): read the plateau",
                 fontsize=9, parse_math=False)
    return fig
