"""Scoring a suite's text windows with one model: each window encoded with a start token in front, cut into chunks
of at most the context (:func:`chunk_tokens`), batched by a token budget; loss, bits per byte and the final-layer
vectors at the sampled positions from the same forward passes (:func:`score_windows`), their ID (:func:`suite_id`),
one model's whole row (:func:`evaluate_model`). The protocol is described in :mod:`ttlab.lm.suite`.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.lm.suite_models import SuiteModel, open_suite_model
from ttlab.lm.suite_windows import SuiteConfig, TextWindow

__all__ = ["MAX_LOGITS", "Chunk", "chunk_tokens", "evaluate_model", "score_windows", "suite_id"]

MAX_LOGITS = 1 << 28
"""Largest number of logits (batch tokens × vocabulary) one batch may produce (1 GiB in float32)."""


@dataclass
class Chunk:
    """One forward pass's inputs of a window (:func:`chunk_tokens`): which inputs predict which targets, and which
    provide the hidden states of which text tokens."""

    window: int
    inputs: list[int]
    score_from: int  # input positions score_from … len(inputs) − 1 predict targets
    targets: list[int]  # targets of those positions (the last one may be None: no target past the text)
    own_from: int  # input positions own_from … own_to − 1 provide hidden states of text tokens
    own_to: int
    token_offset: int  # text-token index of input position own_from


def chunk_tokens(w: int, toks: list[int], start: int, C: int, P: int) -> list[Chunk]:
    """Chunks of ``u = [start] + toks`` with at most ``C`` inputs each: every u[k], k ≥ 1, is predicted
    once (from the inputs before it) and embedded once (as an input). The first chunk is u[0:C]; each
    later one ends ``P`` (≤ C) tokens further and holds the ``C`` inputs before its end."""
    u = [start, *toks]
    n = len(toks)
    out = []
    a, b, s, o = 0, min(C, n + 1), 1, 1
    while True:
        s2 = min(b + 1, n + 1)  # the last input predicts u[b] when there is one
        out.append(Chunk(w, u[a:b], s - 1 - a, u[s:s2], o - a, b - a, o - 1))
        if b >= n + 1:
            return out
        s, o = s2, b
        b = min(b + P, n + 1)
        a = max(0, b - C)


def _batches(chunks: list[Chunk], batch_tokens: int) -> list[list[int]]:
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

    from ttlab.lm.configs import EmbedConfig
    from ttlab.lm.embed import SHUFFLE_STREAM, sample_positions

    C = min(cfg.context, sm.max_context)
    if C < 2:
        raise TTLabInputError(f"model {sm.name}: context {C} leaves no room for a start token and a scored token.")
    P = min(cfg.stride or C, C)
    ecfg = EmbedConfig(tokens_per_doc=cfg.id_tokens_per_doc, context=max(1, C), seed=cfg.seed)
    chunks: list[Chunk] = []
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
        chunks.extend(chunk_tokens(w, toks, sm.start_token_id, C, P))
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


def suite_id(scored: dict[str, Any], sm: SuiteModel, cfg: SuiteConfig) -> dict[str, Any]:
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
        idr = suite_id(scored, sm, cfg)
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
