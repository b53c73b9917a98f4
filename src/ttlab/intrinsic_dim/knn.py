"""Exact k-nearest neighbours, fast: blocked float32 matrix products with a certified exact result.

How the default (``backend="torch"``) search works, for ``n`` points in ``R^D``:

1. The points are centred (float64) and rounded to float32.
2. Squared distances ``|a|^2 + |b|^2 - 2 a.b`` are formed block by block (default 2,048 x 2,048)
   with one float32 matrix product per block pair (PyTorch/MKL on all cores; numpy's BLAS for
   tiny blocks; the GPU when ``device='cuda'``). Distances are symmetric, so only the blocks on
   and above the diagonal are computed, and each block serves both its rows and its columns:
   about half the floating-point work of the full ``n x n x D`` product.
3. Top-k selection is fused into the scan: every point keeps a threshold (its current
   ``k + margin``-th smallest candidate; at its first block, the ``k + margin``-th smallest of
   512 columns) and only block entries at or below it are gathered and merged, so after the
   first blocks almost nothing is copied. Memory stays bounded by a few blocks.
4. The ``k + margin`` candidates of each point are re-measured in float64 (dot products of the
   centred float64 points for exactly these pairs; coordinate differences wherever the rounding
   bound of that form exceeds 1e-10 relative). With a rigorous bound ``eps`` on the float32
   error, a point's selection is certified exact when the float32 value of its last candidate
   minus ``eps`` exceeds its float64 ``k``-th distance (no point left out can then be closer).
   The rare points that fail this test are redone against all points in float64. The returned
   distances are float64, ascending.

``backend="tree"`` is an exact k-d tree (:class:`scipy.spatial.cKDTree`), the right tool at low
ambient dimension: a query costs about ``log n`` instead of ``n`` distance evaluations, while a
matrix product wastes most of its width when ``D`` is small. Its candidates are re-measured with the
same float64 routine as the blocked path, so both return identical neighbours and distances.
``backend="auto"`` picks the tree when ``D <= TREE_MAX_DIM`` (measured crossover, see
:func:`choose_backend`) and the blocked search otherwise.

``backend="faiss"`` uses faiss' exact flat index for the float32 selection (same certification);
``backend="faiss-hnsw"`` is approximate (HNSW graph): faster on huge data, but neighbours can be
missed, so its result is flagged ``exact=False``. faiss is optional.

This module picks the backend (:func:`kneighbors`, :func:`choose_backend`); the blocked scan is in
:mod:`ttlab.intrinsic_dim.knn_blocked`, the k-d tree and faiss backends in :mod:`ttlab.intrinsic_dim.knn_indexes`,
the float64 re-measurement and certification in :mod:`ttlab.intrinsic_dim.knn_exact`, and the result type,
:class:`Neighbors`, in :mod:`ttlab.intrinsic_dim.neighbors`.
"""

from __future__ import annotations

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.knn_blocked import scan_torch
from ttlab.intrinsic_dim.knn_exact import brute_force64, certify, exact_sqdist_sorted
from ttlab.intrinsic_dim.knn_indexes import faiss_flat, faiss_hnsw, kd_tree_neighbors
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.validate import check_points
from ttlab.validation import check_choice, check_int

BACKENDS = ("auto", "torch", "tree", "faiss", "faiss-hnsw")
TREE_MAX_DIM = 8
"""``backend="auto"`` uses the k-d tree up to this ambient dimension (CPU); see :func:`choose_backend`."""


def faiss_available() -> bool:
    """True when the optional ``faiss`` package can be imported."""
    try:
        import faiss
    except ImportError:
        return False
    del faiss  # only whether it imports is asked here; the backends import it where they use it
    return True


def _resolve_device(device: str | None) -> str:
    import torch

    if device in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise TTLabInputError(f"device {device!r} requested but no CUDA GPU is available.")
    if not (device == "cpu" or device.startswith("cuda")):
        raise TTLabInputError(f"unknown device {device!r}; use 'cpu', 'cuda' or 'auto'.")
    return device


def kneighbors(
    X: np.ndarray,
    k: int,
    *,
    backend: str = "auto",
    block_size: int = 2048,
    device: str | None = None,
    margin: int = 4,
    hnsw_m: int = 32,
    ef_search: int = 128,
) -> Neighbors:
    """Exact (or, with ``backend="faiss-hnsw"``, approximate) ``k`` nearest neighbours of each row.

    ``auto`` picks the PyTorch blocked search (on the GPU when ``device`` is 'cuda' or, with
    ``device=None``, when one is present). ``block_size`` bounds memory: a few
    ``block_size**2`` float32 buffers. Distances are Euclidean; map points first for other metrics.
    """
    return kneighbors_prepared(check_points(X), k, backend=backend, block_size=block_size, device=device,
                       margin=margin, hnsw_m=hnsw_m, ef_search=ef_search)


def kneighbors_prepared(
    X: np.ndarray, k: int, *, backend: str = "auto", block_size: int = 2048, device: str | None = None,
    margin: int = 4, hnsw_m: int = 32, ef_search: int = 128,
) -> Neighbors:
    """:func:`kneighbors` for an already validated array (no second pass over the data)."""
    n = X.shape[0]
    k = check_int(k, "k", 1)
    if n <= k:
        raise TTLabInputError(f"{k} nearest neighbours need at least {k + 1} points; got {n}.")
    block_size = check_int(block_size, "block_size", 16)
    margin = check_int(margin, "margin", 0)
    check_choice(backend, "backend", BACKENDS)
    if backend in ("faiss", "faiss-hnsw") and not faiss_available():
        raise TTLabInputError(f"backend {backend!r} needs the optional package faiss-cpu (pip install faiss-cpu).")
    if backend == "auto":
        backend = choose_backend(n, X.shape[1], device)
    kk = min(k + margin, n - 1)
    Xc = X.astype(np.float64, copy=True)
    Xc -= Xc.mean(axis=0)
    if backend == "tree":
        return kd_tree_neighbors(X, Xc, k, kk)
    if backend == "faiss-hnsw":
        idx = faiss_hnsw(Xc.astype(np.float32), kk, hnsw_m, ef_search)
        sq = np.einsum("ij,ij->i", Xc, Xc)
        missing = np.flatnonzero((idx < 0).any(1))  # the graph search returned too few points
        idx[missing] = 0
        d2, idx = exact_sqdist_sorted(X, Xc, sq, idx)
        if len(missing):
            d2[missing], idx[missing] = brute_force64(X, Xc, sq, missing, kk)
        return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], backend, exact=False)
    if backend == "faiss":
        vals, idx = faiss_flat(Xc.astype(np.float32), kk)
        dev = "cpu"
    else:
        dev = _resolve_device(device)
        vals, idx = scan_torch(Xc, kk, block_size, dev)
    return certify(X, Xc, vals, idx, k, kk, backend if backend == "faiss" else f"torch-{dev.split(':')[0]}")


def choose_backend(n: int, dim: int, device: str | None = None) -> str:
    """The exact backend ``auto`` uses for ``n`` points in ``R^dim``: ``"tree"`` or ``"torch"``.

    A k-d tree wins at low dimension (it prunes almost every point), the blocked float32 product at
    high dimension (the tree then visits most points, one at a time). Measured on a shared 2-core
    machine, K = 20, Gaussian data (blocked time / tree time): n = 50,000: 27x at D = 2, 8.2x at D = 4,
    1.4x at D = 8, 0.26x at D = 12; n = 4,096: 3.6x at D = 2, 1.3x at D = 8, 0.96x at D = 12, 0.62x at
    D = 16 (re-measure with benchmarks/bench_knn_backend.py --crossover). On a GPU (``device`` 'cuda',
    or None with one present) the blocked product is used at every dimension."""
    if dim <= TREE_MAX_DIM and not _gpu_requested(device):
        return "tree"
    return "torch"


def _gpu_requested(device: str | None) -> bool:
    if device is not None and device != "auto":
        return device.startswith("cuda")
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return bool(torch.cuda.is_available())
