"""W*_kq = argmin ||W||_F s.t. (E[:, o] − E[:, u])ᵀ W E[:, q] ≥ 1 (paper A's stage-2 max-margin problem).

One-hot embeddings: one independent QP per query column, restricted to the tokens that query's
constraints involve, in closed form when its constraint graph is complete bipartite (Proposition 2),
else by NNLS-LDP; the columns can be solved in worker processes (:func:`kq_onehot_entries`) with the
serial result. General embeddings: the Gram-matrix NNLS-LDP of :mod:`ttlab.ntp.maxmargin.qp`.
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np

import ttlab.ntp.maxmargin.qp as qp
from ttlab.errors import TTLabInputError
from ttlab.validation import check_int


# ============================================================================================== W*_kq
def kq_column_closed_form(pairs: np.ndarray, vocab_size: int) -> np.ndarray | None:
    """Proposition 2: the W*_kq column of one query from its (optimal, non-optimal) pairs.

    When the pairs form a complete bipartite graph (k optimal × m non-optimal tokens, disjoint), the
    column is m/(k+m) on optimal tokens, −k/(k+m) on non-optimal ones and 0 elsewhere; otherwise
    returns ``None``.  Duplicate pairs are ignored; no pairs give the zero column.
    """
    V = _check_vocab_size(vocab_size)
    P = qp.index_array(pairs, "pairs")
    if P.size == 0:
        return np.zeros(V)
    if P.ndim != 2 or P.shape[1] != 2:
        raise TTLabInputError(f"pairs must have shape (m, 2) of (optimal, non-optimal) tokens (got {P.shape})")
    _check_range(P, V, "pairs")
    same = np.flatnonzero(P[:, 0] == P[:, 1])
    if same.size:
        raise TTLabInputError(
            f"infeasible pair {tuple(P[same[0]])}: a token cannot be above itself (optimal = non-optimal)"
        )
    P = np.unique(P, axis=0)
    return _closed_form_column(P, V)


def _closed_form_column(P: np.ndarray, V: int) -> np.ndarray | None:
    opt = np.unique(P[:, 0])
    non = np.unique(P[:, 1])
    if P.shape[0] != opt.size * non.size or np.intersect1d(opt, non).size:
        return None
    k, m = opt.size, non.size
    col = np.zeros(V)
    col[opt] = m / (k + m)
    col[non] = -k / (k + m)
    return col


def _check_vocab_size(vocab_size) -> int:
    return check_int(vocab_size, "vocab_size", 1)


def _check_range(arr: np.ndarray, V: int, name: str) -> None:
    bad = np.argwhere((arr < 0) | (arr >= V))
    if bad.size:
        r = bad[0][0]
        raise TTLabInputError(
            f"{name} row {r} = {tuple(int(v) for v in arr[r])} has a token index outside [0, {V - 1}]"
        )


def max_margin_kq(
    triples: np.ndarray, vocab_size: int, embeddings: np.ndarray | None = None, method: str = "auto"
) -> qp.MaxMarginSolution:
    """W*_kq = argmin ||W||_F s.t. (E[:, o] − E[:, u])ᵀ W E[:, q] ≥ 1 for every triple (q, o, u).

    ``triples`` (m × 3) lists (query, optimal, non-optimal) token indices (duplicates are removed;
    m = 0 gives W = 0).  ``embeddings`` is E (d × |V|) or ``None`` for one-hot.  ``method``:
    ``"auto"`` (Proposition 2 where the query's graph is complete bipartite, else NNLS-LDP),
    ``"ldp"`` (always NNLS-LDP) or ``"clarabel"`` (reference).  Returns a d × d matrix.
    """
    qp.check_method(method)
    V = _check_vocab_size(vocab_size)
    T = qp.index_array(triples, "triples")
    if T.size == 0:
        T = T.reshape(0, 3)
    if T.ndim != 2 or T.shape[1] != 3:
        raise TTLabInputError(
            f"triples must have shape (m, 3) of (query, optimal, non-optimal) tokens (got shape {T.shape})"
        )
    _check_range(T, V, "triples")
    same = np.flatnonzero(T[:, 1] == T[:, 2])
    if same.size:
        q, o, _ = (int(v) for v in T[same[0]])
        raise TTLabInputError(
            f"infeasible constraint (query {q}, optimal {o}, non-optimal {o}): a token cannot be both the "
            "optimal and the non-optimal side of one constraint"
        )
    E = qp.check_embeddings(embeddings, V)
    T = unique_triples(T, V)  # sorted by query, then optimal, then non-optimal
    m = T.shape[0]
    d = V if E is None else E.shape[0]

    if E is None:
        def margins(W: np.ndarray) -> np.ndarray:
            return W[T[:, 1], T[:, 0]] - W[T[:, 2], T[:, 0]]
    else:
        def margins(W: np.ndarray) -> np.ndarray:
            used = np.unique(T)
            pos = np.searchsorted(used, T)
            M = E[:, used].T @ W @ E[:, used]
            return M[pos[:, 1], pos[:, 0]] - M[pos[:, 2], pos[:, 0]]

    if m == 0:
        return qp.zero_solution((d, d), margins, method)
    if method == "clarabel":
        return qp.finish_solution(_kq_clarabel(T, V, E), margins, m, "clarabel")
    if E is None or (method == "auto" and qp.is_orthonormal(E)):
        W1, tag = _kq_onehot(T, V, method)
        W = W1 if E is None else E @ W1 @ E.T  # orthonormal E: isometric image of the one-hot solution
        return qp.finish_solution(W, margins, m, tag)
    with qp.blas_single_thread(m > 16):
        return qp.finish_solution(_kq_general(T, E), margins, m, "ldp-nnls")


def unique_triples(T: np.ndarray, V: int) -> np.ndarray:
    """Distinct rows of T (m × 3, entries in [0, V)), sorted lexicographically."""
    if T.shape[0] == 0:
        return T.reshape(0, 3)
    if V < 2_000_000:  # V³ fits in int64: unique on scalar keys is much faster than on rows
        key = np.unique((T[:, 0] * V + T[:, 1]) * V + T[:, 2])
        return np.stack([key // (V * V), (key // V) % V, key % V], axis=1)
    return np.unique(T, axis=0)


def _kq_onehot(T: np.ndarray, V: int, method: str) -> tuple[np.ndarray, str]:
    """One-hot W*_kq column by column, each restricted to the tokens its query involves.

    ``T`` must be de-duplicated and sorted (as ``np.unique(·, axis=0)`` returns it)."""
    W = np.zeros((V, V))
    tok, qry, val, tag = kq_onehot_entries(T, V, method)
    W[tok, qry] = val
    return W, tag


#: parallel one-hot W*_kq: below this many constraints the columns are solved in this process
PARALLEL_MIN_TRIPLES = 50_000
#: ... and the queries are cut into about this many chunks per worker (progress granularity, load balance)
CHUNKS_PER_WORKER = 8

KQProgress = Callable[[int, int], None]
"""``progress(done, total)``: query columns of W*_kq solved so far, out of ``total``."""


def kq_onehot_entries(
    T: np.ndarray, V: int, method: str = "auto", workers: int | None = 1, progress: KQProgress | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """One-hot W*_kq as its non-zero support: (token, query, value) arrays and the method tag.

    ``T`` must be de-duplicated and sorted (as ``np.unique(·, axis=0)`` returns it). Memory is O(#triples),
    never |V|²: every query column is solved on the tokens its constraints involve (Proposition 2 where
    the query's graph is complete bipartite, else NNLS-LDP). The columns are independent: with
    ``workers`` > 1 (``None``: one per CPU core when there are at least :data:`PARALLEL_MIN_TRIPLES`
    constraints) the queries are cut into chunks of about equal constraint counts, solved in worker
    processes by the same code, and concatenated in query order, so the result is identical to the
    serial one. ``progress(done, total)`` is called with the number of query columns solved.
    """
    m = T.shape[0]
    q_all = T[:, 0]
    starts = np.r_[0, np.flatnonzero(np.diff(q_all)) + 1] if m else np.zeros(0, dtype=np.int64)
    n_q = starts.size
    if workers is None:
        workers = (os.cpu_count() or 1) if m >= PARALLEL_MIN_TRIPLES else 1
    workers = check_int(workers, "workers", 1)
    n_chunks = min(n_q, int(workers) * CHUNKS_PER_WORKER) if workers > 1 else min(n_q, 64)
    # chunk boundaries at query starts, about equal numbers of constraints per chunk
    cuts = np.unique(np.searchsorted(starts, np.linspace(0, m, n_chunks + 1)[1:-1], side="right") - 1)
    cuts = cuts[cuts > 0]
    bounds = np.r_[0, starts[cuts], m].astype(np.int64)
    q_bounds = np.r_[0, cuts, n_q].astype(np.int64)
    chunks = [T[bounds[i]:bounds[i + 1]] for i in range(bounds.size - 1)]
    parts: list[tuple] = []
    if progress:
        progress(0, n_q)
    if workers > 1 and len(chunks) > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        # fork where available: the workers need no re-import, and spawn/forkserver would re-run an
        # unguarded __main__ script; the workers use only numpy/scipy (no torch threads)
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        with ProcessPoolExecutor(max_workers=min(int(workers), len(chunks)), mp_context=ctx) as pool:
            futures = [pool.submit(_kq_onehot_chunk, c, V, method) for c in chunks]
            done = 0
            for i, f in enumerate(futures):  # in order: the concatenation is the serial one
                parts.append(f.result())
                done += int(q_bounds[i + 1] - q_bounds[i])
                if progress:
                    progress(done, n_q)
    else:
        for i, c in enumerate(chunks):
            parts.append(_kq_onehot_chunk(c, V, method))
            if progress:
                progress(int(q_bounds[i + 1]), n_q)
    n_closed = sum(p[3] for p in parts)
    n_ldp = sum(p[4] for p in parts)
    tag = "closed-form" if n_ldp == 0 else ("ldp-nnls" if n_closed == 0 else "mixed")
    if not parts:
        e = np.zeros(0, dtype=np.int64)
        return e, e.copy(), np.zeros(0), tag
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]), tag)


def _kq_onehot_chunk(T: np.ndarray, V: int, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """The columns of the queries in ``T`` (sorted, de-duplicated, whole queries): (token, query, value)
    arrays and the numbers of closed-form and NNLS-LDP columns. Top level so worker processes can run it."""
    with qp.blas_single_thread(True):
        return _kq_onehot_columns(T, V, method)


def _kq_onehot_columns(T: np.ndarray, V: int, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    out_t: list[np.ndarray] = []
    out_q: list[np.ndarray] = []
    out_v: list[np.ndarray] = []
    m = T.shape[0]
    e = np.zeros(0, dtype=np.int64)
    if m == 0:
        return e, e.copy(), np.zeros(0), 0, 0
    q_all, o_all, u_all = T[:, 0], T[:, 1], T[:, 2]
    starts = np.r_[0, np.flatnonzero(np.diff(q_all)) + 1]
    queries = q_all[starts]
    bounds = np.r_[starts, m]
    # local token numbering inside every column: keys q·V + token, sorted by (q, token)
    key_o, key_u = q_all * V + o_all, q_all * V + u_all
    keys = np.unique(np.concatenate([key_o, key_u]))
    key_start = np.searchsorted(keys, queries * V)
    key_bounds = np.r_[key_start, keys.size]
    q_of_triple = np.repeat(np.arange(queries.size), np.diff(bounds))
    loc_o = np.searchsorted(keys, key_o) - key_start[q_of_triple]
    loc_u = np.searchsorted(keys, key_u) - key_start[q_of_triple]
    # Proposition 2 applies when #pairs = k·m and no token is on both sides
    uo, uu = np.unique(key_o), np.unique(key_u)
    n_opt = np.diff(np.r_[np.searchsorted(uo, queries * V), uo.size])
    n_non = np.diff(np.r_[np.searchsorted(uu, queries * V), uu.size])
    both = np.intersect1d(uo, uu) // V
    overlap = np.isin(queries, both)
    complete = (np.diff(bounds) == n_opt * n_non) & ~overlap & (method == "auto")
    n_closed = n_ldp = 0
    for c, q in enumerate(queries):
        lo, hi = bounds[c], bounds[c + 1]
        if complete[c]:
            k, mm = n_opt[c], n_non[c]
            opt, non = np.unique(o_all[lo:hi]), np.unique(u_all[lo:hi])
            out_t += [opt, non]
            out_q += [np.full(opt.size, q), np.full(non.size, q)]
            out_v += [np.full(opt.size, mm / (k + mm)), np.full(non.size, -k / (k + mm))]
            n_closed += 1
            continue
        tokens = keys[key_bounds[c] : key_bounds[c + 1]] - q * V
        mq = hi - lo
        G = np.zeros((mq, tokens.size))
        r = np.arange(mq)
        G[r, loc_o[lo:hi]] = 1.0
        G[r, loc_u[lo:hi]] = -1.0
        try:
            x, _ = qp.ldp(G, np.ones(mq))
        except qp.LDPInfeasible:
            raise TTLabInputError(_cycle_message(int(q), T[lo:hi, 1:])) from None
        out_t.append(tokens)
        out_q.append(np.full(tokens.size, q))
        out_v.append(np.asarray(x, dtype=np.float64))
        n_ldp += 1
    return (np.concatenate(out_t), np.concatenate(out_q).astype(np.int64), np.concatenate(out_v), n_closed, n_ldp)


def _cycle_message(q: int, P: np.ndarray) -> str:
    """Explain an infeasible one-hot kq column: its order o > u has a cycle."""
    cycle = _find_cycle(P.tolist())
    if len(cycle) > 12:
        where = " > ".join(map(str, cycle[:10])) + f" > … > {cycle[-1]} ({len(cycle) - 1} tokens)"
    else:
        where = " > ".join(map(str, cycle)) if cycle else "a cycle"
    return (
        f"infeasible W*_kq: the order of query {q} has a cycle ({where}), so no column can put every "
        "optimal token above its non-optimal partner; the data break Assumption 1 (acyclic orders)"
    )


def _find_cycle(edges: list[list[int]]) -> list[int]:
    """A directed cycle [v0, v1, …, v0] of the graph with edges (o → u), or [] (iterative DFS)."""
    succ: dict[int, list[int]] = {}
    for o, u in edges:
        succ.setdefault(o, []).append(u)
    color: dict[int, int] = {}  # 1 = on the current path, 2 = done
    for root in succ:
        if color.get(root):
            continue
        color[root] = 1
        path = [root]
        stack = [iter(succ[root])]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                color[path.pop()] = 2
                continue
            c = color.get(nxt, 0)
            if c == 1:
                return path[path.index(nxt):] + [nxt]
            if c == 0:
                color[nxt] = 1
                path.append(nxt)
                stack.append(iter(succ.get(nxt, [])))
    return []


def _kq_general(T: np.ndarray, E: np.ndarray) -> np.ndarray:
    """W*_kq for general embeddings: Gram-matrix NNLS-LDP over the tokens the triples use."""
    used = np.unique(T)
    pos = np.searchsorted(used, T)
    Eu = E[:, used]
    K = Eu.T @ Eu
    tri = pos[:, [0, 1, 2]]  # (s = query, a = optimal, b = non-optimal)
    try:
        C = qp.solve_triples(tri, K, K, used.size, used.size)
    except qp.LDPInfeasible:
        raise TTLabInputError(
            "infeasible W*_kq: no matrix satisfies all constraints with these embeddings "
            "(or only with norm > 1e6); check for cyclic orders or linearly dependent embeddings"
        ) from None
    return Eu @ C @ Eu.T


def _kq_clarabel(T: np.ndarray, V: int, E: np.ndarray | None) -> np.ndarray:
    import scipy.sparse as sp

    m = T.shape[0]
    q, o, u = T[:, 0], T[:, 1], T[:, 2]
    if E is None:  # W[i, q] ↦ i·V + q
        rows = np.repeat(np.arange(m), 2)
        cols = np.stack([o * V + q, u * V + q], axis=1).ravel()
        vals = np.tile([1.0, -1.0], m)
        G = sp.csc_matrix((vals, (rows, cols)), shape=(m, V * V))
        return qp.clarabel_solve(G, V * V).reshape(V, V)
    d = E.shape[0]
    if m * d * d > qp.CLARABEL_MAX_NNZ:
        raise TTLabInputError(f"W*_kq with {m} constraints and d = {d} is too large for method='clarabel'; use 'auto'")
    A = E[:, o] - E[:, u]  # d × m
    B = E[:, q]
    dense = (A.T[:, :, None] * B.T[:, None, :]).reshape(m, d * d)  # row c = vec(a_c b_cᵀ)
    G = sp.csc_matrix(dense)
    return qp.clarabel_solve(G, d * d).reshape(d, d)
