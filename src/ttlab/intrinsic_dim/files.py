"""``ttlab id estimate``, ``ttlab id compare`` and ``ttlab id scale`` as library calls on a file of points: the
settings and output paths checked before any work, the points loaded, the estimate made with its warnings recorded,
the JSON result (and the figure: :func:`ttlab.intrinsic_dim.figures.compare_figure`,
:func:`~ttlab.intrinsic_dim.figures.id_scale_figure`) written (:func:`estimate_file`, :func:`compare_file`,
:func:`id_scale_file`).
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable

from ttlab.intrinsic_dim.api import IDResult, fit_estimate
from ttlab.intrinsic_dim.compare import CompareResult
from ttlab.intrinsic_dim.gride import GRIDE
from ttlab.intrinsic_dim.io import load_points
from ttlab.intrinsic_dim.mle import MLE
from ttlab.intrinsic_dim.scale import IDScaleResult, IDScaleSettings, id_scale_with
from ttlab.intrinsic_dim.twonn import TwoNN
from ttlab.outputs import check_out_file, check_plot_file
from ttlab.provenance import atomic_savefig, atomic_write_json

__all__ = ["compare_file", "estimate_file", "id_scale_file"]


def _run_on_file(file: str | os.PathLike, key: str | None, out: str | os.PathLike | None, overwrite: bool | None,
                 run: Callable[[Any], Any], plot: str | os.PathLike | None = None,
                 draw: Callable[[Any], Any] | None = None) -> tuple[Any, dict[str, Any], list[str]]:
    """``run`` on the points of ``file``, then ``draw(result)`` saved to ``plot`` (recorded in the payload) when given;
    returns (result, JSON payload with the file's name, warning messages). Both paths are checked first."""
    if plot is not None:  # before any work: a wrong path must not cost the whole estimate
        check_plot_file(plot, out=out, inputs=(file,), overwrite=overwrite)
    if out is not None:
        check_out_file(out, inputs=(file,), overwrite=overwrite)
    X = load_points(file, key=key)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = run(X)
    payload = {"file": str(file), **res.to_dict()}
    if plot is not None and draw is not None:
        atomic_savefig(draw(res), plot, dpi=110)
        payload["plot"] = str(plot)
    if out is not None:
        atomic_write_json(out, payload)
    return res, payload, list(dict.fromkeys(str(w.message) for w in caught))


def estimate_file(
    file: str | os.PathLike,
    estimator: MLE | TwoNN | GRIDE,
    *,
    key: str | None = None,
    out: str | os.PathLike | None = None,
) -> tuple[IDResult, dict[str, Any], list[str]]:
    """:func:`ttlab.intrinsic_dim.fit_estimate` of ``estimator`` (built by
    :func:`~ttlab.intrinsic_dim.make_estimator`) on the points of ``file`` (array ``key`` of an .npz or saved dict).
    Writes the JSON payload to ``out`` when given. Returns (result, payload, the distinct warning messages)."""
    return _run_on_file(file, key, out, None, lambda X: fit_estimate(estimator, X))


def compare_file(
    file: str | os.PathLike,
    run: Callable[[Any], CompareResult],
    *,
    key: str | None = None,
    out: str | os.PathLike | None = None,
    overwrite: bool | None = None,
    plot: str | os.PathLike | None = None,
) -> tuple[CompareResult, dict[str, Any], list[str]]:
    """``run`` — :func:`ttlab.intrinsic_dim.compare` with its settings bound, e.g.
    ``functools.partial(compare, methods="mle,twonn", beta=0.5)`` — on the points of ``file``; writes the JSON payload
    to ``out`` and :func:`~ttlab.intrinsic_dim.figures.compare_figure` to the image ``plot`` (png, pdf, svg, …) when
    given — an existing file only with ``overwrite``; both paths are checked before the points are read. Returns
    (result, payload — with ``plot`` when drawn —, the distinct warning messages)."""
    def draw(res: CompareResult) -> Any:
        from ttlab.intrinsic_dim.figures import compare_figure

        return compare_figure(res, title=f"{file}: intrinsic dimension by estimator")

    return _run_on_file(file, key, out, overwrite, run, plot, draw)


def id_scale_file(
    file: str | os.PathLike,
    settings: IDScaleSettings,
    *,
    key: str | None = None,
    out: str | os.PathLike | None = None,
    overwrite: bool | None = None,
    plot: str | os.PathLike | None = None,
) -> tuple[IDScaleResult, dict[str, Any], list[str]]:
    """:func:`ttlab.intrinsic_dim.scale.id_scale_with` with ``settings`` (checked when built) on the points of ``file``;
    writes the JSON payload to ``out`` and :func:`~ttlab.intrinsic_dim.figures.id_scale_figure` to the image ``plot``
    when given — an existing file only with ``overwrite``. The options and both paths are checked before the points
    are read. Returns (result, payload — with ``plot`` when drawn —, the distinct warning messages)."""
    def draw(res: IDScaleResult) -> Any:
        from ttlab.intrinsic_dim.figures import id_scale_figure

        return id_scale_figure(res, title=f"{file}: ID against scale (read the plateau)")

    return _run_on_file(file, key, out, overwrite, lambda X: id_scale_with(X, settings), plot, draw)
