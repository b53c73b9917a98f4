"""``ttlab id estimate`` and ``ttlab id compare`` as library calls on a file of points: the output path checked
before any work, the points loaded, the estimate made with its warnings recorded, the JSON result written
(:func:`estimate_file`, :func:`compare_file`).
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
from ttlab.intrinsic_dim.twonn import TwoNN
from ttlab.outputs import check_out_file
from ttlab.provenance import atomic_write_json

__all__ = ["compare_file", "estimate_file"]


def _run_on_file(file: str | os.PathLike, key: str | None, out: str | os.PathLike | None, overwrite: bool | None,
                 run: Callable[[Any], Any]) -> tuple[Any, dict[str, Any], list[str]]:
    """``run`` on the points of ``file``; returns (result, JSON payload with the file's name, warning messages)."""
    if out is not None:  # before any work: a wrong --out must not cost the whole estimate
        check_out_file(out, inputs=(file,), overwrite=overwrite)
    X = load_points(file, key=key)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = run(X)
    payload = {"file": str(file), **res.to_dict()}
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
) -> tuple[CompareResult, dict[str, Any], list[str]]:
    """``run`` — :func:`ttlab.intrinsic_dim.compare` with its settings bound, e.g.
    ``functools.partial(compare, methods="mle,twonn", beta=0.5)`` — on the points of ``file``; writes the JSON payload
    to ``out`` when given (an existing file only with ``overwrite``). Returns (result, payload, the distinct warning
    messages)."""
    return _run_on_file(file, key, out, overwrite, run)
