"""W*_ov = argmin ||W||_F s.t. (e_{n(x)} − e_i)ᵀ W E[:, x] ≥ 1 (paper A's stage-1 max-margin problem).

One-hot (or orthonormal) embeddings: the closed form, column x = e_{n(x)} − 1/|V| (0 without collocation).

Exact method for W*_ov with full-column-rank embeddings ("active-set")
    The ov constraints only couple the rows of ``W`` through the score of the correct class, so the
    equality-constrained problem for a guessed active set reduces to one small positive-definite
    system per class row plus one |V|×|V| system for the correct-class scores.  A primal-dual
    active-set iteration on this exact reduction stops when the KKT conditions hold (λ ≥ 0 on the
    active set, all margins ≥ 1); if it does not settle it falls back to the NNLS-LDP path.
    Classes that are nobody's collocation are interchangeable, so the unique optimum gives them
    equal rows; they are merged into one row of weight |N| (an exact reformulation).
"""

from __future__ import annotations

import numpy as np

import ttlab.ntp.maxmargin.qp as qp
from ttlab.errors import TTLabInputError


# ============================================================================================== W*_ov
def max_margin_ov(
    next_token: np.ndarray, embeddings: np.ndarray | None = None, method: str = "auto"
) -> qp.MaxMarginSolution:
    """W*_ov = argmin ||W||_F s.t. (e_{n(x)} − e_i)ᵀ W E[:, x] ≥ 1 for all x with a collocation, i ≠ n(x).

    ``next_token[x]`` is the index of n(x), or −1 when x has no collocation; ``embeddings`` is
    E (d × |V|) or ``None`` for one-hot.  ``method``: ``"auto"`` (closed form for one-hot/orthonormal
    embeddings, else the exact active-set or NNLS-LDP solver), ``"ldp"`` (always NNLS-LDP) or
    ``"clarabel"`` (reference interior-point solver).  Returns a |V| × d matrix.
    """
    qp.check_method(method)
    nt = qp.index_array(next_token, "next_token")
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
    E = qp.check_embeddings(embeddings, V)
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
        return qp.zero_solution((V, d), margins, method)

    if method == "clarabel":
        return qp.finish_solution(_ov_clarabel(nt, toks, E), margins, n_cons, "clarabel")

    if E is None or (method == "auto" and qp.is_orthonormal(E)):
        if method == "auto":
            C = np.zeros((V, V))
            C[:, toks] = -1.0 / V
            C[lab, toks] += 1.0
            tag = "closed-form"
        else:
            with qp.blas_single_thread(V > 64):
                C = _ov_onehot_ldp(V, toks, lab)
            tag = "ldp-nnls"
        W = C if E is None else C @ E.T  # orthonormal E: W = W₁ Eᵀ is the isometric image
        return qp.finish_solution(W, margins, n_cons, tag)

    with qp.blas_single_thread(V > 8):
        W = None
        tag = "ldp-nnls"
        if method == "auto":
            W = _ov_active_set(E, toks, lab, V)
            tag = "active-set"
        if W is None:
            W = _ov_general_ldp(E, toks, lab, V)
            tag = "ldp-nnls"
        return qp.finish_solution(W, margins, n_cons, tag)


def _ov_onehot_ldp(V: int, toks: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """One-hot W*_ov by NNLS-LDP.  Every column solves the same LDP up to relabelling the classes
    (min ||w|| s.t. w_{n} − w_i ≥ 1), so it is solved once (for n = class 0) and placed."""
    G = np.zeros((V - 1, V))
    G[:, 0] = 1.0
    G[np.arange(V - 1), np.arange(1, V)] = -1.0
    w, _ = qp.ldp(G, np.ones(V - 1))
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
        rows: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = []  # per row: (support, t, R), None when empty
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
        C = qp.solve_triples(tri, Kp, Kq, n_rows, n)
    except qp.LDPInfeasible:
        raise TTLabInputError(
            "infeasible W*_ov: no matrix makes every token's next token win by a margin with these "
            "embeddings (or only with norm > 1e6); e.g. two tokens with equal (or positively "
            "proportional) embeddings but different collocations cannot be separated"
        ) from None
    return _ov_expand(kp[:, None] * C, classes, w, V, Et)


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
        if 2 * m * d > qp.CLARABEL_MAX_NNZ:
            raise TTLabInputError(f"W*_ov with {m} constraints is too large for method='clarabel'; use 'auto'")
        rows = np.repeat(np.arange(m), 2 * d)
        k = np.arange(d)
        cols = np.concatenate([ns[:, None] * d + k, ii[:, None] * d + k], axis=1).ravel()
        vals = np.concatenate([E[:, xs].T, -E[:, xs].T], axis=1).ravel()
    G = sp.csc_matrix((vals, (rows, cols)), shape=(m, V * d))
    return qp.clarabel_solve(G, V * d).reshape(V, d)
