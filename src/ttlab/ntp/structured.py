"""Exact structured two-stage NGD/GD for one-hot embeddings from zero init: O(#tokens + |V|) memory.

The dense path (:mod:`ttlab.ntp.model`) stores W_ov and W_kq as |V| × |V| matrices. With one-hot
(orthonormal, Assumption 2) embeddings, zero initialisation and the two-stage schedule with NGD or plain
GD, the iterates keep a structure that this module stores instead, and every quantity of the dense run
(loss, gradient direction, the recorded metrics) is computed from it exactly, not approximated.

Stage 1 (W_ov on L0). Write column x of W_ov as ``o_x·1 + (ℓ_x − o_x)·e_{n(x)}``: the entry ``ℓ_x`` on
the collocation class n(x) and ``o_x`` on the |V| − 1 others (a scalar pair per column). The logits of
the pair (x, n(x)) are that column, so softmax, loss and gradient are those of a two-valued logit vector:
with w = 1/m (m collocation tokens), p_o = e^{o}/(e^{ℓ} + (|V|−1)e^{o}), the gradient column is
``w p_o·1 − w(|V|−1)p_o·e_{n(x)}`` (the label entry is −w Σ_{v≠y} p_v) — again of the same form, so
from W_ov(0) = 0 every update (NGD: divided by the Frobenius norm ‖G‖² = Σ_x (ℓ-entry² + (|V|−1)·o-entry²);
GD: as is) keeps it. Columns of tokens without a collocation stay 0.

Stage 2 (W_kq on L, W_ov fixed). With one-hot tokens the score of position l is W_kq[x_l, q] (q the
query), so only (token, query) pairs that co-occur in a sentence are ever read, and the gradient
X ∂L/∂s x_Lᵀ only writes those pairs: W_kq is stored as a vector over the distinct co-occurring pairs
(zero elsewhere, exactly as in the dense run). The logits of a sentence are

    T = W_ov X φ = (Σ_l φ_l o_{x_l})·1 + Σ_l φ_l (ℓ_{x_l} − o_{x_l}) e_{n(x_l)},

a constant plus at most L entries (the distinct classes n(x_l) of the sentence). Softmax is shift
invariant, so the constant drops out and the |V|-way cross-entropy is that of a compressed row: the
≤ L class entries, the label (its own entry if it is not among them) and one "background" entry 0 that
stands for the remaining classes with its multiplicity. The gradient r = w(p − e_y) is returned per
class; g_l = W_ov[:, x_l]ᵀ r = (ℓ − o)_{x_l} r_{n(x_l)} + o_{x_l} Σ_v r_v and Σ_v r_v = 0 exactly, so
g_l = (ℓ − o)_{x_l} r_{n(x_l)}: O(L) per sentence. The softmax backward and the scatter onto the pairs
are as in the dense model.

Layout. As in the dense model a sentence enters through its distinct tokens x with counts c_x (score
W_kq[x, q] + log c_x), so its work is its number U of distinct tokens, not its length. Sentences are
batched by U (exactly up to :data:`EXACT_WIDTH`, then in widths growing by 1/8), so rows are not padded
to the longest sentence. A sentence with U = 1 has φ = 1 for every W_kq: its cross-entropy is computed
once per W_ov and its W_kq gradient is exactly 0 (φ(g − φg) = 0, in the dense run too), so the steps
skip it; it is also left out of the gradient's common scale (below), which only matters where the dense
run's scale would be set by such a row and the others' entries underflow (then the structured direction
is the exact one).

Exactness. The compressed cross-entropy is the dense :func:`ttlab.ntp.model.softmax_cross_entropy`
(the same code, :class:`ttlab.ntp.model.CEBlock`, summed over the batches by
:func:`ttlab.ntp.model.ce_combine`) for entries with multiplicities: the label entry of the gradient is −w Σ_{v≠y} p_v, the loss is
log1p of the competing mass (a sum of non-negative terms), rows whose competing mass falls below
tiny/eps are recomputed in log space (log-multiplicities added to the exponents) and a gradient whose
largest entry is below √tiny is returned divided by that common factor, so losses, log-losses and the
normalized direction stay exact at any margin, also past exp's range. Everything runs in float64.

Agreement with the dense path. Both are float64; the metrics agree to ~1e-12 (tested to 1e-10) on random
data. Two regimes amplify rounding in *any* float implementation, so there the paths drift apart: (i)
stage 1 with a per-column margin step η0·√(|V|/((|V|−1)m)) > 2, where the symmetric trajectory (every
column on the W*_ov ray) is unstable under the discrete NGD map (column differences grow ≈ ×(step − 1)
per step). Exact arithmetic keeps the symmetry; the structured path keeps it (it updates every column
by the same arithmetic), the dense path leaves the ray through rounding (measured: |V| = 12, η0 = 20,
1 − cos = 1e-4 at t = 40). (ii) stage 2 at large margins with large η, where a relative perturbation of
1e-14 in η grows to 1e-3 in cos(W_kq, W*_kq) within ~50 steps in either path (measured on both).

Max-margin solutions. W*_ov and W*_kq are solved by :mod:`ttlab.ntp.maxmargin.sparse`, which keeps them by their
support (W*_ov closed form, two values per column; W*_kq per query column, on a subset of the co-occurring pairs);
here the inner products with W_ov and W_kq are taken on the stored structure (for W*_kq, over the pairs).

Where the structure does not hold — random init (W_ov(0) is dense), Adam (it is not a function of the
gradient direction alone; kept dense for now), the joint schedule (W_ov then sees the full loss, whose
gradient is not of the two-valued column form) or general embeddings — the dense path is used
(``impl="auto"`` picks it; ``impl="structured"`` refuses with the reason).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable, NamedTuple

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import METRIC_COLUMNS, TrainConfig, TrainResult
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.limits import MATERIALIZE_LIMIT
from ttlab.ntp.maxmargin import SparseMaxMargin, sparse_max_margin_kq, sparse_max_margin_ov, sparse_ov_solution
from ttlab.ntp.model import CEBlock, ce_combine
from ttlab.ntp.structure import DatasetStructure, analyze

_F64 = torch.finfo(torch.float64)


def structured_ineligibility(config: TrainConfig, embeddings: np.ndarray | None) -> str | None:
    """Why the structured path cannot run ``config`` (None when it can). ``config`` is a TrainConfig."""
    if embeddings is not None:
        return "it needs one-hot embeddings (general embeddings keep W_ov and W_kq dense)"
    if config.init != "zero":
        return "it needs the zero init (a random W_ov(0) has no column structure)"
    if config.schedule != "two-stage":
        return "it needs the two-stage schedule (joint training mixes the layers' gradients)"
    if config.optimizer not in ("ngd", "gd"):
        return f"it supports the ngd and gd optimizers, not {config.optimizer!r}"
    if config.dtype == "float32":
        return "it computes in float64 (asked for float32)"
    return None


class CompressedCE(NamedTuple):
    """Result of :func:`compressed_cross_entropy` (as :class:`ttlab.ntp.model.CrossEntropy`, per class)."""

    loss: float
    log_loss: float
    grad: torch.Tensor  # (n, k): exp(−log_scale) · w (p_v − [v = y]) for one class of each entry
    log_scale: float


def compressed_cross_entropy(
    logits: torch.Tensor, counts: torch.Tensor, label_col: torch.Tensor, weights: torch.Tensor
) -> CompressedCE:
    """Σ_n w_n ℓ_n for rows given as entries with multiplicities, exact at any margin.

    Row n stands for the |V|-vector holding ``logits[n, j]`` ``counts[n, j]`` times (absent entries: count
    0, logit −inf); the label is one class of entry ``label_col[n]`` (whose count must be 1). The same code
    as :func:`ttlab.ntp.model.softmax_cross_entropy` (:class:`ttlab.ntp.model.CEBlock` with multiplicities).
    """
    other = counts.clone()
    other.scatter_(1, label_col[:, None], 0.0)
    loss, log_loss, (grad,), log_scale = ce_combine([CEBlock(logits, label_col, weights, other=other)])
    return CompressedCE(loss, log_loss, grad, log_scale)


# ================================================================================ the structured problem
@dataclass
class StructuredOV:
    """W_ov of stage 1: column x = o_x·1 + (ℓ_x − o_x)·e_{n(x)} for the collocation tokens ``tokens``."""

    vocab_size: int
    tokens: torch.Tensor  # (m,) collocation tokens x
    classes: torch.Tensor  # (m,) n(x)
    label_val: torch.Tensor  # (m,) ℓ_x = W_ov[n(x), x]
    other_val: torch.Tensor  # (m,) o_x = W_ov[v, x] for v ≠ n(x)

    def norm(self) -> float:
        """Frobenius norm."""
        V = self.vocab_size
        return math.sqrt(float((self.label_val**2).sum() + (V - 1) * (self.other_val**2).sum()))

    def dense(self) -> torch.Tensor:
        """The |V| × |V| matrix (for small |V| only)."""
        V = self.vocab_size
        W = torch.zeros((V, V), dtype=torch.float64)
        W[:, self.tokens] = self.other_val
        W[self.classes, self.tokens] = self.label_val
        return W


@dataclass
class SparseKQ:
    """W_kq as values on the distinct co-occurring (token, query) pairs (zero elsewhere)."""

    vocab_size: int
    token: torch.Tensor  # (K,)
    query: torch.Tensor  # (K,)
    values: torch.Tensor  # (K,)

    def norm(self) -> float:
        """Frobenius norm."""
        return float(self.values.norm())

    def dense(self) -> torch.Tensor:
        """The |V| × |V| matrix (for small |V| only)."""
        V = self.vocab_size
        W = torch.zeros((V, V), dtype=torch.float64)
        W[self.token, self.query] = self.values
        return W


#: sentences with at most this many distinct tokens are batched with others of exactly that number; above
#: it the batches' widths grow geometrically (8 per octave, so at most 1/8 of a row is padding)
EXACT_WIDTH = 32


def bucket_width(u: int) -> int:
    """Padded width of the batch holding sentences with ``u`` distinct tokens."""
    if u <= EXACT_WIDTH:
        return u
    step = 1 << max((u - 1).bit_length() - 4, 0)
    return -(-u // step) * step


@dataclass
class _Bucket:
    """Sentences with the same padded number W of distinct tokens, as (rows, W) and (rows, W + 2) arrays.

    Entry j of a row is a distinct token of the sentence (padding: count 0, score −inf, gain 0). The
    compressed row holds the sentence's distinct classes n(x) in columns 0…K−1 (K ≤ W; the rest absent),
    the background (the classes neither there nor the label) in column W and the label in column W + 1
    when it is not among the K classes.
    """

    rows: np.ndarray  # (n_b,) sentence indices
    entry: torch.Tensor  # (n_b, W) index into the distinct-token entries (E for padding)
    pair: torch.Tensor  # (n_b, W) index of the (token, query) pair
    count: torch.Tensor  # (n_b, W) occurrences of the token in the sentence (0 for padding)
    log_count: torch.Tensor  # (n_b, W) its log (−inf for padding): the score offset of a repeated token
    slot: torch.Tensor  # (n_b, W) column of the token's class (W, the background, for none: its gain is 0)
    base: torch.Tensor  # (n_b, W + 2) 0 on present compressed columns, −inf on absent ones
    other: torch.Tensor  # (n_b, W + 2) competing classes per compressed column (0 on the label's)
    label_col: torch.Tensor  # (n_b,)
    weights: torch.Tensor  # (n_b,)
    optimal: torch.Tensor  # (n_b, W) 1.0 where the token is optimal (the token of a one-token sentence too)
    multi: torch.Tensor  # (n_b,) the sentence has two or more tokens

    @property
    def constant(self) -> bool:
        """One distinct token per sentence: its attention is 1 whatever W_kq is."""
        return self.pair.shape[1] == 1


class _PaddedEntries(NamedTuple):
    """Per distinct-token entry (and one padding entry at the end): its pair, count, class slot, optimality."""

    pair: np.ndarray
    count: np.ndarray
    slot: np.ndarray
    optimal: np.ndarray


class _SentenceRows(NamedTuple):
    """Per sentence: its distinct classes k, whether the label is among them and its slot, π(n), multi-token."""

    k: np.ndarray
    label_in: np.ndarray
    label_slot: np.ndarray
    weights: np.ndarray
    multi: np.ndarray


def _make_bucket(W: int, rows: np.ndarray, j: np.ndarray, ent: np.ndarray, V: int, sent: _SentenceRows,
                 entries: _PaddedEntries) -> _Bucket:
    """The batch of sentences ``rows`` padded to ``W`` distinct tokens (``ent``: their entries, padding E)."""
    cnt = torch.as_tensor(entries.count[ent].astype(np.float64))
    slot = entries.slot[ent]
    kr, li = sent.k[rows], sent.label_in[rows]
    present = np.zeros((len(rows), W + 2), dtype=bool)
    present[:, :W] = j < kr[:, None]
    n_bg = V - kr - (~li).astype(np.int64)  # classes neither in a slot nor the label
    present[:, W] = n_bg > 0
    present[:, W + 1] = ~li
    label_col = np.where(li, sent.label_slot[rows], W + 1)
    other = np.zeros((len(rows), W + 2))
    other[:, :W] = j < kr[:, None]
    other[:, W] = n_bg
    other[np.arange(len(rows)), label_col] = 0.0
    return _Bucket(
        rows=rows,
        entry=torch.as_tensor(ent),
        pair=torch.as_tensor(entries.pair[ent]),
        count=cnt,
        log_count=torch.log(cnt),
        slot=torch.as_tensor(np.where(slot >= 0, slot, W)),
        base=torch.zeros(present.shape, dtype=torch.float64).masked_fill_(torch.as_tensor(~present), -math.inf),
        other=torch.as_tensor(other),
        label_col=torch.as_tensor(label_col),
        weights=torch.as_tensor(sent.weights[rows]),
        optimal=torch.as_tensor(entries.optimal[ent].astype(np.float64)),
        multi=torch.as_tensor(sent.multi[rows]),
    )


class Stage2Loss(NamedTuple):
    """L(θ) of stage 2 and the common scale of its W_kq gradient (as :class:`CompressedCE` without grad)."""

    loss: float
    log_loss: float
    log_scale: float


class StageGains:
    """The per-entry gains (ℓ − o)_x of a fixed W_ov, by batch, and the constant rows' cross-entropy."""

    def __init__(self, prob: StructuredProblem, gain_of_entry: torch.Tensor) -> None:
        self.by_bucket = [gain_of_entry[b.entry] for b in prob.buckets]
        self.constant_block: CEBlock | None = None
        for b, a in zip(prob.buckets, self.by_bucket):
            if b.constant:  # φ = 1: the same rows every step, computed once
                self.constant_block = prob._block(b, a, torch.ones_like(a))


class StructuredProblem:
    """The dataset in the arrays the structured dynamics need (O(#distinct sentence tokens + |V|) memory).

    Sentences enter as their distinct tokens with counts (attention score W_kq[x, q] + log c_x, as in the
    dense model), batched by that number (:func:`bucket_width`), so no row is padded to the longest
    sentence. Sentences with one distinct token have attention 1 at every step: their stage-2 cross-entropy
    is computed once per W_ov and their W_kq gradient is exactly 0 (φ(g − φg) = 0), so they are left out of
    the steps' work and of the gradient's common scale.
    """

    def __init__(self, dataset: NTPDataset, structure: DatasetStructure | None = None) -> None:
        self.dataset = dataset
        self._stars: tuple[SparseMaxMargin, SparseMaxMargin] | None = None
        self.structure = structure if structure is not None else analyze(dataset)
        V = self.vocab_size = dataset.vocab_size
        sents = dataset.sentences
        n = self.n = len(sents)
        idx = dataset.index
        lengths = np.fromiter((len(s.tokens) for s in sents), dtype=np.int64, count=n)
        self.L = int(lengths.max()) if n else 0
        self.n_tokens = int(lengths.sum())
        flat = np.fromiter((idx[t] for s in sents for t in s.tokens), dtype=np.int64, count=self.n_tokens)
        labels = np.fromiter((idx[s.label] for s in sents), dtype=np.int64, count=n)
        self.labels = torch.as_tensor(labels)
        weights = dataset.weights().astype(np.float64)
        self.weights = torch.as_tensor(weights)
        sid = np.repeat(np.arange(n, dtype=np.int64), lengths)
        query = flat[np.cumsum(lengths) - 1]
        # distinct tokens of every sentence with their counts, sorted by (sentence, token)
        ekey, ecount = np.unique(sid * V + flat, return_counts=True)
        del flat, sid
        e_sid, e_tok = np.divmod(ekey, V)
        E = self.n_entries = len(ekey)
        u = np.bincount(e_sid, minlength=n)
        e_start = np.cumsum(u) - u
        # (token, query) pairs that co-occur: the support of W_kq (numbered below)
        uniq, e_pair = np.unique(query[e_sid] * V + e_tok, return_inverse=True)
        e_pair = e_pair.reshape(-1)
        # collocation
        nxt = self.structure.next_token_array().astype(np.int64).reshape(-1)
        self.next_token = nxt
        self.colloc_tokens = torch.as_tensor(np.flatnonzero(nxt >= 0))
        self.colloc_next = torch.as_tensor(nxt[nxt >= 0])
        self.entry_token = torch.as_tensor(e_tok)
        # the distinct classes of each sentence (sorted) and the slot of every entry's class among them
        e_cls = nxt[e_tok] if E else np.zeros(0, dtype=np.int64)
        has = e_cls >= 0
        ckey, cinv = np.unique(e_sid[has] * V + e_cls[has], return_inverse=True)
        k = np.bincount(ckey // V, minlength=n)
        c_start = np.cumsum(k) - k
        e_slot = np.full(E, -1, dtype=np.int64)
        e_slot[has] = cinv.reshape(-1) - c_start[e_sid[has]]
        lkey = np.arange(n, dtype=np.int64) * V + labels
        pos = np.searchsorted(ckey, lkey)
        lab_in = (pos < len(ckey)) & (ckey[np.minimum(pos, max(len(ckey) - 1, 0))] == lkey) if len(ckey) else \
            np.zeros(n, dtype=bool)
        lab_slot = pos - c_start
        multi = lengths > 1
        # optimal: n(x) = y in a multi-token sentence; the token of a one-token sentence counts as optimal
        e_opt = (e_cls == labels[e_sid]) | ~multi[e_sid]
        self.multi_token = torch.as_tensor(multi)
        # batches by padded width; entry E is the padding (count 0, gain 0)
        width = np.fromiter((bucket_width(int(x)) for x in u), dtype=np.int64, count=n)
        layout = []
        for W in np.unique(width).tolist():
            rows = np.flatnonzero(width == W)
            j = np.arange(W)
            layout.append((W, rows, j, np.where(j < u[rows, None], e_start[rows, None] + j, E)))
        # number the pairs in the order the batches first read them (most pairs occur in one sentence), so
        # the steps' gathers and scatters on W_kq run through memory nearly in order
        seen = np.concatenate([ent[ent < E] for W, _, _, ent in layout if W > 1] + [np.arange(E)])
        _, first = np.unique(e_pair[seen], return_index=True)
        order = np.argsort(first, kind="stable")  # old pair ids by first reading
        new_id = np.empty_like(order)
        new_id[order] = np.arange(len(order))
        e_pair = new_id[e_pair]
        uniq = uniq[order]
        self.pair_keys = uniq  # keys q·V + token, in reading order (not sorted)
        self.pair_token = torch.as_tensor(uniq % V)
        self.pair_query = torch.as_tensor(uniq // V)
        ext = lambda a, pad: np.concatenate([a, np.array([pad], dtype=a.dtype)])  # noqa: E731
        entries = _PaddedEntries(ext(e_pair, 0), ext(ecount, 0), ext(e_slot, -1), ext(e_opt, False))
        rows_of = _SentenceRows(k, lab_in, lab_slot, weights, multi)
        self.buckets: list[_Bucket] = [_make_bucket(W, rows, j, ent, V, rows_of, entries) for W, rows, j, ent in layout]
        self.work = sum(b.other.numel() for b in self.buckets)

    def max_margin(self, progress: Callable[[str, int, int], None] | None = None) -> tuple[SparseMaxMargin,
                                                                                          SparseMaxMargin]:
        """W*_ov and W*_kq of the dataset (solved once, then kept: a run can size its step sizes from their
        norms before training). ``progress`` as in :func:`~ttlab.ntp.maxmargin.sparse.sparse_max_margin_kq`."""
        if self._stars is None:
            self._stars = (sparse_max_margin_ov(self.next_token),
                           sparse_max_margin_kq(self.structure.kq_triples(), self.vocab_size, progress=progress))
        return self._stars

    # ------------------------------------------------------------------ stage 1
    def stage1_loss_grad(self, ov: StructuredOV) -> tuple[CompressedCE, int]:
        """L0 and its gradient per column: grad[:, 0] on the collocation class, grad[:, 1] on each other class."""
        m = len(ov.tokens)
        V = self.vocab_size
        logits = torch.stack([ov.label_val, ov.other_val], 1)
        counts = torch.tensor([[1.0, float(V - 1)]], dtype=torch.float64).expand(m, 2)
        if V == 1:
            logits = logits[:, :1]
            counts = counts[:, :1]
        logits = logits.masked_fill(counts == 0, -math.inf)
        w = torch.full((m,), 1.0 / m, dtype=torch.float64)
        return compressed_cross_entropy(logits, counts, torch.zeros(m, dtype=torch.long), w), m

    # ------------------------------------------------------------------ stage 2
    def position_gain(self, ov: StructuredOV) -> StageGains:
        """(ℓ − o)_x of every distinct token of every sentence (0 for tokens without a collocation)."""
        gain = torch.zeros(self.vocab_size, dtype=torch.float64)
        gain[ov.tokens] = ov.label_val - ov.other_val
        return StageGains(self, torch.cat([gain[self.entry_token], torch.zeros(1, dtype=torch.float64)]))

    def _block(self, b: _Bucket, a: torch.Tensor, phi: torch.Tensor) -> CEBlock:
        """The compressed cross-entropy rows of batch ``b`` for attention φ (logits Σ φ_x (ℓ − o)_x per class)."""
        logits = b.base.clone()
        logits.scatter_add_(1, b.slot, phi * a)
        return CEBlock(logits, b.label_col, b.weights, other=b.other)

    def stage2_loss_grad(self, gains: StageGains, kq: SparseKQ) -> tuple[Stage2Loss, torch.Tensor, list[torch.Tensor]]:
        """L(θ), the W_kq gradient on the pairs (divided by exp(log_scale)) and φ of every varying batch."""
        var = [(b, a) for b, a in zip(self.buckets, gains.by_bucket) if not b.constant]
        phis = [torch.softmax(kq.values.index_select(0, b.pair.view(-1)).view(b.pair.shape) + b.log_count, dim=1)
                for b, _ in var]
        blocks = [self._block(b, a, phi) for (b, a), phi in zip(var, phis)]
        want = [True] * len(blocks)
        if gains.constant_block is not None:
            blocks.append(gains.constant_block)
            want.append(False)
        loss, log_loss, rs, log_scale = ce_combine(blocks, want)
        grad = torch.zeros(len(kq.values), dtype=torch.float64)
        for (b, a), phi, r in zip(var, phis, rs):
            g = a * r.gather(1, b.slot)
            ds = phi * (g - (phi * g).sum(1, keepdim=True))
            grad.index_add_(0, b.pair.reshape(-1), ds.reshape(-1))
        return Stage2Loss(loss, log_loss, log_scale), grad, phis

    def limit_loss(self, gains: StageGains) -> float:
        """Stage-2 loss with all attention uniformly on the optimal positions."""
        blocks = []
        for b, a in zip(self.buckets, gains.by_bucket):
            opt = b.optimal * b.count
            blocks.append(self._block(b, a, opt / opt.sum(1, keepdim=True).clamp_min(1)))
        return ce_combine(blocks, [False] * len(blocks))[0]

    def min_optimal_attention(self, phi: list[torch.Tensor]) -> float:
        """min over multi-token sentences of the attention on optimal positions (``phi`` of stage2_loss_grad)."""
        if not bool(self.multi_token.any()):
            return float("nan")
        best = math.inf
        var = [b for b in self.buckets if not b.constant]
        for b, p in zip(var, phi):
            best = min(best, float((p * b.optimal).sum(1).min()))
        for b in self.buckets:
            if b.constant and bool(b.multi.any()):  # attention 1 on the one token
                best = min(best, float(b.optimal[b.multi].min()))
        return best


# ================================================================================ training
def ngd_unit(grad: torch.Tensor, extra_sq: torch.Tensor | None = None) -> tuple[torch.Tensor, float]:
    """grad / max|grad| and the Frobenius norm of that unit (``extra_sq``: per-entry multiplicities)."""
    amax = float(grad.abs().max()) if grad.numel() else 0.0
    if amax == 0.0:
        return grad, 0.0
    unit = grad / amax
    sq = unit**2 if extra_sq is None else unit**2 * extra_sq
    return unit, math.sqrt(float(sq.sum()))


def train_structured(
    dataset: NTPDataset,
    config: TrainConfig,
    progress: Callable[[str, int, int], None] | None = None,
    structure: DatasetStructure | None = None,
    problem: StructuredProblem | None = None,
    keep_interrupted: bool = False,
) -> TrainResult:
    """Two-stage NGD/GD from zero with one-hot embeddings on the structured state; returns a TrainResult.

    A KeyboardInterrupt propagates unless ``keep_interrupted`` (then the steps so far are returned, as
    :func:`ttlab.ntp.train.train` does).

    ``config`` is a :class:`ttlab.ntp.config.TrainConfig` (validated; step sizes resolved here with d = |V|).
    The recorded metrics equal the dense run's to rounding (see the module docstring). The result's dense
    ``W_ov``/``W_kq`` and the W* matrices are filled only for |V| ≤ :data:`MATERIALIZE_LIMIT` (else None /
    0 × 0); the structured parameters are in ``result.structured``.
    """
    why = structured_ineligibility(config, None)
    if why:
        raise TTLabInputError(f"impl=structured cannot run this configuration: {why}", params=("impl",))
    t0 = time.perf_counter()
    prob = problem if problem is not None else StructuredProblem(dataset, structure)
    with one_thread():
        return _train(prob, config, progress, t0, keep_interrupted)


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the structured steps on one intra-op thread (training and its time estimate alike).

    The steps' kernels are short (one batch of sentences each); on a shared 2-core machine two threads
    were measured at ~4× the CPU time and slower in wall time too (a time estimate timed on two threads
    read 8× the training's wall time at |V| = 5,000).
    """
    before = torch.get_num_threads()
    if before > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _train(prob: StructuredProblem, config: TrainConfig, progress, t0: float, keep_interrupted: bool = False) -> TrainResult:
    V = prob.vocab_size
    cfg = replace(config.resolved(V), dtype="float64", impl="structured")
    if len(prob.colloc_tokens) == 0:
        raise TTLabInputError("the dataset has no one-token sentences, so there is no collocation to train on")
    star_ov, star_kq = prob.max_margin(progress)
    m_col = len(prob.colloc_tokens)
    zeros = torch.zeros(m_col, dtype=torch.float64)
    ov = StructuredOV(V, prob.colloc_tokens, prob.colloc_next, zeros.clone(), zeros.clone())
    # ⟨W_ov, W*_ov⟩ coefficients per column and ‖W*_ov‖
    sov_lab = torch.as_tensor(star_ov.values[:m_col])
    sov_oth = torch.as_tensor(star_ov.values[m_col:])
    star_on_pairs = _kq_star_on_pairs(prob, star_kq)

    metrics: dict[str, list] = {c: [] for c in METRIC_COLUMNS}
    nan = float("nan")

    def cos_ov() -> tuple[float, float]:
        norm = ov.norm()
        if norm == 0.0 or star_ov.norm == 0.0:
            return nan, norm
        inner = float((ov.label_val * sov_lab).sum() + (V - 1) * (ov.other_val * sov_oth).sum())
        return inner / (norm * star_ov.norm), norm

    def record(stage, t, ce, cos, norm, star_norm, eta, att, ovm) -> None:
        vals = (stage, t, ce.loss, cos, norm, t * eta / (2 * star_norm) if star_norm > 0 else nan, t * eta, att, *ovm,
                ce.log_loss)
        for c, v in zip(METRIC_COLUMNS, vals):
            metrics[c].append(v)

    mult1 = torch.tensor([1.0, float(V - 1)], dtype=torch.float64)
    kq = SparseKQ(V, prob.pair_token, prob.pair_query, torch.zeros(len(prob.pair_keys), dtype=torch.float64))
    interrupted = None
    try:
        for t in range(cfg.stage1_steps + 1):
            ce, _ = prob.stage1_loss_grad(ov)
            c, nrm = cos_ov()
            record("1", t, ce, c, nrm, star_ov.norm, cfg.eta0, nan, (c, nrm))
            if t < cfg.stage1_steps:
                _step_ov(ov, ce, cfg, mult1)
            if progress:
                progress("stage 1", t, cfg.stage1_steps)
        frozen_ov = cos_ov()

        a_tok = prob.position_gain(ov)
        # stage 2 is skipped when W*_kq has no constraint and no stage-2 step is asked for (as in the dense run)
        for t in range(cfg.stage2_steps + 1 if cfg.stage2_steps or star_kq.n_constraints else 0):
            ce, grad, phi = prob.stage2_loss_grad(a_tok, kq)
            nrm = kq.norm()
            c = nan if nrm == 0.0 or star_kq.norm == 0.0 else float(kq.values @ star_on_pairs) / (nrm * star_kq.norm)
            record("2", t, ce, c, nrm, star_kq.norm, cfg.eta, prob.min_optimal_attention(phi), frozen_ov)
            if t < cfg.stage2_steps:
                _step_kq(kq, ce, grad, cfg)
            if progress:
                progress("stage 2", t, cfg.stage2_steps)
    except KeyboardInterrupt:  # keep the steps recorded so far, as the dense trainer does
        if not keep_interrupted:
            raise
        rows = min(len(v) for v in metrics.values())
        for k in metrics:
            del metrics[k][rows:]
        interrupted = (f"stage {metrics['stage'][-1]}, step {metrics['step'][-1]}" if metrics["step"]
                       else "before the first step")
        a_tok = prob.position_gain(ov)
    dense = V <= MATERIALIZE_LIMIT
    return TrainResult(
        config=cfg,
        W_ov=ov.dense() if dense else None,
        W_kq=kq.dense() if dense else None,
        wov_star=sparse_ov_solution(star_ov, m_col, dense),
        wkq_star=star_kq.solution(dense),
        metrics=metrics,
        wall_time_s=time.perf_counter() - t0,
        limit_loss=prob.limit_loss(a_tok),
        max_len=prob.L,
        interrupted=interrupted,
        structured=StructuredState(ov, kq, star_ov, star_kq),
    )


def _kq_star_on_pairs(prob: StructuredProblem, star_kq: SparseMaxMargin) -> torch.Tensor:
    """W*_kq's values on the co-occurring pairs (its support lies in them; anything outside only adds to its norm)."""
    V = prob.vocab_size
    skeys = star_kq.cols * V + star_kq.rows
    by_key = np.argsort(prob.pair_keys)
    sorted_keys = prob.pair_keys[by_key]
    pos = np.searchsorted(sorted_keys, skeys)
    hit = (pos < len(sorted_keys)) & (sorted_keys[np.minimum(pos, len(sorted_keys) - 1)] == skeys)
    star_on_pairs = torch.zeros(len(prob.pair_keys), dtype=torch.float64)
    star_on_pairs[torch.as_tensor(by_key[pos[hit]])] = torch.as_tensor(star_kq.values[hit])
    return star_on_pairs


def _step_ov(ov: StructuredOV, ce: CompressedCE, cfg: TrainConfig, mult1: torch.Tensor) -> None:
    """One stage-1 NGD or GD update of ``ov`` from its compressed loss ``ce`` (``mult1``: the entries' multiplicities)."""
    g = ce.grad if ov.vocab_size > 1 else torch.cat([ce.grad, torch.zeros_like(ce.grad)], 1)
    if cfg.optimizer == "ngd":
        unit, un = ngd_unit(g, mult1)
        if un > 0:
            ov.label_val = ov.label_val - cfg.eta0 * unit[:, 0] / un
            ov.other_val = ov.other_val - cfg.eta0 * unit[:, 1] / un
    else:
        scale = math.exp(ce.log_scale) if ce.log_scale else 1.0
        ov.label_val = ov.label_val - cfg.eta0 * (g[:, 0] * scale)
        ov.other_val = ov.other_val - cfg.eta0 * (g[:, 1] * scale)


def _step_kq(kq: SparseKQ, ce: Stage2Loss, grad: torch.Tensor, cfg: TrainConfig) -> None:
    """One stage-2 NGD or GD update of ``kq`` from the W_kq gradient on the pairs (scaled by ``ce.log_scale``)."""
    if cfg.optimizer == "ngd":
        unit, un = ngd_unit(grad)
        if un > 0:
            kq.values = kq.values - cfg.eta * unit / un
    else:
        scale = math.exp(ce.log_scale) if ce.log_scale else 1.0
        kq.values = kq.values - cfg.eta * (grad * scale)


@dataclass
class StructuredState:
    """The structured parameters and max-margin solutions of a structured run (no |V|² array)."""

    W_ov: StructuredOV
    W_kq: SparseKQ
    wov_star: SparseMaxMargin
    wkq_star: SparseMaxMargin
