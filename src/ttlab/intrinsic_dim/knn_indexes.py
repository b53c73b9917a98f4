"""Neighbour searches built on library indexes: scipy's k-d tree (``backend="tree"``: exact, certified like the
blocked scan), faiss' flat index (``"faiss"``: exact float32 candidates) and its HNSW graph (``"faiss-hnsw"``:
approximate). faiss is optional and imported where it is used.
"""

from __future__ import annotations

import numpy as np

from ttlab.intrinsic_dim.knn_exact import brute_force64, exact_sqdist_sorted
from ttlab.intrinsic_dim.neighbors import Neighbors


def kd_tree_neighbors(X: np.ndarray, Xc: np.ndarray, k: int, kk: int) -> Neighbors:
    """Exact k nearest neighbours from a k-d tree, re-measured like the blocked path."""
    import torch
    from scipy.spatial import cKDTree

    tree = cKDTree(Xc, leafsize=16, balanced_tree=False, compact_nodes=False)
    dist, idx = tree.query(Xc, k=kk + 1, workers=max(1, torch.get_num_threads()))
    dist, idx = _drop_self(dist, idx, kk)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    d2, idx = exact_sqdist_sorted(X, Xc, sq, idx)
    if kk >= len(X) - 1:  # every other point is a candidate
        return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], "tree", True, 0)
    # certify as the blocked path does: every point the tree left out is at least its last candidate's
    # distance (float64, relative error ~1e-15); redo rows where that does not clear the k-th distance
    last = dist.max(axis=1) ** 2
    bad = np.flatnonzero(~(last * (1 - 1e-9) > d2[:, k - 1]))
    if len(bad):
        d2[bad], idx[bad] = brute_force64(X, Xc, sq, bad, kk)
    return Neighbors(np.sqrt(d2[:, :k]), idx[:, :k], "tree", True, len(bad))


def faiss_flat(X32: np.ndarray, kk: int) -> tuple[np.ndarray, np.ndarray]:
    import faiss

    index = faiss.IndexFlatL2(X32.shape[1])
    index.add(X32)
    vals, idx = index.search(X32, kk + 1)
    return _drop_self(vals, idx, kk)


def faiss_hnsw(X32: np.ndarray, kk: int, m: int, ef_search: int) -> np.ndarray:
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
