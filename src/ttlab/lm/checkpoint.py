"""Checkpoint files and run folders read back: the checkpoint format (:data:`CKPT_FORMAT`, written atomically by
:func:`save_torch_atomic`), :func:`load_checkpoint_state`, the models and run folders :func:`ttlab.lm.trainer.train`
writes (:func:`load_model`, :func:`load_run`, :class:`LoadedRun`), and sampling from one (:func:`sample_text`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ttlab.errors import TTLabInputError
from ttlab.lm.configs import DEFAULT_PROMPT, WHICH, GPTConfig, SampleConfig
from ttlab.lm.data import TokenizedCorpus
from ttlab.lm.model import GPT
from ttlab.provenance import atomic_file, read_json

__all__ = ["CKPT_FORMAT", "LoadedRun", "load_checkpoint_state", "load_model", "load_run", "missing_checkpoint",
           "read_run_json", "sample_text", "save_torch_atomic"]

CKPT_FORMAT = "ttlab.lm.ckpt/1"


def save_torch_atomic(obj: Any, path: Path) -> None:
    """``torch.save(obj)`` to ``path`` atomically (a temporary file renamed into place: never a half-written file)."""
    with atomic_file(path) as fh:
        torch.save(obj, fh)


def load_checkpoint_state(path: str | Path) -> dict[str, Any]:
    """The state dict saved in a ttlab checkpoint (ckpt.pt / best.pt).

    A file that cannot be unpickled (truncated by a crash or a full disk, or empty) or that is not
    a ttlab checkpoint is a clear :class:`TTLabInputError` naming it; nothing is deleted."""
    p = Path(path)
    try:
        state = torch.load(p, map_location="cpu", weights_only=False)
    except Exception as exc:  # torch/pickle raise EOFError, RuntimeError, UnpicklingError, … for damaged files
        size = p.stat().st_size if p.exists() else 0
        detail = (str(exc).strip().splitlines() or [""])[0][:200]
        reason = "empty file, 0 bytes" if size == 0 else f"{size:,} bytes; {type(exc).__name__}: {detail}"
        raise TTLabInputError(f"{p} is corrupt ({reason}); delete it or start a new out_dir.",
                              params=("out_dir",)) from None
    if not isinstance(state, dict) or state.get("format") != CKPT_FORMAT:
        raise TTLabInputError(f"{p} is not a ttlab language-model checkpoint (no format {CKPT_FORMAT!r}); "
                              "delete it or start a new out_dir.", params=("out_dir",))
    return state


def missing_checkpoint(folder: str | Path) -> str | None:
    """Why ``folder`` — a ttlab run folder by its config.json (``model`` + ``train``, no Hugging Face
    ``model_type``) — cannot be opened as a model: it has no ckpt.pt. None when it is not such a folder or
    the checkpoint is there. Used where a folder may be a ttlab run or a Hugging Face model, so a run that
    never saved a checkpoint is not mistaken for a Hugging Face folder."""
    p = Path(folder)
    if (p / "ckpt.pt").is_file() or not (p / "config.json").is_file():
        return None
    try:
        cfg = read_json(p / "config.json")
    except (OSError, ValueError):
        return None
    if not (isinstance(cfg, dict) and "model" in cfg and "train" in cfg and "model_type" not in cfg):
        return None
    return (f"{p} is a ttlab run folder (config.json of `ttlab lm train`) but has no ckpt.pt: the run saved no "
            "checkpoint (stopped before its first evaluation, or the file was removed). Finish it with "
            f"`ttlab lm train … --out {p} --resume`, or give a run folder that holds ckpt.pt.")


def read_run_json(path: str | Path) -> dict[str, Any]:
    """A JSON object from a run folder (config.json, result.json); a damaged file is a clear error."""
    p = Path(path)
    try:
        obj = read_json(p)
    except (ValueError, UnicodeDecodeError) as exc:
        size = p.stat().st_size
        reason = "empty file, 0 bytes" if size == 0 else f"{size:,} bytes; {exc}"
        raise TTLabInputError(f"{p} is corrupt ({reason}); delete it or start a new out_dir.",
                              params=("out_dir",)) from None
    if not isinstance(obj, dict):
        raise TTLabInputError(f"{p} is corrupt (not a JSON object); delete it or start a new out_dir.",
                              params=("out_dir",))
    return obj


def load_model(path: str | Path, device: str = "cpu", which: str = "final") -> tuple[GPT, dict[str, Any]]:
    """A trained :class:`GPT` (in eval mode) and its checkpoint metadata.

    ``path`` is a run folder (``which`` = ``final`` → ckpt.pt, ``best`` → best.pt, ``init`` → the untrained
    weights the run started from: its architecture initialised from its training seed exactly as
    :func:`train` does, a control for what training adds) or a .pt file.
    """
    p = Path(path)
    if p.is_dir():
        if which not in WHICH:
            raise TTLabInputError(f"which must be one of {', '.join(WHICH)}, got {which!r}.")
        p = p / ("best.pt" if which == "best" else "ckpt.pt")
    elif which == "init":
        raise TTLabInputError(f"which='init' needs the run folder, not the file {p}.")
    if not p.is_file():
        raise TTLabInputError(f"checkpoint {p} not found.")
    state = load_checkpoint_state(p)
    cfg = GPTConfig.from_dict(state["model_config"])
    if which == "init":
        with torch.random.fork_rng(devices=[]):  # the caller's random streams are left as they were
            torch.manual_seed(int(state["train_config"]["seed"]))  # as the trainer's fresh loop state
            model = GPT(cfg)
    else:
        model = GPT(cfg)
        model.load_state_dict(state["model"])
    model.to(device).eval()
    meta = {k: v for k, v in state.items() if k not in ("model", "optimizer", "rng")}
    meta["path"] = str(p)
    if which == "init":
        meta.update(iter=0, which="init")
    return model, meta


@dataclass
class LoadedRun:
    """A run folder opened for use: model (eval mode), tokenizer, config and result (if finished)."""

    model: GPT
    tokenizer: Any
    config: dict[str, Any]
    result: dict[str, Any] | None
    meta: dict[str, Any]

    def data(self) -> TokenizedCorpus:
        """The token dataset the run was trained on (its cache folder must still exist)."""
        root = self.config.get("data", {}).get("dataset_dir")
        if not root or not Path(root).is_dir():
            raise TTLabInputError(f"the run's dataset folder {root!r} no longer exists; prepare the corpus again "
                                  "with the same options (ttlab lm prepare) to recreate it.")
        return TokenizedCorpus(root)


def load_run(run_dir: str | Path, device: str = "cpu", which: str = "final") -> LoadedRun:
    """Open a run folder written by :func:`train` (model from ckpt.pt or best.pt, tokenizer.json)."""
    from ttlab.lm.tokenizer import load_tokenizer

    d = Path(run_dir)
    model, meta = load_model(d, device=device, which=which)
    tok = load_tokenizer(d / "tokenizer.json") if (d / "tokenizer.json").exists() else None
    config = read_run_json(d / "config.json") if (d / "config.json").exists() else {}
    result = read_run_json(d / "result.json") if (d / "result.json").exists() else None
    return LoadedRun(model, tok, config, result, meta)


def sample_text(run_dir: str | Path, prompt: str = DEFAULT_PROMPT, cfg: SampleConfig = SampleConfig(),
                note: Callable[[str], None] | None = None) -> str:
    """``prompt`` continued by the model of a run folder (:func:`load_run` with ``cfg.which``): ``cfg.tokens`` tokens
    sampled at ``cfg.temperature`` among the ``cfg.top_k`` most likely, from ``cfg.seed``; the prompt included.
    ``which="best"`` on a run without best.pt samples its final weights and says so to ``note``."""
    which = cfg.which
    if which == "best" and not (Path(run_dir) / "best.pt").exists():
        if note is not None:
            note(f"note: {run_dir} has no best.pt (trained with keep_best off, or stopped before its first evaluation): "
                 "sampling from its final weights, ckpt.pt")
        which = "final"
    r = load_run(run_dir, which=which)
    if r.tokenizer is None:
        raise TTLabInputError(f"{run_dir} has no tokenizer.json.")
    ids = r.tokenizer.encode(prompt) or ([r.tokenizer.eot_id] if r.tokenizer.eot_id is not None else [0])
    g = torch.Generator().manual_seed(cfg.seed)
    out = r.model.generate(torch.tensor([ids]), cfg.tokens, temperature=cfg.temperature, top_k=cfg.top_k, generator=g)
    return r.tokenizer.decode(out[0].tolist())
