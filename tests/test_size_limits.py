"""Every size option is estimated before any allocation (issue 33 item 5): a sample or a model that cannot fit is
refused by arithmetic, exit 2, with the number, and nothing is written; the arithmetic is checked against the real
objects at sizes that do fit."""

from __future__ import annotations

import pytest

from ttlab.lm.configs import GPTConfig, TrainConfig
from ttlab.lm.train_corpus import check_train_memory, train_memory_bytes


@pytest.mark.parametrize("cfg", [GPTConfig(vocab_size=300, block_size=16, n_layer=1, n_head=2, n_embd=32), GPTConfig(),
                                 GPTConfig(vocab_size=5000, block_size=64, n_layer=6, n_head=6, n_embd=192)])
def test_the_memory_arithmetic_counts_the_real_parameters(cfg):
    from ttlab.lm.model import GPT

    n = sum(p.numel() for p in GPT(cfg).parameters())
    tiny_batch = TrainConfig(batch_size=1)
    acts = cfg.n_layer * 2 * cfg.block_size * cfg.n_embd * (34 + 5 * cfg.n_head * cfg.block_size // cfg.n_embd)
    weights = train_memory_bytes(cfg, tiny_batch) - acts - 2 * cfg.block_size * cfg.vocab_size * 4
    assert 16 * n <= weights <= 16 * n * 1.02  # 16 bytes per parameter, biases counted (never below the truth)
    assert train_memory_bytes(cfg, TrainConfig(batch_size=4)) > train_memory_bytes(cfg, tiny_batch)


def test_check_train_memory_refuses_above_the_limit_and_names_the_sizes():
    from ttlab.errors import TTLabInputError

    small = GPTConfig(vocab_size=300, block_size=16, n_layer=1, n_head=2, n_embd=32)
    assert check_train_memory(small, TrainConfig(batch_size=2), memory_limit_gib=1) == train_memory_bytes(
        small, TrainConfig(batch_size=2))
    with pytest.raises(TTLabInputError, match=r"need ≈ .* GiB to train .* above memory_limit_gib = 0.001") as info:
        check_train_memory(GPTConfig(n_layer=8, n_embd=256, n_head=8), TrainConfig(), memory_limit_gib=0.001)
    assert "batch_size" in info.value.params and "memory_limit_gib" in info.value.params
    with pytest.raises(TTLabInputError, match="memory_limit_gib must be a positive number"):
        check_train_memory(small, TrainConfig(), memory_limit_gib=float("nan"))


@pytest.mark.parametrize("option", [("--n-layer", "100000"), ("--block-size", "100000000"), ("--batch-size", "100000000"),
                                    ("--n-embd", "65536")])
def test_lm_train_refuses_a_model_that_cannot_fit_before_building_it(option, tmp_path, run_cli):
    extra = ("--n-head", "1") if option[0] == "--n-embd" else ()
    r = run_cli("lm", "train", "--corpus", "builtin:sotu", "--out", tmp_path / "o", *option, *extra)
    assert r.code == 2 and "GiB to train" in r.err and option[0] in r.err and "Traceback" not in r.err
    assert "--memory-limit" not in r.err  # the limit was not given: the sizes are what to change
    assert not (tmp_path / "o").exists()


def test_sample_manifold_refuses_a_sample_that_cannot_fit(tmp_path, run_cli):
    r = run_cli("id", "sample-manifold", "sphere", "--d", "3", "--ambient", "100000", "--n", "100000000",
                "--out", tmp_path / "x.npy")
    assert r.code == 2 and "74,505.8 GiB" in r.err and "--memory-limit" in r.err and not (tmp_path / "x.npy").exists()
    r = run_cli("id", "sample-manifold", "sphere", "--d", "3", "--ambient", "1000", "--n", "2000", "--noise", "0.1",
                "--out", tmp_path / "y.npy", "--memory-limit", "0.01")  # 2 × 2000 × 1000 × 8 bytes = 0.03 GiB
    assert r.code == 2 and "0.0 GiB" in r.err
    r = run_cli("id", "sample-manifold", "sphere", "--d", "3", "--ambient", "1000", "--n", "2000",
                "--out", tmp_path / "y.npy", "--memory-limit", "0.02")  # no noise: 0.015 GiB fits
    assert r.code == 0 and (tmp_path / "y.npy").exists()


def test_the_sweeps_refuse_a_model_that_cannot_fit_before_the_data(tmp_path, run_cli):
    for kind in ("data-sweep", "model-sweep"):
        r = run_cli("lm", kind, "--quick", "--out", tmp_path / kind, "--block-size", "100000000")
        assert r.code == 2 and "GiB to train" in r.err and "--block-size" in r.err and "Traceback" not in r.err
        assert "preparing data" not in r.err


def test_a_bpe_vocabulary_is_bounded_before_the_corpus_is_read(tmp_path, run_cli):
    r = run_cli("lm", "prepare", "--corpus", "builtin:sotu", "--vocab-size", str(10**18), "--cache-dir", tmp_path)
    assert r.code == 2 and "vocab_size must be at most 2,097,152" in r.err and "loading corpus" not in r.err


def test_a_long_bootstrap_is_timed_first_and_refused_above_max_hours(tmp_path, run_cli, monkeypatch):
    """scaling fit --bootstrap 100000 printed nothing for minutes (≈ 2.6 h of work): a bootstrap above TIMED_ABOVE
    replicates is timed on a few first, refused above --max-hours, and one that takes a while has its estimate printed
    and its progress followed (issue 33 item 5)."""
    import numpy as np

    import ttlab.scaling.fit_csv as fit_csv
    from ttlab.scaling.fit_csv import TIMED_ABOVE

    n = np.geomspace(1e3, 1e7, 12)
    f = tmp_path / "f.csv"
    f.write_text("n,loss\n" + "".join(f"{a:.6g},{(1.5 + 20 * a ** -0.34) * np.exp(0.01 * np.sin(a)):.6g}\n" for a in n))
    r = run_cli("scaling", "fit", f, "--x", "n", "--y", "loss", "--form", "offset", "--bootstrap",
                str(TIMED_ABOVE + 1), "--max-hours", "1e-9")
    assert r.code == 2 and "bootstrap replicates would take" in r.err and "--max-hours" in r.err
    r = run_cli("scaling", "fit", f, "--x", "n", "--y", "loss", "--bootstrap", str(TIMED_ABOVE + 1))
    assert r.code == 0 and "bootstrap" not in r.err  # timed, but a fast one is neither announced nor followed
    monkeypatch.setattr(fit_csv, "FOLLOWED_ABOVE_SECONDS", 0.0)  # as if it took a while
    r = run_cli("scaling", "fit", f, "--x", "n", "--y", "loss", "--form", "offset", "--bootstrap", str(TIMED_ABOVE + 1))
    assert r.code == 0 and f"bootstrap: {TIMED_ABOVE + 1:,} replicates ≈" in r.err
    assert f"bootstrap: 0/{TIMED_ABOVE + 1}" in r.err and f"bootstrap: {TIMED_ABOVE + 1}/{TIMED_ABOVE + 1}" in r.err
    r = run_cli("scaling", "fit", f, "--x", "n", "--y", "loss", "--bootstrap", str(TIMED_ABOVE))
    assert r.code == 0 and "replicates ≈" not in r.err  # small ones are not timed


@pytest.mark.parametrize("args", [
    ["id", "sample-manifold", "sphere", "--d", "3", "--ambient", "100000", "--n", "100000000", "--out", "{tmp}/x.npy"],
    ["lm", "train", "--corpus", "builtin:sotu", "--out", "{tmp}/o", "--block-size", "100000000"],
], ids=["sample-manifold", "lm train"])
def test_a_size_bomb_is_refused_under_a_small_address_space(tmp_path, args):
    """A real process limited to 3 GiB of address space (ulimit -v): the refusal comes from arithmetic before any
    large allocation — exit 2 and one line, not a MemoryError or an allocator traceback (issue 33 item 5)."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    argv = [a.format(tmp=tmp_path) for a in args]
    r = subprocess.run([sys.executable, "-c", f"from ttlab.cli import main; main({argv!r})"], preexec_fn=limit,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr[-500:]
    assert "GiB" in r.stderr and "Traceback" not in r.stderr and "MemoryError" not in r.stderr
