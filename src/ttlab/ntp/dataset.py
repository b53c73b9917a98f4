"""Next-token-prediction datasets: the text format, distinct sentences and their weights π(n).

The text format has two kinds of line (tokens are whitespace-separated, ``#`` starts a comment):

* a *sequence line* ``S V O P`` contributes every proper prefix as a training sentence labelled with
  the token that follows it (``S → V``, ``S V → O``, ``S V O → P``), as in the paper's Example 1;
* an *explicit line* ``S V O => P`` contributes exactly that sentence and label.

Repeated sentences are merged; their multiplicity becomes the frequency weight π(n).

A sequence line of L tokens implies L − 1 sentences holding ~L²/2 token slots. They are not copied:
each sentence's tokens are a :class:`TokenSeq`, a view of the first k tokens of the line, and repeated
sentences are found with a prefix tree, so reading a line costs O(L) memory and time. A text whose reading
would exceed the memory limit is refused first (:func:`ttlab.ntp.reading.require_readable`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.ntp.limits import DEFAULT_MEMORY_LIMIT_GIB, check_limit
from ttlab.ntp.reading import ARROW, require_readable

#: sentences longer than this are shown abbreviated in messages (first and last tokens)
SHOW_TOKENS = 12


class TokenSeq(Sequence):
    """The first ``length`` tokens of the tuple ``base``, without a copy (a sentence of a sequence line).

    Compares and hashes like the tuple it stands for, so it can be mixed with tuples in sets and dicts.
    """

    __slots__ = ("base", "length", "_hash")

    def __init__(self, base: tuple[str, ...], length: int | None = None) -> None:
        self.base = base
        self.length = len(base) if length is None else length
        if not 0 <= self.length <= len(base):
            raise ValueError(f"prefix length {self.length} outside 0..{len(base)}")
        self._hash: int | None = None

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i):  # type: ignore[override]
        r = range(self.length)[i]
        if isinstance(r, int):
            return self.base[r]
        if r.step > 0:
            return self.base[r.start : r.stop : r.step]
        return tuple(self.base[j] for j in r)

    def __iter__(self) -> Iterator[str]:
        return itertools.islice(self.base, self.length)

    def tuple(self) -> tuple[str, ...]:
        """The tokens as a plain tuple (a copy unless the view covers the whole base)."""
        return self.base if self.length == len(self.base) else self.base[: self.length]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TokenSeq):
            if self.length != other.length:
                return False
            return (self.base is other.base) or self.tuple() == other.tuple()
        if isinstance(other, tuple):
            return self.length == len(other) and self.tuple() == other
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.tuple())
        return self._hash

    def __repr__(self) -> str:
        return repr(self.tuple()) if self.length <= SHOW_TOKENS else f"TokenSeq({shorten(self)!r})"


def shorten(tokens: Sequence[str], show: int = SHOW_TOKENS) -> str:
    """Tokens joined by spaces; a long sentence keeps its first and last tokens and says how long it is."""
    n = len(tokens)
    if n <= show:
        return " ".join(tokens)
    head = show // 2
    return f"{' '.join(tokens[:head])} … {' '.join(tokens[n - (show - head):])} ({n:,} tokens)"


@dataclass(frozen=True)
class Sentence:
    """One distinct training sentence X(n) with its next token and how often it occurs."""

    tokens: TokenSeq
    label: str
    count: int
    lines: tuple[int, ...]  # 1-based source line numbers that contributed it (0 = built in code)

    @property
    def query(self) -> str:
        """The last token x_L, which the attention layer uses as its query."""
        return self.tokens[-1]

    def __str__(self) -> str:
        return f"{' '.join(self.tokens)} {ARROW} {self.label}"

    def short(self) -> str:
        """``str(self)`` with a long sentence abbreviated (for messages)."""
        return f"{shorten(self.tokens)} {ARROW} {self.label}"


class _Builder:
    """Collects sentences, merging repeats through a prefix tree keyed by (node, token)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.child: dict[tuple[int, str], int] = {}
        self.where: dict[tuple[int, str], int] = {}  # (node of the tokens, label) → sentence index
        self.tokens: list[TokenSeq] = []
        self.labels: list[str] = []
        self.lines: list[list[int]] = []
        self.vocab: dict[str, None] = {}

    def _step(self, node: int, tok: str) -> int:
        nxt = self.child.get((node, tok))
        if nxt is None:
            nxt = self.child[(node, tok)] = len(self.child) + 1
        return nxt

    def _add(self, node: int, base: tuple[str, ...], length: int, label: str, line: int) -> None:
        k = self.where.get((node, label))
        if k is None:
            self.where[(node, label)] = len(self.tokens)
            self.tokens.append(TokenSeq(base, length))
            self.labels.append(label)
            self.lines.append([line])
        else:
            self.lines[k].append(line)

    def sentence(self, toks: tuple[str, ...], label: str, line: int) -> None:
        """One explicit sentence ``toks => label``."""
        node = 0
        for t in toks:
            self.vocab.setdefault(t, None)
            node = self._step(node, t)
        self.vocab.setdefault(label, None)
        self._add(node, toks, len(toks), label, line)

    def sequence(self, words: tuple[str, ...], line: int) -> None:
        """Every proper prefix of ``words`` labelled with the token that follows it."""
        node = 0
        for cut in range(1, len(words)):
            self.vocab.setdefault(words[cut - 1], None)
            node = self._step(node, words[cut - 1])
            self._add(node, words, cut, words[cut], line)
        self.vocab.setdefault(words[-1], None)

    def dataset(self, text: str | None = None) -> "NTPDataset":
        sentences = [
            Sentence(tokens=t, label=y, count=len(ls), lines=tuple(ls))
            for t, y, ls in zip(self.tokens, self.labels, self.lines)
        ]
        return NTPDataset(sentences=sentences, vocab=list(self.vocab), source=self.source, text=text)


@dataclass
class NTPDataset:
    """A set of distinct sentences over a vocabulary, with frequency weights.

    ``vocab`` lists tokens in order of first appearance; ``index`` maps a token to its position.
    Use :meth:`from_text`, :meth:`from_file`, :meth:`from_sequences` or :meth:`from_pairs`.
    """

    sentences: list[Sentence]
    vocab: list[str]
    source: str = "<memory>"
    text: str | None = field(default=None, repr=False, compare=False)  # the text it was parsed from
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.sentences:
            raise TTLabInputError(
                f"{self.source}: the dataset has no training sentences; add sequence lines "
                f"such as 'S V O P' or explicit lines such as 'S V {ARROW} O'"
            )
        self.index = {tok: i for i, tok in enumerate(self.vocab)}

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_pairs(
        cls,
        pairs: list[tuple[list[str] | tuple[str, ...], str]],
        source: str = "<memory>",
        lines: list[int] | None = None,
    ) -> "NTPDataset":
        """Build from (sentence tokens, label) pairs; duplicates are merged into counts."""
        b = _Builder(source)
        for k, (toks, label) in enumerate(pairs):
            toks = tuple(toks)
            if not toks:
                raise TTLabInputError(f"{source}: sentence #{k + 1} is empty; a sentence needs ≥ 1 token")
            b.sentence(toks, label, lines[k] if lines is not None else 0)
        return b.dataset()

    @classmethod
    def from_sequences(cls, sequences: list[list[str] | str], source: str = "<memory>") -> "NTPDataset":
        """Every proper prefix of every sequence becomes a sentence labelled with the next token."""
        text = "\n".join(s if isinstance(s, str) else " ".join(s) for s in sequences)
        return cls.from_text(text, source=source)

    @classmethod
    def from_text(cls, text: str, source: str = "<text>", memory_limit_gib: float | None = None) -> "NTPDataset":
        """Parse the two-kind line format (see the module docstring); a leading byte-order mark is dropped.

        Text whose reading and checking would need more than ``memory_limit_gib`` (default
        :data:`ttlab.ntp.limits.DEFAULT_MEMORY_LIMIT_GIB`) is refused before any sentence is built.
        """
        text = text.removeprefix("\ufeff")
        require_readable(text, source, DEFAULT_MEMORY_LIMIT_GIB if memory_limit_gib is None else memory_limit_gib)
        b = _Builder(source)
        for lineno, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            where = f"{source}, line {lineno}"
            words = line.split()
            n_arrows = words.count(ARROW)
            if n_arrows == 0 and any(ARROW in w for w in words):
                raise TTLabInputError(
                    f"{where}: '{ARROW}' must stand alone between spaces (got {line!r}); write 'A B {ARROW} C'"
                )
            if n_arrows > 1:
                raise TTLabInputError(f"{where}: more than one '{ARROW}' in {line!r}; an explicit line is 'A B {ARROW} C'")
            if n_arrows == 1:
                pos = words.index(ARROW)
                left, right = words[:pos], words[pos + 1 :]
                if not left:
                    raise TTLabInputError(f"{where}: nothing before '{ARROW}' in {line!r}; the sentence needs ≥ 1 token")
                if len(right) != 1:
                    raise TTLabInputError(
                        f"{where}: expected exactly one next token after '{ARROW}', got {len(right)} in {line!r}"
                    )
                b.sentence(tuple(left), right[0], lineno)
            else:
                if len(words) < 2:
                    raise TTLabInputError(
                        f"{where}: a sequence line needs at least two tokens (a sentence and its next token), "
                        f"got {line!r}; for a one-token sentence write 'X {ARROW} Y'"
                    )
                b.sequence(tuple(words), lineno)
        if not b.tokens:
            raise TTLabInputError(
                f"{source}: no training sentences found (the file is empty or holds only comments/blank lines)"
            )
        return b.dataset(text)

    @classmethod
    def from_file(cls, path: str | Path, memory_limit_gib: float | None = None) -> "NTPDataset":
        """Read a dataset file (UTF-8 text in the two-kind line format; a leading byte-order mark is dropped)."""
        return cls.from_text(read_dataset_text(path, memory_limit_gib), source=str(path), memory_limit_gib=memory_limit_gib)

    # ------------------------------------------------------------------ views
    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def max_len(self) -> int:
        return max(len(s.tokens) for s in self.sentences)

    def weights(self) -> np.ndarray:
        """π(n): frequency of each distinct sentence, summing to 1."""
        counts = np.array([s.count for s in self.sentences], dtype=np.float64)
        return counts / counts.sum()

    def to_text(self) -> str:
        """Text that parses back to the same dataset.

        The source text when the dataset was parsed from text (a sequence line of L tokens stays one
        line rather than L − 1 explicit lines); otherwise explicit lines, repeats written out.
        """
        if self.text is not None:
            return self.text if self.text.endswith("\n") else self.text + "\n"
        out = []
        for s in self.sentences:
            out.extend([str(s)] * s.count)
        return "\n".join(out) + "\n"

    def encode(self, tokens: list[str] | tuple[str, ...]) -> list[int]:
        """Token strings → indices; unknown tokens raise a clear error."""
        unknown = [t for t in tokens if t not in self.index]
        if unknown:
            raise TTLabInputError(
                f"token(s) {', '.join(map(repr, unknown))} are not in the vocabulary of {self.source} "
                f"({', '.join(self.vocab[:12])}{' …' if len(self.vocab) > 12 else ''})"
            )
        return [self.index[t] for t in tokens]


def read_dataset_text(path: str | Path, memory_limit_gib: float | None = None) -> str:
    """The text of a dataset file: it must exist, be a file within the memory limit and be UTF-8 (a
    leading byte-order mark is dropped)."""
    path = Path(path)
    if not path.exists():
        raise TTLabInputError(f"dataset file {str(path)!r} does not exist")
    if path.is_dir():
        raise TTLabInputError(f"{str(path)!r} is a directory; pass a dataset text file")
    limit = check_limit(DEFAULT_MEMORY_LIMIT_GIB if memory_limit_gib is None else memory_limit_gib)
    size = path.stat().st_size
    if size > limit * 2**30:
        raise TTLabInputError(
            f"{path}: the file alone is {size / 2**30:.2f} GiB, above the {limit:g} GiB limit; split it, or "
            "raise memory_limit_gib if the machine has the memory", params=("memory_limit_gib",)
        )
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TTLabInputError(
            f"{path}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}, line {line}); "
            "save the file as UTF-8"
        ) from None
    return text


def dataset_info(dataset: NTPDataset) -> dict:
    """JSON summary of a dataset: source, |V|, distinct sentences, occurrences and L_max."""
    return {
        "source": dataset.source,
        "vocab_size": dataset.vocab_size,
        "n_distinct_sentences": len(dataset.sentences),
        "n_occurrences": int(sum(s.count for s in dataset.sentences)),
        "max_len": dataset.max_len,
    }


def line_groups(sentences: list[Sentence]) -> list[tuple[tuple[str, ...], list[int]]]:
    """Sentence indices grouped by the token tuple they are prefixes of (views of one line share it)."""
    by_base: dict[int, tuple[tuple[str, ...], list[int]]] = {}
    for i, s in enumerate(sentences):
        base = s.tokens.base if isinstance(s.tokens, TokenSeq) else tuple(s.tokens)
        by_base.setdefault(id(base), (base, []))[1].append(i)
    return list(by_base.values())


def batch_width(dataset: NTPDataset) -> tuple[int, int]:
    """U_max (most distinct tokens in one sentence) and the index of a sentence that has that many.

    One pass over each line's tokens (O(total tokens)), so the cost of a model can be stated before it
    is built.
    """
    best, arg = 0, 0
    sentences = dataset.sentences
    for base, members in line_groups(sentences):
        members = sorted(members, key=lambda i: len(sentences[i].tokens))
        seen: set[str] = set()
        pos = 0
        for i in members:
            ell = len(sentences[i].tokens)
            while pos < ell:
                seen.add(base[pos])
                pos += 1
            if len(seen) > best:
                best, arg = len(seen), i
    return best, arg
