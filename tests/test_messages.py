"""Messages that help (issue 23): advice that works, causes on the console, progress in long silences,
and no dataset written that the next command refuses."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from tests.reproduce.test_reproduce import registry  # noqa: F401  (fixture)
from ttlab.errors import TTLabInputError


# ---------------------------------------------------------------------------------- ntp generate
def test_generate_refuses_a_dataset_that_run_would_refuse_and_names_the_smallest_vocab(run_cli, tmp_path):
    out = tmp_path / "g.txt"
    r = run_cli("ntp", "generate", "--vocab", "3", "--out", out)
    err = " ".join(r.err.split())
    assert r.code == 2 and "stage 2 has nothing to learn" in err
    assert "the smallest vocab_size that works with these options is 4" in err and not out.exists()
    assert err.endswith("(command-line option: --vocab)")  # the parameter's flag in the command
    assert run_cli("ntp", "generate", "--vocab", "4", "--out", out).code == 0
    r = run_cli("ntp", "run", "--data", out, "--out", tmp_path / "run", "--quiet", "--stage1-steps", "5",
                "--stage2-steps", "5")
    assert r.code == 0, r.err  # what generate writes, run accepts


def test_ntp_errors_name_parameters_and_the_cli_shows_the_commands_flags(run_cli, tmp_path):
    from ttlab.ntp.config import RandomSpec

    with pytest.raises(TTLabInputError, match=r"^vocab_size must be at least 2 \(got 1\)$") as info:
        RandomSpec(vocab_size=1)
    assert info.value.params == ("vocab_size",)
    r = run_cli("ntp", "run", "--vocab", "1", "--out", tmp_path / "r")
    assert r.code == 2 and "vocab_size must be at least 2 (got 1) (command-line option: --vocab)" in " ".join(r.err.split())
    (tmp_path / "d.txt").write_text("a => b\nb => a\n")
    r = run_cli("ntp", "check", tmp_path / "d.txt", "--memory-limit", "0")
    assert r.code == 2 and "(command-line option: --memory-limit)" in " ".join(r.err.split())


@pytest.mark.parametrize("method", ["dense", "large"])
def test_the_stage2_test_of_generate_agrees_with_the_checker(method):
    from ttlab.ntp.config import RandomSpec
    from ttlab.ntp.dataset import NTPDataset
    from ttlab.ntp.generate import text_and_stage2
    from ttlab.ntp.structure import analyze

    seen = set()
    for vocab in (2, 3, 4, 8):
        for seed in range(8):
            try:
                text, orders = text_and_stage2(RandomSpec(vocab, 3, 2, 6, seed), method)
            except TTLabInputError:
                continue
            assert orders == ("stage2" not in analyze(NTPDataset.from_text(text)).degenerate()), (vocab, seed)
            seen.add(orders)
    assert seen == {True, False}  # both cases were met


# ------------------------------------------------------------------------------ corpus decoding
def test_suite_reads_a_latin1_corpus_with_decode_errors_replace(tmp_path, run_cli, monkeypatch):
    from ttlab.lm.suite import split_texts
    from ttlab.lm.suite_windows import SuiteConfig

    corpus = tmp_path / "latin1.txt"
    corpus.write_bytes("\n\n".join(f"Café number {i} près de la gare." for i in range(30)).encode("latin-1"))
    with pytest.raises(TTLabInputError, match="pass errors='replace'") as info:
        split_texts(SuiteConfig(corpus=str(corpus)))
    texts, _ = split_texts(SuiteConfig(corpus=str(corpus), decode_errors="replace"))
    assert info.value.params == ("errors",)
    assert texts and all("\ufffd" in t for t in texts)
    assert "decode_errors" not in SuiteConfig().plain_fields()  # cached runs of the default keep their keys
    assert SuiteConfig(decode_errors="replace").plain_fields()["decode_errors"] == "replace"
    model = tmp_path / "hf"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "gpt2"}')
    r = run_cli("lm", "suite", "--model", model, "--corpus", corpus, "--decode-errors", "bogus", "--out", tmp_path / "o")
    assert r.code == 2 and "unknown decode_errors 'bogus'; choose one of strict, replace" in r.err
    import ttlab.lm.suite as suite

    seen = {}

    def fake_run_suite(**kw):
        seen["cfg"] = kw["cfg"]
        raise TTLabInputError("stop here")

    monkeypatch.setattr(suite, "run_suite", fake_run_suite)
    r = run_cli("lm", "suite", "--model", model, "--corpus", corpus, "--decode-errors", "replace", "--out", tmp_path / "o")
    assert r.code == 2 and seen["cfg"].decode_errors == "replace"


# ------------------------------------------------------------------------- causes on the console
def test_reproduce_prints_a_failed_parts_cause_on_the_console(registry, run_cli, tmp_path):  # noqa: F811
    from ttlab.reproduce.registry import PartContext, register_part

    @register_part("fake_full_disk", paper="B", title="Fake part on a full disk", render=lambda r: [], estimate=(1, 1))
    def fake_full_disk(out: Path, ctx: PartContext) -> dict:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out / "x.npy"))

    r = run_cli("reproduce", "--out", tmp_path / "o", "--part", "fake_full_disk")
    err = " ".join(r.err.split())
    assert r.code == 1 and "fake_full_disk: OSError: [Errno 28] No space left on device" in err


def test_a_full_disk_after_a_failed_part_shows_both_causes(registry, run_cli, tmp_path, monkeypatch):  # noqa: F811
    """The disk fills up while the record of a part that had failed is written: the console names the write's error
    and the part's own cause (issue 33 item 6), not only "No space left"."""
    import ttlab.reproduce as rp
    from ttlab.reproduce.registry import PartContext, register_part

    @register_part("fake_broken", paper="B", title="Fake part that fails", render=lambda r: [], estimate=(1, 1))
    def fake_broken(out: Path, ctx: PartContext) -> dict:
        raise ValueError("the part's own cause")

    def full_disk(path, obj, **kw):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(rp, "atomic_write_json", full_disk)
    r = run_cli("reproduce", "--out", tmp_path / "o", "--part", "fake_broken")
    err = " ".join(r.err.split())
    assert r.code == 2 and "fake_broken.json: No space left on device" in err
    assert "part fake_broken had failed before this write: ValueError: the part's own cause" in err


# ------------------------------------------------------------------------------------- progress
def test_progress_without_a_terminal_prints_lines_and_a_heartbeat(capsys, monkeypatch):
    import ttlab.cli.common as common

    monkeypatch.setattr(common, "HEARTBEAT_SECONDS", 0.2)
    assert not common.console_err.is_terminal  # pytest captures stderr: the case of a log file or a pipe

    def work(progress):
        progress("models", 0, 1)
        time.sleep(0.9)  # one long step with no progress of its own
        progress("models", 1, 1)
        return 7

    assert common.run_with_progress(work) == 7
    err = capsys.readouterr().err
    assert "models: 0/1" in err and "models: 1/1" in err
    assert "models: still running, 0/1 done" in err
    common.run_with_progress(lambda progress: progress("documents", 3, None))  # a total not known yet
    assert "documents: 3 (" in capsys.readouterr().err


def test_a_fast_counter_is_not_a_line_per_step_without_a_terminal(capsys):
    """A bootstrap reports about every 1 % of its replicates: in a log that is a line a second at most, plus its start
    and end, and a new stage always prints."""
    import ttlab.cli.common as common

    def work(progress):
        for i in range(1001):
            progress("bootstrap", i, 1000)
        progress("plot", 0, 1)

    common.run_with_progress(work)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("bootstrap: 0/1000") and lines[1].startswith("bootstrap: 1000/1000")
    assert lines[2].startswith("plot: 0/1") and len(lines) == 3


@pytest.mark.parametrize("command", ["data-sweep", "manifold"])
def test_sweeps_print_the_cause_of_failed_runs(run_cli, tmp_path, monkeypatch, command):
    cause = "OSError: [Errno 28] No space left on device: 'runs/r1/ckpt.pt'"
    if command == "data-sweep":
        import ttlab.lm.experiments as ex

        monkeypatch.setattr(ex, "run_data_sweep", lambda **kw: {
            "n_failed": 1, "runs": [{"name": "r0", "status": "ok"}, {"name": "r1", "status": "failed", "error": cause}]})
        args = ["lm", "data-sweep", "--quick", "--json", "--out", tmp_path / "o"]
    else:
        import ttlab.scaling.manifold_regression as mr

        monkeypatch.setattr(mr, "run_manifold_sweep", lambda *a, **kw: {
            "sweep": {"n_failed": 1, "failures": [{"key": "r1", "config": {}, "error": cause}]}})
        args = ["scaling", "manifold", "--quick", "--workers", "1", "--json", "--out", tmp_path / "o"]
    r = run_cli(*args)
    assert r.code == 1
    assert f"r1: {cause}" in " ".join(r.err.split()) and "r0:" not in r.err


# ---------------------------------------------------------------------------------- errors name parameters
def test_an_error_names_parameters_and_the_cli_shows_the_invoked_commands_flags():
    """The library names the parameter at fault; the CLI shows the flag of the command that was run (one parameter
    name can have different flags in different commands)."""
    from ttlab.cli import command_flags, with_flags

    info = command_flags(["lm", "corpus", "info", "builtin:sotu"])
    assert info["errors"] == "--decode-errors" and info["field_name"] == "--field" and info["as_json"] == "--json"
    assert command_flags(["reproduce", "--quick"])["list_parts"] == "--list"
    assert command_flags(["nope"]) == {} and command_flags([]) == {} and command_flags(["lm"]) == {}
    exc = TTLabInputError("bad bytes", params=("errors",))
    assert with_flags(exc, info) == "bad bytes (command-line option: --decode-errors)"
    assert with_flags(exc, {}) == "bad bytes (command-line option: --decode-errors)"  # FLAGS: errors is --decode-errors
    # a parameter the invoked command has no flag for is not given a made-up one
    assert with_flags(TTLabInputError("no optimum", params=("compute",)), command_flags(["scaling", "isoflop"])) == \
        "no optimum"
    assert with_flags(TTLabInputError("k", params=("compute", "flops_per_token")),
                      command_flags(["scaling", "isoflop"])) == "k (command-line option: --flops-per-token)"
    seed = TTLabInputError("bad seed", params=("split_seed",))
    assert with_flags(seed) == "bad seed (command-line option: --split-seed)"  # otherwise -- + the name
    two = TTLabInputError("both", params=("out_dir", "field_name"))
    with_out = {**info, "out": "--out"}  # a command with --out (lm corpus info has none: see below)
    assert with_flags(two, with_out) == "both (command-line options: --out, --field)"
    assert with_flags(two, info) == "both (command-line option: --field)"


def test_the_cli_prints_the_flag_of_the_parameter_an_error_names(run_cli, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"body": "some text"}\n', encoding="utf-8")
    r = run_cli("lm", "corpus", "info", corpus)
    assert r.code == 2 and "(command-line option: --field)" in " ".join(r.err.split())


def test_lm_and_output_errors_name_their_parameters(tmp_path, monkeypatch):
    """The messages of ttlab.lm and ttlab.outputs name parameters (``exc.params``), not flags."""
    import torch

    from ttlab.lm.checkpoint import load_checkpoint_state, read_run_json
    from ttlab.lm.configs import SampleConfig
    from ttlab.lm.distributed import resolve_device
    from ttlab.lm.suite import checked_specs, suite_specs
    from ttlab.lm.suite_models import check_device
    from ttlab.lm.train_corpus import check_train_time
    from ttlab.outputs import check_out_dir, check_out_file

    (tmp_path / "bad.json").write_text("[1]")
    (tmp_path / "bad.pt").write_bytes(b"")
    (tmp_path / "afile").write_text("x")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    spec = {"label": "m", "spec": "m"}
    cases = [(lambda: SampleConfig(tokens=0), "tokens must be an integer >= 1", ("tokens",)),
             (lambda: read_run_json(tmp_path / "bad.json"), "start a new out_dir", ("out_dir",)),
             (lambda: load_checkpoint_state(tmp_path / "bad.pt"), "start a new out_dir", ("out_dir",)),
             (lambda: resolve_device("cuda"), "use device 'cpu'", ("device",)),
             (lambda: check_device("cuda"), "use device 'cpu'", ("device",)),
             (lambda: suite_specs([]), "give the models", ("models", "suite_file")),
             (lambda: checked_specs([], None), "give at least one model", ("models",)),
             (lambda: checked_specs([spec], "other"), "reference 'other' is none of", ("reference",)),
             (lambda: check_train_time(None, None, max_hours=0), "max_hours must be a positive", ("max_hours",)),
             (lambda: check_out_dir(tmp_path / "afile"), "out ", ("out",)),
             (lambda: check_out_file(tmp_path, param="plot"), "plot ", ("plot",)),
             (lambda: check_out_file(tmp_path, param="plot"), "plot ", ("plot",))]
    for call, text, params in cases:
        with pytest.raises(TTLabInputError) as info:
            call()
        assert str(info.value).startswith(text) or text in str(info.value), (text, str(info.value))
        assert info.value.params == params, text
        assert "--" not in str(info.value), str(info.value)


def test_lm_suite_shows_the_flags_of_its_renamed_parameters(run_cli, tmp_path):
    r = run_cli("lm", "suite", "--corpus", "builtin:sotu", "--out", tmp_path / "o")
    err = " ".join(r.err.split())
    assert r.code == 2 and "give the models" in err and "(command-line options: --model, --suite)" in err
