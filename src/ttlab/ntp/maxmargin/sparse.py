"""The max-margin solutions of the structured path (one-hot embeddings), stored by their support.

W*_ov is closed form (column x = e_{n(x)} − 1/|V|·1 for tokens with a collocation), kept as two values per
column (:func:`sparse_max_margin_ov`): ⟨W_ov, W*_ov⟩ = Σ_x [ℓ_x(1 − 1/|V|) − (|V|−1)o_x/|V|] and
‖W*_ov‖² = m(|V|−1)/|V|. W*_kq splits into independent per-query columns supported on the tokens of that query's
constraints (a subset of the co-occurring pairs); :func:`sparse_max_margin_kq` solves them with
:func:`ttlab.ntp.maxmargin.kq.kq_onehot_entries` and keeps the (token, query, value) entries. Both carry the
certificate of :class:`~ttlab.ntp.maxmargin.qp.MaxMarginSolution` (min margin, max violation, with the dense
solver's rescaling of a tiny violation), computed from the support on every constraint; no |V| × |V| array is
formed unless asked (:meth:`SparseMaxMargin.solution`, :func:`sparse_ov_solution`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ttlab.ntp.maxmargin.kq import kq_onehot_entries, unique_triples
from ttlab.ntp.maxmargin.qp import RESCALE_TOL, MaxMarginSolution


@dataclass
class SparseMaxMargin:
    """A max-margin solution given by its support, with the certificate of :class:`MaxMarginSolution`."""

    vocab_size: int
    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    norm: float
    min_margin: float
    max_violation: float
    n_constraints: int
    method: str

    def solution(self, dense: bool) -> MaxMarginSolution:
        """As a :class:`MaxMarginSolution`; its matrix is filled only when ``dense`` (else 0 × 0)."""
        if dense:
            W = np.zeros((self.vocab_size, self.vocab_size))
            W[self.rows, self.cols] = self.values
        else:
            W = np.zeros((0, 0))
        return MaxMarginSolution(W, self.norm, self.min_margin, self.max_violation, self.n_constraints, self.method)


def _certify(rows, cols, vals, margins_fn, n_cons: int, V: int, method: str) -> SparseMaxMargin:
    """Margins from the support, the same tiny-violation rescaling as the dense solver, packaged."""
    if n_cons == 0:
        return SparseMaxMargin(V, rows, cols, vals, float(np.linalg.norm(vals)), math.inf, 0.0, 0, method)
    marg = margins_fn(vals)
    mmin = float(marg.min())
    if 1.0 - RESCALE_TOL <= mmin < 1.0:
        vals = vals / mmin
        mmin = float(margins_fn(vals).min())
    return SparseMaxMargin(V, rows, cols, vals, float(np.linalg.norm(vals)), mmin, max(0.0, 1.0 - mmin), n_cons, method)


def sparse_max_margin_ov(next_token: np.ndarray) -> SparseMaxMargin:
    """One-hot W*_ov (column x = e_{n(x)} − 1/|V|·1) as its support: O(#collocation tokens · |V|) entries
    would be dense, so the support is kept as the two values per column (rows −1 = "every other class")."""
    V = len(next_token)
    toks = np.flatnonzero(next_token >= 0)
    lab = next_token[toks]
    n_cons = toks.size * (V - 1)
    lab_val = np.full(toks.size, 1.0 - 1.0 / V)
    oth_val = np.full(toks.size, -1.0 / V)

    def margins(v: np.ndarray) -> np.ndarray:  # v = (label values, other values)
        return v[: toks.size] - v[toks.size :] if V > 1 else np.full(toks.size, np.inf)

    vals = np.concatenate([lab_val, oth_val])
    out = _certify(np.r_[lab, np.full(toks.size, -1)], np.r_[toks, toks], vals, margins, n_cons, V, "closed-form")
    # the norm counts every "other" entry |V| − 1 times
    lv, ov = out.values[: toks.size], out.values[toks.size :]
    out.norm = math.sqrt(float((lv**2).sum() + (V - 1) * (ov**2).sum()))
    return out


def sparse_max_margin_kq(
    triples: np.ndarray,
    vocab_size: int,
    workers: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> SparseMaxMargin:
    """One-hot W*_kq per query column (Proposition 2 or NNLS-LDP) as (token, query, value) entries.

    The columns are solved in parallel by :func:`ttlab.ntp.maxmargin.kq_onehot_entries` (``workers``:
    processes, ``None`` = one per core for large problems; the result is identical to the serial one);
    ``progress("W*_kq", done, total)`` counts solved query columns. The certificate (min margin, max
    violation) is computed from the returned values on every constraint.
    """
    V = vocab_size
    T = unique_triples(np.asarray(triples, dtype=np.int64).reshape(-1, 3), V)
    m = T.shape[0]
    if m == 0:
        e = np.zeros(0, dtype=np.int64)
        return _certify(e, e.copy(), np.zeros(0), None, 0, V, "closed-form")
    tok, qry, val, tag = kq_onehot_entries(
        T, V, "auto", workers=workers, progress=(lambda d, n: progress("W*_kq", d, n)) if progress else None)
    key = qry * V + tok
    order = np.argsort(key)
    tok, qry, val, key = tok[order], qry[order], val[order], key[order]
    pos_o = np.searchsorted(key, T[:, 0] * V + T[:, 1])
    pos_u = np.searchsorted(key, T[:, 0] * V + T[:, 2])

    def margins(v: np.ndarray) -> np.ndarray:
        return v[pos_o] - v[pos_u]

    return _certify(tok, qry, val, margins, m, V, tag)


def sparse_ov_solution(star: SparseMaxMargin, m: int, dense: bool) -> MaxMarginSolution:
    """W*_ov as a MaxMarginSolution (matrix filled only when ``dense``): label values on (n(x), x), the
    "other" value on the rest of column x."""
    W = np.zeros((star.vocab_size, star.vocab_size) if dense else (0, 0))
    if dense:
        toks = star.cols[:m]
        W[:, toks] = star.values[m:]
        W[star.rows[:m], toks] = star.values[:m]
    return MaxMarginSolution(W, star.norm, star.min_margin, star.max_violation, star.n_constraints, star.method)
