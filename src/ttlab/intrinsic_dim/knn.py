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
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.validate import check_points
from ttlab.validation import check_choice, check_int

BACKENDS = ("auto", "torch", "tree", "faiss", "faiss-hnsw")
TREE_MAX_DIM = 8
"""``backend="auto"`` uses the k-d tree up to this ambient dimension (CPU); see :func:`choose_backend`."""
_U32 = 2.0**-24


@dataclass(frozen=True)
class Neighbors:
    """k nearest neighbours of every point (self excluded), sorted by distance.

    ``distances`` (n, k) float64 and ``indices`` (n, k) int64. ``n_fallback`` counts the rows
    whose float32 selection could not be certified and were recomputed in float64.
    """

    distances: np.ndarray
    indices: np.ndarray
    backend: str
    exact: bool = True
    n_fallback: int = 0


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
        return _tree(X, Xc, k, kk)
    if backend == "faiss-hnsw":
        idx = _faiss_hnsw(Xc.astype(np.float32), kk, hnsw_m, ef_search)
        sq = np.einsum("ij,ij->i", Xc, Xc)
        missing = np.flatnonzero((idx < 0).any(1))  # the graph search returned too few points
        idx[missing] = 0
        d2, idx = _exact_sqdist_sorted(X, Xc, sq, idx)
        if len(missing):
            d2[missing], idx[missing] = _brute_force64(X, Xc, sq, missing, kk)
        return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], backend, exact=False)
    if backend == "faiss":
        vals, idx = _faiss_flat(Xc.astype(np.float32), kk)
        dev = "cpu"
    else:
        dev = _resolve_device(device)
        vals, idx = _scan_torch(Xc, kk, block_size, dev)
    return _certify(X, Xc, vals, idx, k, kk, backend if backend == "faiss" else f"torch-{dev.split(':')[0]}")


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


def _tree(X: np.ndarray, Xc: np.ndarray, k: int, kk: int) -> Neighbors:
    """Exact k nearest neighbours from a k-d tree, re-measured like the blocked path."""
    import torch
    from scipy.spatial import cKDTree

    tree = cKDTree(Xc, leafsize=16, balanced_tree=False, compact_nodes=False)
    dist, idx = tree.query(Xc, k=kk + 1, workers=max(1, torch.get_num_threads()))
    dist, idx = _drop_self(dist, idx, kk)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    d2, idx = _exact_sqdist_sorted(X, Xc, sq, idx)
    if kk >= len(X) - 1:  # every other point is a candidate
        return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], "tree", True, 0)
    # certify as the blocked path does: every point the tree left out is at least its last candidate's
    # distance (float64, relative error ~1e-15); redo rows where that does not clear the k-th distance
    last = dist.max(axis=1) ** 2
    bad = np.flatnonzero(~(last * (1 - 1e-9) > d2[:, k - 1]))
    if len(bad):
        d2[bad], idx[bad] = _brute_force64(X, Xc, sq, bad, kk)
    return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], "tree", True, len(bad))


# --------------------------------------------------------------------------------------------
# float32 selection


def _error_bound(sq: np.ndarray, D: int) -> np.ndarray:
    """Per-row bound on |float32 squared distance - exact squared distance| against any other row.

    Sums the rounding of the data to float32, of the norms, of the float32 dot product
    (|error| <= D u |a||b| for any summation order) and of the final additions:
    below (D/2 + 9) u (|a| + |b|)^2; we use (D + 16) u (|a| + max|b|)^2 with 5 % slack.
    """
    nrm = np.sqrt(sq.astype(np.float64))
    return 1.05 * (D + 16) * _U32 * (nrm + nrm.max()) ** 2


def _blocks(n: int, block: int):
    """Block pairs (I, bi, J, bj) on and above the diagonal."""
    starts = range(0, n, block)
    for I in starts:
        for J in starts:
            if J >= I:
                yield I, min(block, n - I), J, min(block, n - J)


def _scan_torch(Xc: np.ndarray, kk: int, block: int, device: str) -> tuple[np.ndarray, np.ndarray]:
    """Blocked, symmetric float32 scan; the kk smallest float32 squared distances and their indices."""
    import torch

    X32 = torch.from_numpy(Xc.astype(np.float32)).to(device)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    sq32 = torch.from_numpy(sq.astype(np.float32)).to(device)
    if device == "cpu":
        return _scan_cpu(X32, sq32, kk, block)
    return _scan_gpu(X32, sq32, kk, block)


_SUBSET = 512  # columns used to seed a row's threshold at its first block
_SMALL_GEMM = 2**23  # block products below this many multiply-adds run in numpy


def _scan_cpu(X32, sq32, kk: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    """CPU scan: float32 products in PyTorch (all cores), selection and merges in numpy.

    The selection is memory-bound and made of many small steps; numpy runs them without
    thread synchronisation, the rows of a block in this thread and its columns in a second one
    (they update disjoint points), which is faster than PyTorch's parallel kernels here.
    A row's threshold starts as its kk-th smallest value among the first ``_SUBSET`` columns of
    the first block it meets (real distances, so a valid upper bound), then only shrinks.
    """
    import torch

    n, dim = X32.shape
    best_v = np.full((n, kk), np.inf, dtype=np.float32)
    best_i = np.full((n, kk), -1, dtype=np.int64)
    tau = np.full(n, np.inf, dtype=np.float32)
    size = min(block, n) ** 2
    buf = torch.empty(size)
    mask_r, mask_c = np.empty(size, dtype=bool), np.empty(size, dtype=bool)
    sq_np, X32_np = sq32.numpy(), X32.numpy()

    def rows(D, I, bi, J, bj):  # the block seen from its rows (points of block I)
        if np.isinf(tau[I]) and min(bj, _SUBSET) > kk + (I == J):
            tau[I : I + bi] = np.partition(D[:, : min(bj, _SUBSET)], kk - 1, axis=1)[:, kk - 1]
        mask = mask_r[: bi * bj].reshape(bi, bj)
        np.less_equal(D, tau[I : I + bi, None], out=mask)
        f = np.flatnonzero(mask)
        if len(f):
            r, c = np.divmod(f, bj)
            _merge_np(best_v, best_i, tau, r + I, c + J, D.ravel()[f], kk)

    def cols(D, I, bi, J, bj):  # the same block seen from its columns (points of block J)
        if np.isinf(tau[J]) and min(bi, _SUBSET) > kk:
            tau[J : J + bj] = np.partition(D[: min(bi, _SUBSET)], kk - 1, axis=0)[kk - 1]
        mask = mask_c[: bi * bj].reshape(bi, bj)
        np.less_equal(D, tau[None, J : J + bj], out=mask)
        f = np.flatnonzero(mask)
        if len(f):
            r, c = np.divmod(f, bj)
            order = np.argsort(c, kind="stable")
            f, r, c = f[order], r[order], c[order]
            _merge_np(best_v, best_i, tau, c + J, r + I, D.ravel()[f], kk)

    with ThreadPoolExecutor(max_workers=1) as pool:
        for I, bi, J, bj in _blocks(n, block):
            Dt = buf[: bi * bj].view(bi, bj)
            D = Dt.numpy()
            if bi * bj * dim < _SMALL_GEMM:  # numpy's BLAS runs small products on one thread: no wake-ups
                np.matmul(X32_np[I : I + bi], X32_np[J : J + bj].T, out=D)
                D *= -2.0
                D += sq_np[I : I + bi, None]
                D += sq_np[None, J : J + bj]
            else:
                np.add.outer(sq_np[I : I + bi], sq_np[J : J + bj], out=D)
                Dt.addmm_(X32[I : I + bi], X32[J : J + bj].T, beta=1.0, alpha=-2.0)  # |a|^2 + |b|^2 - 2 a.b
            if I == J:
                np.fill_diagonal(D, np.inf)
                rows(D, I, bi, J, bj)
            else:  # disjoint points: both views at once
                job = pool.submit(cols, D, I, bi, J, bj)
                rows(D, I, bi, J, bj)
                job.result()
    return best_v, best_i


def _merge_np(best_v, best_i, tau, rows, cols, vals, kk: int) -> None:
    """Merge candidates (grouped by ascending ``rows``) into the running top-kk lists (numpy)."""
    m_all = len(rows)
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    uniq = rows[starts]
    counts = np.diff(np.r_[starts, m_all])
    slot = np.repeat(np.arange(len(uniq)), counts)
    pos = np.arange(m_all) - starts[slot]
    maxc = int(counts.max())
    cv = np.full((len(uniq), kk + maxc), np.inf, dtype=np.float32)
    ci = np.full((len(uniq), kk + maxc), -1, dtype=np.int64)
    cv[:, :kk] = best_v[uniq]
    ci[:, :kk] = best_i[uniq]
    cv[slot, kk + pos] = vals
    ci[slot, kk + pos] = cols
    sel = np.argpartition(cv, kk - 1, axis=1)[:, :kk]
    nv = np.take_along_axis(cv, sel, 1)
    best_v[uniq] = nv
    best_i[uniq] = np.take_along_axis(ci, sel, 1)
    tau[uniq] = np.minimum(tau[uniq], nv.max(1))


def _scan_gpu(X32, sq32, kk: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Accelerator scan: the same algorithm with every step in PyTorch on the device."""
    import torch

    n, device, inf = X32.shape[0], X32.device, float("inf")
    best_v = torch.full((n, kk), inf, device=device)
    best_i = torch.full((n, kk), -1, dtype=torch.int64, device=device)
    tau = torch.full((n,), inf, device=device)
    buf = torch.empty(min(block, n) ** 2, device=device)
    mbuf = torch.empty(min(block, n) ** 2, dtype=torch.bool, device=device)
    for I, bi, J, bj in _blocks(n, block):
        Dblk = buf[: bi * bj].view(bi, bj)
        torch.addmm(sq32[None, J : J + bj], X32[I : I + bi], X32[J : J + bj].T, beta=1.0, alpha=-2.0, out=Dblk)
        Dblk.add_(sq32[I : I + bi, None])
        mask = mbuf[: bi * bj].view(bi, bj)
        if I == J:
            Dblk.fill_diagonal_(inf)
        if bool(torch.isinf(tau[I])) and min(bj, _SUBSET) > kk + (I == J):
            tau[I : I + bi] = torch.kthvalue(Dblk[:, : min(bj, _SUBSET)], kk, dim=1).values
        torch.le(Dblk, tau[I : I + bi, None], out=mask)
        r, c = mask.nonzero(as_tuple=True)
        if r.numel():
            _merge_torch(best_v, best_i, tau, r + I, c + J, Dblk[r, c], kk)
        if I != J:
            if bool(torch.isinf(tau[J])) and min(bi, _SUBSET) > kk:
                tau[J : J + bj] = torch.kthvalue(Dblk[: min(bi, _SUBSET)], kk, dim=0).values
            torch.le(Dblk, tau[None, J : J + bj], out=mask)
            r, c = mask.nonzero(as_tuple=True)
            if r.numel():
                order = torch.argsort(c, stable=True)
                r, c = r[order], c[order]
                _merge_torch(best_v, best_i, tau, c + J, r + I, Dblk[r, c], kk)
    return best_v.cpu().numpy(), best_i.cpu().numpy()


def _merge_torch(best_v, best_i, tau, rows, cols, vals, kk: int) -> None:
    """Merge candidates (grouped by ascending ``rows``) into the running top-kk lists (PyTorch)."""
    import torch

    dev = best_v.device
    uniq, counts = torch.unique_consecutive(rows, return_counts=True)
    m = uniq.numel()
    maxc = int(counts.max())
    slot = torch.repeat_interleave(torch.arange(m, device=dev), counts)
    starts = torch.cumsum(counts, 0) - counts
    pos = torch.arange(rows.numel(), device=dev) - starts[slot]
    pv = torch.full((m, maxc), float("inf"), device=dev)
    pv[slot, pos] = vals
    pi = torch.full((m, maxc), -1, dtype=torch.int64, device=dev)
    pi[slot, pos] = cols
    cv = torch.cat([best_v[uniq], pv], 1)
    ci = torch.cat([best_i[uniq], pi], 1)
    nv, sel = torch.topk(cv, kk, dim=1, largest=False, sorted=False)
    best_v[uniq] = nv
    best_i[uniq] = ci.gather(1, sel)
    tau[uniq] = torch.minimum(tau[uniq], nv.amax(1))


def _faiss_flat(X32: np.ndarray, kk: int) -> tuple[np.ndarray, np.ndarray]:
    import faiss

    index = faiss.IndexFlatL2(X32.shape[1])
    index.add(X32)
    vals, idx = index.search(X32, kk + 1)
    return _drop_self(vals, idx, kk)


def _faiss_hnsw(X32: np.ndarray, kk: int, m: int, ef_search: int) -> np.ndarray:
    import faiss

    index = faiss.IndexHNSWFlat(X32.shape[1], m)
    index.hnsw.efConstruction = max(40, 2 * m)
    index.add(X32)
    index.hnsw.efSearch = max(ef_search, kk + 1)
    _, idx = index.search(X32, kk + 1)
    return _drop_self(np.zeros(idx.shape, np.float32), idx, kk)[1]


def _drop_self(vals: np.ndarray, idx: np.ndarray, kk: int) -> tuple[np.ndarray, np.ndarray]:
    """Remove each row's own index from a (n, kk+1) search result (or its last entry if absent)."""
    n = idx.shape[0]
    is_self = idx == np.arange(n)[:, None]
    drop = np.where(is_self.any(1), is_self.argmax(1), kk)
    keep = np.ones(idx.shape, bool)
    keep[np.arange(n), drop] = False
    return vals[keep].reshape(n, kk), idx[keep].reshape(n, kk).astype(np.int64)


# --------------------------------------------------------------------------------------------
# exact refinement

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


def _exact_sqdist_sorted(X, Xc, sq, idx, rows=None):
    """Exact squared distances to the candidates ``idx``, each row sorted ascending (ties by index,
    so every backend that finds the same neighbours returns them in the same order)."""
    rows = np.arange(len(idx)) if rows is None else rows
    by_index = np.argsort(idx, axis=1, kind="stable")
    idx = np.take_along_axis(idx, by_index, 1)
    d2 = _exact_sqdist(X, Xc, sq, rows, idx)
    order = np.argsort(d2, axis=1, kind="stable")
    return np.take_along_axis(d2, order, 1), np.take_along_axis(idx, order, 1)


def _certify(
    X: np.ndarray, Xc: np.ndarray, vals: np.ndarray, idx: np.ndarray, k: int, kk: int, backend: str
) -> Neighbors:
    """Re-measure candidates in float64, certify the selection, redo uncertified rows exactly."""
    n, D = Xc.shape
    sq = np.einsum("ij,ij->i", Xc, Xc)
    idx = idx.astype(np.int64)
    complete = (idx >= 0).all(1)
    idx[~complete] = 0  # placeholders; those rows are redone below
    d2, idx = _exact_sqdist_sorted(X, Xc, sq, idx)
    if kk >= n - 1:  # every other point is a candidate
        return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], backend, True, 0)
    eps = _error_bound(sq, D)
    last = vals.astype(np.float64).max(axis=1)  # every point left out is >= this in float32
    ok = complete & np.isfinite(last) & (last - eps > d2[:, k - 1])
    bad = np.flatnonzero(~ok)
    if len(bad):
        d2[bad], idx[bad] = _brute_force64(X, Xc, sq, bad, kk)
    return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], backend, True, len(bad))


def _brute_force64(X: np.ndarray, Xc: np.ndarray, sq: np.ndarray, rows: np.ndarray, kk: int, chunk: int = 512):
    """kk nearest neighbours of ``rows`` against all points with float64 products, re-measured."""
    n = Xc.shape[0]
    d2_out = np.empty((len(rows), kk))
    idx_out = np.empty((len(rows), kk), dtype=np.int64)
    for a in range(0, len(rows), chunk):
        r = rows[a : a + chunk]
        d2 = sq[r, None] + sq[None, :] - 2.0 * (Xc[r] @ Xc.T)
        d2[np.arange(len(r)), r] = np.inf
        cand = np.argpartition(d2, kk - 1, axis=1)[:, :kk] if kk < n - 1 else np.argsort(d2, axis=1)[:, :kk]
        d2_out[a : a + chunk], idx_out[a : a + chunk] = _exact_sqdist_sorted(X, Xc, sq, cand.astype(np.int64), rows=r)
    return d2_out, idx_out
