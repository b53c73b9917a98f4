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
They are checked against autograd and finite differences in the tests.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp.cost import batch_width
from ttlab.ntp.dataset import NTPDataset, TokenSeq
from ttlab.ntp.structure import DatasetStructure, _groups, analyze

_DTYPES = {"float64": torch.float64, "float32": torch.float32}
#: with dtype="auto", problems with at least this many (padded tokens × |V|) use float32
AUTO_FLOAT32_WORK = 2_000_000


def resolve_dtype(dtype: str | torch.dtype, work: int = 0) -> torch.dtype:
    """'float64' / 'float32' / 'auto' (or a torch dtype) → torch dtype.

    'auto' is float64 for small problems and float32 from :data:`AUTO_FLOAT32_WORK` on, where float32
    halves the memory traffic and its rounding (1e-7) is far below every measured quantity.
    """
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype == "auto":
        return torch.float32 if work >= AUTO_FLOAT32_WORK else torch.float64
    if dtype not in _DTYPES:
        raise TTLabInputError(f"dtype must be one of auto, {', '.join(_DTYPES)} (got {dtype!r})")
    return _DTYPES[dtype]


def softmax_cross_entropy(
    logits: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor, rows: torch.Tensor | None = None
) -> tuple[float, torch.Tensor]:
    """Σ_n w_n · (−log softmax(logits_n)[y_n]) and its gradient w.r.t. the logits, w_n (p_n − e_{y_n}).

    One exponential pass; the label log-probabilities come from the log-sum-exp, so they stay finite
    even when a probability underflows.
    """
    mx = logits.max(dim=1, keepdim=True).values
    e = torch.exp(logits - mx)
    z = e.sum(1, keepdim=True)
    rows = torch.arange(len(labels)) if rows is None else rows
    logp_y = logits[rows, labels] - mx.squeeze(1) - torch.log(z.squeeze(1))
    loss = -(weights * logp_y).sum()
    r = e * (weights[:, None] / z)
    r[rows, labels] -= weights
    return float(loss), r


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
    from ttlab.ntp.dataset import Sentence

    wrapped = [Sentence(s if isinstance(s, TokenSeq) else TokenSeq(tuple(s)), "", 1, ()) for s in sentences]
    n = len(wrapped)
    groups = []
    width = 1
    for base, members in _groups(wrapped):
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
    """Loss value, gradients (None when not requested) and the forward quantities behind them."""

    loss: float
    grad_ov: torch.Tensor | None
    grad_kq: torch.Tensor | None
    attention: torch.Tensor  # φ per distinct token, (n, U), zero on padding


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
    ) -> None:
        self.dataset = dataset
        self.structure = structure if structure is not None else analyze(dataset)
        V = dataset.vocab_size
        width, _ = batch_width(dataset)
        self.dtype = resolve_dtype(dtype, work=len(dataset.sentences) * width * V)
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
        ce = torch.nn.functional.cross_entropy(logits, self.labels, reduction="none")
        return (self.weights * ce).sum()

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
        loss, r = softmax_cross_entropy(logits, self.labels, self.weights, self._rows)
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
        return LossGrad(loss, grad_ov, grad_kq, phi)

    # ------------------------------------------------------------------ stage 1
    def collocation_loss_and_grad(self, W_ov: torch.Tensor) -> tuple[float, torch.Tensor]:
        """Stage-1 loss L0(W_ov) = mean over collocation pairs of −log softmax(W_ov x)[n(x)], and its gradient."""
        if len(self.colloc_tokens) == 0:
            raise TTLabInputError("the dataset has no one-token sentences, so there is no collocation to train on")
        if self.E is None:
            x = None
            logits = W_ov[:, self.colloc_tokens].T
        else:
            x = self.E[:, self.colloc_tokens].T  # (m, d)
            logits = x @ W_ov.T
        m = len(self.colloc_tokens)
        loss, r = softmax_cross_entropy(logits, self.colloc_next, torch.full((m,), 1.0 / m, dtype=self.dtype))
        if self.E is None:
            grad = torch.zeros_like(W_ov)
            grad[:, self.colloc_tokens] = r.T
        else:
            grad = r.T @ x
        return loss, grad

    def collocation_loss(self, W_ov: torch.Tensor) -> torch.Tensor:
        """L0 written plainly (autograd reference for the tests)."""
        E = torch.eye(self.vocab_size, dtype=self.dtype) if self.E is None else self.E
        logits = (W_ov @ E[:, self.colloc_tokens]).T
        return torch.nn.functional.cross_entropy(logits, self.colloc_next)

    def min_optimal_attention(self, phi: torch.Tensor) -> float:
        """min over multi-token sentences of the total attention on optimal positions (Theorem 2)."""
        if not bool(self.multi_token.any()):
            return float("nan")
        mass = (phi * self.optimal_mask).sum(1)
        return float(mass[self.multi_token].min())
