"""Benchmark of the exact max-margin solvers (ttlab.ntp.maxmargin) against cvxpy + Clarabel.

Run on demand:  .venv/bin/python benchmarks/bench_maxmargin.py
Needs cvxpy (a dev dependency).  Prints timings, ratios and agreement figures.

1. W*_kq, one-hot, |V| = 500: a random instance shaped like paper A's data — 5,000 sentences of
   length 2..16; every query has its own optimal set (2..6 tokens) and non-optimal set (25..40
   tokens, containing the query itself); a sentence with query q holds 1..3 optimal tokens of q and
   the rest non-optimal ones, and yields every (q, optimal, non-optimal) triple.  Target: ≤ 1 s,
   max violation ≤ 1e-8.
2. W*_ov with Gaussian embeddings and a random collocation: |V| = 500, d = 500 (exact active-set
   method) and |V| = 100, d = 32 (rank-deficient: NNLS-LDP with constraint generation), the latter
   also against the library's Clarabel reference.
"""

from __future__ import annotations

import time

import numpy as np

from ttlab.ntp.maxmargin import max_margin_kq, max_margin_ov


def paper_like_kq_triples(vocab: int = 500, n_sentences: int = 5000, max_len: int = 16, seed: int = 0) -> np.ndarray:
    """(query, optimal, non-optimal) triples of a random paper-A-like dataset (see module doc)."""
    rng = np.random.default_rng(seed)
    opt_sets, non_sets = [], []
    for q in range(vocab):
        others = rng.permutation(np.delete(np.arange(vocab), q))
        k = int(rng.integers(2, 7))
        m = int(rng.integers(25, 41))
        opt_sets.append(others[:k])
        non_sets.append(others[k : k + m])  # the query itself is added to every sentence below
    queries = rng.integers(0, vocab, n_sentences)
    lengths = rng.integers(2, max_len + 1, n_sentences)
    chunks = []
    for q, L in zip(queries, lengths):
        O, U = opt_sets[q], non_sets[q]
        k = int(min(rng.integers(1, 4), L - 1, O.size))
        opt = rng.choice(O, size=k, replace=False)
        non = np.r_[rng.choice(U, size=min(L - 1 - k, U.size), replace=False), q]
        oo, uu = np.meshgrid(opt, non, indexing="ij")
        chunks.append(np.stack([np.full(oo.size, q), oo.ravel(), uu.ravel()], axis=1))
    return np.concatenate(chunks)


def cvxpy_kq_onehot(triples: np.ndarray, vocab: int) -> tuple[np.ndarray, float]:
    import cvxpy as cp

    T = np.unique(triples, axis=0)
    W = cp.Variable((vocab, vocab))
    q, o, u = T[:, 0], T[:, 1], T[:, 2]
    vec = cp.vec(W, order="C")
    cons = [vec[o * vocab + q] - vec[u * vocab + q] >= 1]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(vec)), cons)
    t0 = time.perf_counter()
    prob.solve(solver=cp.CLARABEL)
    return np.asarray(W.value), time.perf_counter() - t0


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b)))


def best_of(fn, repeat: int = 3):
    """(result, best wall time, CPU time of that run)."""
    best, cpu, out = np.inf, np.inf, None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        t, c = time.perf_counter() - t0, time.process_time() - c0
        if t < best:
            best, cpu = t, c
    return out, best, cpu


def main() -> None:
    V = 500
    t0 = time.perf_counter()
    tri = paper_like_kq_triples(V)
    t_gen = time.perf_counter() - t0
    n_unique = np.unique(tri, axis=0).shape[0]
    print(f"== W*_kq one-hot, |V| = {V}: {tri.shape[0]} triples ({n_unique} distinct), "
          f"{np.unique(tri[:, 0]).size} queries, generated in {t_gen:.2f} s")
    sol, t_ours, c_ours = best_of(lambda: max_margin_kq(tri, V))
    print(f"ours (method=auto -> {sol.method}): {t_ours:.3f} s wall (best of 3; CPU {c_ours:.3f} s)  "
          f"norm {sol.norm:.6f}  min margin {sol.min_margin:.15f}  max violation {sol.max_violation:.2e}  "
          f"[target <= 1 s: {'OK' if t_ours <= 1.0 else 'MISSED'}; violation <= 1e-8: "
          f"{'OK' if sol.max_violation <= 1e-8 else 'MISSED'}]")
    sol_ldp, t_ldp, c_ldp = best_of(lambda: max_margin_kq(tri, V, method="ldp"))
    print(f"ours (method=ldp, no closed forms): {t_ldp:.3f} s wall (CPU {c_ldp:.3f} s)  "
          f"max violation {sol_ldp.max_violation:.2e}")
    try:
        W_ref, t_ref = cvxpy_kq_onehot(tri, V)
    except ImportError:
        print("cvxpy not installed: skipping the reference")
    else:
        marg = W_ref[tri[:, 1], tri[:, 0]] - W_ref[tri[:, 2], tri[:, 0]]
        print(f"cvxpy+Clarabel: {t_ref:.3f} s wall (solve only)  norm {np.linalg.norm(W_ref):.6f}  "
              f"max violation {max(0.0, 1 - marg.min()):.2e}")
        print(f"ratio cvxpy/ours = {t_ref / t_ours:.1f}x   cosine = {cos(sol.W, W_ref):.12f}   "
              f"1 - cosine = {1 - cos(sol.W, W_ref):.1e}   "
              f"relative norm difference = {abs(np.linalg.norm(W_ref) - sol.norm) / sol.norm:.1e}")

    rng = np.random.default_rng(1)
    for V_ov, d in ((500, 500), (100, 32)):
        nt = rng.integers(0, V_ov, V_ov)
        E = rng.standard_normal((d, V_ov)) / np.sqrt(d)
        sol, t, c = best_of(lambda: max_margin_ov(nt, E), repeat=1)
        print(f"== W*_ov, |V| = {V_ov}, Gaussian embeddings d = {d}, {np.unique(nt).size} distinct "
              f"collocations ({sol.n_constraints} constraints): {t:.2f} s wall (CPU {c:.2f} s)  "
              f"method {sol.method}  norm {sol.norm:.6f}  min margin {sol.min_margin:.15f}  "
              f"max violation {sol.max_violation:.2e}")
    sol_ref, t_ref, _ = best_of(lambda: max_margin_ov(nt, E, method="clarabel"), repeat=1)
    print(f"   same |V| = {V_ov}, d = {d} with method='clarabel': {t_ref:.2f} s wall  "
          f"ratio {t_ref / t:.1f}x  cosine {cos(sol.W, sol_ref.W):.12f}")


if __name__ == "__main__":
    main()
