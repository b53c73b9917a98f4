"""Benchmark of the exact max-margin solvers (ttlab.ntp.maxmargin) against cvxpy + Clarabel.

Run on demand:  .venv/bin/python benchmarks/bench_maxmargin.py
Needs cvxpy (a dev dependency).  Prints timings, ratios and agreement figures.

1. W*_kq, one-hot, |V| = 500: a random instance shaped like paper A's data — 5,000 sentences of
   length 2..16; every query has its own optimal set (2..6 tokens) and non-optimal set (25..40
   tokens, containing the query itself); a sentence with query q holds 1..3 optimal tokens of q and
   the rest non-optimal ones, and yields every (q, optimal, non-optimal) triple.  Target: ≤ 1 s,
   max violation ≤ 1e-8.
   The reference is cvxpy + Clarabel on the same distinct triples, timed in two parts: building the
   cvxpy model and compiling it to Clarabel's conic form (``get_problem_data``), and Clarabel's solve
   (``solve_via_data``) — ttlab's time is reported against each part and against their sum.
2. W*_ov with Gaussian embeddings and a random collocation: |V| = 500, d = 500 (exact active-set
   method) and |V| = 100, d = 32 (rank-deficient: NNLS-LDP with constraint generation), the latter
   also against the library's Clarabel reference.

All timings go through ``benchmarks/_timing.py``: every side gets the same warm-up and the same number
of timed repeats, interleaved, and min and median are reported.

    .venv/bin/python benchmarks/bench_maxmargin.py [--repeats 3] [--warmup 1] [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import interleave, load_note

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


class CvxpyKQ:
    """cvxpy + Clarabel for the one-hot W*_kq problem, in two separately timed calls:
    :meth:`compile` builds the model and compiles it to Clarabel's data, :meth:`solve` solves that data."""

    def __init__(self, triples: np.ndarray, vocab: int) -> None:
        self.T, self.vocab = np.unique(triples, axis=0), vocab
        self._pending = None
        self.W: np.ndarray | None = None

    def compile(self) -> None:
        import cvxpy as cp

        V, T = self.vocab, self.T
        W = cp.Variable((V, V))
        vec = cp.vec(W, order="C")
        q, o, u = T[:, 0], T[:, 1], T[:, 2]
        prob = cp.Problem(cp.Minimize(cp.sum_squares(vec)), [vec[o * V + q] - vec[u * V + q] >= 1])
        data, chain, inverse = prob.get_problem_data(cp.CLARABEL, solver_opts={})
        self._pending = (prob, W, data, chain, inverse)

    def solve(self) -> None:
        prob, W, data, chain, inverse = self._pending
        solution = chain.solve_via_data(prob, data, solver_opts={})
        prob.unpack_results(solution, chain, inverse)
        self.W, self._pending = np.asarray(W.value), None


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b)))


def _ok(flag: bool) -> str:
    return "OK" if flag else "MISSED"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats per side (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed warm-up calls per side (default 1)")
    ap.add_argument("--quick", action="store_true", help="W*_kq part only, 2 repeats")
    a = ap.parse_args()
    repeats = 2 if a.quick else a.repeats
    print(load_note())
    V = 500
    t0 = time.perf_counter()
    tri = paper_like_kq_triples(V)
    t_gen = time.perf_counter() - t0
    n_unique = np.unique(tri, axis=0).shape[0]
    print(f"== W*_kq one-hot, |V| = {V}: {tri.shape[0]} triples ({n_unique} distinct), "
          f"{np.unique(tri[:, 0]).size} queries, generated in {t_gen:.2f} s")
    sides = {"ttlab": lambda: max_margin_kq(tri, V), "ttlab ldp": lambda: max_margin_kq(tri, V, method="ldp")}
    ref = None
    try:
        import cvxpy  # noqa: F401
    except ImportError:
        print("cvxpy not installed: no reference (pip install cvxpy)")
    else:
        ref = CvxpyKQ(tri, V)
        sides.update({"cvxpy compile": ref.compile, "Clarabel solve": ref.solve})
    t = interleave(sides, repeats=repeats, warmup=a.warmup)
    sol, sol_ldp = t.results["ttlab"], t.results["ttlab ldp"]
    ours = t["ttlab"]
    print(f"ttlab (method=auto -> {sol.method}): min {ours.min:.3f} s, median {ours.median:.3f} s  "
          f"norm {sol.norm:.6f}  min margin {sol.min_margin:.15f}  max violation {sol.max_violation:.2e}  "
          f"[target min <= 1 s: {_ok(ours.min <= 1.0)} ({ours.min:.3f} s); median <= 1 s: {_ok(ours.median <= 1.0)}; "
          f"violation <= 1e-8: {_ok(sol.max_violation <= 1e-8)}]")
    print(f"ttlab (method=ldp, no closed forms): min {t['ttlab ldp'].min:.3f} s, median {t['ttlab ldp'].median:.3f} s  "
          f"max violation {sol_ldp.max_violation:.2e}")
    if ref is not None:
        W_ref = ref.W
        marg = W_ref[tri[:, 1], tri[:, 0]] - W_ref[tri[:, 2], tri[:, 0]]
        comp, solve = t["cvxpy compile"], t["Clarabel solve"]
        tot = [c + s_ for c, s_ in zip(comp.seconds, solve.seconds)]
        tot_min, tot_med = min(tot), float(np.median(tot))
        print(f"cvxpy model build + compile: min {comp.min:.3f} s, median {comp.median:.3f} s; "
              f"Clarabel solve: min {solve.min:.3f} s, median {solve.median:.3f} s; "
              f"together min {tot_min:.3f} s, median {tot_med:.3f} s  "
              f"norm {np.linalg.norm(W_ref):.6f}  max violation {max(0.0, 1 - marg.min()):.2e}")
        for name, m, md in (("Clarabel solve", solve.min, solve.median), ("cvxpy compile", comp.min, comp.median),
                            ("compile + solve", tot_min, tot_med)):
            print(f"  {name} / ttlab = {m / ours.min:.1f}x (min), {md / ours.median:.1f}x (median)")
        print(f"  cosine(ttlab, cvxpy) = {cos(sol.W, W_ref):.12f}   1 - cosine = {1 - cos(sol.W, W_ref):.1e}   "
              f"relative norm difference = {abs(np.linalg.norm(W_ref) - sol.norm) / sol.norm:.1e}   "
              f"[{t.repeats} interleaved repeats, {t.warmup} warm-up each]")
    if a.quick:
        return

    rng = np.random.default_rng(1)
    for V_ov, d in ((500, 500), (100, 32)):
        nt = rng.integers(0, V_ov, V_ov)
        E = rng.standard_normal((d, V_ov)) / np.sqrt(d)
        sides = {"ttlab": lambda: max_margin_ov(nt, E)}
        if V_ov == 100:
            sides["clarabel"] = lambda: max_margin_ov(nt, E, method="clarabel")
        t = interleave(sides, repeats=repeats, warmup=a.warmup)
        sol = t.results["ttlab"]
        print(f"== W*_ov, |V| = {V_ov}, Gaussian embeddings d = {d}, {np.unique(nt).size} distinct "
              f"collocations ({sol.n_constraints} constraints): min {t['ttlab'].min:.2f} s, median "
              f"{t['ttlab'].median:.2f} s  method {sol.method}  norm {sol.norm:.6f}  "
              f"min margin {sol.min_margin:.15f}  max violation {sol.max_violation:.2e}")
        if "clarabel" in sides:
            print(f"   same |V| = {V_ov}, d = {d} with method='clarabel': {t.line('clarabel', 'ttlab')}  "
                  f"cosine {cos(sol.W, t.results['clarabel'].W):.12f}")


if __name__ == "__main__":
    main()
