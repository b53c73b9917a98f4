"""Language-model experiments for paper B: corpora, tokenizers, a nanoGPT-class model and its trainer.

Data: :func:`load_corpus` (file, directory, JSONL, ``hf:`` datasets, ``builtin:sotu``; what to read is a
:class:`CorpusSpec`) → :func:`split_corpus` (document-level, seeded) → :func:`train_bpe` / :func:`load_tokenizer` →
:func:`tokenize_split` (memory-mapped ``.bin`` arrays in a content-keyed cache, read back through
:class:`TokenizedCorpus`); :func:`prepare_data` does all of it in one call.

Model and training: :class:`GPTConfig`, :class:`GPT` (``forward``, ``hidden_states``), :class:`TrainConfig`,
:func:`train` (early stopping, atomic checkpoints, exact resume, DDP under torchrun),
:func:`train_converged` (schedule length fitted to the early-stopping point), :func:`train_on_corpus` (a corpus
spec to a finished run, under torchrun too), :func:`load_model`, :func:`load_run`. Corpora from the package
registries: :func:`ttlab.lm.build.build_corpus`.

Your own model and texts: :func:`embed_texts` (a Hugging Face model object with its tokenizer, or a model folder /
registry name; a list of strings or a ``datasets.Dataset``) → :class:`Embeddings`; :func:`predict_exponents` goes on to
the intrinsic dimension with its spread and paper B's α_D, α_N with the estimator band (:class:`TextExponents`).

The names are loaded on first use (PEP 562), so ``import ttlab.lm.configs`` — what the command line reads its
defaults from — does not import torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    "ttlab.lm.corpus": ("BLANK_LINES", "BUILTIN_CORPORA", "Corpus", "CorpusSpec", "CorpusSplit", "Document",
                        "load_corpus", "split_corpus"),
    "ttlab.lm.data": ("PreparedData", "TokenizedCorpus", "default_cache_dir", "prepare_data", "tokenize_split"),
    "ttlab.lm.configs": ("GPTConfig", "MODEL_PRESETS", "TrainConfig"),
    "ttlab.lm.model": ("GPT",),
    "ttlab.lm.tokenizer": ("EOT", "TextTokenizer", "load_tokenizer", "train_bpe"),
    "ttlab.lm.checkpoint": ("LoadedRun", "load_model", "load_run"),
    "ttlab.lm.trainer": ("TrainResult", "train", "train_converged"),
    "ttlab.lm.train_corpus": ("train_on_corpus",),
    "ttlab.lm.embed": ("Embeddings", "embed_corpus", "embed_texts"),
    "ttlab.lm.pretrained": ("load_causal_lm", "wrap_causal_lm"),
    "ttlab.lm.text_exponents": ("TextExponents", "predict_exponents"),
}
_WHERE = {name: module for module, names in _HOME.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """The public name ``name`` from the module that defines it, or the submodule ``name`` (imported on first use)."""
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    try:  # a submodule not imported yet (``ttlab.lm.trainer``)
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
