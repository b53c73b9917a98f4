"""Next-token-prediction datasets: the text format, distinct sentences and their weights π(n).

The text format has two kinds of line (tokens are whitespace-separated, ``#`` starts a comment):

* a *sequence line* ``S V O P`` contributes every proper prefix as a training sentence labelled with
  the token that follows it (``S → V``, ``S V → O``, ``S V O → P``), as in the paper's Example 1;
* an *explicit line* ``S V O => P`` contributes exactly that sentence and label.

Repeated sentences are merged; their multiplicity becomes the frequency weight π(n).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ttlab.errors import TTLabInputError

ARROW = "=>"


@dataclass(frozen=True)
class Sentence:
    """One distinct training sentence X(n) with its next token and how often it occurs."""

    tokens: tuple[str, ...]
    label: str
    count: int
    lines: tuple[int, ...]  # 1-based source line numbers that contributed it (0 = built in code)

    @property
    def query(self) -> str:
        """The last token x_L, which the attention layer uses as its query."""
        return self.tokens[-1]

    def __str__(self) -> str:
        return f"{' '.join(self.tokens)} {ARROW} {self.label}"


@dataclass
class NTPDataset:
    """A set of distinct sentences over a vocabulary, with frequency weights.

    ``vocab`` lists tokens in order of first appearance; ``index`` maps a token to its position.
    Use :meth:`from_text`, :meth:`from_file`, :meth:`from_sequences` or :meth:`from_pairs`.
    """

    sentences: list[Sentence]
    vocab: list[str]
    source: str = "<memory>"
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
        merged: "OrderedDict[tuple[tuple[str, ...], str], list[int]]" = OrderedDict()
        vocab: dict[str, None] = {}
        for k, (toks, label) in enumerate(pairs):
            toks = tuple(toks)
            if not toks:
                raise TTLabInputError(f"{source}: sentence #{k + 1} is empty; a sentence needs ≥ 1 token")
            for t in toks + (label,):
                vocab.setdefault(t, None)
            merged.setdefault((toks, label), []).append(lines[k] if lines is not None else 0)
        sentences = [
            Sentence(tokens=toks, label=label, count=len(ls), lines=tuple(ls)) for (toks, label), ls in merged.items()
        ]
        return cls(sentences=sentences, vocab=list(vocab), source=source)

    @classmethod
    def from_sequences(cls, sequences: list[list[str] | str], source: str = "<memory>") -> "NTPDataset":
        """Every proper prefix of every sequence becomes a sentence labelled with the next token."""
        text = "\n".join(s if isinstance(s, str) else " ".join(s) for s in sequences)
        return cls.from_text(text, source=source)

    @classmethod
    def from_text(cls, text: str, source: str = "<text>") -> "NTPDataset":
        """Parse the two-kind line format (see the module docstring)."""
        pairs: list[tuple[tuple[str, ...], str]] = []
        line_numbers: list[int] = []
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
                pairs.append((tuple(left), right[0]))
                line_numbers.append(lineno)
            else:
                if len(words) < 2:
                    raise TTLabInputError(
                        f"{where}: a sequence line needs at least two tokens (a sentence and its next token), "
                        f"got {line!r}; for a one-token sentence write 'X {ARROW} Y'"
                    )
                for cut in range(1, len(words)):
                    pairs.append((tuple(words[:cut]), words[cut]))
                    line_numbers.append(lineno)
        if not pairs:
            raise TTLabInputError(
                f"{source}: no training sentences found (the file is empty or holds only comments/blank lines)"
            )
        return cls.from_pairs(pairs, source=source, lines=line_numbers)

    @classmethod
    def from_file(cls, path: str | Path) -> "NTPDataset":
        """Read a dataset file (UTF-8 text in the two-kind line format)."""
        path = Path(path)
        if not path.exists():
            raise TTLabInputError(f"dataset file {str(path)!r} does not exist")
        if path.is_dir():
            raise TTLabInputError(f"{str(path)!r} is a directory; pass a dataset text file")
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise TTLabInputError(
                f"{path}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}, line {line}); "
                "save the file as UTF-8"
            ) from None
        return cls.from_text(text, source=str(path))

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
        """Explicit-line text that parses back to the same dataset (repeats written out)."""
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
