"""The one-layer transformer of paper A, batched over all distinct sentences, with analytic gradients.

T_θ(X) = W_ov X φ(Xᵀ W_kq x_L) ∈ R^|V|,   p(·|X) = softmax(T_θ(X)),
L(θ) = Σ_n π(n) · (−log p(y_n | X(n))),   L0(W_ov) = mean_x −log softmax(W_ov x)[n(x)].

The model has no positional encoding, so a sentence enters only through its query and the count c_v of
each token v in it: X φ = Σ_v c_v e^{s_v} x_v / Σ_v c_v e^{s_v} with s_v = x_vᵀ W_kq x_L. Each sentence is
therefore stored as its *distinct* tokens with their counts (attention scores s_v + log c_v), padded to
the largest number of distinct tokens U_max ≤ min(L_max, |V|) and masked. This is exact, and a sequence
line of L tokens costs (L − 1) × U_max slots instead of (L − 1) × L; φ below is the attention mass
per distinct token (the sum over its positions). With orthonormal one-hot embeddings (the paper's
Assumption 2, the default) tokens are indices and no embedding matrix is formed; with general
embeddings ``E`` (d × |V|) sentences are embedded densely.

Gradients (per sentence, r = π(p − e_y)):
  ∂L/∂W_ov = r hᵀ with h = X φ;  g = Xᵀ W_ovᵀ r;  ∂L/∂s = (diag φ − φφᵀ) g;  ∂L/∂W_kq = X ∂L/∂s x_Lᵀ.
They are checked against autograd and finite differences in the tests. The cross-entropy and its logit
gradient are computed without cancellation (see :func:`softmax_cross_entropy`), so losses, gradients and the
normalized direction stay exact at any margin, also past exp's range. That cross-entropy
(:class:`CEBlock`, :func:`ce_combine`) is the one implementation, also used by the structured path
(:mod:`ttlab.ntp.structured`, rows with multiplicities, in several blocks).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import check_dtype
from ttlab.ntp.dataset import NTPDataset, Sentence, TokenSeq, batch_width, line_groups
from ttlab.ntp.structure import DatasetStructure, analyze

_DTYPES = {"float64": torch.float64, "float32": torch.float32}
#: with dtype="auto", problems with at least this many (padded tokens × |V|) may use float32
AUTO_FLOAT32_WORK = 2_000_000
_F32 = torch.finfo(torch.float32)
#: with dtype="auto", float32 also needs every logit difference |l_v − l_y| of the run to stay below
#: log(eps²/tiny) ≈ 55.4 (float32): then every gradient term within eps² of the largest one is a normal
#: float32 number, so no term that can move the normalized direction underflows, and the exponentials'
#: relative rounding (≈ eps · spread ≤ 7e-6) stays far below every measured quantity.
AUTO_FLOAT32_MAX_SPREAD = math.log(_F32.eps**2 / _F32.tiny)


def resolve_dtype(dtype: str | torch.dtype, work: int = 0, max_logit_spread: float | None = None) -> torch.dtype:
    """'float64' / 'float32' / 'auto' (or a torch dtype) → torch dtype.

    'auto' is float32 only when both hold: the problem is large (``work`` = padded tokens × |V| ≥
    :data:`AUTO_FLOAT32_WORK`, where float32 halves the memory traffic) and the caller's a-priori bound
    ``max_logit_spread`` on every |l_v − l_y| of the run is ≤ :data:`AUTO_FLOAT32_MAX_SPREAD` (see
    :func:`ttlab.ntp.train.logit_spread_bound`; no bound given → float64). Otherwise float64.
    """
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype == "auto":
        small_margins = max_logit_spread is not None and max_logit_spread <= AUTO_FLOAT32_MAX_SPREAD
        return torch.float32 if work >= AUTO_FLOAT32_WORK and small_margins else torch.float64
    check_dtype(dtype)  # the one message for an unknown dtype
    return _DTYPES[dtype]


class CrossEntropy(NamedTuple):
    """Result of :func:`softmax_cross_entropy`.

    ``loss`` is Σ_n w_n ℓ_n accumulated in float64 (exact to rounding; 0.0 only when the true value is below
    float64's range), ``log_loss`` its natural log (finite whenever the loss is positive, even below that
    range), ``grad`` = exp(−log_scale) · ∂loss/∂logits. ``log_scale`` is 0 unless the largest gradient entry
    is below √tiny of the dtype (margins near or past the exp range); then the gradient is returned
    divided by that common positive factor so that its largest entry is 1 and its direction stays exact.
    """

    loss: float
    log_loss: float
    grad: torch.Tensor
    log_scale: float


def softmax_cross_entropy(
    logits: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor, rows: torch.Tensor | None = None
) -> CrossEntropy:
    """Σ_n w_n · (−log softmax(logits_n)[y_n]) and its logit gradient w_n (p_n − e_{y_n}), accurate at any margin.

    With m = max_v l_v and S_n = Σ_{v≠y} exp(l_v − m) (the label column is left out of the sum, never
    subtracted): the label entry of the gradient is −w S/(e^{l_y−m} + S), never w(p_y − 1), and the loss is
    log1p(S) when the label is a largest logit (then m = l_y), else (m − l_y) + log(e^{l_y−m} + S), a sum of
    non-negative terms. Rows whose S is below tiny/eps, and the gradient when its largest entry is below
    √tiny, are recomputed in log space (float64), so losses of 1e-200 come out as 1e-200 and the
    gradient direction stays defined past exp's range (margins > ~745 in float64, > ~87 in float32).
    """
    loss, log_loss, (grad,), log_scale = ce_combine([CEBlock(logits, labels, weights, rows=rows)])
    return CrossEntropy(loss, log_loss, grad, log_scale)


class CEBlock:
    """The per-row part of the exact cross-entropy for one block of rows (see :func:`softmax_cross_entropy`).

    Row n is the logit vector ``logits[n]`` whose entry j stands for ``other[n, j]`` competing classes
    (``other=None``: every entry is one class, the dense case) plus the label ``labels[n]`` (an entry index;
    with ``other`` given, its own multiplicity must be 1 and ``other`` is 0 there; absent entries: logit
    −inf, multiplicity 0). The dense case is the multiplicity-1 case with the same operations, so it is
    bit-for-bit the dense computation. Blocks are summed by :func:`ce_combine`, which also applies the
    log-space recomputations that need every block (the common gradient scale).
    """

    def __init__(
        self,
        logits: torch.Tensor,
        labels: torch.Tensor,
        weights: torch.Tensor,
        other: torch.Tensor | None = None,
        rows: torch.Tensor | None = None,
    ) -> None:
        n = self.n = logits.shape[0]
        self.labels, self.other, self.dtype = labels, other, logits.dtype
        self.rows = torch.arange(n) if rows is None else rows
        fi = self.finfo = torch.finfo(logits.dtype)
        mx = logits.max(dim=1, keepdim=True).values
        t = self.t = logits - mx  # ≤ 0; the label entry is 0 when the label is a largest logit
        e = torch.exp(t)  # exp(−inf) = 0 for absent entries
        lab = labels[:, None]
        t_y = t.gather(1, lab)[:, 0]
        e_y = torch.exp(t_y)
        if other is None:
            e.scatter_(1, lab, 0.0)
            s = e.sum(1)  # ≥ 1 whenever the label is not a largest logit
        else:
            s = (e * other).sum(1)
        self.s = s
        z = self.z = e_y + s
        wz = weights / z
        self.label_entry = s * wz
        r = self.grad = e.mul_(wz[:, None])
        r.scatter_(1, lab, -self.label_entry[:, None])
        # per-row losses ℓ = −t_y + log1p(z − 1) in float64 (no-op casts for float64 models). z − 1 is summed
        # as (e_y − 1) + S: exactly S when the label is a largest logit (e_y = 1), else ≥ e_y with S ≥ 1.
        if logits.dtype == torch.float64:
            self.w64, self.ell = weights, torch.log1p((e_y - 1.0) + s) - t_y
        else:
            self.w64 = weights.double()
            self.ell = torch.log1p((e_y.double() - 1.0) + s.double()) - t_y.double()
        self.log_ell: torch.Tensor | None = None
        self._log_s: torch.Tensor | None = None
        if n and float(s.min()) < fi.tiny / fi.eps:
            # some label-is-largest rows have S below tiny/eps (terms lost to underflow): redo them in log space
            low = s < fi.tiny / fi.eps
            log_s = self.log_s()
            self.ell = torch.where(low, torch.log1p(torch.exp(log_s)), self.ell)
            # log log1p(S) = log S − S/2 + …, and S < tiny/eps ≪ eps here, so log S is exact to rounding
            self.log_ell = torch.where(low, log_s, torch.log(self.ell))

    def log_s(self) -> torch.Tensor:
        """log Σ_{v≠y} exp(t_v) per row, in float64 log space (−inf when there is no other entry)."""
        if self._log_s is None:
            if self.other is None:
                t64 = self.t.double().clone()
                t64[self.rows, self.labels] = -math.inf
                self._log_s = torch.logsumexp(t64, 1)
            else:  # log 0 = −inf drops absent entries and the label
                self._log_s = torch.logsumexp(self.t.double() + torch.log(self.other.double()), 1)
        return self._log_s

    def loss(self) -> float:
        """Σ_n w_n ℓ_n of this block (float64)."""
        return float(self.w64 @ self.ell)

    def log_terms(self) -> torch.Tensor:
        """log(w_n ℓ_n) per row, exact also where ℓ_n is below float64's range."""
        return torch.log(self.w64) + (torch.log(self.ell) if self.log_ell is None else self.log_ell)

    def rescaled_grad(self, A: float) -> torch.Tensor:
        """exp(−A) · the logit gradient, computed in log space (for a common scale A of all blocks)."""
        log_wz = torch.log(self.w64) - torch.log(self.z.double())
        g = torch.exp(self.t.double() + (log_wz - A)[:, None])
        g[self.rows, self.labels] = -torch.exp(log_wz + self.log_s() - A)
        return g.to(self.dtype)

    def log_label_max(self) -> float:
        """max_n log(w_n S_n / z_n): the log of this block's largest gradient entry."""
        return float((torch.log(self.w64) - torch.log(self.z.double()) + self.log_s()).max())


def ce_combine(blocks: Sequence[CEBlock], grad_blocks: Sequence[bool] | None = None) -> tuple[float, float, list, float]:
    """(loss, log_loss, gradients, log_scale) of the rows of all ``blocks`` (see :class:`CrossEntropy`).

    ``grad_blocks`` (default: all) marks the blocks whose gradient is wanted; only they set the common
    scale: when their largest gradient entry is below √tiny, their gradients are returned divided by it
    (``log_scale`` its log) so that the direction stays exact; the list holds None for the others.
    """
    want = [True] * len(blocks) if grad_blocks is None else list(grad_blocks)
    loss = sum((b.loss() for b in blocks), 0.0)
    if any(b.log_ell is not None for b in blocks):
        log_loss = float(torch.logsumexp(torch.cat([b.log_terms() for b in blocks]), 0))
    else:
        log_loss = math.log(loss) if loss > 0 else -math.inf
    gb = [b for b, w in zip(blocks, want) if w and b.n]
    grads = [b.grad if w else None for b, w in zip(blocks, want)]
    if not gb:
        return loss, log_loss, grads, 0.0
    fi = gb[0].finfo
    if max(float(b.label_entry.max()) for b in gb) >= math.sqrt(fi.tiny):
        return loss, log_loss, grads, 0.0
    # the largest gradient entry is below √tiny: rebuild the gradients divided by it, in log space
    A = max(b.log_label_max() for b in gb)
    if not math.isfinite(A):  # no competing logit at all (|V| = 1 or −inf logits): the gradient is 0
        return loss, log_loss, [None if g is None else torch.zeros_like(g) for g in grads], 0.0
    return loss, log_loss, [b.rescaled_grad(A) if w and b.n else g for b, w, g in zip(blocks, want, grads)], A


def cross_entropy_terms(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Per-row −log softmax(logits)[y] = softplus(logsumexp_{v≠y}(l_v − l_y)), differentiable with autograd.

    The same exact form as :func:`softmax_cross_entropy` (no 1 − p_y, no log z that rounds to 0); used by
    the plain autograd references :meth:`NTPTransformer.loss` and :meth:`NTPTransformer.collocation_loss`.
    """
    rows = torch.arange(len(labels))
    t = logits - logits[rows, labels][:, None]
    other = torch.ones_like(t, dtype=torch.bool)
    other[rows, labels] = False
    lse = torch.logsumexp(t.masked_fill(~other, -math.inf), 1)
    return torch.nn.functional.softplus(lse, threshold=40.0)


def make_embeddings(kind: str, vocab_size: int, dim: int | None = None, seed: int = 0, rho: float = 0.3) -> np.ndarray | None:
    """Embedding matrix E (d × |V|) of a named kind.

    ``onehot`` → None (orthonormal identity, d = |V|); ``orthogonal`` → a random orthonormal basis;
    ``gaussian`` → unit-norm random Gaussian columns (d may be < |V|); ``equicorrelated`` → unit columns
    with pairwise inner product ``rho``.
    """
    d = vocab_size if dim is None else dim
    rng = np.random.default_rng(seed)
    if kind == "onehot":
        if d != vocab_size:
            raise TTLabInputError(f"one-hot embeddings need d = |V| = {vocab_size} (got d = {d})")
        return None
    if kind == "orthogonal":
        if d < vocab_size:
            raise TTLabInputError(f"orthogonal embeddings need d ≥ |V| = {vocab_size} (got d = {d})")
        q, _ = np.linalg.qr(rng.standard_normal((d, vocab_size)))
        return q
    if kind == "gaussian":
        if d < 1:
            raise TTLabInputError(f"embedding dimension must be ≥ 1 (got {d})")
        e = rng.standard_normal((d, vocab_size))
        return e / np.linalg.norm(e, axis=0, keepdims=True)
    if kind == "equicorrelated":
        if not 0.0 <= rho < 1.0:
            raise TTLabInputError(f"equicorrelated embeddings need 0 ≤ rho < 1 (got {rho})")
        gram = (1 - rho) * np.eye(vocab_size) + rho * np.ones((vocab_size, vocab_size))
        base = np.linalg.cholesky(gram).T  # |V| × |V|, columns with Gram = gram
        if d < vocab_size:
            raise TTLabInputError(f"equicorrelated embeddings need d ≥ |V| = {vocab_size} (got d = {d})")
        q, _ = np.linalg.qr(rng.standard_normal((d, vocab_size)))
        return q @ base
    raise TTLabInputError(f"unknown embedding kind {kind!r}; use onehot, orthogonal, gaussian or equicorrelated")


@dataclass
class Bags:
    """Sentences as padded distinct tokens (n, U) in order of first occurrence, their counts and queries."""

    tokens: torch.Tensor  # (n, U) token indices, 0 on padding
    counts: np.ndarray  # (n, U) occurrences of each distinct token, 0 on padding
    query: torch.Tensor  # (n,) index of the last token
    lengths: torch.Tensor  # (n,) number of tokens

    @property
    def mask(self) -> torch.Tensor:
        return torch.as_tensor(self.counts > 0)


#: rows × distinct tokens handled per block while counting tokens (bounds the temporary one-hot array)
_COUNT_BLOCK = 1 << 22


def _first_occurrence(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ids in order of first occurrence, and each position's rank in that order."""
    uniq, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[by_first] = np.arange(len(uniq))
    return uniq[by_first], rank[inverse.reshape(-1)]


def _fill_counts(u: np.ndarray, ells: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """out[rows[k], :] = counts of each rank among u[:ells[k]] (ells ascending), block by block."""
    width = int(u.max()) + 1
    running = np.zeros(width, dtype=out.dtype)
    step = max(1, _COUNT_BLOCK // width)
    k = 0
    for a in range(0, int(ells[-1]), step):
        b = min(a + step, int(ells[-1]))
        block = np.zeros((b - a, width), dtype=out.dtype)
        block[np.arange(b - a), u[a:b]] = 1
        np.cumsum(block, axis=0, out=block)
        block += running
        while k < len(ells) and ells[k] <= b:
            out[rows[k], :width] = block[ells[k] - 1 - a]
            k += 1
        running = block[-1].copy()


def bag_sentences(sentences: Sequence[Sequence[str]], encode) -> Bags:
    """Padded distinct-token bags of ``sentences``; prefixes of one line share their work (O(L·U))."""
    wrapped = [Sentence(s if isinstance(s, TokenSeq) else TokenSeq(tuple(s)), "", 1, ()) for s in sentences]
    n = len(wrapped)
    groups = []
    width = 1
    for base, members in line_groups(wrapped):
        ells = np.array([len(wrapped[i].tokens) for i in members], dtype=np.int64)
        if (ells == 0).any():
            raise TTLabInputError(f"sentence #{members[int(np.argmin(ells))] + 1} is empty")
        by_len = np.argsort(ells, kind="stable")
        ells, rows = ells[by_len], np.asarray(members, dtype=np.int64)[by_len]
        ids = np.asarray(encode(list(itertools.islice(base, int(ells[-1])))), dtype=np.int64)
        order, u = _first_occurrence(ids)
        distinct = np.maximum.accumulate(u)[ells - 1] + 1
        width = max(width, int(distinct.max()))
        groups.append((rows, ells, order, u, ids[ells - 1]))
    cnt = np.zeros((n, width), dtype=np.int32)
    tok = np.zeros((n, width), dtype=np.int64)
    query = np.zeros(n, dtype=np.int64)
    for rows, ells, order, u, q in groups:
        _fill_counts(u, ells, rows, cnt)
        k = min(width, len(order))
        tok[rows, :k] = np.where(cnt[rows, :k] > 0, order[:k], 0)
        query[rows] = q
    return Bags(torch.as_tensor(tok), cnt, torch.as_tensor(query), torch.as_tensor(cnt.sum(1, dtype=np.int64)))


@dataclass
class LossGrad:
    """Loss value, gradients (None when not requested) and the forward quantities behind them.

    The true gradients are exp(``grad_log_scale``) × ``grad_ov`` / ``grad_kq``: the scale is 0 except at
    margins where the gradient's entries fall below √tiny of the dtype; there the common positive factor is
    divided out (normalized GD needs only the direction; :meth:`true_grad` gives the unscaled value).
    ``loss`` is exact to rounding (0.0 only below float64's range); ``log_loss`` is its natural log, finite
    whenever the loss is positive.
    """

    loss: float
    grad_ov: torch.Tensor | None
    grad_kq: torch.Tensor | None
    attention: torch.Tensor | None  # φ per distinct token, (n, U), zero on padding (None for the stage-1 loss)
    log_loss: float = math.nan
    grad_log_scale: float = 0.0

    def true_grad(self, grad: torch.Tensor) -> torch.Tensor:
        """``grad`` (one of this result's gradients) times exp(grad_log_scale), i.e. at its true scale."""
        return grad if self.grad_log_scale == 0.0 else grad * math.exp(self.grad_log_scale)


class NTPTransformer:
    """One-layer transformer bound to a dataset (all distinct sentences as one padded batch).

    Parameters are passed explicitly to every method, so training code owns them; shapes are
    W_ov: (|V|, d), W_kq: (d, d).
    """

    def __init__(
        self,
        dataset: NTPDataset,
        embeddings: np.ndarray | None = None,
        dtype: str | torch.dtype = "auto",
        structure: DatasetStructure | None = None,
        max_logit_spread: float | None = None,
    ) -> None:
        """``max_logit_spread``: a-priori bound on |l_v − l_y| over the run, used by ``dtype="auto"``
        (see :func:`resolve_dtype`); without it ``auto`` picks float64."""
        self.dataset = dataset
        self.structure = structure if structure is not None else analyze(dataset)
        V = dataset.vocab_size
        width, _ = batch_width(dataset)
        self.dtype = resolve_dtype(dtype, work=len(dataset.sentences) * width * V, max_logit_spread=max_logit_spread)
        self.max_logit_spread = max_logit_spread
        self.dtype_name = str(self.dtype).removeprefix("torch.")
        if embeddings is not None:
            embeddings = np.asarray(embeddings, dtype=np.float64)
            if embeddings.ndim != 2 or embeddings.shape[1] != V:
                raise TTLabInputError(
                    f"embeddings must have shape (d, |V|) = (d, {V}); got {tuple(embeddings.shape)}"
                )
            if not np.isfinite(embeddings).all():
                raise TTLabInputError("embeddings contain NaN or infinite values")
            self.E = torch.as_tensor(embeddings, dtype=self.dtype)
        else:
            self.E = None
        self.vocab_size = V
        self.dim = V if self.E is None else self.E.shape[0]
        bags = self.encode_batch([s.tokens for s in dataset.sentences])
        self.tokens, self.mask, self.query, self.lengths = bags.tokens, bags.mask, bags.query, bags.lengths
        self.counts = torch.as_tensor(bags.counts, dtype=self.dtype)
        self.log_counts = torch.log(self.counts)  # −inf on padding: no attention there
        self.labels = torch.tensor([dataset.index[s.label] for s in dataset.sentences])
        self.weights = torch.as_tensor(dataset.weights(), dtype=self.dtype)
        nxt_t = torch.as_tensor(self.structure.next_token_array())
        self.multi_token = self.lengths > 1
        # optimal: n(x) = y in a multi-token sentence; the token of a one-token sentence counts as optimal
        self.optimal_mask = self.mask & ((nxt_t[self.tokens] == self.labels[:, None]) | ~self.multi_token[:, None])
        self._rows = torch.arange(len(self.labels))
        self._kq_index = (self.tokens.reshape(-1), self.query.repeat_interleave(self.tokens.shape[1]))
        nxt = self.structure.next_token_array()
        has = nxt >= 0
        self.colloc_tokens = torch.as_tensor(np.flatnonzero(has))
        self.colloc_next = torch.as_tensor(nxt[has])
        self._X = None if self.E is None else self.E.T[self.tokens] * self.mask[..., None]
        m = len(self.colloc_tokens)
        self._colloc_weights = torch.full((m,), 1.0 / max(m, 1), dtype=self.dtype)

    # ------------------------------------------------------------------ helpers
    def encode_batch(self, sentences: Sequence[Sequence[str]]) -> Bags:
        """Token strings → padded distinct-token bags (see :class:`Bags`)."""
        return bag_sentences(sentences, self.dataset.encode)

    def zeros(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Zero parameters (the paper's initialisation)."""
        return (
            torch.zeros((self.vocab_size, self.dim), dtype=self.dtype),
            torch.zeros((self.dim, self.dim), dtype=self.dtype),
        )

    def _scores(
        self, W_kq: torch.Tensor, tok: torch.Tensor, q: torch.Tensor, log_counts: torch.Tensor, X: torch.Tensor | None
    ) -> torch.Tensor:
        """x_vᵀ W_kq x_q + log c_v for each distinct token v (−inf on padding)."""
        if self.E is None:
            s = W_kq[tok, q[:, None]]
        else:
            u = (W_kq @ self.E[:, q]).T  # (n, d): W_kq x_q
            s = torch.einsum("nld,nd->nl", X, u)
        return s + log_counts

    def _logits(self, W_ov: torch.Tensor, phi: torch.Tensor, tok: torch.Tensor, X: torch.Tensor | None) -> torch.Tensor:
        if self.E is None:
            return torch.nn.functional.embedding_bag(tok, W_ov.T.contiguous(), per_sample_weights=phi, mode="sum")
        h = torch.einsum("nl,nld->nd", phi, X)
        return h @ W_ov.T

    # ------------------------------------------------------------------ forward
    def forward(
        self, W_ov: torch.Tensor, W_kq: torch.Tensor, sentences: list[tuple[str, ...]] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (n, |V|) and attention φ (n, U) per distinct token for the training sentences or ``sentences``."""
        if sentences is None:
            tok, q, logc, X = self.tokens, self.query, self.log_counts, self._X
        else:
            bags = self.encode_batch(sentences)
            tok, q = bags.tokens, bags.query
            logc = torch.log(torch.as_tensor(bags.counts, dtype=self.dtype))
            X = None if self.E is None else self.E.T[tok] * bags.mask[..., None]
        phi = torch.softmax(self._scores(W_kq, tok, q, logc, X), dim=1)
        return self._logits(W_ov, phi, tok, X), phi

    def predict(self, W_ov: torch.Tensor, W_kq: torch.Tensor, sentences: list[tuple[str, ...]]) -> list[str]:
        """argmax next token of each sentence under the model."""
        with torch.no_grad():
            logits, _ = self.forward(W_ov, W_kq, sentences)
        return [self.dataset.vocab[i] for i in logits.argmax(1).tolist()]

    def loss(self, W_ov: torch.Tensor, W_kq: torch.Tensor) -> torch.Tensor:
        """L(θ) = Σ_n π(n) · cross-entropy (differentiable with autograd)."""
        logits, _ = self.forward(W_ov, W_kq)
        return (self.weights * cross_entropy_terms(logits, self.labels)).sum()

    def loss_and_grad(self, W_ov: torch.Tensor, W_kq: torch.Tensor, wrt: tuple[str, ...] = ("ov", "kq")) -> LossGrad:
        """L(θ) with analytic gradients with respect to the parameters named in ``wrt``."""
        tok, X = self.tokens, self._X
        phi = torch.softmax(self._scores(W_kq, tok, self.query, self.log_counts, X), dim=1)
        need_kq = "kq" in wrt
        need_ov = "ov" in wrt
        if self.E is None:
            # the weighted bag Σ_l φ_l W_ov[:, x_l] is linear in φ and in W_ov; its exact VJP comes from
            # the fused embedding_bag kernel (no (n, L, |V|) tensor is formed)
            M = W_ov.T.contiguous().requires_grad_(need_ov)
            phi_leaf = phi.detach().requires_grad_(need_kq)
            with torch.enable_grad():
                logits_g = torch.nn.functional.embedding_bag(tok, M, per_sample_weights=phi_leaf, mode="sum")
            logits = logits_g.detach()
        else:
            h = torch.einsum("nl,nld->nd", phi, X)
            logits = h @ W_ov.T
        ce = softmax_cross_entropy(logits, self.labels, self.weights, self._rows)
        r = ce.grad
        grad_ov = grad_kq = None
        if self.E is None:
            inputs = [t for t, need in ((M, need_ov), (phi_leaf, need_kq)) if need]
            grads = torch.autograd.grad(logits_g, inputs, r) if inputs else ()
            it = iter(grads)
            if need_ov:
                grad_ov = next(it).T
            g = next(it) if need_kq else None
        else:
            if need_ov:
                grad_ov = r.T @ h
            g = torch.einsum("nld,nd->nl", X, r @ W_ov) if need_kq else None
        if need_kq:
            ds = phi * (g - (phi * g).sum(1, keepdim=True))  # softmax backward (zero on padding)
            if self.E is None:
                grad_kq = torch.zeros_like(W_kq)
                grad_kq.index_put_(self._kq_index, ds.reshape(-1), accumulate=True)
            else:
                a = torch.einsum("nl,nld->nd", ds, X)
                grad_kq = a.T @ self.E[:, self.query].T
        return LossGrad(ce.loss, grad_ov, grad_kq, phi, ce.log_loss, ce.log_scale)

    # ------------------------------------------------------------------ stage 1
    def collocation_loss_and_grad(self, W_ov: torch.Tensor) -> LossGrad:
        """Stage-1 loss L0(W_ov) = mean over collocation pairs of −log softmax(W_ov x)[n(x)], and its gradient
        (``grad_ov``, scaled as described in :class:`LossGrad`)."""
        if len(self.colloc_tokens) == 0:
            raise TTLabInputError("the dataset has no one-token sentences, so there is no collocation to train on")
        if self.E is None:
            x = None
            logits = W_ov[:, self.colloc_tokens].T
        else:
            x = self.E[:, self.colloc_tokens].T  # (m, d)
            logits = x @ W_ov.T
        ce = softmax_cross_entropy(logits, self.colloc_next, self._colloc_weights)
        if self.E is None:
            grad = torch.zeros_like(W_ov)
            grad[:, self.colloc_tokens] = ce.grad.T
        else:
            grad = ce.grad.T @ x
        return LossGrad(ce.loss, grad, None, None, ce.log_loss, ce.log_scale)

    def collocation_loss(self, W_ov: torch.Tensor) -> torch.Tensor:
        """L0 written plainly (autograd reference for the tests)."""
        E = torch.eye(self.vocab_size, dtype=self.dtype) if self.E is None else self.E
        logits = (W_ov @ E[:, self.colloc_tokens]).T
        return cross_entropy_terms(logits, self.colloc_next).mean()

    def min_optimal_attention(self, phi: torch.Tensor) -> float:
        """min over multi-token sentences of the total attention on optimal positions (Theorem 2)."""
        if not bool(self.multi_token.any()):
            return float("nan")
        mass = (phi * self.optimal_mask).sum(1)
        return float(mass[self.multi_token].min())
