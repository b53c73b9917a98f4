"""Language-model experiments for paper B: corpora, tokenizers, a nanoGPT-class model and its trainer.

Data: :func:`load_corpus` (file, directory, JSONL, ``hf:`` datasets, ``builtin:sotu``) →
:func:`split_corpus` (document-level, seeded) → :func:`train_bpe` / :func:`load_tokenizer` →
:func:`tokenize_split` (memory-mapped ``.bin`` arrays in a content-keyed cache, read back through
:class:`TokenizedCorpus`); :func:`prepare_data` does all of it in one call.

Model and training: :class:`GPTConfig`, :class:`GPT` (``forward``, ``hidden_states``), :class:`TrainConfig`,
:func:`train` (early stopping, atomic checkpoints, exact resume, DDP under torchrun),
:func:`train_converged` (schedule length fitted to the early-stopping point), :func:`load_model`,
:func:`load_run`. Corpora from the package registries: :func:`ttlab.lm.build.build_corpus`.

Imports: its own modules (numpy, torch, tokenizers through them); never ttlab.cli.
"""

from ttlab.lm.corpus import BLANK_LINES, BUILTIN_CORPORA, Corpus, CorpusSplit, Document, load_corpus, split_corpus
from ttlab.lm.data import PreparedData, TokenizedCorpus, default_cache_dir, prepare_data, tokenize_split
from ttlab.lm.model import GPT, MODEL_PRESETS, GPTConfig
from ttlab.lm.tokenizer import EOT, TextTokenizer, load_tokenizer, train_bpe
from ttlab.lm.trainer import LoadedRun, TrainConfig, TrainResult, load_model, load_run, train, train_converged

__all__ = [
    "BLANK_LINES",
    "BUILTIN_CORPORA",
    "EOT",
    "GPT",
    "GPTConfig",
    "MODEL_PRESETS",
    "Corpus",
    "CorpusSplit",
    "Document",
    "LoadedRun",
    "PreparedData",
    "TextTokenizer",
    "TokenizedCorpus",
    "TrainConfig",
    "TrainResult",
    "default_cache_dir",
    "load_corpus",
    "load_model",
    "load_run",
    "load_tokenizer",
    "prepare_data",
    "split_corpus",
    "tokenize_split",
    "train",
    "train_bpe",
    "train_converged",
]
