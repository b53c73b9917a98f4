"""What a model suite is evaluated on: :class:`SuiteConfig` (every choice, stored in results.json) and the text
windows every model scores (:class:`TextWindow`, :func:`select_windows`; see :mod:`ttlab.lm.suite` for the protocol).
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ttlab.configs import setting
from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.base import AVERAGES
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.lm.configs import SPLITS, WINDOWS
from ttlab.lm.corpus import CorpusSpec
from ttlab.validation import POSITIVE_INT, SEED, Declared, Interval, Options

__all__ = ["BYTES_PER_TOKEN", "DTYPES", "SuiteConfig", "TextWindow", "select_windows"]

BYTES_PER_TOKEN = 4.0
"""Nominal UTF-8 bytes per token of English BPE text, used only to turn token counts into byte sizes."""
DTYPES = ("float32", "bfloat16", "float16")
DECODE_ERRORS = ("strict", "replace")
"""What the suite does with invalid UTF-8 in a corpus: stop with an error, or read U+FFFD."""

_WORD = re.compile(r"\s*\S+")


# ------------------------------------------------------------------------------------------ config
@dataclass(frozen=True)
class SuiteConfig(Declared):
    """What every model of a suite is evaluated on, and how (all choices are stored in results.json)."""

    corpus: str = setting("builtin:sotu", "Corpus spec: builtin:sotu | FILE.txt | FILE.jsonl[.xz] | DIR | hf:PATH.")
    split: str = setting("test", "Document split scored: train | val | test.")
    split_seed: int = setting(0, "Seed of the document split.")
    val_frac: float = setting(0.1, "Fraction of documents in the validation split.")
    test_frac: float = setting(0.1, "Fraction of documents in the test split.")
    max_corpus_docs: int | None = setting(None, "Use only the first N documents of the corpus (before the split).")
    field_name: str = setting("text", "JSONL / hf: text field.")
    context: int = setting(1024, "Tokens per forward pass (clipped to each model's context).")
    stride: int | None = setting(None, "New tokens per later chunk of a window longer than the context (default: "
                                       "context, disjoint chunks).")
    window: str = setting("random", "random (a seeded random span per document) | prefix (the document's start).")
    window_bytes: int | None = setting(None, "Text window length in UTF-8 bytes (default BYTES_PER_TOKEN = 4 × context).")
    windows_per_doc: int = setting(1, "Non-overlapping text windows per document.")
    max_docs: int | None = setting(None, "Score at most N documents of the split.")
    max_tokens: int | None = setting(None, "Text budget in nominal tokens (4 bytes each; real counts are reported).")
    max_bytes: int | None = setting(None, "Exact text budget in bytes (overrides max-tokens).")
    seed: int = setting(0, "Seed of window placement, ID positions and ID batches.")
    device: str = setting("cpu", "cpu | cuda | cuda:N | mps.")
    dtype: str = setting("float32", "float32 | bfloat16 | float16.")
    batch_tokens: int = setting(8192, "Input tokens per batch (fewer for large vocabularies).")
    id_tokens_per_doc: int = setting(32, "ID: token positions sampled per window.")
    id_batch_size: int = setting(PAPER.batch_size, "ID: protocol batch size.")
    id_k: int = setting(PAPER.k, "ID: MLE neighbours K.")
    id_average: str = setting(PAPER.average, "ID: mean (paper) | harmonic | median.")
    decode_errors: str = setting("strict", "Invalid UTF-8 in the corpus: strict (error) | replace (U+FFFD).")
    shuffle_tokens: bool = setting(False, "Control: each window's tokens permuted (seeded) before scoring and embedding.")

    parameter_constraints = {
        **dict.fromkeys(("context", "windows_per_doc", "batch_tokens", "id_tokens_per_doc", "id_batch_size"), POSITIVE_INT),
        "id_k": [Interval(numbers.Integral, 2, None)],
        **dict.fromkeys(("window_bytes", "max_docs", "max_tokens", "max_bytes", "max_corpus_docs"), [*POSITIVE_INT, None]),
        "window": [Options(WINDOWS)], "split": [Options(SPLITS)], "dtype": [Options(DTYPES)],
        "id_average": [Options(AVERAGES)], "decode_errors": [Options(DECODE_ERRORS)], "shuffle_tokens": ["boolean"],
        **dict.fromkeys(("seed", "split_seed"), SEED)}

    def check(self) -> None:
        """``context`` ≥ 2 and ``stride`` within it; ``device`` a device name."""
        if self.context < 2:
            raise TTLabInputError(f"context must be at least 2 tokens (a start token and one scored token), got {self.context}.",
                                  params=("context",))
        if self.stride is not None and not (isinstance(self.stride, numbers.Integral) and 1 <= self.stride <= self.context):
            raise TTLabInputError(f"stride must be an integer in 1 … context = {self.context}, got {self.stride!r}.",
                                  params=("stride",))
        dev = str(self.device)
        if not (dev == "cpu" or dev == "mps" or re.fullmatch(r"cuda(:\d+)?", dev)):
            raise TTLabInputError(f"device must be cpu, cuda, cuda:N or mps, got {dev!r}.")

    @property
    def window_bytes_used(self) -> int:
        """Window length in bytes (``window_bytes``, else the nominal bytes of ``context`` tokens)."""
        return int(self.window_bytes or round(BYTES_PER_TOKEN * self.context))

    @property
    def byte_budget(self) -> int | None:
        """Bytes of text to score (``max_bytes``, else the nominal bytes of ``max_tokens``), or None."""
        if self.max_bytes is not None:
            return int(self.max_bytes)
        return int(round(BYTES_PER_TOKEN * self.max_tokens)) if self.max_tokens is not None else None

    def plain_fields(self) -> dict[str, Any]:
        """The fields as a plain dict; ``decode_errors`` only when not the default, so runs cached before the
        option existed keep their keys."""
        d = asdict(self)
        if d["decode_errors"] == "strict":
            del d["decode_errors"]
        return d

    def corpus_spec(self) -> CorpusSpec:
        """The corpus and its split, as :func:`ttlab.lm.corpus.load_corpus` reads them."""
        return CorpusSpec(self.corpus, field_name=self.field_name, errors=self.decode_errors,
                          max_docs=self.max_corpus_docs, val_frac=self.val_frac, test_frac=self.test_frac,
                          split_seed=self.split_seed)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, with the derived window length and byte budget."""
        return {**self.plain_fields(), "window_bytes_used": self.window_bytes_used, "byte_budget": self.byte_budget,
                "bytes_per_token_nominal": BYTES_PER_TOKEN}


# ----------------------------------------------------------------------------------------- windows
@dataclass(frozen=True)
class TextWindow:
    """A span of one document's text that every model scores."""

    doc_index: int  # index of the document in the split (split order)
    start: int  # character offsets in the document
    end: int
    text: str

    @property
    def n_bytes(self) -> int:
        """UTF-8 bytes of the text."""
        return len(self.text.encode("utf-8"))


def _tiles(text: str, window_bytes: int) -> list[tuple[int, int]]:
    """Consecutive word-aligned spans (character offsets) of at most ``window_bytes`` bytes (a single
    longer word is a span of its own); leading whitespace belongs to the following word."""
    spans: list[tuple[int, int]] = []
    start, size, end = 0, 0, 0
    for m in _WORD.finditer(text):
        nb = len(m.group().encode("utf-8"))
        if size and size + nb > window_bytes:
            spans.append((start, end))
            start, size = m.start(), 0
        size += nb
        end = m.end()
    if size:
        tail = len(text[end:].encode("utf-8"))  # trailing whitespace joins the last span when it fits
        spans.append((start, len(text) if size + tail <= window_bytes else end))
    return spans


def select_windows(texts: Sequence[str], cfg: SuiteConfig) -> list[TextWindow]:
    """The text windows of a split (see the module docstring); deterministic for ``cfg.seed``."""
    wb, budget = cfg.window_bytes_used, cfg.byte_budget
    out: list[TextWindow] = []
    n_docs = total = 0
    for i, text in enumerate(texts):
        if (cfg.max_docs is not None and n_docs >= cfg.max_docs) or (budget is not None and total >= budget):
            break
        tiles = _tiles(text, wb)
        if not tiles:
            continue
        rng = np.random.default_rng([cfg.seed, i])
        if cfg.windows_per_doc == 1:
            if cfg.window == "random" and len(tiles) > 1:
                # a random word-aligned start (words are contiguous from 0, so their byte offsets are a
                # cumulative sum); the window then extends greedily up to window_bytes
                words = list(_WORD.finditer(text))
                offsets = np.concatenate([[0], np.cumsum([len(m.group().encode("utf-8")) for m in words])])
                ok = np.flatnonzero(offsets[-1] - offsets[:-1] >= wb)
                j = int(ok[int(rng.integers(0, len(ok)))]) if len(ok) else 0
                s0 = words[j].start()
                chosen = [(s0 + a, s0 + b) for a, b in _tiles(text[s0:], wb)[:1]]
            else:
                chosen = tiles[:1]
        else:
            k = min(cfg.windows_per_doc, len(tiles))
            pick = sorted(rng.choice(len(tiles), size=k, replace=False)) if cfg.window == "random" else range(k)
            chosen = [tiles[j] for j in pick]
        for a, b in chosen:
            if budget is not None and total >= budget:
                break
            w = TextWindow(i, int(a), int(b), text[a:b])
            out.append(w)
            total += w.n_bytes
        n_docs += 1
    if not out:
        raise TTLabInputError("no text to evaluate: the split holds no non-empty document (or max_docs/max_tokens is 0).")
    return out
