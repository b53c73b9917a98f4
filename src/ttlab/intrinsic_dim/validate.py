"""Input checks shared by the estimators: shape, dtype, finiteness, duplicates, metric.

Checks of scalar parameters (``check_int``, ``check_choice``) are :mod:`ttlab.validation`'s.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.validation import check_choice

METRICS = ("euclidean", "chord", "cosine")
"""``euclidean``: the rows as given (paper B's text). ``chord``: Euclidean distance between the rows
scaled to unit length, ``sqrt(2 (1 - cos))`` (what ttlab's ``cosine`` meant before it took
scipy's meaning). ``cosine``: ``1 - cos``, as scipy and scikit-learn define it (paper B's released
code calls the MLE with it); ``1 - cos = chord^2 / 2``, so the MLE, which reads log-ratios of
distances, gives exactly half the chord value on the same points."""
UNIT_METRICS = ("chord", "cosine")


class NonNumericPointsError(TTLabInputError, TypeError):
    """An entry of the points is not a number (a ``TypeError`` too, as numpy and scikit-learn raise)."""


class DuplicatePointsWarning(UserWarning):
    """Exact duplicate points were found and dropped before estimating the ID."""


def _show_rows(rows: np.ndarray, limit: int = 10) -> str:
    shown = ", ".join(str(int(r)) for r in rows[:limit])
    return shown + (f", … ({len(rows)} rows in all)" if len(rows) > limit else "")


def check_points(X: Any, *, name: str = "X") -> np.ndarray:
    """Return ``X`` as a 2-D float32/float64 numpy array, or raise a clear ``TTLabInputError``.

    Accepts numpy arrays, torch tensors and nested sequences. Integer data are converted to
    float64; float16/bfloat16 to float32. Rejects 1-D/N-D, empty, boolean, complex, object or
    string arrays, and NaN/inf entries (naming the offending rows).
    """
    try:  # torch tensors (also on GPU) without importing torch when it is not needed
        import torch

        if isinstance(X, torch.Tensor):
            X = X.detach().cpu()
            if X.dtype in (torch.float16, torch.bfloat16):
                X = X.float()
            X = X.numpy()
    except ImportError:  # pragma: no cover - torch is a core dependency
        pass
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):  # scipy.sparse, without importing it
        raise TTLabInputError(
            f"{name} is a sparse matrix; sparse input is not supported (nearest-neighbour distances need "
            f"dense rows). Convert it with {name}.toarray() if it fits in memory."
        )
    try:
        arr = np.asarray(X)
    except (ValueError, TypeError) as exc:
        raise TTLabInputError(f"{name} could not be read as a numeric array: {exc}") from exc
    if arr.dtype.kind == "O":  # numbers stored as objects (e.g. from pandas) are accepted, as scikit-learn does
        try:
            if any(v is None for v in arr.flat):  # numpy would turn None into NaN silently
                raise TypeError("None is not a number")
            arr = arr.astype(np.float64)
        except (ValueError, TypeError) as exc:
            raise NonNumericPointsError(
                f"{name} has dtype object and an entry is non-numeric ({exc}); expected real numbers."
            ) from exc
    kind = arr.dtype.kind
    if kind == "b":
        raise TTLabInputError(
            f"{name} has boolean dtype; intrinsic-dimension estimation needs real-valued points. "
            "Convert explicitly (e.g. X.astype(float)) if that is what you mean."
        )
    if kind not in "iuf":
        raise TTLabInputError(
            f"{name} has dtype {arr.dtype} ({'Complex data not supported' if kind == 'c' else 'non-numeric'}); "
            "expected real numbers (float32/float64 or integers)."
        )
    if arr.ndim == 1:
        raise TTLabInputError(
            f"{name} is 1-D (shape {arr.shape}); expected a 2-D array of shape (n_points, n_features). "
            "For n points with one feature use X.reshape(-1, 1)."
        )
    if arr.ndim != 2:
        raise TTLabInputError(
            f"{name} has {arr.ndim} dimensions (shape {arr.shape}); expected a 2-D array "
            "(n_points, n_features). Flatten it first, e.g. X.reshape(-1, X.shape[-1])."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        what = (f"0 feature(s) (shape={arr.shape}) while a minimum of 1 is required" if arr.shape[1] == 0
                else f"0 sample(s) (shape={arr.shape}) while a minimum of 1 is required")
        raise TTLabInputError(f"{name} is empty: {what}; it needs points and features.")
    if kind in "iu":
        arr = arr.astype(np.float64)
    elif arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    elif arr.dtype not in (np.float32, np.float64):  # longdouble
        arr = arr.astype(np.float64)
    finite_rows = np.isfinite(arr).all(axis=1)
    if not finite_rows.all():
        bad = np.flatnonzero(~finite_rows)
        what = "NaN" if np.isnan(arr[bad]).any() else "inf"
        if np.isnan(arr[bad]).any() and np.isinf(arr[bad]).any():
            what = "NaN and inf"
        raise TTLabInputError(
            f"{name} contains {what} values in {len(bad)} row(s) (0-based): {_show_rows(bad)}. "
            "Remove or impute those rows first."
        )
    return np.ascontiguousarray(arr)


def check_metric(metric: str) -> str:
    """Validate a metric name."""
    return check_choice(metric, "metric", METRICS)


def apply_metric(X: np.ndarray, metric: str) -> np.ndarray:
    """Map points so that Euclidean distances realise ``metric`` (or, for ``cosine``, its ranking).

    ``chord`` and ``cosine``: rows are scaled to unit length (float64); neighbours are then ranked by
    cosine similarity and the Euclidean distance is the chord ``sqrt(2 (1 - cos))``, locally
    proportional to the angle. For ``cosine`` the estimators turn neighbour distances into
    ``1 - cos = chord^2 / 2`` (:func:`to_metric_distances`), which is quadratic in the angle and
    halves every MLE/TwoNN estimate. Zero rows have no direction and are rejected.
    """
    check_metric(metric)
    if metric == "euclidean":
        return X
    X64 = X.astype(np.float64, copy=False)
    norms = np.sqrt(np.einsum("ij,ij->i", X64, X64))
    zero = np.flatnonzero(norms == 0)
    if len(zero):
        raise TTLabInputError(
            f"metric {metric!r} is undefined for all-zero rows; found {len(zero)} (0-based): "
            f"{_show_rows(zero)}. Drop them or use metric='euclidean'."
        )
    return X64 / norms[:, None]


def to_metric_distances(chord: np.ndarray, metric: str) -> np.ndarray:
    """Neighbour distances in ``metric`` from Euclidean distances of the mapped points: ``1 - cos =
    chord^2 / 2`` for ``cosine`` (accurate even for tiny angles), unchanged otherwise."""
    return chord * chord / 2.0 if metric == "cosine" else chord


def _row_hashes(key: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """A 64-bit hash of each row's values (wrapping multiply-add of its machine words; -0.0 = 0.0)."""
    wide = key.shape[1] * key.itemsize % 8 == 0
    n_words = key.shape[1] * key.itemsize // (8 if wide else 4)
    mult = np.random.default_rng(12345).integers(1, 2**63, size=n_words, dtype=np.uint64) | np.uint64(1)
    out = np.empty(len(key), dtype=np.uint64)
    for a in range(0, len(key), chunk):
        block = np.ascontiguousarray(key[a : a + chunk] + 0.0)  # -0.0 -> 0.0
        w = block.view(np.uint64) if wide else block.view(np.uint32).astype(np.uint64)
        out[a : a + chunk] = (w * mult).sum(axis=1, dtype=np.uint64)
    return out


def find_duplicates(X: np.ndarray, metric: str = "euclidean") -> tuple[np.ndarray, int]:
    """Indices of the first occurrence of every distinct row (in input order), and the number dropped.

    Euclidean: rows that are bitwise equal after mapping -0.0 to 0.0. Chord and cosine (``X`` already
    unit-normalised): rows whose directions agree to float32 precision, so that parallel input
    vectors that normalise to a few float64 ulps apart count as duplicates too.
    Rows are hashed; rows with equal hashes are compared exactly, so collisions cannot merge
    distinct points.
    """
    key = X.astype(np.float32) if metric in UNIT_METRICS else X
    h = _row_hashes(key)
    order = np.argsort(h, kind="stable")
    hs = h[order]
    same = np.flatnonzero(hs[1:] == hs[:-1])
    if not len(same):
        return np.arange(len(X)), 0
    drop = np.zeros(len(X), dtype=bool)
    # groups of equal hashes: compare each row with the earlier rows of its group, exactly
    starts = np.flatnonzero(np.r_[True, hs[1:] != hs[:-1]])
    ends = np.r_[starts[1:], len(hs)]
    for s, e in zip(starts, ends):
        if e - s < 2:
            continue
        group = np.sort(order[s:e])
        firsts: list[int] = []
        for i in group:
            if any(np.array_equal(key[i], key[j]) for j in firsts):
                drop[i] = True
            else:
                firsts.append(int(i))
    keep = np.flatnonzero(~drop)
    return keep, int(drop.sum())


def drop_duplicates(X: np.ndarray, metric: str = "euclidean") -> tuple[np.ndarray, np.ndarray, int]:
    """Drop exact duplicates with a :class:`DuplicatePointsWarning`; returns (X', kept indices, count)."""
    keep, n_dup = find_duplicates(X, metric)
    if n_dup:
        warnings.warn(
            f"dropped {n_dup} duplicate point(s) ({n_dup / X.shape[0]:.2%} of {X.shape[0]}); "
            "a zero neighbour distance would make the ID estimate 0 or infinite. "
            "The count is reported as n_duplicates_removed.",
            DuplicatePointsWarning,
            stacklevel=3,
        )
        return X[keep], keep, n_dup
    return X, keep, 0

