"""Views of what ``ttlab id estimate``, ``ttlab id compare`` and ``ttlab id scale`` return
(:func:`~ttlab.intrinsic_dim.files.estimate_file`, :func:`~ttlab.intrinsic_dim.files.compare_file`,
:func:`~ttlab.intrinsic_dim.files.id_scale_file`): the lines and the tables the commands print. They never print.
"""

from __future__ import annotations

import os

from rich.console import RenderableType
from rich.table import Table

from ttlab.intrinsic_dim.api import IDResult
from ttlab.intrinsic_dim.compare import CompareResult, CompareRow
from ttlab.intrinsic_dim.scale import IDScaleResult
from ttlab.markup import markup, plain

__all__ = ["compare_view", "estimate_view", "id_scale_view"]


def _num(v: float | None, fmt: str) -> str:
    return "—" if v is None else format(v, fmt)


def estimate_view(res: IDResult, file: str | os.PathLike, metric: str) -> list[RenderableType]:
    """One estimate of the points in ``file``: the ID, the points used, the distance ``metric`` and neighbour
    search, the batches of the paper's protocol (when batched) and the standard error (when the estimator has one)."""
    out: list[RenderableType] = [
        markup("[bold]{}[/]: {} ID = [bold]{:.3f}[/]", file, res.method, res.dimension),
        plain(f"  points {res.n_points}, duplicates removed {res.n_duplicates_removed}, used {res.n_used}; "
              f"metric {metric}; neighbours {res.neighbors['backend']}"),
    ]
    if res.batches is not None:
        out.append(plain(f"  {len(res.batches)} batch(es) of {res.batch_sizes[0]}: mean {res.dimension:.3f}, "
                         f"std {res.dimension_std:.3f}, sem {res.dimension_sem:.3f}"))
        out.append(plain("  per batch: " + ", ".join(f"{v:.3f}" for v in res.batches)))
    if "error" in res.extras:
        out.append(plain(f"  standard error {res.extras['error']:.3f}"))
    if "interval" in res.extras:
        iv = res.extras["interval"]
        out.append(plain(f"  {iv['level']:.0%} interval {iv['low']:.3f}–{iv['high']:.3f} ({iv['kind']})"))
    return out


def _interval(row: CompareRow) -> str:
    """The row's interval for d as ``low–high``, or — for an estimator that gives none."""
    return "—" if row.interval is None else f"{row.interval['low']:.3f}–{row.interval['high']:.3f}"


def compare_view(res: CompareResult, file: str | os.PathLike, plot: str | os.PathLike | None = None) -> list[RenderableType]:
    """The comparison of estimators on the points in ``file``: one row per estimator (d̂, spread over batches when
    batched, the estimator's own interval when one gives it, time, the predicted α_D and α_N, notes), the shared
    neighbour search's line and the figure written to ``plot`` (when given)."""
    batched = res.batch_size is not None
    intervals = sorted({f"{r.interval['level']:.0%}" for r in res.rows if r.interval is not None})
    t = Table(title=plain(f"{file}: {res.n_points} points × {res.n_features}, {res.n_duplicates_removed} duplicate(s) "
                          "removed" + (f", {res.n_batches} batch(es) of {res.batch_size}" if batched else "")))
    interval_col = [f"interval ({', '.join(intervals)})"] if intervals else []
    for col in ["estimator", "d̂", *(["std over batches"] if batched else []), *interval_col, "time (s)",
                f"α_D (β={res.beta:g})", "α_N", "notes"]:
        t.add_column(col, justify="left" if col in ("estimator", "notes") else "right")
    for r in res.rows:
        t.add_row(plain(r.method), _num(r.dimension, ".3f"), *([f"{r.dimension_std:.3f}"] if batched else []),
                  *([plain(_interval(r))] if intervals else []), f"{r.seconds:.2f}", _num(r.alpha_d, ".4f"),
                  _num(r.alpha_n, ".4f"), plain("; ".join(r.notes)))
    out: list[RenderableType] = [t, plain(f"shared neighbour search: k = {res.knn_k}, {res.knn_seconds:.2f} s "
                                          f"({res.knn_backend}); total {res.total_seconds:.2f} s")]
    kinds = list(dict.fromkeys(f"{r.method}: {r.interval['kind']}" for r in res.rows if r.interval is not None))
    if kinds:
        out.append(plain("interval: " + "; ".join(kinds)))
    if plot is not None:
        out.append(plain(f"wrote the figure {plot}"))
    return out


def id_scale_view(res: IDScaleResult, file: str | os.PathLike, plot: str | os.PathLike | None = None
                  ) -> list[RenderableType]:
    """The ID against scale of the points in ``file``: a table per definition (2NN by decimation: points per subset,
    subsets fitted of those available, scale r, mean ID, std over subsets and its standard error; GRIDE: n1, n2, r,
    ID, standard error), how to read it, and the figure written to ``plot`` (when given)."""
    out: list[RenderableType] = [plain(
        f"{file}: {res.n_points} points × {res.n_features}, {res.n_duplicates_removed} duplicate(s) removed; metric "
        f"{res.metric}; neighbours {res.knn_backend}; {res.seconds:.2f} s")]
    if res.twonn:
        t = Table(title=plain(f"2NN on disjoint random subsets (seed {res.seed}, TwoNN with "
                              f"{res.settings['discard_fraction']:.0%} discarded)"))
        for col in ("points per subset", "subsets", "r", "ID", "std", "s.e.m."):
            t.add_column(col, justify="right")
        for row in res.twonn:
            t.add_row(f"{row.n_points:,}", f"{row.n_subsets:d} of {row.n_subsets_available:d}", f"{row.radius:.4g}",
                      _num(row.dimension, ".3f"), f"{row.dimension_std:.3f}", f"{row.dimension_sem:.3f}")
        out.append(t)
    if res.gride:
        t = Table(title=plain("GRIDE on all points, n2 = 2 n1"))
        for col in ("n1", "n2", "r", "ID", "standard error"):
            t.add_column(col, justify="right")
        for g in res.gride:
            t.add_row(f"{g.n1:d}", f"{g.n2:d}", f"{g.radius:.4g}", f"{g.dimension:.3f}", f"{g.error:.3f}")
        out.append(t)
    out.append(plain("r: mean distance of the two neighbours each ratio reads. Read the ID where it is flat in r: "
                     "below, noise raises it; above, curvature, edges and too few points bend it."))
    if plot is not None:
        out.append(plain(f"wrote the figure {plot}"))
    return out
