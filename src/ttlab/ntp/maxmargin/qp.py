"""The QP kernel of the max-margin problems: ``min ||W||_F s.t. ⟨W, a_c b_cᵀ⟩ ≥ 1`` solved exactly.

The least-distance program and its NNLS reduction, the Gram-matrix LDP with constraint generation for
rank-one constraints over triples (s, a, b), the certificate of a solution, input validation shared by
W*_ov and W*_kq, and the reference interior-point solver (Clarabel).

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

Verification
    Every solution reports the min margin and the max violation ``max(0, 1 − margin)`` computed from
    the returned ``W`` in the original coordinates.  When rounding leaves a tiny violation
    (min margin in ``[1 − 1e-6, 1)``), ``W`` is rescaled by ``1 / min_margin``: the result is
    feasible and its norm exceeds the optimum by at most that factor (≤ 1 + 1e-6, in practice ~1e-13).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.linalg as sla
from scipy.optimize import nnls

from ttlab.errors import TTLabInputError

_METHODS = ("auto", "ldp", "clarabel")
_RHO_INFEASIBLE = 1e-12  # ρ = 1/(1 + ||x||²): below this the LDP is infeasible (norm > 1e6)
RESCALE_TOL = 1e-6  # largest violation fixed by rescaling W by 1/min_margin
_CUT_TOL = 1e-10  # constraint generation stops when every violation is below this
_DIRECT_LIMIT = 1200  # general embeddings: up to this many constraints, solve all at once
CLARABEL_MAX_NNZ = 50_000_000


@dataclass(frozen=True)
class MaxMarginSolution:
    """A max-margin solution with its feasibility certificate (computed from ``W`` itself)."""

    W: np.ndarray  # float64
    norm: float  # Frobenius norm
    min_margin: float  # min over constraints of a_cᵀ W b_c (inf if no constraints)
    max_violation: float  # max(0, 1 − margin) over constraints
    n_constraints: int  # after de-duplication
    method: str  # "closed-form" | "ldp-nnls" | "active-set" | "clarabel" | "mixed"


def solution_info(sol: MaxMarginSolution) -> dict:
    """JSON summary of a max-margin solution (without the matrix)."""
    return {
        "norm": sol.norm,
        "min_margin": sol.min_margin,
        "max_violation": sol.max_violation,
        "n_constraints": sol.n_constraints,
        "method": sol.method,
    }


def certificate_text(name: str, info: dict) -> str:
    """The feasibility certificate of a max-margin solution (a :func:`solution_info` dict) in one line."""
    return (f"{name} certificate: min margin {info['min_margin']:.12g}, max violation {info['max_violation']:.3g} "
            f"over {info['n_constraints']:,} constraints ({info['method']}; feasible when the violation is 0)")


class LDPInfeasible(Exception):
    """An LDP has no feasible point (raised by :func:`ldp`; the solvers turn it into a :class:`TTLabInputError`)."""


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
        x, lam = ldp(G, h / scale)
    except LDPInfeasible:
        raise TTLabInputError("solve_ldp: the constraints G x ≥ h are infeasible") from None
    return x * scale, lam * scale


def ldp(G: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LDP core (inputs unchecked, raises :class:`LDPInfeasible`): NNLS on ``[Gᵀ; hᵀ]``, then a polish of the
    dual on its support."""
    m, n = G.shape
    if m == 0:
        return np.zeros(n), np.zeros(0)
    Ep = np.empty((n + 1, m))
    Ep[:n] = G.T
    Ep[n] = h
    u = _nnls(Ep)
    rho = 1.0 - float(h @ u)  # = −r[n] = ||E'u − f||² ≥ 0
    if not rho > _RHO_INFEASIBLE:
        raise LDPInfeasible
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
        raise LDPInfeasible  # every constraint is ⟨W, 0⟩ ≥ 1
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
        raise LDPInfeasible
    return _polish_dual(u / rho, K)


# ====================================================================================== verification
def finish_solution(
    W: np.ndarray, margins_fn: Callable[[np.ndarray], np.ndarray], n_constraints: int, method: str
) -> MaxMarginSolution:
    """Compute margins from W in the original coordinates, rescale tiny violations, package."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    if n_constraints == 0:
        return MaxMarginSolution(W, float(np.linalg.norm(W)), float("inf"), 0.0, 0, method)
    marg = margins_fn(W)
    mmin = float(marg.min())
    if 1.0 - RESCALE_TOL <= mmin < 1.0:
        W = W / mmin
        marg = margins_fn(W)
        mmin = float(marg.min())
    return MaxMarginSolution(W, float(np.linalg.norm(W)), mmin, max(0.0, 1.0 - mmin), int(n_constraints), method)


def zero_solution(shape: tuple[int, int], margins_fn: Callable[[np.ndarray], np.ndarray], method: str) -> MaxMarginSolution:
    """The solution of a problem without constraints: W = 0 of ``shape``, tagged "closed-form" when ``method`` is
    "auto", else as asked."""
    return finish_solution(np.zeros(shape), margins_fn, 0, "closed-form" if method == "auto" else method_label(method))


# ====================================================================================== validation
def check_method(method: str) -> None:
    """Refuse a ``method`` other than "auto", "ldp" and "clarabel"."""
    if method not in _METHODS:
        raise TTLabInputError(f"unknown method {method!r}: choose one of {', '.join(map(repr, _METHODS))}")


def index_array(a: object, name: str) -> np.ndarray:
    """``a`` as an int64 array of token indices (integer-valued floats accepted), or a clear error naming ``name``."""
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


def check_embeddings(embeddings: np.ndarray | None, vocab_size: int) -> np.ndarray | None:
    """E (d × |V|) as finite float64, or None for one-hot; a clear error for a wrong shape or value."""
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


def is_orthonormal(E: np.ndarray) -> bool:
    """Whether the columns of E are orthonormal (to 1e-12), where the one-hot solutions carry over."""
    K = E.T @ E
    return E.shape[0] >= E.shape[1] and bool(np.max(np.abs(K - np.eye(K.shape[0]))) <= 1e-12)


def method_label(method: str) -> str:
    """The ``method`` tag of a solution asked for with ``method`` ("ldp" → "ldp-nnls")."""
    return {"ldp": "ldp-nnls", "clarabel": "clarabel"}.get(method, method)


def blas_single_thread(enable: bool) -> contextlib.AbstractContextManager:
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


def solve_triples(tri: np.ndarray, Kp: np.ndarray, Kq: np.ndarray, p: int, q: int) -> np.ndarray:
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


# ========================================================================================= clarabel
def clarabel_solve(G, n: int) -> np.ndarray:
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
