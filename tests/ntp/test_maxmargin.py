"""Exact max-margin solvers W*_ov and W*_kq (ttlab.ntp.maxmargin).

Closed forms are checked exactly; the exact NNLS-LDP / active-set solvers are checked against an
independent cvxpy + Clarabel formulation written here, against the KKT conditions (stationarity with
λ ≥ 0 found by bounded least squares, complementary slackness) and for feasibility.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from ttlab.errors import TTLabInputError
from ttlab.ntp.maxmargin import (
    MaxMarginSolution,
    kq_column_closed_form,
    max_margin_kq,
    max_margin_ov,
    solve_ldp,
)


def _cvxpy():
    """cvxpy, imported only by the tests that compare with it (the others run without it)."""
    return pytest.importorskip("cvxpy")


# ------------------------------------------------------------------------------------------ helpers
def random_kq_triples(rng: np.random.Generator, V: int, n_sentences: int, max_len: int = 7) -> np.ndarray:
    """Paper-A-like triples: each query has an optimal set and a non-optimal set (containing the query);
    a sentence holds 1–2 optimal tokens and the rest non-optimal ones."""
    opt_sets, non_sets = [], []
    for q in range(V):
        others = rng.permutation(np.delete(np.arange(V), q))
        k = int(rng.integers(1, 4))
        opt_sets.append(others[:k])
        non_sets.append(others[k : k + int(rng.integers(2, 6))])
    rows = []
    for _ in range(n_sentences):
        q = int(rng.integers(V))
        L = int(rng.integers(2, max_len + 1))
        O, U = opt_sets[q], non_sets[q]
        k = int(min(rng.integers(1, 3), L - 1, O.size))
        opt = rng.choice(O, size=k, replace=False)
        non = np.r_[rng.choice(U, size=min(L - 1 - k, U.size), replace=False), q]
        rows += [(q, o, u) for o in opt for u in non]
    return np.array(rows, dtype=np.int64)


def constraint_vectors_kq(T: np.ndarray, E: np.ndarray | None, V: int) -> np.ndarray:
    """Rows vec(a_c b_cᵀ) of the distinct kq constraints, a = E_o − E_u, b = E_q."""
    T = np.unique(T, axis=0)
    E = np.eye(V) if E is None else E
    A = (E[:, T[:, 1]] - E[:, T[:, 2]]).T
    B = E[:, T[:, 0]].T
    return np.einsum("ci,cj->cij", A, B).reshape(len(T), -1)


def constraint_vectors_ov(nt: np.ndarray, E: np.ndarray | None) -> np.ndarray:
    """Rows vec((e_{n(x)} − e_i) E_xᵀ) over tokens x with a collocation and i ≠ n(x)."""
    V = nt.size
    E = np.eye(V) if E is None else E
    rows = []
    for x in np.flatnonzero(nt >= 0):
        for i in range(V):
            if i != nt[x]:
                a = np.zeros(V)
                a[nt[x]] += 1
                a[i] -= 1
                rows.append(np.outer(a, E[:, x]).ravel())
    return np.array(rows)


def cvxpy_kq(T: np.ndarray, V: int, E: np.ndarray | None) -> np.ndarray:
    """Independent reference: min ||W||_F² s.t. (E_o − E_u)ᵀ W E_q ≥ 1, with cvxpy + Clarabel."""
    cp = _cvxpy()
    E = np.eye(V) if E is None else E
    d = E.shape[0]
    W = cp.Variable((d, d))
    A = E[:, T[:, 1]] - E[:, T[:, 2]]  # d × m
    B = E[:, T[:, 0]]
    margins = cp.sum(cp.multiply(A.T @ W, B.T), axis=1)
    cp.Problem(cp.Minimize(cp.sum_squares(W)), [margins >= 1]).solve(solver=cp.CLARABEL)
    return np.asarray(W.value)


def cvxpy_ov(nt: np.ndarray, E: np.ndarray | None) -> np.ndarray:
    """Independent reference: min ||W||_F² s.t. (W E)[n(x), x] − (W E)[i, x] ≥ 1."""
    cp = _cvxpy()
    V = nt.size
    E = np.eye(V) if E is None else E
    W = cp.Variable((V, E.shape[0]))
    M = cp.vec(W @ E, order="C")
    xs, ii = [], []
    for x in np.flatnonzero(nt >= 0):
        for i in range(V):
            if i != nt[x]:
                xs.append(x)
                ii.append(i)
    xs, ii = np.array(xs), np.array(ii)
    cons = [M[nt[xs] * V + xs] - M[ii * V + xs] >= 1]
    cp.Problem(cp.Minimize(cp.sum_squares(W)), cons).solve(solver=cp.CLARABEL)
    return np.asarray(W.value)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b)))


def assert_agrees(sol: MaxMarginSolution, W_ref: np.ndarray) -> None:
    assert sol.W.shape == W_ref.shape
    assert cosine(sol.W, W_ref) >= 1 - 1e-6
    ref = np.linalg.norm(W_ref)
    assert abs(sol.norm - ref) <= 1e-6 * ref


def assert_kkt(W: np.ndarray, G: np.ndarray) -> None:
    """Stationarity W = Σ λ_c A_c with λ ≥ 0 supported on tight constraints (complementary slackness),
    feasibility, and ||W||² = Σ λ_c (which follows from margin 1 on the support)."""
    w = W.ravel()
    margins = G @ w
    assert margins.min() >= 1 - 1e-8
    tight = margins <= 1 + 1e-7
    res = lsq_linear(G[tight].T, w, bounds=(0, np.inf), method="bvls", tol=1e-14)
    lam = res.x
    assert np.all(lam >= 0)
    assert np.linalg.norm(G[tight].T @ lam - w) <= 1e-7 * max(1.0, np.linalg.norm(w))
    assert abs(lam.sum() - w @ w) <= 1e-6 * max(1.0, w @ w)
    # slack constraints carry no multiplier by construction; check that dropping them loses nothing
    assert np.all(margins[~tight] > 1 + 1e-7)


def check_certificate(sol: MaxMarginSolution, G: np.ndarray) -> None:
    """The reported margin/violation match the ones recomputed from W; violation ≤ 1e-8."""
    margins = G @ sol.W.ravel()
    assert sol.n_constraints == G.shape[0]
    assert sol.min_margin == pytest.approx(margins.min(), abs=1e-12)
    assert sol.max_violation == pytest.approx(max(0.0, 1 - margins.min()), abs=1e-12)
    assert sol.max_violation <= 1e-8
    assert sol.norm == pytest.approx(np.linalg.norm(sol.W), rel=1e-14)
    assert sol.W.dtype == np.float64


# ------------------------------------------------------------------------------------- closed forms
def test_ov_onehot_closed_form_exact():
    nt = np.array([3, 0, 0, -1, 5, 2, -1, 4])
    V = nt.size
    sol = max_margin_ov(nt)
    expected = np.zeros((V, V))
    for x, n in enumerate(nt):
        if n >= 0:
            expected[:, x] = -1.0 / V
            expected[n, x] += 1.0
    assert sol.method == "closed-form"
    np.testing.assert_array_equal(sol.W, expected)
    assert sol.min_margin == pytest.approx(1.0, abs=1e-15)
    assert sol.n_constraints == 6 * (V - 1)
    for method in ("ldp", "clarabel"):
        other = max_margin_ov(nt, method=method)
        np.testing.assert_allclose(other.W, expected, atol=1e-12 if method == "ldp" else 1e-7)
    check_certificate(sol, constraint_vectors_ov(nt, None))


def test_kq_column_closed_form_complete_bipartite():
    opt, non = [2, 5], [0, 1, 7]
    pairs = np.array([(o, u) for o in opt for u in non] + [(2, 0)])  # with a duplicate
    col = kq_column_closed_form(pairs, 9)
    expected = np.zeros(9)
    expected[opt] = 3 / 5
    expected[non] = -2 / 5
    np.testing.assert_array_equal(col, expected)
    # missing one pair → not complete
    assert kq_column_closed_form(pairs[1:-1], 9) is None
    np.testing.assert_array_equal(kq_column_closed_form(np.zeros((0, 2), dtype=int), 4), np.zeros(4))


def test_kq_complete_bipartite_instance_uses_proposition_2():
    V = 7
    T = np.array([(q, o, u) for q, opt, non in [(0, [1, 2], [0, 3, 4]), (4, [5], [6, 4])] for o in opt for u in non])
    sol = max_margin_kq(T, V)
    assert sol.method == "closed-form"
    W = np.zeros((V, V))
    W[[1, 2], 0], W[[0, 3, 4], 0] = 3 / 5, -2 / 5
    W[5, 4], W[[6, 4], 4] = 2 / 3, -1 / 3
    np.testing.assert_array_equal(sol.W, W)
    ldp = max_margin_kq(T, V, method="ldp")
    assert ldp.method == "ldp-nnls"
    np.testing.assert_allclose(ldp.W, W, atol=1e-12)
    check_certificate(sol, constraint_vectors_kq(T, None, V))


def test_kq_worked_non_complete_example():
    """SPEC: query q with `a b d e q => A` and `c q => C` — not Proposition 2's uniform values."""
    a, b, c, d, e, q = range(6)
    V = 8  # plus the labels A, C
    T = np.array([(q, a, b), (q, a, d), (q, a, e), (q, a, q), (q, c, q)])
    assert kq_column_closed_form(T[:, 1:], V) is None
    expected = np.zeros(V)
    expected[[a, c, b, d, e, q]] = [0.75, 0.5, -0.25, -0.25, -0.25, -0.5]
    for method in ("auto", "ldp"):
        sol = max_margin_kq(T, V, method=method)
        assert sol.method == "ldp-nnls"
        np.testing.assert_allclose(sol.W[:, q], expected, atol=1e-14)
        assert np.count_nonzero(sol.W[:, :q]) == 0 and np.count_nonzero(sol.W[:, q + 1 :]) == 0
        assert sol.norm == pytest.approx(np.sqrt(1.25), abs=1e-14)
        assert sol.min_margin == pytest.approx(1.0, abs=1e-14)
        assert sol.max_violation <= 1e-14
    ref = max_margin_kq(T, V, method="clarabel")
    np.testing.assert_allclose(ref.W[:, q], expected, atol=1e-7)


# ------------------------------------------------------------------------- agreement with cvxpy
KQ_ONEHOT_CASES = [(0, 9, 14), (1, 12, 20), (2, 15, 30), (3, 10, 25)]


@pytest.mark.parametrize("seed,V,n_sent", KQ_ONEHOT_CASES)
def test_kq_onehot_agrees_with_cvxpy(seed, V, n_sent):
    rng = np.random.default_rng(seed)
    T = random_kq_triples(rng, V, n_sent)
    ref = cvxpy_kq(np.unique(T, axis=0), V, None)
    for method in ("auto", "ldp"):
        sol = max_margin_kq(T, V, method=method)
        assert_agrees(sol, ref)
        check_certificate(sol, constraint_vectors_kq(T, None, V))


@pytest.mark.parametrize("seed,V,d", [(10, 8, 5), (11, 9, 9), (12, 7, 11)])
def test_kq_general_embeddings_agree_with_cvxpy(seed, V, d):
    rng = np.random.default_rng(seed)
    T = random_kq_triples(rng, V, 10, max_len=5)
    E = rng.standard_normal((d, V)) / np.sqrt(d)
    ref = cvxpy_kq(np.unique(T, axis=0), V, E)
    sol = max_margin_kq(T, V, E)
    assert sol.W.shape == (d, d)
    assert_agrees(sol, ref)
    check_certificate(sol, constraint_vectors_kq(T, E, V))


@pytest.mark.parametrize("seed,V,d", [(20, 8, 4), (21, 10, 6), (22, 9, 9), (23, 12, 12), (24, 7, 10)])
def test_ov_general_embeddings_agree_with_cvxpy(seed, V, d):
    rng = np.random.default_rng(seed)
    nt = rng.integers(-1, V, V)
    nt[0] = 1  # at least one collocation
    E = rng.standard_normal((d, V)) / np.sqrt(d)
    ref = cvxpy_ov(nt, E)
    G = constraint_vectors_ov(nt, E)
    for method in ("auto", "ldp", "clarabel"):
        sol = max_margin_ov(nt, E, method=method)
        assert sol.W.shape == (V, d)
        assert_agrees(sol, ref)
        check_certificate(sol, G)
    assert max_margin_ov(nt, E).method == ("active-set" if d >= V else "ldp-nnls")


def test_orthonormal_embeddings_map_the_onehot_solution():
    rng = np.random.default_rng(5)
    V, d = 6, 9
    Q, _ = np.linalg.qr(rng.standard_normal((d, V)))
    nt = np.array([1, 2, 0, -1, 3, 3])
    sol = max_margin_ov(nt, Q)
    assert sol.method == "closed-form"
    np.testing.assert_allclose(sol.W, max_margin_ov(nt, Q, method="ldp").W, atol=1e-9)
    T = random_kq_triples(rng, V, 8, max_len=4)
    kq = max_margin_kq(T, V, Q)
    np.testing.assert_allclose(kq.W, max_margin_kq(T, V, Q, method="ldp").W, atol=1e-9)


# ------------------------------------------------------------------------------------------- KKT
@pytest.mark.parametrize("seed", [30, 31, 32])
def test_kkt_conditions_on_random_instances(seed):
    rng = np.random.default_rng(seed)
    V = 8
    T = random_kq_triples(rng, V, 12, max_len=5)
    assert_kkt(max_margin_kq(T, V).W, constraint_vectors_kq(T, None, V))
    E = rng.standard_normal((5, V))
    assert_kkt(max_margin_kq(T, V, E).W, constraint_vectors_kq(T, E, V))
    nt = rng.integers(0, V, V)
    for d in (6, V):  # (d = 4 can be infeasible: 8 tokens, ~5 classes, through the origin in R⁴)
        E = rng.standard_normal((d, V))
        assert_kkt(max_margin_ov(nt, E).W, constraint_vectors_ov(nt, E))


def test_ldp_returns_a_consistent_dual():
    rng = np.random.default_rng(3)
    G = rng.standard_normal((30, 6))
    h = G @ rng.standard_normal(6) - rng.exponential(size=30)  # feasible by construction
    x, lam = solve_ldp(G, h)
    assert np.all(lam >= 0)
    np.testing.assert_allclose(G.T @ lam, x, atol=1e-10)
    assert (G @ x - h).min() >= -1e-10
    assert abs(lam @ (G @ x - h)) <= 1e-9  # complementary slackness
    x2, _ = solve_ldp(np.array([[1.0, 1.0]]), np.array([2.0]))
    np.testing.assert_allclose(x2, [1.0, 1.0], atol=1e-14)


def test_scipy_nnls_degenerate_case_is_refined():
    """A 12-pair column on which scipy's NNLS (1.15+) stops at a non-KKT point; the result must still
    be exact.  The forest of pairs splits into stars, each solved by Proposition 2."""
    pairs = [[1, 0], [1, 13], [3, 8], [3, 9], [7, 5], [7, 8], [10, 6], [10, 12], [11, 9], [15, 2], [15, 4], [15, 14]]
    V = 17
    T = np.array([(16, o, u) for o, u in pairs])
    sol = max_margin_kq(T, V)
    ref = cvxpy_kq(T, V, None)
    assert_agrees(sol, ref)
    col = sol.W[:, 16]
    np.testing.assert_allclose(col[[1, 0, 13]], [2 / 3, -1 / 3, -1 / 3], atol=1e-12)
    np.testing.assert_allclose(col[[15, 2, 4, 14]], [3 / 4, -1 / 4, -1 / 4, -1 / 4], atol=1e-12)
    check_certificate(sol, constraint_vectors_kq(T, None, V))


def test_larger_onehot_kq_matches_clarabel_reference():
    rng = np.random.default_rng(7)
    V = 60
    T = random_kq_triples(rng, V, 400, max_len=10)
    sol = max_margin_kq(T, V)
    ref = max_margin_kq(T, V, method="clarabel")
    assert sol.method in ("mixed", "ldp-nnls")
    assert_agrees(sol, ref.W)
    assert sol.max_violation <= 1e-8


def test_constraint_generation_and_fallback_paths():
    """More constraints than the direct limit (constraint generation), and full-rank d ≥ |V| with a
    repeated embedding (the active-set method does not apply and falls back to NNLS-LDP)."""
    rng = np.random.default_rng(8)
    V = 36
    nt = rng.integers(0, V, V)
    E = rng.standard_normal((10, V))
    sol = max_margin_ov(nt, E)
    assert sol.n_constraints > 1200 and sol.method == "ldp-nnls"
    assert_agrees(sol, max_margin_ov(nt, E, method="clarabel").W)
    assert sol.max_violation <= 1e-8
    V = 9
    nt = rng.integers(0, V, V)
    E = rng.standard_normal((V + 2, V))
    E[:, 1] = E[:, 0]
    nt[1] = nt[0]
    sol = max_margin_ov(nt, E)
    assert sol.method == "ldp-nnls"
    assert_agrees(sol, cvxpy_ov(nt, E))
    check_certificate(sol, constraint_vectors_ov(nt, E))


def test_duplicates_and_empty_inputs():
    T = np.array([[0, 1, 2], [0, 1, 2], [0, 1, 2]])
    sol = max_margin_kq(T, 3)
    assert sol.n_constraints == 1
    np.testing.assert_allclose(sol.W[:, 0], [0, 0.5, -0.5])
    empty = max_margin_kq(np.zeros((0, 3), dtype=int), 4)
    assert empty.norm == 0 and empty.min_margin == np.inf and empty.max_violation == 0 and empty.n_constraints == 0
    empty_e = max_margin_kq([], 4, np.ones((2, 4)))
    assert empty_e.W.shape == (2, 2)
    none = max_margin_ov(np.full(5, -1))
    assert none.norm == 0 and none.n_constraints == 0 and none.W.shape == (5, 5)


# -------------------------------------------------------------------------------- bad input
def test_infeasible_inputs_raise():
    with pytest.raises(TTLabInputError, match="optimal"):
        max_margin_kq(np.array([[0, 2, 2]]), 3)
    with pytest.raises(TTLabInputError, match="cycle"):
        max_margin_kq(np.array([[0, 1, 2], [0, 2, 1]]), 3)
    with pytest.raises(TTLabInputError, match="cycle"):
        max_margin_kq(np.array([[0, 1, 2], [0, 2, 3], [0, 3, 1]]), 4, method="ldp")
    with pytest.raises(TTLabInputError, match="nfeasible"):
        max_margin_kq(np.array([[0, 1, 2], [0, 2, 1]]), 3, method="clarabel")
    E = np.random.default_rng(0).standard_normal((4, 4))
    E[:, 2] = E[:, 1]  # tokens 1 and 2 cannot be told apart
    with pytest.raises(TTLabInputError, match="infeasible"):
        max_margin_kq(np.array([[0, 1, 2]]), 4, E)
    nt = np.array([1, 2, 0, 3])
    E = np.random.default_rng(1).standard_normal((5, 4))
    E[:, 1] = 2 * E[:, 0]  # same direction, different next tokens
    for method in ("auto", "ldp", "clarabel"):
        with pytest.raises(TTLabInputError, match="nfeasible"):
            max_margin_ov(nt, E, method=method)
    E[:, 1] = 0.0
    with pytest.raises(TTLabInputError, match="zero embedding"):
        max_margin_ov(nt, E)
    with pytest.raises(TTLabInputError, match="infeasible"):
        solve_ldp(np.array([[1.0], [-1.0]]), np.array([1.0, 1.0]))


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: max_margin_ov(np.array([[0, 1]])), "1-D"),
        (lambda: max_margin_ov(np.array([0, 5, 1])), "out of range"),
        (lambda: max_margin_ov(np.array([0, -2, 1])), "out of range"),
        (lambda: max_margin_ov(np.array([0.5, 1.0])), "integer"),
        (lambda: max_margin_ov(np.array([True, False])), "integer"),
        (lambda: max_margin_ov(np.array([], dtype=int)), "empty"),
        (lambda: max_margin_ov(np.array([1, 0]), np.ones((3, 5))), "columns"),
        (lambda: max_margin_ov(np.array([1, 0]), np.ones(2)), "2-D"),
        (lambda: max_margin_ov(np.array([1, 0]), np.array([[1.0, np.nan], [0.0, 1.0]])), "NaN"),
        (lambda: max_margin_ov(np.array([1, 0]), method="cvx"), "unknown method"),
        (lambda: max_margin_kq(np.array([[0, 1]]), 3), r"shape \(m, 3\)"),
        (lambda: max_margin_kq(np.array([[0, 1, 3]]), 3), "outside"),
        (lambda: max_margin_kq(np.array([[0, -1, 2]]), 3), "outside"),
        (lambda: max_margin_kq(np.array([[0, 1, 2]]), 0), "vocab_size"),
        (lambda: max_margin_kq(np.array([[0, 1, 2]]), 3.0), "vocab_size"),
        (lambda: max_margin_kq(np.array([[0, 1, 2]]), True), "vocab_size"),
        (lambda: max_margin_kq(np.array([[0, 1, 2]]), 3, np.full((2, 3), np.inf)), "NaN or inf"),
        (lambda: max_margin_kq(np.array([[0, 1, 2]]), 3, method="LDP"), "unknown method"),
        (lambda: max_margin_kq([[0, 1, 2], [0, 1]], 3), "rectangular|shape"),
        (lambda: kq_column_closed_form(np.array([[1, 1]]), 3), "itself"),
        (lambda: kq_column_closed_form(np.array([1, 2, 3]), 4), r"shape \(m, 2\)"),
    ],
)
def test_malformed_inputs_raise(call, match):
    with pytest.raises(TTLabInputError, match=match):
        call()


# ------------------------------------------------------------------ parallel one-hot W*_kq
@__import__("functools").lru_cache(maxsize=1)
def _scale_triples():
    from ttlab.ntp.generate import generate_dataset
    from ttlab.ntp.maxmargin import unique_triples as _unique_triples
    from ttlab.ntp.structure import analyze

    st = analyze(generate_dataset(200, 2000, 2, 12, seed=3, method="large"))
    V = st.dataset.vocab_size
    return _unique_triples(st.kq_triples(), V), V


def test_kq_columns_in_parallel_are_identical_to_serial_with_progress():
    from ttlab.ntp.maxmargin import kq_onehot_entries

    T, V = _scale_triples()
    n_q = np.unique(T[:, 0]).size
    serial = kq_onehot_entries(T, V, "auto", workers=1)
    assert serial[3] == "mixed"  # both kinds of column are exercised
    seen: list[tuple[int, int]] = []
    par = kq_onehot_entries(T, V, "auto", workers=2, progress=lambda d, n: seen.append((d, n)))
    for a, b in zip(serial[:3], par[:3]):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert par[3] == serial[3]
    done = [d for d, _ in seen]
    assert {n for _, n in seen} == {n_q} and done[0] == 0 and done[-1] == n_q and done == sorted(done)
    assert len(done) > 3  # chunked: progress moves several times
    # the same matrix as the dense one-hot solver, which is certified on every constraint
    W = np.zeros((V, V))
    W[par[0], par[1]] = par[2]
    ref = max_margin_kq(T, V)
    assert np.array_equal(W, ref.W) or np.allclose(W, ref.W, atol=1e-12)
    assert ref.max_violation == 0.0


def test_sparse_kq_certificate_with_workers():
    from ttlab.ntp.maxmargin import sparse_max_margin_kq

    T, V = _scale_triples()
    calls: list[tuple[str, int, int]] = []
    a = sparse_max_margin_kq(T, V, workers=2, progress=lambda *c: calls.append(c))
    b = sparse_max_margin_kq(T, V, workers=1)
    assert np.array_equal(a.values, b.values) and np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols)
    assert a.max_violation == 0.0 and a.min_margin >= 1.0 - 1e-12 and a.n_constraints == T.shape[0]
    assert a.min_margin < 1.0 + 1e-9  # the optimum is tight on some constraint
    assert calls[-1][0] == "W*_kq" and calls[-1][1] == calls[-1][2]
    with pytest.raises(TTLabInputError, match="workers"):
        sparse_max_margin_kq(T, V, workers=0)
