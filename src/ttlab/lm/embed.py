"""Token embeddings of text from a causal language model, for intrinsic-dimension estimates.

The paper's protocol (Havrilla & Liao, Section 3): from each test document take a window of up to
``context`` tokens (a random window, or the prefix as in the authors' code), sample
``tokens_per_doc`` positions in it, and keep the hidden states of those tokens only. Documents are
streamed in small batches; only the sampled vectors are kept, never a document's full hidden states.

Layer convention (the Hugging Face ``output_hidden_states`` one, used for every model here): layer 0
is the embedding output (input of the first block), layer ``i`` the output of block ``i``, and the
last layer, ``n_layer``, is what the LM head sees — *after* the final LayerNorm for ttlab and GPT-2
models. The flag ``final_norm_in_last_layer`` in the metadata says whether the last layer includes
the final norm for the model at hand. Negative layer indices count from the end (``-1`` = last).

Position groups (for the context-position ablation): with ``position_edges = (e0, e1, …, em)``,
``tokens_per_doc`` positions are sampled *in each* window range ``[e_j, e_{j+1})`` (stratified), and
:attr:`Embeddings.group` records the range of every vector.

Sampling is reproducible: document ``i`` draws its window and positions from
``numpy.random.default_rng([seed, i])``, so results do not depend on the batch size.

Shuffled-token control (``shuffle_tokens``): the same windows and positions, but the tokens of each window
are permuted (seeded, see :data:`SHUFFLE_STREAM`) before the forward pass — the same token counts without
their order, so an ID that does not move under shuffling is not a property of the text's sequential structure.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.lm.configs import EmbedConfig
from ttlab.provenance import atomic_file, atomic_write_json, read_json, versions
from ttlab.validation import check_int

if TYPE_CHECKING:
    from rich.console import RenderableType

    from ttlab.lm.pretrained import PretrainedLM

__all__ = [
    "LAYER_CONVENTION",
    "EmbeddingModel",
    "Embeddings",
    "embed_corpus",
    "embed_texts",
    "embed_to_file",
    "embed_view",
    "extract_embeddings",
    "open_embedding_model",
    "pretrained_embedding_model",
    "sample_windows",
    "text_intrinsic_dimension",
    "texts_of",
]

LAYER_CONVENTION = (
    "Hugging Face output_hidden_states: layer 0 = embedding output, layer i = output of block i, "
    "last layer = input of the LM head"
)

SHUFFLE_STREAM = 7
"""Third seed word of the token-shuffling stream (:attr:`EmbedConfig.shuffle_tokens`): document ``i``'s windows
are permuted by ``numpy.random.default_rng([seed, i, SHUFFLE_STREAM])``."""
ProgressFn = Callable[[int, int | None], None]  # (documents done, total or None)




# ------------------------------------------------------------------------------------------ models
@dataclass
class EmbeddingModel:
    """A causal LM opened for embedding: its tokenizer, hidden-state function and description."""

    name: str
    n_layer: int
    width: int
    max_context: int
    encode: Callable[[str], list[int]]
    hidden_states: Callable[[torch.Tensor], list[torch.Tensor]]
    bos_token_id: int | None = None
    final_norm_in_last_layer: bool = True
    info: dict[str, Any] = field(default_factory=dict)
    run_dir: Path | None = None  # a ttlab run: its token dataset can be used without a corpus

    def describe(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {"name": self.name, "n_layer": self.n_layer, "width": self.width, "max_context": self.max_context,
                "bos_token_id": self.bos_token_id, "final_norm_in_last_layer": self.final_norm_in_last_layer,
                "layer_convention": LAYER_CONVENTION, **self.info}


def check_finite_weights(model: torch.nn.Module, name: str) -> None:
    """Refuse a model whose weights hold NaN or inf (a diverged run), naming the tensors: its hidden
    states would be NaN, and the ID estimators would blame the points instead of the weights."""
    bad = [n for n, p in model.named_parameters() if not bool(torch.isfinite(p.detach()).all())]
    if bad:
        shown = ", ".join(bad[:5]) + (f", … ({len(bad)} in all)" if len(bad) > 5 else "")
        raise TTLabInputError(
            f"model {name}: the weights hold NaN or inf in {len(bad)} parameter tensor(s) ({shown}), so its hidden "
            "states and losses would be NaN. The checkpoint is broken (training diverged?): use another one "
            "(a ttlab run's best.pt: which='best') or retrain with a smaller learning rate."
        )


def _ttlab_model(path: Path, which: str, device: str) -> EmbeddingModel:
    from ttlab.lm.checkpoint import load_run

    run = load_run(path, device=device, which=which)
    check_finite_weights(run.model, str(path))
    if run.tokenizer is None:
        raise TTLabInputError(f"run folder {path} has no tokenizer.json; it cannot encode text.")
    m = run.model
    c = m.config
    info = {"kind": "ttlab", "path": str(path), "checkpoint": run.meta.get("path"), "iter": run.meta.get("iter"),
            "n_params": m.num_params(), "n_head": c.n_head, "vocab_size": c.vocab_size}
    return EmbeddingModel(name=path.name, n_layer=c.n_layer, width=c.n_embd, max_context=c.block_size,
                          encode=run.tokenizer.encode, hidden_states=m.hidden_states, bos_token_id=None,
                          final_norm_in_last_layer=True, info=info, run_dir=path)


def open_embedding_model(spec: str | Path, *, which: str = "final", device: str = "cpu") -> EmbeddingModel:
    """Open a model for embedding.

    ``spec`` is a ttlab run folder (``ttlab lm train --out``) or checkpoint-holding folder, or anything
    :func:`ttlab.lm.pretrained.load_causal_lm` accepts (a Hugging Face causal-LM folder, a .gguf file,
    a registry model name such as ``gemma3-270m``). ``which``: a run's ``final``, ``best`` or ``init`` weights; a
    pretrained model's released weights (``final``) or an untrained copy of its architecture (``init``,
    :func:`ttlab.lm.pretrained.untrained_copy`).
    """
    p = Path(spec)
    if p.is_dir() and (p / "ckpt.pt").is_file():
        return _ttlab_model(p, which, device)
    from ttlab.lm.checkpoint import missing_checkpoint

    if p.is_dir() and (why := missing_checkpoint(p)) is not None:
        raise TTLabInputError(why)
    if p.suffix == ".pt":
        raise TTLabInputError(f"{p}: give the run folder that holds the checkpoint (it also holds the tokenizer), not the .pt file.")
    from ttlab.lm.pretrained import load_causal_lm, untrained_copy

    if which not in ("final", "init"):
        raise TTLabInputError(f"which={which!r}: a pretrained model has its released weights ('final') or an untrained "
                              "copy of its architecture ('init'), no best checkpoint.", params=("which",))
    lm = load_causal_lm(str(spec))
    if which == "init":
        lm = untrained_copy(lm)
    return pretrained_embedding_model(lm, device)


def pretrained_embedding_model(lm: PretrainedLM, device: str = "cpu") -> EmbeddingModel:
    """A loaded or wrapped pretrained LM (:func:`ttlab.lm.pretrained.load_causal_lm`,
    :func:`ttlab.lm.pretrained.wrap_causal_lm`) opened for embedding, its weights checked finite."""
    from ttlab.lm.pretrained import hidden_states_of

    check_finite_weights(lm.model, lm.name)
    lm.model.to(device)
    info = {"kind": "huggingface", "n_params": lm.n_params, "source": lm.source}
    # windows are cut from the document's tokens, then the BOS token is put in front of each window when
    # the model's tokenizer uses one (Gemma: perplexity 7 with it, 100 without); BOS is never sampled
    return EmbeddingModel(name=lm.name, n_layer=lm.n_layer, width=lm.width, max_context=lm.max_context,
                          encode=lambda text: lm.encode(text, bos=False), hidden_states=lambda idx: hidden_states_of(lm, idx),
                          bos_token_id=lm.bos_token_id if lm.add_bos else None,
                          final_norm_in_last_layer=lm.final_norm_in_last_hidden_state, info=info)


# ---------------------------------------------------------------------------------------- sampling
def sample_windows(n_tokens: int, cfg: EmbedConfig, context: int, rng: np.random.Generator) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
    """(window start, window length, sampled positions in the window, their group) for each window of
    one document.

    One window: the prefix, or a uniformly random window of ``min(n_tokens, context)`` tokens.
    Several (``windows_per_doc``): the document is tiled into non-overlapping windows of ``context``
    tokens (from a random offset for ``random``, from the start for ``prefix``) and that many tiles
    are taken (at random, or the first ones), as many as fit. Positions in a window are distinct and
    sorted; without position groups there are min(tokens_per_doc, length) of them (group 0); with
    groups, up to tokens_per_doc in each range that the window reaches.
    """
    length = min(n_tokens, context)
    if cfg.windows_per_doc == 1 or n_tokens < 2 * length:
        start = 0
        if cfg.window == "random" and n_tokens > length:
            start = int(rng.integers(0, n_tokens - length + 1))
        starts = [start]
    else:
        offset = int(rng.integers(0, n_tokens - (n_tokens // length) * length + 1)) if cfg.window == "random" else 0
        tiles = offset + length * np.arange((n_tokens - offset) // length)
        k = min(cfg.windows_per_doc, len(tiles))
        starts = sorted(int(t) for t in (rng.choice(tiles, size=k, replace=False) if cfg.window == "random" else tiles[:k]))
    return [(start, length, *sample_positions(length, cfg, rng)) for start in starts]


def sample_positions(length: int, cfg: EmbedConfig, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The token positions sampled in a ``length``-token window (``cfg.tokens_per_doc`` of them, or that many per
    position group of ``cfg.position_edges``) and the group of each, drawn from ``rng``."""
    if cfg.position_edges is None:
        k = min(cfg.tokens_per_doc, length)
        pos = np.sort(rng.choice(length, size=k, replace=False)) if k else np.zeros(0, dtype=np.int64)
        return pos.astype(np.int64), np.zeros(len(pos), dtype=np.int64)
    chunks, groups = [], []
    edges = cfg.position_edges
    for g, (lo, hi) in enumerate(zip(edges, edges[1:])):
        hi = min(hi, length)
        if hi <= lo:
            continue
        k = min(cfg.tokens_per_doc, hi - lo)
        chunks.append(np.sort(lo + rng.choice(hi - lo, size=k, replace=False)))
        groups.append(np.full(k, g))
    if not chunks:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(chunks).astype(np.int64), np.concatenate(groups).astype(np.int64)


@dataclass
class Embeddings:
    """Sampled token vectors per layer with their window positions, documents and groups."""

    vectors: dict[int, np.ndarray]  # layer index (non-negative) → (n, width) float32
    positions: np.ndarray  # (n,) position in the window (0 = first token of the window)
    doc_index: np.ndarray  # (n,) index of the document in the stream
    group: np.ndarray  # (n,) position group (all 0 without position_edges)
    meta: dict[str, Any]

    @property
    def layers(self) -> list[int]:
        """Layer indices held, ascending."""
        return sorted(self.vectors)

    def layer(self, index: int) -> np.ndarray:
        """Vectors of one layer (negative indices count from the model's last layer)."""
        n_layer = int(self.meta["model"]["n_layer"])
        i = index + n_layer + 1 if index < 0 else index
        if i not in self.vectors:
            raise TTLabInputError(f"layer {index} was not extracted; available: {', '.join(map(str, self.layers))}.")
        return self.vectors[i]

    def save(self, path: str | Path) -> Path:
        """Write ``.npy`` (one layer: the (n, width) array) or ``.npz`` (``layer_<i>`` arrays,
        ``positions``, ``doc_index``, ``group``), plus ``<path>.json`` with the metadata; atomically."""
        p = Path(path)
        if p.suffix not in (".npy", ".npz"):
            raise TTLabInputError(f"output {p} must end in .npy (one layer) or .npz (several layers, positions).")
        if p.suffix == ".npy" and len(self.vectors) != 1:
            raise TTLabInputError(f"{len(self.vectors)} layers were extracted; write them to an .npz file "
                                  f"(e.g. {p.with_suffix('.npz')}), or extract one layer.")
        with atomic_file(p) as fh:  # the one atomic writer: never replaces a device file, FIFO or link out
            if p.suffix == ".npy":
                np.save(fh, next(iter(self.vectors.values())))
            else:
                arrays = {f"layer_{i}": v for i, v in self.vectors.items()}
                np.savez(fh, positions=self.positions, doc_index=self.doc_index, group=self.group, **arrays)
        atomic_write_json(p.with_name(p.name + ".json"), self.meta)
        return p

    @classmethod
    def load(cls, path: str | Path) -> "Embeddings":
        """Read what :meth:`save` wrote (.npz keeps positions; .npy gets them from nothing: all zeros)."""
        p = Path(path)
        meta_path = p.with_name(p.name + ".json")
        if not p.is_file() or not meta_path.is_file():
            raise TTLabInputError(f"{p} (and its metadata {meta_path.name}) not found; write it with `ttlab id embed`.")
        meta = read_json(meta_path)
        if p.suffix == ".npy":
            layer = int(meta["layers"][0])
            v = np.load(p)
            zeros = np.zeros(len(v), dtype=np.int64)
            return cls({layer: v}, zeros, zeros, zeros, meta)
        with np.load(p) as z:
            vecs = {int(k.split("_", 1)[1]): z[k] for k in z.files if k.startswith("layer_")}
            return cls(vecs, z["positions"], z["doc_index"], z["group"], meta)


def _resolve_layers(layers: tuple[int, ...] | None, n_layer: int) -> list[int]:
    if layers is None:
        return list(range(n_layer + 1))
    out = []
    for i in layers:
        j = i + n_layer + 1 if i < 0 else i
        if not 0 <= j <= n_layer:
            raise TTLabInputError(f"layer {i} does not exist: the model has layers 0 … {n_layer} (or -1 … {-(n_layer + 1)}).")
        if j not in out:
            out.append(j)
    return sorted(out)


@torch.no_grad()
def extract_embeddings(
    model: EmbeddingModel,
    documents: Iterable[Sequence[int] | np.ndarray],
    cfg: EmbedConfig = EmbedConfig(),
    *,
    total: int | None = None,
    progress: ProgressFn | None = None,
) -> Embeddings:
    """Stream token-id documents through ``model`` and keep the sampled vectors (see the module doc)."""
    layers = _resolve_layers(cfg.layers, model.n_layer)
    bos = [] if model.bos_token_id is None else [int(model.bos_token_id)]
    context = min(cfg.context, model.max_context - len(bos))
    if context < 1:
        raise TTLabInputError(f"the model's context ({model.max_context}) leaves no room for tokens.")
    if cfg.position_edges is not None and cfg.position_edges[-1] > context:
        raise TTLabInputError(f"position edge {cfg.position_edges[-1]} exceeds the usable context {context} of {model.name}.")
    keep: dict[int, list[np.ndarray]] = {i: [] for i in layers}
    pos_all, doc_all, grp_all = [], [], []
    batch: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    n_docs = n_skipped = n_window_tokens = n_windows = 0
    t0 = time.perf_counter()

    def flush() -> None:
        nonlocal n_window_tokens
        if not batch:
            return
        T = max(len(w) for _, w, _, _ in batch) + len(bos)
        idx = torch.zeros((len(batch), T), dtype=torch.long)  # right padding: causal, never seen by real tokens
        for b, (_, w, _, _) in enumerate(batch):
            idx[b, : len(bos) + len(w)] = torch.as_tensor(bos + [int(t) for t in w])
            n_window_tokens += len(w)
        hs = model.hidden_states(idx)
        if len(hs) != model.n_layer + 1:
            raise TTLabInputError(f"{model.name} returned {len(hs)} hidden states, expected n_layer + 1 = {model.n_layer + 1}.")
        rows = torch.cat([torch.full((len(p),), b) for b, (_, _, p, _) in enumerate(batch)])
        cols = torch.cat([torch.as_tensor(p) for _, _, p, _ in batch]) + len(bos)
        for i in layers:
            keep[i].append(hs[i][rows, cols].float().cpu().numpy())
        for d, _, p, g in batch:
            pos_all.append(p)
            doc_all.append(np.full(len(p), d))
            grp_all.append(g)
        batch.clear()

    for i, toks in enumerate(documents):
        if cfg.max_docs is not None and n_docs >= cfg.max_docs:
            break
        toks = np.asarray(toks)
        if len(toks) == 0:
            n_skipped += 1
            continue
        rng = np.random.default_rng([cfg.seed, i])
        windows = [w for w in sample_windows(len(toks), cfg, context, rng) if len(w[2])]
        if not windows:
            n_skipped += 1
            continue
        # shuffling has its own stream: the windows and positions stay those of the unshuffled text
        shuffle = np.random.default_rng([cfg.seed, i, SHUFFLE_STREAM]) if cfg.shuffle_tokens else None
        for start, length, pos, grp in windows:
            w = toks[start : start + length]
            batch.append((i, w if shuffle is None else shuffle.permutation(w), pos, grp))
        n_docs += 1
        n_windows += len(windows)
        if len(batch) >= cfg.batch_docs:
            flush()
            if progress:
                progress(n_docs, total)
    flush()
    if progress:
        progress(n_docs, total)
    if n_docs == 0:
        raise TTLabInputError("no document yielded any token to embed (is the corpus or split empty?).")
    vectors = {i: np.concatenate(v).astype(np.float32, copy=False) for i, v in keep.items()}
    meta = {
        "model": model.describe(),
        "config": cfg.to_dict(),
        "layers": layers,
        "context_used": context,
        "n_docs": n_docs,
        "n_docs_skipped_empty": n_skipped,
        "n_windows": n_windows,
        "n_vectors": int(len(next(iter(vectors.values())))),
        "window_tokens": n_window_tokens,
        "wall_time_s": time.perf_counter() - t0,
        "versions": versions(),
    }
    return Embeddings(vectors, np.concatenate(pos_all), np.concatenate(doc_all), np.concatenate(grp_all), meta)


def _corpus_documents(model: EmbeddingModel, corpus: str | None, split: str, split_seed: int,
                      val_frac: float, test_frac: float, **corpus_options: Any) -> tuple[Iterator[np.ndarray], int, dict[str, Any]]:
    if corpus is None:
        if model.run_dir is None:
            raise TTLabInputError("give a corpus: only a ttlab run folder can default to the test split of its own "
                                  "training data.", params=("corpus",))
        from ttlab.lm.checkpoint import load_run

        data = load_run(model.run_dir).data()
        n = len(data.doc_ids(split))
        return (t for _, t in data.documents(split)), n, {"source": "run dataset", "dataset_dir": str(data.root), "split": split}
    from ttlab.lm.corpus import corpus_spec

    cache_dir = corpus_options.pop("cache_dir", None)  # where hf: datasets are cached, not a CorpusSpec field
    cs = corpus_spec(corpus, val_frac=val_frac, test_frac=test_frac, split_seed=split_seed, **corpus_options)
    c = cs.load(cache_dir)
    sp = cs.split(c)
    n = sp.n_docs(split)
    docs = (np.asarray(model.encode(text), dtype=np.int64) for text in sp.texts(split))
    return docs, n, {"source": corpus, "corpus": c.describe(), "split": split, "split_seed": split_seed,
                     "val_frac": val_frac, "test_frac": test_frac, "n_split_docs": n}


def embed_corpus(
    model: str | Path | EmbeddingModel,
    corpus: str | None = None,
    cfg: EmbedConfig = EmbedConfig(),
    *,
    split_seed: int = 0,
    val_frac: float = 0.1,
    test_frac: float = 0.1,
    which: str = "final",
    progress: ProgressFn | None = None,
    **corpus_options: Any,
) -> Embeddings:
    """Embed ``cfg.split`` of a corpus (any :func:`ttlab.lm.load_corpus` spec, split as
    :func:`ttlab.lm.split_corpus` does) with a model (:func:`open_embedding_model` spec).

    Without ``corpus``, a ttlab run uses the same split of the token dataset it was trained on.
    """
    m = model if isinstance(model, EmbeddingModel) else open_embedding_model(model, which=which)
    docs, n, source = _corpus_documents(m, corpus, cfg.split, split_seed, val_frac, test_frac, **corpus_options)
    total = n if cfg.max_docs is None else min(n, cfg.max_docs)
    emb = extract_embeddings(m, docs, cfg, total=total, progress=progress)
    emb.meta["corpus"] = source
    return emb


def texts_of(texts: Any, text_field: str = "text") -> list[str]:
    """The strings of ``texts``: a list (or any iterable) of strings, or a ``datasets.Dataset`` (its ``text_field``
    column); refused with the position of the first non-string, or when empty."""
    columns = getattr(texts, "column_names", None)
    if columns is not None:  # a datasets.Dataset
        if text_field not in columns:
            raise TTLabInputError(f"the dataset has no column {text_field!r} (columns: {', '.join(columns)}); give "
                                  "text_field=<the column holding the text>.", params=("text_field",))
        texts = texts[text_field]
    if isinstance(texts, (str, bytes)):
        raise TTLabInputError("texts is one string: give a list of documents (e.g. [text]).", params=("texts",))
    try:
        out = list(texts)
    except TypeError:
        raise TTLabInputError(f"texts must be a list of strings or a datasets.Dataset, got {type(texts).__name__}.",
                              params=("texts",)) from None
    bad = next((i for i, t in enumerate(out) if not isinstance(t, str)), None)
    if bad is not None:
        raise TTLabInputError(f"texts[{bad}] is a {type(out[bad]).__name__}, not a string.", params=("texts",))
    if not out:
        raise TTLabInputError("texts is empty: give at least one document.", params=("texts",))
    return out


def embed_texts(
    model: Any,
    texts: Any,
    tokenizer: Any = None,
    cfg: EmbedConfig = EmbedConfig(),
    *,
    which: str = "final",
    text_field: str = "text",
    device: str = "cpu",
    progress: ProgressFn | None = None,
) -> Embeddings:
    """Token embeddings of ``texts`` (a list of strings or a ``datasets.Dataset``, see :func:`texts_of`), each text
    one document sampled by ``cfg`` (the paper's protocol: a window of ``cfg.context`` tokens, ``cfg.tokens_per_doc``
    positions in it, the hidden states of ``cfg.layers``).

    ``model``: a Hugging Face causal LM object with its ``tokenizer`` (:func:`ttlab.lm.pretrained.wrap_causal_lm`
    checks them), an :class:`EmbeddingModel`, or a spec :func:`open_embedding_model` accepts (a model folder, a
    .gguf file, a registry name, a ttlab run). ``meta["corpus"]`` records the number of texts and their SHA-256."""
    import hashlib

    docs = texts_of(texts, text_field)
    if isinstance(model, EmbeddingModel):
        m = model
    elif isinstance(model, (str, Path)):
        if tokenizer is not None:
            raise TTLabInputError("tokenizer is only for a model object in memory; a model folder or name brings its own.",
                                  params=("tokenizer",))
        m = open_embedding_model(model, which=which, device=device)
    else:
        from ttlab.lm.pretrained import untrained_copy, wrap_causal_lm

        if which not in ("final", "init"):
            raise TTLabInputError(f"which={which!r}: a model in memory has its own weights ('final') or an untrained "
                                  "copy of its architecture ('init').", params=("which",))
        lm = wrap_causal_lm(model, tokenizer)
        m = pretrained_embedding_model(untrained_copy(lm) if which == "init" else lm, device)
    digest = hashlib.sha256()
    for t in docs:
        digest.update(t.encode("utf-8", "surrogatepass") + b"\x00")
    total = len(docs) if cfg.max_docs is None else min(len(docs), cfg.max_docs)
    emb = extract_embeddings(m, (np.asarray(m.encode(t), dtype=np.int64) for t in docs), cfg, total=total,
                             progress=progress)
    emb.meta["corpus"] = {"source": "texts", "n_texts": len(docs), "sha256": digest.hexdigest()}
    return emb


def text_intrinsic_dimension(
    emb: Embeddings,
    layer: int = -1,
    *,
    batch_size: int = PAPER.batch_size,
    k: int = PAPER.k,
    average: str = PAPER.average,
    unbiased: bool = False,
    seed: int = 0,
    group: int | None = None,
) -> dict[str, Any]:
    """Paper-protocol MLE of one layer's vectors (optionally one position group) and the exponents
    it predicts (α_D = 2/(2 + d), α_N = 2/d: Theorems 1–2 with β = 1)."""
    from ttlab.intrinsic_dim import paper_protocol
    from ttlab.scaling.theory import alpha_d, alpha_n

    X = emb.layer(layer)
    where = "all vectors"
    if group is not None:
        mask = emb.group == group
        X = X[mask]
        where = f"position group {group}"
    n = len(X)
    if n <= k:
        raise TTLabInputError(f"{n} vectors in {where} of layer {layer}: need more than k = {k}; embed more documents.")
    bs = min(batch_size, n)
    with warnings.catch_warnings():  # duplicates (e.g. repeated tokens at layer 0) are dropped and counted below
        warnings.simplefilter("ignore")
        res = paper_protocol(X, batch_size=bs, k=k, average=average, unbiased=unbiased, seed=seed)
    d = float(res.dimension)
    return {
        "layer": layer if layer >= 0 else layer + int(emb.meta["model"]["n_layer"]) + 1,
        "group": group,
        "n_vectors": n,
        "n_duplicates_removed": int(res.n_duplicates_removed),
        "batch_size": bs,
        "batch_size_requested": batch_size,  # bs is clipped to the vectors there are
        "k": k,
        "average": average,
        "unbiased": unbiased,
        "intrinsic_dim": d,
        "intrinsic_dim_std": float(res.dimension_std),
        "batch_dims": [float(x) for x in (res.batches or [d])],
        "n_batches": len(res.batches or [d]),  # below 2, the std is no spread: one batch
        "alpha_d_pred": alpha_d(d),
        "alpha_n_pred": alpha_n(d),
    }


def embed_to_file(
    model: str | Path | EmbeddingModel,
    out: str | Path,
    corpus: str | None = None,
    cfg: EmbedConfig = EmbedConfig(),
    *,
    layers: Sequence[int] | str | None = (-1,),
    split_seed: int = 0,
    which: str = "final",
    errors: str = "strict",
    estimate_id: bool = False,
    k: int = PAPER.k,
    average: str = PAPER.average,
    batch_size: int = PAPER.batch_size,
    progress: ProgressFn | None = None,
) -> Embeddings:
    """``ttlab id embed`` as one call: embed ``cfg.split`` of ``corpus`` with ``model`` (:func:`embed_corpus`) at
    ``layers`` (layer indices; ``"all"`` or None: every layer, which replaces ``cfg.layers``), optionally estimate
    each layer's ID with the paper's protocol (``estimate_id``: :func:`text_intrinsic_dimension` with ``k``,
    ``average``, ``batch_size`` and ``cfg.seed``, stored in ``meta["intrinsic_dim"]``) and save to ``out`` (``.npy``:
    one layer; ``.npz``: several; metadata in ``<out>.json``), which is checked before any work. ``errors``:
    invalid UTF-8 in the corpus, ``strict`` or ``replace``."""
    from ttlab.outputs import check_out_file

    every = layers is None or (isinstance(layers, str) and layers.strip().lower() == "all")
    if isinstance(layers, str) and not every:
        raise TTLabInputError(f"layers must be a sequence of layer indices or 'all', got {layers!r}.", params=("layers",))
    cfg = replace(cfg, layers=None if every else tuple(layers))  # type: ignore[arg-type]
    out = check_out_file(out, suffixes=(".npy", ".npz"))
    # the estimate's settings are checked before the embedding (also without estimate_id: never silently ignored)
    from ttlab.intrinsic_dim import MLE

    MLE(k=k, average=average, batch_size=batch_size).check_params()
    check_int(split_seed, "split_seed", 0)
    if out.suffix == ".npy" and (cfg.layers is None or len(cfg.layers) > 1):
        raise TTLabInputError(f"several layers need an .npz output: give out as {out.with_suffix('.npz')}.",
                              params=("out",))
    emb = embed_corpus(model, corpus, cfg, split_seed=split_seed, which=which, errors=errors, progress=progress)
    if estimate_id:
        emb.meta["intrinsic_dim"] = [text_intrinsic_dimension(emb, i, batch_size=batch_size, k=k, average=average,
                                                              seed=cfg.seed) for i in emb.layers]
    emb.save(out)
    return emb


def embed_view(emb: Embeddings, out: str | Path) -> list[RenderableType]:
    """What ``ttlab id embed`` prints of :func:`embed_to_file`'s result written to ``out``: the vectors, layers and
    documents, the model and window, and each layer's ID estimate with its predicted exponents (when made). A list
    of :class:`rich.text.Text` lines; never prints."""
    from ttlab.markup import plain

    m, mm = emb.meta, emb.meta["model"]
    view = [plain(f"wrote {out} ({m['n_vectors']} vectors × {mm['width']}, layers {m['layers']}) from "
                  f"{m['n_docs']} documents in {m['wall_time_s']:.1f} s"),
            plain(f"  model {mm['name']} ({mm['n_layer']} layers); window {m['config']['window']}, "
                  f"{m['context_used']} tokens; last layer after final norm: {mm['final_norm_in_last_layer']}")]
    for e in m.get("intrinsic_dim", []):
        spread = (f"± {e['intrinsic_dim_std']:.2f} over {e['n_batches']} batches" if e["n_batches"] >= 2 else
                  f"one batch: no spread; ≥ {2 * e['batch_size_requested']:,} vectors give two")
        view.append(plain(
            f"  layer {e['layer']}: ID {e['intrinsic_dim']:.2f} ({spread}, {e['n_vectors']} vectors) "
            f"→ α_D {e['alpha_d_pred']:.3f}, α_N {e['alpha_n_pred']:.3f}"))
    return view
