"""Shared machinery of the neighbourhood-based estimators: blocked batched Gram matrices, the combination
of pointwise estimates, BLAS thread control and the parameter constraints they share.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from numbers import Integral, Real
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import AVERAGES, DegeneratePointsWarning
from ttlab.validation import Interval, Options

__all__ = ["FRACTION", "NEIGHBOURHOOD_CONSTRAINTS", "POSITIVE", "SMALL_BLAS", "batched_gram", "blas_controller",
           "chunk_size", "combine_pointwise"]

_CHUNK = 256  # points per vectorised neighbourhood block (at least)
_CHUNK_ELEMS = 2**22  # ... and up to this many neighbour coordinates per block (32 MiB in float64)


def chunk_size(k: int, D: int) -> int:
    """Points per block: few large batched products (each call has a fixed cost) in bounded memory."""
    return max(_CHUNK, _CHUNK_ELEMS // max(1, k * D))


def batched_gram(A: np.ndarray, transpose_first: bool = False) -> np.ndarray:
    """Batched Gram matrices ``A @ A^T`` (or ``A^T @ A``) in float64 via torch (numpy's stacked
    matmul is tens of times slower)."""
    import torch

    t = torch.from_numpy(np.ascontiguousarray(A, dtype=np.float64))
    if transpose_first:
        return torch.bmm(t.transpose(1, 2), t).numpy()
    return torch.bmm(t, t.transpose(1, 2)).numpy()


def combine_pointwise(pw: np.ndarray, average: str, what: str) -> float:
    """Mean / median / harmonic mean of the finite pointwise values (warns about the others)."""
    finite = pw[np.isfinite(pw)]
    if len(finite) < len(pw):
        warnings.warn(
            f"{what}: {len(pw) - len(finite)} point(s) have an undefined pointwise estimate; "
            "they are left out of the average.",
            DegeneratePointsWarning,
            stacklevel=5,
        )
    if not len(finite):
        raise TTLabInputError(f"{what}: every pointwise estimate is undefined (degenerate neighbourhoods).")
    if average == "mean":
        return float(np.mean(finite))
    if average == "median":
        return float(np.median(finite))
    return float(1.0 / np.mean(1.0 / finite))


SMALL_BLAS = 2**20
"""Below this many entries, global PCA runs its BLAS on one thread (small SVDs and many tiny calls are
10–100x slower with two OpenBLAS threads on a busy machine; measured on lPCA 'KN', 300 x 64)."""


@lru_cache(maxsize=1)
def blas_controller() -> Any:
    """threadpoolctl's controller, built once (building it scans the loaded libraries: ~10 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


POSITIVE = [Interval(Real, 0, None, closed="neither")]
"""Constraint of a parameter that is a number > 0."""
FRACTION = [Interval(Real, 0, 1, closed="neither")]
"""Constraint of a parameter that is a number in (0, 1)."""
NEIGHBOURHOOD_CONSTRAINTS: dict[str, Any] = {
    "k": [Interval(Integral, 2, None, closed="left")],
    "average": [Options(AVERAGES)],
}
"""Constraints of the estimators that combine pointwise estimates over ``k``-neighbourhoods."""
