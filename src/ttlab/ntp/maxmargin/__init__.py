"""Exact max-margin (hard-margin SVM) solutions W*_ov and W*_kq of paper A.

Both problems have the form ``min ||W||_F  s.t.  a_cᵀ W b_c ≥ 1`` for a list of rank-one constraints
``⟨W, a_c b_cᵀ⟩ ≥ 1``.  With the embedding matrix ``E`` (d × |V|, column x = embedding of token x;
``None`` means one-hot, E = I):

* ``W*_ov`` (|V| × d): ``a = e_{n(x)} − e_i``, ``b = E[:, x]`` for every token x with a collocation
  n(x) and every i ≠ n(x).  One-hot closed form: column x = e_{n(x)} − 1/|V| (0 without collocation).
* ``W*_kq`` (d × d): ``a = E[:, o] − E[:, u]``, ``b = E[:, q]`` for every (query, optimal,
  non-optimal) triple.  One-hot: one independent QP per query column, in closed form when the
  query's constraint graph is complete bipartite (Proposition 2 of the paper).

One module per subject: :mod:`~ttlab.ntp.maxmargin.qp` (the QP kernel: the exact least-distance
solver, constraint generation, the certificate, the reference Clarabel solver),
:mod:`~ttlab.ntp.maxmargin.ov` (W*_ov), :mod:`~ttlab.ntp.maxmargin.kq` (W*_kq, also its one-hot
columns in parallel) and :mod:`~ttlab.ntp.maxmargin.sparse` (the one-hot W*_ov and W*_kq of the structured path,
kept by their support, with their certificates). Every public name is re-exported here. No other ttlab module (the trainers and
the structured path build on it). Nothing here prints; the parallel one-hot W*_kq reports progress
through a callback.

Performance
    One-hot W*_kq costs one small NNLS per non-closed-form query column (|V| = 500 with ~40k
    constraints: ≈ 0.4 s of CPU).  The active-set method handles W*_ov at |V| = d = 500 in a few
    seconds.  The Gram-matrix NNLS-LDP costs O(working set³); it is meant for moderate problems
    (W*_ov with d < |V| up to |V| ≈ 100–150, W*_kq with general embeddings up to a few thousand
    constraints).  SciPy's NNLS can stop at a non-optimal point on degenerate problems (scipy issues
    #25389, PR #26180): its KKT conditions are checked and, if needed, the point is refined by a plain
    Lawson–Hanson loop.  BLAS is limited to one thread (with threadpoolctl, when installed) during the
    many small dense operations, which multi-threaded OpenBLAS slows down badly on a busy machine.
"""

from __future__ import annotations

from ttlab.ntp.maxmargin.kq import (
    CHUNKS_PER_WORKER,
    PARALLEL_MIN_TRIPLES,
    KQProgress,
    kq_column_closed_form,
    kq_onehot_entries,
    max_margin_kq,
    unique_triples,
)
from ttlab.ntp.maxmargin.ov import max_margin_ov
from ttlab.ntp.maxmargin.qp import RESCALE_TOL, MaxMarginSolution, certificate_text, solution_info, solve_ldp
from ttlab.ntp.maxmargin.sparse import SparseMaxMargin, sparse_max_margin_kq, sparse_max_margin_ov, sparse_ov_solution

__all__ = [
    "MaxMarginSolution",
    "max_margin_ov",
    "max_margin_kq",
    "kq_column_closed_form",
    "solve_ldp",
    "kq_onehot_entries",
    "unique_triples",
    "KQProgress",
    "PARALLEL_MIN_TRIPLES",
    "CHUNKS_PER_WORKER",
    "RESCALE_TOL",
    "solution_info",
    "certificate_text",
    "SparseMaxMargin",
    "sparse_max_margin_ov",
    "sparse_max_margin_kq",
    "sparse_ov_solution",
]
