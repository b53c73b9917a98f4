"""Tokenized corpora as memory-mapped token arrays (nanoGPT's ``.bin`` format) with a cache.

A prepared dataset is a folder::

    meta.json          format, cache key, dtype, vocab size, eot id, token/document counts, sources
    tokenizer.json     the tokenizer that produced the ids
    train.bin …        token ids of each split, documents in split order, each followed by <eot>
    train.idx …        int64 start offset of every document in the split's .bin
    train.ids.json …   the document ids, in the same order

The folder name holds a hash of the corpus content, the split, the tokenizer and the format, so a
changed corpus or tokenizer gets a new folder. Folders are built under a temporary name and renamed
into place, so concurrent builders and interrupted builds never leave a half-written cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.lm.configs import SPLITS
from ttlab.lm.corpus import Corpus, CorpusSpec, CorpusSplit, corpus_spec
from ttlab.lm.tokenizer import (
    DEFAULT_MIN_FREQUENCY,
    DEFAULT_VOCAB_SIZE,
    EOT,
    TextTokenizer,
    check_bpe_options,
    load_tokenizer,
    tokenizer_cache_key,
    train_bpe,
)
from ttlab.provenance import atomic_write_json, read_json

FORMAT = "ttlab.lm.tokens/1"
ProgressFn = Callable[[str], None]


def default_cache_dir() -> Path:
    """``$TTLAB_CACHE/lm`` if set, else ``~/.cache/ttlab/lm``."""
    root = os.environ.get("TTLAB_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "ttlab") / "lm"


class TokenizedCorpus:
    """Read access to a prepared dataset folder (see the module docstring)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        meta_path = self.root / "meta.json"
        if not meta_path.is_file():
            raise TTLabInputError(f"{self.root} is not a prepared token dataset (no meta.json).")
        self.meta: dict[str, Any] = read_json(meta_path)
        if self.meta.get("format") != FORMAT:
            raise TTLabInputError(f"{self.root}: unsupported dataset format {self.meta.get('format')!r} (expected {FORMAT}).")
        self.dtype = np.dtype(self.meta["dtype"])

    @property
    def key(self) -> str:
        """The cache key (hash of corpus, split, tokenizer and format)."""
        return self.meta["key"]

    @property
    def vocab_size(self) -> int:
        """Vocabulary size of the tokenizer."""
        return int(self.meta["vocab_size"])

    @property
    def eot_id(self) -> int | None:
        """Id of the end-of-text token that follows every document (None if the tokenizer has none)."""
        return self.meta["eot_id"]

    def n_tokens(self, split: str) -> int:
        """Number of tokens in a split."""
        return int(self.meta["splits"][split]["tokens"])

    def tokens(self, split: str) -> np.ndarray:
        """The split's token ids as a read-only memory map (an empty array for an empty split)."""
        self._check(split)
        n = self.n_tokens(split)
        if n == 0:
            return np.zeros(0, dtype=self.dtype)
        return np.memmap(self.root / f"{split}.bin", dtype=self.dtype, mode="r", shape=(n,))

    def doc_starts(self, split: str) -> np.ndarray:
        """int64 start offset of each document of the split."""
        self._check(split)
        return np.fromfile(self.root / f"{split}.idx", dtype=np.int64)

    def doc_ids(self, split: str) -> list[str]:
        """Document ids of the split, in token order."""
        self._check(split)
        return read_json(self.root / f"{split}.ids.json")

    def documents(self, split: str) -> Iterator[tuple[str, np.ndarray]]:
        """(id, token ids without the trailing <eot>) of every document of the split."""
        toks = self.tokens(split)
        starts = self.doc_starts(split)
        ends = np.append(starts[1:], len(toks))
        trail = 1 if self.eot_id is not None else 0
        for doc_id, s, e in zip(self.doc_ids(split), starts, ends):
            yield doc_id, np.asarray(toks[s : e - trail])

    def tokenizer(self) -> TextTokenizer:
        """The tokenizer stored with the dataset."""
        return load_tokenizer(self.root / "tokenizer.json", eot_token=self.meta.get("eot_token"))

    def _check(self, split: str) -> None:
        if split not in SPLITS:
            raise TTLabInputError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}.")


def dataset_key(split: CorpusSplit, tokenizer: TextTokenizer, append_eot: bool = True) -> str:
    """Cache key of a tokenized split corpus."""
    spec = {"format": FORMAT, "split": split.fingerprint(), "tokenizer": tokenizer.fingerprint, "eot": append_eot}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def tokenize_split(
    split: CorpusSplit,
    tokenizer: TextTokenizer,
    cache_dir: str | Path | None = None,
    *,
    append_eot: bool = True,
    batch_docs: int = 256,
    progress: ProgressFn | None = None,
) -> TokenizedCorpus:
    """Tokenize every split of ``split`` into the cache (or reuse a cached copy); returns it opened."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = dataset_key(split, tokenizer, append_eot)
    final = cache / f"tokens-{key[:20]}"
    if (final / "meta.json").is_file():
        return TokenizedCorpus(final)
    if append_eot and tokenizer.eot_id is None:
        raise TTLabInputError(f"tokenizer {tokenizer.source} has no end-of-text token to separate documents; "
                              "give one (eot_token) or disable append_eot.")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=cache, prefix=f".tokens-{key[:20]}-"))
    try:
        dtype = np.uint16 if tokenizer.vocab_size <= 2**16 else np.uint32
        splits_meta: dict[str, Any] = {}
        for name in SPLITS:
            if progress:
                progress(f"tokenizing {name} ({split.n_docs(name)} documents)")
            n_tok = 0
            starts: list[int] = []
            with open(tmp / f"{name}.bin", "wb") as fh:
                texts = split.texts(name)
                while True:
                    batch = [t for _, t in zip(range(batch_docs), texts)]
                    if not batch:
                        break
                    for ids in tokenizer.encode_batch(batch):
                        if append_eot:
                            ids = ids + [tokenizer.eot_id]
                        starts.append(n_tok)
                        np.asarray(ids, dtype=dtype).tofile(fh)
                        n_tok += len(ids)
                fh.flush()
                os.fsync(fh.fileno())
            np.asarray(starts, dtype=np.int64).tofile(tmp / f"{name}.idx")
            (tmp / f"{name}.ids.json").write_text(json.dumps(split.ids(name), allow_nan=False))
            splits_meta[name] = {"docs": split.n_docs(name), "tokens": n_tok}
        tokenizer.save(tmp / "tokenizer.json")
        atomic_write_json(tmp / "meta.json", {
            "format": FORMAT, "key": key, "dtype": np.dtype(dtype).name, "vocab_size": tokenizer.vocab_size,
            "eot_id": tokenizer.eot_id if append_eot else None, "eot_token": tokenizer.eot_token,
            "append_eot": append_eot, "splits": splits_meta, "corpus": split.corpus.describe(),
            "split": split.describe(), "tokenizer": tokenizer.describe(),
        })
        try:
            os.rename(tmp, final)
        except OSError:  # another process finished first: use its copy
            if not (final / "meta.json").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return TokenizedCorpus(final)


def cached_bpe(
    split: CorpusSplit,
    vocab_size: int,
    cache_dir: str | Path | None = None,
    *,
    min_frequency: int = DEFAULT_MIN_FREQUENCY,
    progress: ProgressFn | None = None,
) -> TextTokenizer:
    """A byte-level BPE tokenizer trained on the training split, cached by content and settings."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = tokenizer_cache_key(split.fingerprint("train"), vocab_size, min_frequency, (EOT,))
    path = cache / f"tokenizer-{key[:20]}" / "tokenizer.json"
    if path.is_file():
        return load_tokenizer(path, eot_token=EOT)
    if progress:
        progress(f"training BPE tokenizer (vocab {vocab_size}) on {split.n_docs('train')} documents")
    tok = train_bpe(split.texts("train"), vocab_size, min_frequency=min_frequency, length=split.n_docs("train"))
    tok.save(path)
    return load_tokenizer(path, eot_token=EOT)


def write_token_dataset(
    root: str | Path,
    docs: dict[str, Sequence[Sequence[int]]],
    vocab_size: int,
    eot_id: int | None = None,
    *,
    doc_ids: dict[str, Sequence[str]] | None = None,
    meta: dict[str, Any] | None = None,
) -> TokenizedCorpus:
    """Write a token dataset folder directly from token-id documents (synthetic data, tests, imports).

    ``docs`` maps each split to its documents; ``eot_id`` (if given) is appended after every document.
    The cache key is the hash of the written arrays.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    dtype = np.uint16 if vocab_size <= 2**16 else np.uint32
    h = hashlib.sha256(FORMAT.encode())
    splits_meta: dict[str, Any] = {}
    for name in SPLITS:
        seqs = [list(map(int, d)) + ([eot_id] if eot_id is not None else []) for d in docs.get(name, [])]
        for d in seqs:
            if d and (min(d) < 0 or max(d) >= vocab_size):
                raise TTLabInputError(f"split {name}: token ids must be in [0, {vocab_size}).")
        lengths = np.array([len(d) for d in seqs], dtype=np.int64)
        flat = np.array([t for d in seqs for t in d], dtype=dtype)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if seqs else np.zeros(0, np.int64)
        flat.tofile(root / f"{name}.bin")
        starts.tofile(root / f"{name}.idx")
        ids = list(doc_ids[name]) if doc_ids and name in doc_ids else [f"{name}{i}" for i in range(len(seqs))]
        (root / f"{name}.ids.json").write_text(json.dumps(ids, allow_nan=False))
        h.update(name.encode() + flat.tobytes() + starts.tobytes())
        splits_meta[name] = {"docs": len(seqs), "tokens": int(flat.size)}
    atomic_write_json(root / "meta.json", {
        "format": FORMAT, "key": h.hexdigest(), "dtype": np.dtype(dtype).name, "vocab_size": int(vocab_size),
        "eot_id": eot_id, "eot_token": None, "append_eot": eot_id is not None, "splits": splits_meta,
        "corpus": {"source": "arrays"}, "split": None, "tokenizer": None, **(meta or {}),
    })
    return TokenizedCorpus(root)


@dataclass
class PreparedData:
    """Everything a training run needs from the data side."""

    corpus: Corpus
    split: CorpusSplit
    tokenizer: TextTokenizer
    data: TokenizedCorpus

    def describe(self) -> dict[str, Any]:
        """JSON-ready summary: corpus, split, tokenizer, token counts, cache folder."""
        return {
            "corpus": self.corpus.describe(),
            "split": self.split.describe(),
            "tokenizer": self.tokenizer.describe(),
            "tokens": {s: self.data.n_tokens(s) for s in SPLITS},
            "dataset_dir": str(self.data.root),
            "dataset_key": self.data.key,
        }


def prepare_data(
    corpus: str | Path | Corpus | CorpusSpec,
    *,
    tokenizer: str | Path | TextTokenizer | None = None,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    min_frequency: int = DEFAULT_MIN_FREQUENCY,
    cache_dir: str | Path | None = None,
    progress: ProgressFn | None = None,
    **corpus_options: Any,
) -> PreparedData:
    """Load (``corpus`` may be a spec, see :func:`ttlab.lm.corpus.load_corpus`), split, get a tokenizer
    (trained BPE unless ``tokenizer`` names one) and tokenize into the memory-mapped cache.

    ``corpus_options`` are fields of :class:`ttlab.lm.corpus.CorpusSpec` (``field_name``, ``max_docs``,
    ``val_frac``, ``split_seed``, …); with a :class:`Corpus` only its split fields apply."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if tokenizer is None:  # a BPE will be trained: its options are checked before the corpus is read
        check_bpe_options(vocab_size, min_frequency)
    if isinstance(corpus, Corpus):
        c, cs = corpus, corpus_spec(corpus.source, **corpus_options)
    else:
        cs = corpus_spec(corpus, **corpus_options)
        if progress:
            progress(f"loading corpus {cs.source}")
        c = cs.load(cache / "hf")
    sp = cs.split(c)
    if tokenizer is None:
        tok = cached_bpe(sp, vocab_size, cache, min_frequency=min_frequency, progress=progress)
    elif isinstance(tokenizer, TextTokenizer):
        tok = tokenizer
    else:
        tok = load_tokenizer(tokenizer)
    data = tokenize_split(sp, tok, cache, progress=progress)
    return PreparedData(c, sp, tok, data)
