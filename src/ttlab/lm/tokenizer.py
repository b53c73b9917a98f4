"""Tokenizers: byte-level BPE trained with Hugging Face ``tokenizers``, or an existing one from files.

:class:`TextTokenizer` wraps a ``tokenizers.Tokenizer`` with what training needs: batch encoding,
the end-of-text id that separates documents, a content fingerprint (cache key) and saving.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from ttlab.errors import TTLabInputError
from ttlab.provenance import atomic_write_text

#: The end-of-text token appended after every document (GPT-2's name for it).
EOT = "<|endoftext|>"
_EOT_CANDIDATES = (EOT, "</s>", "<eos>", "<|end_of_text|>", "[SEP]")
MIN_VOCAB = 257  # 256 byte symbols + the end-of-text token
DEFAULT_VOCAB_SIZE = 2048
"""Vocabulary of a BPE tokenizer trained for a run when none is given (``prepare_data``, the sweeps)."""
DEFAULT_MIN_FREQUENCY = 2
"""BPE: a pair is merged only when it occurs at least this often."""


def _tokenizers():
    try:
        import tokenizers
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise TTLabInputError("the language-model tools need the 'tokenizers' package: pip install 'ttlab[lm]'.") from exc
    return tokenizers


class TextTokenizer:
    """A ``tokenizers.Tokenizer`` plus its end-of-text id and a fingerprint of its full definition."""

    def __init__(self, tok: Any, source: str = "memory", eot_token: str | None = None) -> None:
        self.tok = tok
        self.source = source
        vocab = tok.get_vocab(with_added_tokens=True)
        if eot_token is None:
            eot_token = next((t for t in _EOT_CANDIDATES if t in vocab), None)
        elif eot_token not in vocab:
            raise TTLabInputError(f"tokenizer {source} has no token {eot_token!r}.")
        self.eot_token = eot_token
        self.eot_id: int | None = vocab[eot_token] if eot_token is not None else None
        self._json = tok.to_str()

    @property
    def vocab_size(self) -> int:
        """Number of token ids (one more than the largest id), added tokens included."""
        return max(self.tok.get_vocab(with_added_tokens=True).values()) + 1

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the serialised tokenizer (changes whenever any merge, token or setting does)."""
        return hashlib.sha256(self._json.encode("utf-8")).hexdigest()

    def encode(self, text: str) -> list[int]:
        """Token ids of one text (no special tokens added)."""
        return self.tok.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of many texts, encoded in parallel by the Rust backend."""
        enc = getattr(self.tok, "encode_batch_fast", self.tok.encode_batch)  # no offsets: faster
        return [e.ids for e in enc(list(texts), add_special_tokens=False)]

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids (special tokens kept)."""
        return self.tok.decode(list(ids), skip_special_tokens=False)

    def save(self, path: str | Path) -> Path:
        """Write ``tokenizer.json`` (to ``path`` if it ends in ``.json``, else into folder ``path``)."""
        p = Path(path)
        if p.suffix != ".json":
            p = p / "tokenizer.json"
        atomic_write_text(p, self._json)
        return p

    def to_hf(self) -> Any:
        """The same tokenizer as a ``transformers.PreTrainedTokenizerFast``."""
        from transformers import PreTrainedTokenizerFast

        return PreTrainedTokenizerFast(tokenizer_object=self.tok, eos_token=self.eot_token, bos_token=self.eot_token,
                                       unk_token=self.eot_token)

    def describe(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {"source": self.source, "vocab_size": self.vocab_size, "eot_token": self.eot_token,
                "eot_id": self.eot_id, "fingerprint": self.fingerprint}


MAX_VOCAB_SIZE = 2**21
"""A BPE vocabulary above this (2,097,152 ids; the largest LMs use ≈ 262k) is refused before any training."""


def check_bpe_options(vocab_size: int, min_frequency: int, n_special: int = 1) -> None:
    """Refuse (:class:`TTLabInputError`) a vocabulary outside [256 + specials, :data:`MAX_VOCAB_SIZE`] or a minimum
    frequency below 1 — checked before the corpus is read."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 256 + n_special:
        raise TTLabInputError(f"vocab_size must be at least {256 + n_special} (256 bytes + {n_special} special), "
                              f"got {vocab_size}.", params=("vocab_size",))
    if vocab_size > MAX_VOCAB_SIZE:
        raise TTLabInputError(f"vocab_size must be at most {MAX_VOCAB_SIZE:,}, got {vocab_size:,}.", params=("vocab_size",))
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 1:
        raise TTLabInputError(f"min_frequency must be >= 1, got {min_frequency}.", params=("min_frequency",))


def train_bpe(
    texts: Iterable[str],
    vocab_size: int,
    *,
    min_frequency: int = DEFAULT_MIN_FREQUENCY,
    special_tokens: Sequence[str] = (EOT,),
    length: int | None = None,
) -> TextTokenizer:
    """Train a GPT-2-style byte-level BPE tokenizer (all 256 bytes in the alphabet, so nothing is unknown).

    The vocabulary holds ``vocab_size`` ids at most; a small corpus may stop with fewer merges.
    Training is deterministic for the same texts in the same order.
    """
    check_bpe_options(vocab_size, min_frequency, len(special_tokens))
    tk = _tokenizers()
    tok = tk.Tokenizer(tk.models.BPE())
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(special_tokens),
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer, length=length)
    return TextTokenizer(tok, source=f"bpe(vocab_size={vocab_size}, min_frequency={min_frequency})",
                         eot_token=special_tokens[0] if special_tokens else None)


def load_tokenizer(path: str | Path, eot_token: str | None = None) -> TextTokenizer:
    """Load an existing tokenizer from local files only.

    ``path`` may be a ``tokenizer.json`` file; a folder holding one (a Hugging Face model folder);
    a folder with GPT-2-style ``vocab.json`` + ``merges.txt`` (byte-level BPE); or any other folder
    that ``transformers.AutoTokenizer`` can load offline as a fast tokenizer.
    """
    tk = _tokenizers()
    p = Path(path).expanduser()
    if not p.exists():
        raise TTLabInputError(f"tokenizer {p} not found (give tokenizer.json or a folder holding it).")
    try:
        if p.is_file():
            return TextTokenizer(tk.Tokenizer.from_str(p.read_text(encoding="utf-8-sig")), str(p), eot_token)
        if (p / "tokenizer.json").is_file():
            inner = tk.Tokenizer.from_str((p / "tokenizer.json").read_text(encoding="utf-8-sig"))
            return TextTokenizer(inner, str(p), eot_token)
        if (p / "vocab.json").is_file() and (p / "merges.txt").is_file():
            bpe = tk.ByteLevelBPETokenizer(str(p / "vocab.json"), str(p / "merges.txt"))
            inner = tk.Tokenizer.from_str(bpe.to_str())
            return TextTokenizer(inner, str(p), eot_token)
    except Exception as exc:  # the Rust side raises plain Exceptions for malformed files
        if isinstance(exc, TTLabInputError):
            raise
        raise TTLabInputError(f"cannot read tokenizer {p}: {exc}") from exc
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:  # pragma: no cover
        raise TTLabInputError(f"{p} holds no tokenizer.json or vocab.json+merges.txt.") from exc
    try:
        hf = AutoTokenizer.from_pretrained(str(p), local_files_only=True, use_fast=True)
    except Exception as exc:
        raise TTLabInputError(f"cannot load a tokenizer from {p}: {exc}") from exc
    backend = getattr(hf, "backend_tokenizer", None)
    if backend is None:
        raise TTLabInputError(f"{p}: only fast (Rust) tokenizers are supported.")
    return TextTokenizer(backend, str(p), eot_token or getattr(hf, "eos_token", None))


def tokenizer_cache_key(train_fingerprint: str, vocab_size: int, min_frequency: int, special_tokens: Sequence[str]) -> str:
    """Cache key of a BPE tokenizer trained on a corpus split (includes the ``tokenizers`` version)."""
    tk = _tokenizers()
    spec = {"v": 1, "train": train_fingerprint, "vocab_size": vocab_size, "min_frequency": min_frequency,
            "special": list(special_tokens), "tokenizers": tk.__version__}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
