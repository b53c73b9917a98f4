"""What makes a neighbour search exact: candidates re-measured in float64, sorted alike by every backend
(:func:`exact_sqdist_sorted`), a float32 selection certified against a rigorous rounding bound (:func:`certify`), and
the rows that fail it redone against all points in float64 (:func:`brute_force64`).
"""

from __future__ import annotations

import warnings

import numpy as np

from ttlab.intrinsic_dim.neighbors import Neighbors

_U32 = 2.0**-24


def _error_bound(sq: np.ndarray, D: int) -> np.ndarray:
    """Per-row bound on |float32 squared distance - exact squared distance| against any other row.

    Sums the rounding of the data to float32, of the norms, of the float32 dot product
    (|error| <= D u |a||b| for any summation order) and of the final additions:
    below (D/2 + 9) u (|a| + |b|)^2; we use (D + 16) u (|a| + max|b|)^2 with 5 % slack.
    """
    nrm = np.sqrt(sq.astype(np.float64))
    return 1.05 * (D + 16) * _U32 * (nrm + nrm.max()) ** 2


_U64 = 2.0**-53
_REL_TOL = 1e-10  # re-measure by coordinate differences when the product form could be worse


def _exact_sqdist(X: np.ndarray, Xc: np.ndarray, sq: np.ndarray, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Float64 squared distances between ``X[rows[r]]`` and ``X[idx[r, j]]``.

    Dot products of the centred float64 points for exactly these pairs (a sampled sparse-dense
    product, no gathered copies), ``|a|^2 + |b|^2 - 2 a.b``. Where that form's rounding bound
    exceeds ``1e-10`` relative, the pair is re-measured from coordinate differences.
    """
    if Xc.shape[1] <= _DIFF_MAX_DIM:
        return _sqdist_by_differences(X, rows, idx)
    import torch

    m, kk = idx.shape
    order = np.argsort(idx, axis=1)
    cols = np.take_along_axis(idx, order, 1)
    Xt = torch.from_numpy(Xc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "sparse CSR support is in beta"
        pattern = torch.sparse_csr_tensor(
            torch.arange(0, m * kk + 1, kk), torch.from_numpy(cols.reshape(-1)),
            torch.zeros(m * kk, dtype=torch.float64), size=(m, len(Xc)), check_invariants=False,
        )
        left = Xt if m == len(Xc) and np.array_equal(rows, np.arange(m)) else Xt[torch.from_numpy(rows)]
        dots = torch.sparse.sampled_addmm(pattern, left, Xt.T, beta=0.0)
    dots = dots.values().numpy().reshape(m, kk)
    d2_sorted = sq[rows, None] + sq[cols] - 2.0 * dots
    d2 = np.empty_like(d2_sorted)
    np.put_along_axis(d2, order, d2_sorted, 1)
    bound = (Xc.shape[1] + 8) * _U64 * (sq[rows, None] + sq[idx])
    redo = np.nonzero(~(bound <= _REL_TOL * d2))
    if len(redo[0]):
        a, b = rows[redo[0]], idx[redo]
        diff = np.subtract(X[a], X[b], dtype=np.float64)
        d2[redo] = np.einsum("ij,ij->i", diff, diff)
    return d2


_DIFF_MAX_DIM = 16  # up to this dimension, candidates are re-measured from coordinate differences


def _sqdist_by_differences(X: np.ndarray, rows: np.ndarray, idx: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """Float64 squared distances ``|X[rows[r]] - X[idx[r, j]]|^2`` from coordinate differences
    (cheap at low dimension, and as accurate as float64 allows)."""
    m, kk = idx.shape
    out = np.empty((m, kk))
    for a in range(0, m, chunk):
        diff = np.subtract(X[idx[a : a + chunk]], X[rows[a : a + chunk], None, :], dtype=np.float64)
        np.einsum("ijk,ijk->ij", diff, diff, out=out[a : a + chunk])
    return out


def exact_sqdist_sorted(X, Xc, sq, idx, rows=None):
    """Exact squared distances to the candidates ``idx``, each row sorted ascending (ties by index,
    so every backend that finds the same neighbours returns them in the same order)."""
    rows = np.arange(len(idx)) if rows is None else rows
    by_index = np.argsort(idx, axis=1, kind="stable")
    idx = np.take_along_axis(idx, by_index, 1)
    d2 = _exact_sqdist(X, Xc, sq, rows, idx)
    order = np.argsort(d2, axis=1, kind="stable")
    return np.take_along_axis(d2, order, 1), np.take_along_axis(idx, order, 1)


def certify(
    X: np.ndarray, Xc: np.ndarray, vals: np.ndarray, idx: np.ndarray, k: int, kk: int, backend: str
) -> Neighbors:
    """Re-measure candidates in float64, certify the selection, redo uncertified rows exactly."""
    n, D = Xc.shape
    sq = np.einsum("ij,ij->i", Xc, Xc)
    idx = idx.astype(np.int64)
    complete = (idx >= 0).all(1)
    idx[~complete] = 0  # placeholders; those rows are redone below
    d2, idx = exact_sqdist_sorted(X, Xc, sq, idx)
    if kk >= n - 1:  # every other point is a candidate
        return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], backend, True, 0)
    eps = _error_bound(sq, D)
    last = vals.astype(np.float64).max(axis=1)  # every point left out is >= this in float32
    ok = complete & np.isfinite(last) & (last - eps > d2[:, k - 1])
    bad = np.flatnonzero(~ok)
    if len(bad):
        d2[bad], idx[bad] = brute_force64(X, Xc, sq, bad, kk)
    return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], backend, True, len(bad))


def brute_force64(X: np.ndarray, Xc: np.ndarray, sq: np.ndarray, rows: np.ndarray, kk: int, chunk: int = 512):
    """kk nearest neighbours of ``rows`` against all points with float64 products, re-measured."""
    n = Xc.shape[0]
    d2_out = np.empty((len(rows), kk))
    idx_out = np.empty((len(rows), kk), dtype=np.int64)
    for a in range(0, len(rows), chunk):
        r = rows[a : a + chunk]
        d2 = sq[r, None] + sq[None, :] - 2.0 * (Xc[r] @ Xc.T)
        d2[np.arange(len(r)), r] = np.inf
        cand = np.argpartition(d2, kk - 1, axis=1)[:, :kk] if kk < n - 1 else np.argsort(d2, axis=1)[:, :kk]
        d2_out[a : a + chunk], idx_out[a : a + chunk] = exact_sqdist_sorted(X, Xc, sq, cand.astype(np.int64), rows=r)
    return d2_out, idx_out
