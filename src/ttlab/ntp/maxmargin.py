"""Exact max-margin (hard-margin SVM) solutions W*_ov and W*_kq of paper A.

May import: numpy, scipy, :mod:`ttlab.errors`; optionally threadpoolctl and clarabel (reference solver).
No other ttlab module (the trainers and the structured path build on it). Nothing here prints; the
parallel one-hot W*_kq reports progress through a callback.

Both problems have the form ``min ||W||_F  s.t.  a_cᵀ W b_c ≥ 1`` for a list of rank-one constraints
``⟨W, a_c b_cᵀ⟩ ≥ 1``.  With the embedding matrix ``E`` (d × |V|, column x = embedding of token x;
``None`` means one-hot, E = I):

* ``W*_ov`` (|V| × d): ``a = e_{n(x)} − e_i``, ``b = E[:, x]`` for every token x with a collocation
  n(x) and every i ≠ n(x).  One-hot closed form: column x = e_{n(x)} − 1/|V| (0 without collocation).
* ``W*_kq`` (d × d): ``a = E[:, o] − E[:, u]``, ``b = E[:, q]`` for every (query, optimal,
  non-optimal) triple.  One-hot: one independent QP per query column, in closed form when the
  query's constraint graph is complete bipartite (Proposition 2 of the paper).

Exact method ("ldp-nnls")
    Every problem is a least-distance program (LDP) ``min ||x|| s.t. G x ≥ h``, solved exactly by
    Lawson–Hanson's reduction to non-negative least squares: with ``E' = [Gᵀ; hᵀ]`` and
    ``f = (0, …, 0, 1)``, ``u = nnls(E', f)``, ``r = E'u − f`` and ``x = −r[:n] / r[n]``;
    ``ρ = −r[n] = 1 − hᵀu = ||r||²`` equals ``1 / (1 + ||x||²)``, so ``ρ = 0`` means infeasible.
    The dual is ``λ = u / ρ`` (``x = Gᵀλ``).  For general embeddings the LDP is written in the
    row space of the constraints: the Gram matrix ``K = (AAᵀ)∘(BBᵀ)`` is factored by an
    eigendecomposition, ``G' = U √Λ`` gives an equivalent LDP in ``rank(K)`` variables, and ``W``
    is rebuilt as ``Σ λ_c a_c b_cᵀ`` in the original coordinates.  Large constraint sets are
    handled by constraint generation (solve on a working set, add the violated constraints, repeat):
    every sub-problem is solved exactly and the final solution is feasible for all constraints, so it
    is the optimum.  After the NNLS step the dual is polished on its support (the KKT equalities
    ``K_SS λ_S = 1`` are re-solved directly) when that reduces the violation.

Exact method for W*_ov with full-column-rank embeddings ("active-set")
    The ov constraints only couple the rows of ``W`` through the score of the correct class, so the
    equality-constrained problem for a guessed active set reduces to one small positive-definite
    system per class row plus one |V|×|V| system for the correct-class scores.  A primal-dual
    active-set iteration on this exact reduction stops when the KKT conditions hold (λ ≥ 0 on the
    active set, all margins ≥ 1); if it does not settle it falls back to the NNLS-LDP path.
    Classes that are nobody's collocation are interchangeable, so the unique optimum gives them
    equal rows; they are merged into one row of weight |N| (an exact reformulation).

Performance
    One-hot W*_kq costs one small NNLS per non-closed-form query column (|V| = 500 with ~40k
    constraints: ≈ 0.4 s of CPU).  The active-set method handles W*_ov at |V| = d = 500 in a few
    seconds.  The Gram-matrix NNLS-LDP costs O(working set³); it is meant for moderate problems
    (W*_ov with d < |V| up to |V| ≈ 100–150, W*_kq with general embeddings up to a few thousand
    constraints).  SciPy's NNLS can stop at a non-optimal point on degenerate problems (scipy issues
    #25389, PR #26180): its KKT conditions are checked and, if needed, the point is refined by a plain
    Lawson–Hanson loop.  BLAS is limited to one thread (with threadpoolctl, when installed) during the
    many small dense operations, which multi-threaded OpenBLAS slows down badly on a busy machine.

Verification
    Every solution reports the min margin and the max violation ``max(0, 1 − margin)`` computed from
    the returned ``W`` in the original coordinates.  When rounding leaves a tiny violation
    (min margin in ``[1 − 1e-6, 1)``), ``W`` is rescaled by ``1 / min_margin``: the result is
    feasible and its norm exceeds the optimum by at most that factor (≤ 1 + 1e-6, in practice ~1e-13).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.linalg as sla
from scipy.optimize import nnls

from ttlab.errors import TTLabInputError

__all__ = [
    "MaxMarginSolution",
    "max_margin_ov",
    "max_margin_kq",
    "kq_column_closed_form",
    "solve_ldp",
]

_METHODS = ("auto", "ldp", "clarabel")
_RHO_INFEASIBLE = 1e-12  # ρ = 1/(1 + ||x||²): below this the LDP is infeasible (norm > 1e6)
_RESCALE_TOL = 1e-6  # largest violation fixed by rescaling W by 1/min_margin
_CUT_TOL = 1e-10  # constraint generation stops when every violation is below this
_DIRECT_LIMIT = 1200  # general embeddings: up to this many constraints, solve all at once
_CLARABEL_MAX_NNZ = 50_000_000


@dataclass(frozen=True)
class MaxMarginSolution:
    """A max-margin solution with its feasibility certificate (computed from ``W`` itself)."""

    W: np.ndarray  # float64
    norm: float  # Frobenius norm
    min_margin: float  # min over constraints of a_cᵀ W b_c (inf if no constraints)
    max_violation: float  # max(0, 1 − margin) over constraints
    n_constraints: int  # after de-duplication
    method: str  # "closed-form" | "ldp-nnls" | "active-set" | "clarabel" | "mixed"


class _Infeasible(Exception):
    """Internal: an LDP has no feasible point."""


# ============================================================================================ LDP core
def solve_ldp(G: np.ndarray, h: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Least-distance program ``min ||x|| s.t. G x ≥ h`` by Lawson–Hanson's reduction to NNLS.

    Returns ``(x, lam)`` with the dual ``lam ≥ 0`` (``x = Gᵀ lam``).  ``h`` defaults to ones.
    Raises :class:`TTLabInputError` when the constraints are infeasible (numerically: when the
    solution would need ``||x|| > 1e6 · max|h|``).
    """
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 2:
        raise TTLabInputError(f"solve_ldp: G must be a 2-D matrix (got shape {G.shape})")
    h = np.ones(G.shape[0]) if h is None else np.asarray(h, dtype=np.float64).reshape(-1)
    if h.shape[0] != G.shape[0]:
        raise TTLabInputError(f"solve_ldp: h has {h.shape[0]} entries, G has {G.shape[0]} rows")
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(h))):
        raise TTLabInputError("solve_ldp: G and h must be finite (found NaN or inf)")
    scale = float(np.max(np.abs(h), initial=0.0)) or 1.0  # the LDP is homogeneous in h
    try:
        x, lam = _ldp(G, h / scale)
    except _Infeasible:
        raise TTLabInputError("solve_ldp: the constraints G x ≥ h are infeasible") from None
    return x * scale, lam * scale


def _ldp(G: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LDP core: NNLS on ``[Gᵀ; hᵀ]``, then a polish of the dual on its support."""
    m, n = G.shape
    if m == 0:
        return np.zeros(n), np.zeros(0)
    Ep = np.empty((n + 1, m))
    Ep[:n] = G.T
    Ep[n] = h
    u = _nnls(Ep)
    rho = 1.0 - float(h @ u)  # = −r[n] = ||E'u − f||² ≥ 0
    if not rho > _RHO_INFEASIBLE:
        raise _Infeasible
    lam = u / rho
    x = G.T @ lam
    viol = float(np.max(h - G @ x))
    if viol > 1e-15:  # polish: re-solve G_S G_Sᵀ λ_S = h_S on the support S
        S = np.flatnonzero(lam > 0)
        lam_S = _spd_solve(G[S] @ G[S].T, h[S])
        if lam_S is not None:
            x_new = G[S].T @ lam_S
            if float(np.max(h - G @ x_new)) < viol:
                lam = np.zeros(m)
                lam[S] = lam_S
                x = x_new
    return x, lam


def _spd_solve(K: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """Solve K z = rhs for a positive-definite K; None when K is not (numerically) PD or z ≱ 0."""
    if K.shape[0] == 0:
        return None
    try:
        cf = sla.cho_factor(K, check_finite=False)
        z = sla.cho_solve(cf, rhs, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    if not np.all(np.isfinite(z)) or z.min() < 0:
        return None
    return z


def _nnls(Ep: np.ndarray) -> np.ndarray:
    """argmin_{u ≥ 0} ||E'u − f||, f = (0, …, 0, 1): scipy's Lawson–Hanson NNLS, KKT-checked.

    SciPy's NNLS can stop at a non-optimal point when columns are linearly dependent (as in graph
    incidence matrices; scipy issues #25389, PR #26180).  The KKT conditions are therefore checked and,
    if they fail, the point is refined by :func:`_nnls_active_set` (a plain Lawson–Hanson loop).
    """
    f = np.zeros(Ep.shape[0])
    f[-1] = 1.0
    try:
        u, _ = nnls(Ep, f, maxiter=max(50 * sum(Ep.shape), 1000))
    except RuntimeError:  # iteration limit
        u = np.zeros(Ep.shape[1])
    tol = _kkt_tol(Ep)
    if not _nnls_kkt_ok(Ep, f, u, tol):
        u = _nnls_active_set(Ep, f, u, tol)
    return u


def _kkt_tol(A: np.ndarray) -> float:
    """Tolerance on the NNLS gradient w = Aᵀ(b − Ax) (||b − Ax|| ≤ ||b|| = 1)."""
    return 1e-11 * max(1.0, float(np.sqrt(np.einsum("ij,ij->j", A, A).max(initial=0.0))))


def _nnls_kkt_ok(A: np.ndarray, b: np.ndarray, x: np.ndarray, tol: float) -> bool:
    """NNLS optimality: x ≥ 0, w = Aᵀ(b − Ax) ≤ tol everywhere and |w| ≤ tol where x > 0."""
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        return False
    w = A.T @ (b - A @ x)
    return bool(np.all(w <= tol) and np.all(np.abs(w[x > 0]) <= tol))


def _nnls_active_set(A: np.ndarray, b: np.ndarray, x0: np.ndarray, tol: float) -> np.ndarray:
    """Lawson–Hanson NNLS (numpy), warm-started from ``x0``.  A column whose least-squares
    coefficient comes out non-positive right after it enters is rejected until the point moves."""
    n = A.shape[1]
    x = np.where(np.isfinite(x0) & (x0 > 0), x0, 0.0)
    P = x > 0
    x = _nnls_inner(A, b, P, x)
    rejected = np.zeros(n, dtype=bool)
    for _ in range(20 * n + 100):
        w = A.T @ (b - A @ x)
        cand = np.where(P | rejected, -np.inf, w)
        j = int(np.argmax(cand))
        if not cand[j] > tol:
            return x
        P[j] = True
        idx = np.flatnonzero(P)
        z = np.linalg.lstsq(A[:, idx], b, rcond=None)[0]
        if z[np.searchsorted(idx, j)] <= 0:  # dependent or useless column: reject it for now
            P[j] = False
            rejected[j] = True
            continue
        x = _nnls_inner(A, b, P, x, z)
        rejected[:] = False
    raise RuntimeError("max_margin: NNLS refinement did not converge")  # pragma: no cover


def _nnls_inner(A: np.ndarray, b: np.ndarray, P: np.ndarray, x: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
    """Lawson–Hanson inner loop: move x towards the least-squares solution on P, dropping
    coordinates that hit zero, until the least-squares solution is positive."""
    x = x.copy()
    for _ in range(A.shape[1] + 1):
        idx = np.flatnonzero(P)
        if idx.size == 0:
            return np.zeros_like(x)
        if z is None:
            z = np.linalg.lstsq(A[:, idx], b, rcond=None)[0]
        if np.all(z > 0):
            x[:] = 0.0
            x[idx] = z
            return x
        xi = x[idx]
        neg = z <= 0
        alpha = float(np.min(xi[neg] / (xi[neg] - z[neg])))
        x[idx] = xi + alpha * (z - xi)
        drop = idx[(x[idx] <= 1e-300) | (neg & (x[idx] <= np.abs(xi) * 1e-14))]
        drop = np.union1d(drop, idx[np.flatnonzero(neg)[np.argmin(xi[neg] / (xi[neg] - z[neg]))]])
        P[drop] = False
        x[~P] = 0.0
        z = None
    return x


def _polish_dual(lam: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Re-solve the KKT equalities ``K_SS λ_S = 1`` on the support S of ``lam`` (K = Gram matrix of
    the constraints, margins = K λ); keep whichever dual has the smaller violation."""
    viol = float(np.max(1.0 - K @ lam))
    if viol <= 1e-15:
        return lam
    S = np.flatnonzero(lam > 0)
    lam_S = _spd_solve(K[np.ix_(S, S)], np.ones(S.size))
    if lam_S is None:
        return lam
    new = np.zeros_like(lam)
    new[S] = lam_S
    return new if float(np.max(1.0 - K @ new)) < viol else lam


def _gram_ldp(K: np.ndarray) -> np.ndarray:
    """Dual of ``min ||W|| s.t. ⟨W, A_c⟩ ≥ 1`` given only the Gram matrix ``K_cc' = ⟨A_c, A_c'⟩``.

    The eigendecomposition ``K = U Λ Uᵀ`` gives ``G' = U_r √Λ_r`` (rank r), whose rows have the same
    inner products as the constraints: the LDP in r variables has the same dual.
    """
    m = K.shape[0]
    if m == 0:
        return np.zeros(0)
    # scale the constraints to unit size (W scales inversely), so that the infeasibility threshold
    # on ρ means ||W|| > 1e6 relative to the size of the constraints
    kappa = float(np.max(np.diag(K)))
    if not kappa > 0:
        raise _Infeasible  # every constraint is ⟨W, 0⟩ ≥ 1
    return _gram_ldp_unit(K / kappa) / kappa


def _gram_ldp_unit(K: np.ndarray) -> np.ndarray:
    m = K.shape[0]
    evals, evecs = np.linalg.eigh(K)
    keep = evals > max(evals[-1], 0.0) * m * 1e-14
    Gp = evecs[:, keep] * np.sqrt(evals[keep])
    Ep = np.empty((Gp.shape[1] + 1, m))
    Ep[:-1] = Gp.T
    Ep[-1] = 1.0
    u = _nnls(Ep)
    rho = 1.0 - float(u.sum())
    if not rho > _RHO_INFEASIBLE:
        raise _Infeasible
    return _polish_dual(u / rho, K)


# ====================================================================================== verification
def _finish(
    W: np.ndarray, margins_fn: Callable[[np.ndarray], np.ndarray], n_constraints: int, method: str
) -> MaxMarginSolution:
    """Compute margins from W in the original coordinates, rescale tiny violations, package."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    if n_constraints == 0:
        return MaxMarginSolution(W, float(np.linalg.norm(W)), float("inf"), 0.0, 0, method)
    marg = margins_fn(W)
    mmin = float(marg.min())
    if 1.0 - _RESCALE_TOL <= mmin < 1.0:
        W = W / mmin
        marg = margins_fn(W)
        mmin = float(marg.min())
    return MaxMarginSolution(W, float(np.linalg.norm(W)), mmin, max(0.0, 1.0 - mmin), int(n_constraints), method)


# ====================================================================================== validation
def _check_method(method: str) -> None:
    if method not in _METHODS:
        raise TTLabInputError(f"unknown method {method!r}: choose one of {', '.join(map(repr, _METHODS))}")


def _int_array(a, name: str) -> np.ndarray:
    try:
        arr = np.asarray(a)
    except ValueError as exc:  # ragged nested lists
        raise TTLabInputError(f"{name} must be a rectangular array of token indices ({exc})") from None
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype == bool:
        raise TTLabInputError(f"{name} must hold integer token indices (got booleans)")
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64, copy=False)
    if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        return arr.astype(np.int64)
    raise TTLabInputError(f"{name} must hold integer token indices (got dtype {arr.dtype})")


def _check_embeddings(embeddings, vocab_size: int) -> np.ndarray | None:
    if embeddings is None:
        return None
    E = np.asarray(embeddings)
    if E.ndim != 2:
        raise TTLabInputError(f"embeddings must be a 2-D array of shape (d, |V|) (got shape {E.shape})")
    if not (np.issubdtype(E.dtype, np.floating) or np.issubdtype(E.dtype, np.integer)):
        raise TTLabInputError(f"embeddings must be real numbers (got dtype {E.dtype})")
    E = E.astype(np.float64)
    if E.shape[1] != vocab_size:
        raise TTLabInputError(
            f"embeddings have {E.shape[1]} columns but the vocabulary has {vocab_size} tokens; "
            "pass E with shape (d, |V|), column x = embedding of token x"
        )
    if E.shape[0] < 1:
        raise TTLabInputError("embeddings must have dimension d ≥ 1")
    if not np.all(np.isfinite(E)):
        bad = np.argwhere(~np.isfinite(E))[0]
        raise TTLabInputError(f"embeddings contain NaN or inf (first at row {bad[0]}, token {bad[1]})")
    return E


def _orthonormal(E: np.ndarray) -> bool:
    K = E.T @ E
    return E.shape[0] >= E.shape[1] and bool(np.max(np.abs(K - np.eye(K.shape[0]))) <= 1e-12)


# ============================================================================================== W*_ov
def max_margin_ov(
    next_token: np.ndarray, embeddings: np.ndarray | None = None, method: str = "auto"
) -> MaxMarginSolution:
    """W*_ov = argmin ||W||_F s.t. (e_{n(x)} − e_i)ᵀ W E[:, x] ≥ 1 for all x with a collocation, i ≠ n(x).

    ``next_token[x]`` is the index of n(x), or −1 when x has no collocation; ``embeddings`` is
    E (d × |V|) or ``None`` for one-hot.  ``method``: ``"auto"`` (closed form for one-hot/orthonormal
    embeddings, else the exact active-set or NNLS-LDP solver), ``"ldp"`` (always NNLS-LDP) or
    ``"clarabel"`` (reference interior-point solver).  Returns a |V| × d matrix.
    """
    _check_method(method)
    nt = _int_array(next_token, "next_token")
    if nt.ndim != 1:
        raise TTLabInputError(f"next_token must be a 1-D array of length |V| (got shape {nt.shape})")
    V = nt.shape[0]
    if V == 0:
        raise TTLabInputError("next_token is empty: the vocabulary needs at least one token")
    bad = np.flatnonzero((nt < -1) | (nt >= V))
    if bad.size:
        raise TTLabInputError(
            f"next_token[{bad[0]}] = {nt[bad[0]]} is out of range: use a token index in [0, {V - 1}] "
            "or −1 for no collocation"
        )
    E = _check_embeddings(embeddings, V)
    toks = np.flatnonzero(nt >= 0)
    lab = nt[toks]
    n_cons = toks.size * (V - 1)
    d = V if E is None else E.shape[0]

    if E is not None:
        zero = toks[np.linalg.norm(E[:, toks], axis=0) == 0]
        if zero.size and V > 1:
            raise TTLabInputError(
                f"infeasible W*_ov: token {zero[0]} has a collocation but a zero embedding, "
                "so no W separates its next token"
            )

    def margins(W: np.ndarray) -> np.ndarray:
        M = W[:, toks] if E is None else W @ E[:, toks]  # V × n_col logits
        diff = M[lab, np.arange(toks.size)][None, :] - M
        diff[lab, np.arange(toks.size)] = np.inf
        return diff.ravel()

    if n_cons == 0:
        return _finish(np.zeros((V, d)), margins, 0, "closed-form" if method == "auto" else _label(method))

    if method == "clarabel":
        return _finish(_ov_clarabel(nt, toks, E), margins, n_cons, "clarabel")

    if E is None or (method == "auto" and _orthonormal(E)):
        if method == "auto":
            C = np.zeros((V, V))
            C[:, toks] = -1.0 / V
            C[lab, toks] += 1.0
            tag = "closed-form"
        else:
            with _blas_single_thread(V > 64):
                C = _ov_onehot_ldp(V, toks, lab)
            tag = "ldp-nnls"
        W = C if E is None else C @ E.T  # orthonormal E: W = W₁ Eᵀ is the isometric image
        return _finish(W, margins, n_cons, tag)

    with _blas_single_thread(V > 8):
        W = None
        tag = "ldp-nnls"
        if method == "auto":
            W = _ov_active_set(E, toks, lab, V)
            tag = "active-set"
        if W is None:
            W = _ov_general_ldp(E, toks, lab, V)
            tag = "ldp-nnls"
        return _finish(W, margins, n_cons, tag)


def _label(method: str) -> str:
    return {"ldp": "ldp-nnls", "clarabel": "clarabel"}.get(method, method)


def _ov_onehot_ldp(V: int, toks: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """One-hot W*_ov by NNLS-LDP.  Every column solves the same LDP up to relabelling the classes
    (min ||w|| s.t. w_{n} − w_i ≥ 1), so it is solved once (for n = class 0) and placed."""
    G = np.zeros((V - 1, V))
    G[:, 0] = 1.0
    G[np.arange(V - 1), np.arange(1, V)] = -1.0
    w, _ = _ldp(G, np.ones(V - 1))
    C = np.zeros((V, V))
    for x, n in zip(toks, lab):
        others = np.concatenate([np.arange(n), np.arange(n + 1, V)])
        C[n, x] = w[0]
        C[others, x] = w[1:]
    return C


def _ov_rows(V: int, lab: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Class rows of the reduced ov problem: target classes (someone's collocation) + one merged row.

    Returns (classes, row_of_class, w): ``classes`` the target classes (sorted), ``row_of_class[i]``
    the reduced row of class i (the merged row ``len(classes)`` for non-target classes) and the number
    w of merged classes.
    """
    classes = np.unique(lab)
    row_of_class = np.full(V, classes.size, dtype=np.int64)
    row_of_class[classes] = np.arange(classes.size)
    return classes, row_of_class, V - classes.size


def _ov_expand(C_rows: np.ndarray, classes: np.ndarray, w: int, V: int, Et: np.ndarray) -> np.ndarray:
    """Reduced coefficient rows (rows × n_col, merged row already divided by its weight) → W (V × d)."""
    Y = C_rows @ Et.T
    W = np.empty((V, Et.shape[0]))
    if w > 0:
        W[:] = Y[classes.size]
    W[classes] = Y[: classes.size]
    return W


def _ov_active_set(E: np.ndarray, toks: np.ndarray, lab: np.ndarray, V: int, max_iter: int = 100) -> np.ndarray | None:
    """Primal-dual active-set method on the exact row reduction of W*_ov (needs E[:, toks] of full
    column rank).  Returns W, or None when the method does not apply or does not settle.

    For an active set A (and the label constraints), the KKT equalities read, per reduced class row i
    with support S_i (its active tokens and the tokens it is the label of):
    ``C[i, S_i] = (s[S_i] − t_i) K[S_i, S_i]⁻¹`` with ``t = 0`` on labels, 1 elsewhere, where
    ``y_i = Σ_x C[i, x] E[:, x]`` and ``s_x`` is the score of x's correct class; every column of
    ``diag(weight) C`` sums to zero, which is one positive-definite |V|×|V| system for s.
    """
    Et = E[:, toks]
    n = toks.size
    Kt = Et.T @ Et
    ev = np.linalg.eigvalsh(Kt)
    if ev[0] <= 1e-10 * ev[-1]:
        return None  # rank-deficient embeddings: the row systems would be singular
    classes, row_of_class, w = _ov_rows(V, lab)
    n_rows = classes.size + (1 if w > 0 else 0)
    weight = np.ones(n_rows)
    if w > 0:
        weight[-1] = float(w)
    own = row_of_class[lab]  # reduced row of each token's correct class
    cols = np.arange(n)
    valid = np.ones((n_rows, n), dtype=bool)
    valid[own, cols] = False
    is_label = ~valid
    # start: under the one-hot-like guess (column = e_n − 1/|V|) take the 10 lowest-margin competitors
    C = -np.ones((n_rows, n)) / V
    C[own, cols] += 1.0
    marg = _ov_reduced_margins(C, Kt, own)
    k0 = min(10, n_rows - 1)
    order = np.argsort(np.where(valid, marg, np.inf), axis=0)[:k0]
    act = np.zeros_like(valid)
    act[order, cols[None, :]] = True
    act &= valid
    seen: set[bytes] = set()
    cache: dict[int, tuple[bytes, np.ndarray]] = {}
    tol = 1e-12
    for _ in range(max_iter):
        key = np.packbits(act).tobytes()
        if key in seen:
            return None  # cycling
        seen.add(key)
        H = np.zeros((n, n))
        g = np.zeros(n)
        rows = []
        for i in range(n_rows):
            S = np.flatnonzero(act[i] | is_label[i])
            if S.size == 0:
                rows.append(None)
                continue
            t = np.where(is_label[i, S], 0.0, 1.0)
            sk = S.tobytes()
            if i in cache and cache[i][0] == sk:
                R = cache[i][1]
            else:
                try:
                    R = np.linalg.inv(Kt[np.ix_(S, S)])
                except np.linalg.LinAlgError:
                    return None
                cache[i] = (sk, R)
            H[np.ix_(S, S)] += weight[i] * R
            g[S] += weight[i] * (R @ t)
            rows.append((S, R, t))
        try:
            s = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            return None
        C = np.zeros((n_rows, n))
        for i, rw in enumerate(rows):
            if rw is not None:
                S, R, t = rw
                C[i, S] = R @ (s[S] - t)
        marg = _ov_reduced_margins(C, Kt, own)
        lam = -C * weight[:, None]
        lam_scale = max(float(np.max(np.abs(lam))), 1.0)
        dual_ok = not np.any(act & (lam < -tol * lam_scale))
        primal_ok = not np.any(valid & ~act & (marg < 1.0 - tol))
        if dual_ok and primal_ok:
            W = _ov_expand(C, classes, w, V, Et)
            M = W @ Et  # check in the original coordinates before trusting the reduction
            diff = M[lab, cols][None, :] - M
            diff[lab, cols] = np.inf
            return W if float(diff.min()) >= 1.0 - 1e-9 else None
        act = valid & np.where(act, lam > 0, marg < 1.0)
    return None


def _blas_single_thread(enable: bool):
    """Limit BLAS to one thread (threadpoolctl, if installed) around the dense linear algebra.

    The solvers issue many small/medium BLAS/LAPACK calls; on a busy machine multi-threaded OpenBLAS
    makes them 10–100× slower (measured: a 260×260 ``eigh`` took 1 s instead of 10 ms)."""
    if enable:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - optional
            pass
        else:
            return threadpool_limits(limits=1, user_api="blas")
    return contextlib.nullcontext()


def _ov_reduced_margins(C: np.ndarray, Kt: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Margins (rows × tokens) of the reduced ov problem with row coefficients C (Y = C Etᵀ)."""
    M = C @ Kt
    cols = np.arange(M.shape[1])
    return M[own, cols][None, :] - M


def _ov_general_ldp(E: np.ndarray, toks: np.ndarray, lab: np.ndarray, V: int) -> np.ndarray:
    """W*_ov for general embeddings by NNLS-LDP with constraint generation on the reduced rows."""
    Et = E[:, toks]
    n = toks.size
    classes, row_of_class, w = _ov_rows(V, lab)
    n_rows = classes.size + (1 if w > 0 else 0)
    own = row_of_class[lab]
    # triples (s = token position, a = own row, b = competitor row)
    s_idx = np.repeat(np.arange(n), n_rows)
    b_idx = np.tile(np.arange(n_rows), n)
    keep = b_idx != own[s_idx]
    tri = np.stack([s_idx[keep], own[s_idx[keep]], b_idx[keep]], axis=1)
    kp = np.ones(n_rows)
    if w > 0:
        kp[-1] = 1.0 / w  # merged row: atom e_N/√w, so that ||W||² counts it w times
    Kp = np.diag(kp)
    Kq = Et.T @ Et
    try:
        C = _solve_triples(tri, Kp, Kq, n_rows, n)
    except _Infeasible:
        raise TTLabInputError(
            "infeasible W*_ov: no matrix makes every token's next token win by a margin with these "
            "embeddings (or only with norm > 1e6); e.g. two tokens with equal (or positively "
            "proportional) embeddings but different collocations cannot be separated"
        ) from None
    return _ov_expand(kp[:, None] * C, classes, w, V, Et)


# ============================================================================== general rank-one core
def _triple_gram(tri: np.ndarray, Kp: np.ndarray, Kq: np.ndarray) -> np.ndarray:
    """Gram matrix of constraints (s, a, b) ↦ (P_a − P_b) Q_sᵀ: (AAᵀ) ∘ (BBᵀ)."""
    s, a, b = tri[:, 0], tri[:, 1], tri[:, 2]
    KA = Kp[np.ix_(a, a)] - Kp[np.ix_(a, b)] - Kp[np.ix_(b, a)] + Kp[np.ix_(b, b)]
    return KA * Kq[np.ix_(s, s)]


def _triple_coef(tri: np.ndarray, lam: np.ndarray, p: int, q: int) -> np.ndarray:
    """Coefficient matrix C (p × q) with W = P C Qᵀ = Σ λ_c (P_a − P_b) Q_sᵀ."""
    C = np.zeros((p, q))
    np.add.at(C, (tri[:, 1], tri[:, 0]), lam)
    np.add.at(C, (tri[:, 2], tri[:, 0]), -lam)
    return C


def _triple_margins(tri: np.ndarray, C: np.ndarray, Kp: np.ndarray, Kq: np.ndarray) -> np.ndarray:
    M = Kp @ C @ Kq
    return M[tri[:, 1], tri[:, 0]] - M[tri[:, 2], tri[:, 0]]


def _solve_triples(tri: np.ndarray, Kp: np.ndarray, Kq: np.ndarray, p: int, q: int) -> np.ndarray:
    """Exact dual of min ||W|| s.t. (P_a − P_b)ᵀ W Q_s ≥ 1 over triples (s, a, b); returns C (p × q).

    Constraint generation around the Gram-matrix LDP (:func:`_gram_ldp`): solve on a working set,
    drop its constraints with zero multiplier (this does not change the working-set optimum), add the
    most violated constraints, repeat.  The working-set optimum strictly increases at every round, so
    no working set repeats and the loop ends at a point feasible for all constraints: the optimum."""
    m = tri.shape[0]
    if m <= _DIRECT_LIMIT:
        lam = _gram_ldp(_triple_gram(tri, Kp, Kq))
        return _triple_coef(tri, lam, p, q)
    # initial working set: under uniform λ, the 4 lowest-margin constraints of every s
    marg = _triple_margins(tri, _triple_coef(tri, np.ones(m), p, q), Kp, Kq)
    work = _worst_per_group(tri[:, 0], marg, np.ones(m, dtype=bool), 4, _DIRECT_LIMIT // 2)
    in_work = np.zeros(m, dtype=bool)
    in_work[work] = True
    for _ in range(10_000):
        W_idx = np.flatnonzero(in_work)
        lam = _gram_ldp(_triple_gram(tri[W_idx], Kp, Kq))
        C = _triple_coef(tri[W_idx], lam, p, q)
        marg = _triple_margins(tri, C, Kp, Kq)
        viol = (1.0 - marg) > _CUT_TOL
        viol &= ~in_work
        if not viol.any():
            return C
        add = _worst_per_group(tri[:, 0], marg, viol, 4, max(200, W_idx.size // 2))
        in_work[W_idx[lam <= 0]] = False
        in_work[add] = True
    raise RuntimeError("max_margin: constraint generation did not terminate")  # pragma: no cover


def _worst_per_group(groups: np.ndarray, marg: np.ndarray, mask: np.ndarray, k: int, cap: int) -> np.ndarray:
    """Indices (among ``mask``) of the k smallest margins in every group, at most ``cap`` overall."""
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return idx
    order = idx[np.lexsort((marg[idx], groups[idx]))]
    g = groups[order]
    start = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
    rank = np.arange(order.size) - np.repeat(start, np.diff(np.r_[start, order.size]))
    chosen = order[rank < k]
    if chosen.size > cap:
        chosen = chosen[np.argsort(marg[chosen], kind="stable")[:cap]]
    return chosen


# ============================================================================================== W*_kq
def kq_column_closed_form(pairs: np.ndarray, vocab_size: int) -> np.ndarray | None:
    """Proposition 2: the W*_kq column of one query from its (optimal, non-optimal) pairs.

    When the pairs form a complete bipartite graph (k optimal × m non-optimal tokens, disjoint), the
    column is m/(k+m) on optimal tokens, −k/(k+m) on non-optimal ones and 0 elsewhere; otherwise
    returns ``None``.  Duplicate pairs are ignored; no pairs give the zero column.
    """
    V = _check_vocab_size(vocab_size)
    P = _int_array(pairs, "pairs")
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
    if isinstance(vocab_size, (bool, np.bool_)) or not isinstance(vocab_size, (int, np.integer)):
        raise TTLabInputError(f"vocab_size must be a positive integer (got {vocab_size!r})")
    if vocab_size < 1:
        raise TTLabInputError(f"vocab_size must be a positive integer (got {vocab_size})")
    return int(vocab_size)


def _check_range(arr: np.ndarray, V: int, name: str) -> None:
    bad = np.argwhere((arr < 0) | (arr >= V))
    if bad.size:
        r = bad[0][0]
        raise TTLabInputError(
            f"{name} row {r} = {tuple(int(v) for v in arr[r])} has a token index outside [0, {V - 1}]"
        )


def max_margin_kq(
    triples: np.ndarray, vocab_size: int, embeddings: np.ndarray | None = None, method: str = "auto"
) -> MaxMarginSolution:
    """W*_kq = argmin ||W||_F s.t. (E[:, o] − E[:, u])ᵀ W E[:, q] ≥ 1 for every triple (q, o, u).

    ``triples`` (m × 3) lists (query, optimal, non-optimal) token indices (duplicates are removed;
    m = 0 gives W = 0).  ``embeddings`` is E (d × |V|) or ``None`` for one-hot.  ``method``:
    ``"auto"`` (Proposition 2 where the query's graph is complete bipartite, else NNLS-LDP),
    ``"ldp"`` (always NNLS-LDP) or ``"clarabel"`` (reference).  Returns a d × d matrix.
    """
    _check_method(method)
    V = _check_vocab_size(vocab_size)
    T = _int_array(triples, "triples")
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
    E = _check_embeddings(embeddings, V)
    T = _unique_triples(T, V)  # sorted by query, then optimal, then non-optimal
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
        return _finish(np.zeros((d, d)), margins, 0, "closed-form" if method == "auto" else _label(method))
    if method == "clarabel":
        return _finish(_kq_clarabel(T, V, E), margins, m, "clarabel")
    if E is None or (method == "auto" and _orthonormal(E)):
        W1, tag = _kq_onehot(T, V, method)
        W = W1 if E is None else E @ W1 @ E.T  # orthonormal E: isometric image of the one-hot solution
        return _finish(W, margins, m, tag)
    with _blas_single_thread(m > 16):
        return _finish(_kq_general(T, E), margins, m, "ldp-nnls")


def _unique_triples(T: np.ndarray, V: int) -> np.ndarray:
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
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise TTLabInputError(f"workers must be a positive integer (got {workers!r})")
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
    with _blas_single_thread(True):
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
            x, _ = _ldp(G, np.ones(mq))
        except _Infeasible:
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
        C = _solve_triples(tri, K, K, used.size, used.size)
    except _Infeasible:
        raise TTLabInputError(
            "infeasible W*_kq: no matrix satisfies all constraints with these embeddings "
            "(or only with norm > 1e6); check for cyclic orders or linearly dependent embeddings"
        ) from None
    return Eu @ C @ Eu.T


# ========================================================================================= clarabel
def _clarabel_solve(G, n: int):
    """min ½||x||² s.t. G x ≥ 1 with Clarabel (P = I, A = −G, b = −1, nonnegative cone)."""
    import clarabel
    import scipy.sparse as sp

    m = G.shape[0]
    P = sp.identity(n, format="csc")
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = 1e-10
    settings.tol_gap_rel = 1e-10
    settings.tol_feas = 1e-10
    settings.max_iter = 500
    solver = clarabel.DefaultSolver(P, np.zeros(n), (-G).tocsc(), -np.ones(m), [clarabel.NonnegativeConeT(m)], settings)
    sol = solver.solve()
    status = str(sol.status)
    if "Infeasible" in status:
        raise TTLabInputError(f"infeasible max-margin problem (Clarabel status {status})")
    if status not in ("Solved", "AlmostSolved"):
        raise RuntimeError(f"Clarabel did not solve the max-margin QP (status {status})")
    return np.asarray(sol.x)


def _ov_clarabel(nt: np.ndarray, toks: np.ndarray, E: np.ndarray | None) -> np.ndarray:
    import scipy.sparse as sp

    V = nt.shape[0]
    d = V if E is None else E.shape[0]
    xs = np.repeat(toks, V)
    ii = np.tile(np.arange(V), toks.size)
    keep = ii != nt[xs]
    xs, ii = xs[keep], ii[keep]
    ns = nt[xs]
    m = xs.size
    if E is None:  # vec(W) row-major: W[i, x] ↦ i·V + x
        rows = np.repeat(np.arange(m), 2)
        cols = np.stack([ns * V + xs, ii * V + xs], axis=1).ravel()
        vals = np.tile([1.0, -1.0], m)
    else:
        if 2 * m * d > _CLARABEL_MAX_NNZ:
            raise TTLabInputError(f"W*_ov with {m} constraints is too large for method='clarabel'; use 'auto'")
        rows = np.repeat(np.arange(m), 2 * d)
        k = np.arange(d)
        cols = np.concatenate([ns[:, None] * d + k, ii[:, None] * d + k], axis=1).ravel()
        vals = np.concatenate([E[:, xs].T, -E[:, xs].T], axis=1).ravel()
    G = sp.csc_matrix((vals, (rows, cols)), shape=(m, V * d))
    return _clarabel_solve(G, V * d).reshape(V, d)


def _kq_clarabel(T: np.ndarray, V: int, E: np.ndarray | None) -> np.ndarray:
    import scipy.sparse as sp

    m = T.shape[0]
    q, o, u = T[:, 0], T[:, 1], T[:, 2]
    if E is None:  # W[i, q] ↦ i·V + q
        rows = np.repeat(np.arange(m), 2)
        cols = np.stack([o * V + q, u * V + q], axis=1).ravel()
        vals = np.tile([1.0, -1.0], m)
        G = sp.csc_matrix((vals, (rows, cols)), shape=(m, V * V))
        return _clarabel_solve(G, V * V).reshape(V, V)
    d = E.shape[0]
    if m * d * d > _CLARABEL_MAX_NNZ:
        raise TTLabInputError(f"W*_kq with {m} constraints and d = {d} is too large for method='clarabel'; use 'auto'")
    A = E[:, o] - E[:, u]  # d × m
    B = E[:, q]
    dense = (A.T[:, :, None] * B.T[:, None, :]).reshape(m, d * d)  # row c = vec(a_c b_cᵀ)
    G = sp.csc_matrix(dense)
    return _clarabel_solve(G, d * d).reshape(d, d)
