"""Vectorized check of Assumptions 1 and 3 for large dataset files (what `ttlab ntp check` runs first).

May import: numpy, :mod:`ttlab.errors`, :mod:`ttlab.ntp.dataset` (the format's arrow) and
:mod:`ttlab.ntp.cost` (the training-cost record). Nothing here prints.

:func:`ttlab.ntp.structure.analyze` walks sentences in Python and keeps every order edge with its
source lines, which is what its violation messages need, but at |V| = 50,257 with 200,000 sentences it
takes minutes. Here the file is parsed once into integer arrays (token ids in order of first
appearance, as :class:`ttlab.ntp.dataset.NTPDataset` numbers them) and every assumption is one
array pass:

* collocation: the labels of the one-token sentences; a token with two labels, or a token of a
  longer sentence without one, breaks Assumption 1;
* a sentence with query q and label y is realizable when some token in it has n(x) = y;
* under q, a token is *above* when it is optimal in a sentence that also holds a non-optimal token,
  *below* when it is non-optimal in a (realizable) sentence; confused = above and below. A cycle of
  the order makes all its members confused, so no confused token ⇒ every order is acyclic;
* Assumption 3: per sentence the optimal occurrences ≥ the count of each non-optimal token.

The verdict equals ``analyze(...).valid`` (tested on valid and invalid files). When a file breaks an
assumption, the caller re-runs :func:`~ttlab.ntp.structure.analyze` for the messages, line numbers
and the full list. Sequence lines expand into their prefixes (L(L−1)/2 slots per line); above
:data:`MAX_SLOTS` expanded slots :func:`quick_check` returns None and the incremental checker is used.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ttlab.ntp.dataset import ARROW

__all__ = ["MAX_SLOTS", "QuickCheck", "quick_check"]

#: the vectorized check stores every sentence's tokens: above this many slots it declines
MAX_SLOTS = 50_000_000


@dataclass
class QuickCheck:
    """What the vectorized check found (enough for `ntp check`'s report of a valid file)."""

    source: str
    valid: bool
    vocab: list[str]
    collocation: np.ndarray  # n(x) per token id, −1 without collocation
    n_sentences: int  # distinct (tokens, label) sentences
    n_occurrences: int  # sentences with repeats
    width: int  # most distinct tokens in one sentence
    widest_line: int
    widest_tokens: int
    widest_line_sentences: int
    # per (query, token) with a role: query id, token id, above?, below?
    role_query: np.ndarray = field(repr=False)
    role_token: np.ndarray = field(repr=False)
    role_above: np.ndarray = field(repr=False)
    role_below: np.ndarray = field(repr=False)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def n_orders(self) -> int:
        """Queries whose order has at least one pair."""
        return int(np.unique(self.role_query[self.role_above]).size)

    def degenerate(self) -> dict[str, str]:
        """As :meth:`ttlab.ntp.structure.DatasetStructure.degenerate` (its wording)."""
        out: dict[str, str] = {}
        if self.vocab_size < 2:
            out["stage1"] = (f"the vocabulary has a single token ({self.vocab[0]!r}): there is no other token to "
                             "predict, so the collocation loss is 0 and W*_ov has no constraint")
        if not self.role_above.any():
            out["stage2"] = ("no multi-token sentence holds both an optimal token (n(x) = its next token) and a "
                             "non-optimal one, so no query orders two tokens; W*_kq has no constraint and the "
                             "stage-2 direction is undefined")
        return out

    def orders(self) -> dict[str, dict]:
        """Per query with an order: its optimal, non-optimal and confused tokens and how many are
        non-comparable (counted, not listed: at large |V| every query has ~|V| of them)."""
        out: dict[str, dict] = {}
        if self.role_query.size == 0:
            return out
        has_order = np.isin(self.role_query, np.unique(self.role_query[self.role_above]))
        q, t = self.role_query[has_order], self.role_token[has_order]
        a, b = self.role_above[has_order], self.role_below[has_order]
        starts = np.r_[0, np.flatnonzero(np.diff(q)) + 1, q.size]
        V = self.vocab_size
        for i in range(starts.size - 1):
            sl = slice(starts[i], starts[i + 1])
            tt, aa, bb = t[sl], a[sl], b[sl]
            cat = {"optimal": tt[aa & ~bb], "non_optimal": tt[bb & ~aa], "confused": tt[aa & bb]}
            entry = {k: [self.vocab[x] for x in np.sort(v)] for k, v in cat.items()}
            entry["n_non_comparable"] = V - int(((aa | bb)).sum())
            out[self.vocab[int(q[starts[i]])]] = entry
        return out

    def training_cost(self):
        """:func:`ttlab.ntp.cost.training_cost` of the dataset (dim None, 0 steps), from the arrays."""
        from ttlab.ntp.cost import MODEL_BYTES_PER_SLOT, TrainingCost

        slots = self.n_sentences * self.width
        return TrainingCost(n_sentences=self.n_sentences, width=self.width, vocab_size=self.vocab_size,
                            dim=self.vocab_size, steps=0, model_bytes=slots * MODEL_BYTES_PER_SLOT, metric_bytes=0,
                            products_per_step=slots * self.vocab_size, line=self.widest_line,
                            line_sentences=self.widest_line_sentences, line_tokens=self.widest_tokens)


def _parse(text: str, max_slots: int = MAX_SLOTS) -> tuple | None:
    """Lines → token ids, sentence boundaries, labels and line numbers; None on anything the strict
    parser (:meth:`NTPDataset.from_text`) must report, or when the expansion exceeds ``max_slots``.

    One pass over the lines collects their words; ids come from one dict over the distinct words (in
    order of first appearance); the sentences (a sequence line's prefixes) are index arithmetic."""
    words_all: list[str] = []
    line_no: list[int] = []
    line_start: list[int] = []
    line_len: list[int] = []  # explicit line: tokens before the arrow; sequence line: −(number of words)
    slots = 0
    for lineno, raw in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        words = (raw.split("#", 1)[0] if "#" in raw else raw).split()
        if not words:
            continue
        line_no.append(lineno)
        line_start.append(len(words_all))
        if ARROW in raw:
            if len(words) < 3 or words[-2] != ARROW or words.count(ARROW) != 1:
                return None
            words_all += words[:-2]
            words_all.append(words[-1])
            line_len.append(len(words) - 2)
            slots += len(words) - 2
        else:
            if len(words) < 2:
                return None
            words_all += words
            line_len.append(-len(words))
            slots += len(words) * (len(words) - 1) // 2
        if slots > max_slots:
            return None
    if not line_no:
        return None
    index = {w: i for i, w in enumerate(dict.fromkeys(words_all))}
    ids = np.fromiter(map(index.__getitem__, words_all), dtype=np.int64, count=len(words_all))
    del words_all
    start, n = np.asarray(line_start, dtype=np.int64), np.asarray(line_len, dtype=np.int64)
    lines = np.asarray(line_no, dtype=np.int64)
    seq = n < 0
    # explicit lines: one sentence each; sequence lines of L words: prefixes k = 1 … L − 1
    per_line = np.where(seq, -n - 1, 1)
    s_line = np.repeat(np.arange(n.size), per_line)
    k = np.arange(s_line.size) - np.repeat(np.cumsum(per_line) - per_line, per_line) + 1  # prefix length
    lengths = np.where(seq[s_line], k, n[s_line])
    s_start = start[s_line]
    labels = ids[s_start + lengths]
    offsets = np.r_[0, np.cumsum(lengths)]
    flat = ids[np.repeat(s_start - offsets[:-1], lengths) + np.arange(offsets[-1])]
    return list(index), flat, lengths, labels, lines[s_line]


def quick_check(text: str, source: str = "<text>", max_slots: int = MAX_SLOTS) -> QuickCheck | None:
    """Check the assumptions of a dataset text with array operations; None when the fast path does not
    apply (a format error, for the strict parser to report, or more than ``max_slots`` sentence slots)."""
    parsed = _parse(text, max_slots)
    if parsed is None:
        return None
    vocab, flat, lengths, labels, lines = parsed
    V, S = len(vocab), lengths.size
    sent = np.repeat(np.arange(S), lengths)  # sentence of every slot
    # distinct sentences: hash every sentence's (tokens, label); equal hashes are confirmed exactly
    offsets = np.r_[0, np.cumsum(lengths)]
    raw = flat.astype(np.int32 if V < 2**31 else np.int64)
    width_b = raw.itemsize
    buf = raw.tobytes()
    n_distinct = len({(buf[width_b * o:width_b * e], y) for o, e, y in zip(offsets[:-1].tolist(), offsets[1:].tolist(),
                                                                              labels.tolist())})
    del buf, raw
    # collocation from one-token sentences
    one = lengths == 1
    x1, y1 = flat[offsets[:-1][one]], labels[one]
    pairs = np.unique(x1 * V + y1)
    px = pairs // V
    colloc = np.full(V, -1, dtype=np.int64)
    colloc[px] = pairs % V
    valid = np.unique(px).size == px.size  # no token with two labels
    multi = lengths >= 2
    m_slot = multi[sent]
    s_tok, s_sent = flat[m_slot], sent[m_slot]
    n_tok = colloc[s_tok]
    valid &= bool((n_tok >= 0).all())  # every token of a sentence has a collocation
    is_opt = n_tok == labels[s_sent]
    n_opt = np.bincount(s_sent, weights=is_opt, minlength=S)
    valid &= bool((n_opt[multi] > 0).all())  # realizable
    # per (sentence, token): count; non-optimal counts against the sentence's optimal occurrences
    st_key, st_count = np.unique(s_sent * V + s_tok, return_counts=True)
    st_sent, st_tok = st_key // V, st_key % V
    st_opt = colloc[st_tok] == labels[st_sent]
    worst_non = np.zeros(S)
    np.maximum.at(worst_non, st_sent[~st_opt], st_count[~st_opt])
    valid &= bool((worst_non <= n_opt).all())  # Assumption 3
    has_non = np.bincount(st_sent[~st_opt], minlength=S) > 0
    # width: distinct tokens per sentence
    distinct = np.bincount(st_sent, minlength=S)
    distinct[~multi] = 1
    widest = int(np.argmax(distinct)) if S else 0
    # roles under each query (the query is a sentence's last token)
    query = flat[offsets[1:] - 1]
    q_of = query[st_sent]
    above = st_opt & has_non[st_sent]
    below = ~st_opt
    role = above | below
    qt, inv = np.unique(q_of[role] * V + st_tok[role], return_inverse=True)
    a = np.zeros(qt.size, dtype=bool)
    b = np.zeros(qt.size, dtype=bool)
    np.logical_or.at(a, inv, above[role])
    np.logical_or.at(b, inv, below[role])
    valid &= not bool((a & b).any())  # no confused token (so every order is acyclic)
    wl = int(lines[widest]) if S else 0
    return QuickCheck(
        source=source, valid=bool(valid), vocab=vocab, collocation=colloc, n_sentences=n_distinct,
        n_occurrences=int(S), width=int(distinct.max()) if S else 0, widest_line=wl,
        widest_tokens=int(lengths[widest]) if S else 0, widest_line_sentences=int((lines == wl).sum()) if S else 0,
        role_query=qt // V, role_token=qt % V, role_above=a, role_below=b)
