"""Reading a dataset text: the format's arrow, what reading and checking a text costs in memory, and the
array scan that tells a valid text without building it.

Reading and checking keep one view per sentence (O(L) for a sequence line of L tokens, :mod:`ttlab.ntp.dataset`).
The constants below were measured on the product (CPython 3.11, torch CPU) and are rounded up: reading and
checking take ≤ :data:`CHECK_BYTES_PER_TOKEN` bytes per token of the file (2.3 kB measured with one violation
per sentence, 0.6 kB for a valid line); a valid file needs ≤ :data:`VALID_CHECK_BYTES_PER_TOKEN` (0.6 kB for one
long line, 0.33 kB measured for 200,000 short sentences at |V| = 50,257), so a text over the worst-case
budget is first scanned (:func:`scan_text`, ~0.14 kB per token) and read when it is valid and fits the
valid budget (:func:`require_readable`, which :meth:`ttlab.ntp.dataset.NTPDataset.from_text` calls).

The scan is the computation behind :func:`ttlab.ntp.fastcheck.quick_check` (whose docstring states the
rules): the text is parsed once into integer arrays (token ids in order of first appearance, as
:class:`ttlab.ntp.dataset.NTPDataset` numbers them) and every assumption is one array pass. Sequence
lines expand into their prefixes (L(L−1)/2 slots per line); above :data:`MAX_SLOTS` expanded slots
:func:`scan_text` returns None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.ntp.limits import DEFAULT_MEMORY_LIMIT_GIB, GIB, check_limit, gib_text

#: the separator of an explicit line ``S V => O`` of the dataset format
ARROW = "=>"
CHECK_BYTES_PER_TOKEN = 3000
VALID_CHECK_BYTES_PER_TOKEN = 600
#: the vectorized check stores every sentence's tokens: above this many slots it declines
MAX_SLOTS = 50_000_000


def require_readable(text: str, source: str, memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB) -> int:
    """Refuse a dataset text whose reading and checking would exceed the limit; returns its token count.

    Counts tokens line by line (no sentence is built), so the refusal itself is cheap. A text over the
    worst-case budget (violations recorded for every sentence) but within the valid-file budget is checked
    first with the vectorized checker, and accepted when it is valid.
    """
    limit = check_limit(memory_limit_gib) * GIB
    total, longest, longest_line = 0, 0, 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        n = len(raw.split("#", 1)[0].split())
        total += n
        if n > longest:
            longest, longest_line = n, lineno
    need = total * CHECK_BYTES_PER_TOKEN
    if need > limit and total * VALID_CHECK_BYTES_PER_TOKEN <= limit and _valid_by_scan(text):
        return total
    if need > limit:
        raise TTLabInputError(
            f"{source}: {total:,} tokens would take up to ~{gib_text(need)} to read and check "
            f"(~{CHECK_BYTES_PER_TOKEN:,} bytes per token; limit {gib_text(limit)}); the longest line is line "
            f"{longest_line} with {longest:,} tokens ({max(longest - 1, 0):,} sentences). Split the file, or "
            f"raise the limit with memory_limit_gib={math.ceil(need / GIB)} if the machine has that much memory.",
            params=("memory_limit_gib",)
        )
    return total


def _valid_by_scan(text: str) -> bool:
    """True when the vectorized scan applies to ``text`` and finds Assumptions 1 and 3 hold."""
    s = scan_text(text)
    return s is not None and s.valid


@dataclass
class TextScan:
    """What :func:`scan_text` found (:class:`ttlab.ntp.fastcheck.QuickCheck` adds the source and its views)."""

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


def scan_text(text: str, max_slots: int = MAX_SLOTS) -> TextScan | None:
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
    return TextScan(
        valid=bool(valid), vocab=vocab, collocation=colloc, n_sentences=n_distinct,
        n_occurrences=int(S), width=int(distinct.max()) if S else 0, widest_line=wl,
        widest_tokens=int(lengths[widest]) if S else 0, widest_line_sentences=int((lines == wl).sum()) if S else 0,
        role_query=qt // V, role_token=qt % V, role_above=a, role_below=b)
