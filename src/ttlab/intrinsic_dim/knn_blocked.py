"""The blocked, symmetric float32 scan of ``backend="torch"``: squared distances block by block with one matrix product
per block pair (only the blocks on and above the diagonal), top-k selection fused into the scan — numpy selection
beside PyTorch products on the CPU, every step in PyTorch on an accelerator. Its candidates are certified exact by
:func:`ttlab.intrinsic_dim.knn_exact.certify`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np


def _blocks(n: int, block: int):
    """Block pairs (I, bi, J, bj) on and above the diagonal."""
    starts = range(0, n, block)
    for I in starts:
        for J in starts:
            if J >= I:
                yield I, min(block, n - I), J, min(block, n - J)


def scan_torch(Xc: np.ndarray, kk: int, block: int, device: str) -> tuple[np.ndarray, np.ndarray]:
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
