"""`ttlab lm …` commands end to end, and data-parallel training under torchrun (gloo, 2 processes)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from .conftest import make_texts

TINY = ("--model", "nano", "--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "16", "--batch-size", "4",
        "--eval-iters", "2", "--warmup-iters", "2", "--threads", "1")


@pytest.fixture
def corpus_file(tmp_path):
    p = tmp_path / "corpus.jsonl"
    p.write_text("".join(json.dumps({"id": f"doc{i}", "text": t}) + "\n" for i, t in enumerate(make_texts(30))))
    return p


def test_train_resume_and_sample(run_cli, tmp_path, corpus_file):
    out = tmp_path / "run"
    args = ("lm", "train", "--corpus", corpus_file, "--out", out, "--cache-dir", tmp_path / "cache", "--vocab-size", "300",
            "--max-iters", "30", "--eval-interval", "10", *TINY)
    res = run_cli(*args, "--json")
    assert res.code == 0, res.err
    s = res.json()
    assert s["iters"] == 30 and s["model"]["vocab_size"] == s["extra"]["data"]["tokenizer"]["vocab_size"] <= 300
    assert s["extra"]["data"]["split"]["test_docs"] == 3 and s["test_loss"] < s["extra"]["data"]["tokens"]["train"]
    with open(out / "metrics.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["iter"]) for r in rows] == [0, 10, 20, 30] and float(rows[-1]["val_loss"]) < float(rows[0]["val_loss"])
    assert (out / "tokenizer.json").exists()
    # an existing run is never overwritten; --resume reports a finished one as it is
    res = run_cli(*args)
    assert res.code == 2 and "already holds a run" in res.err and "--resume" in res.err
    res = run_cli(*args, "--resume", "--json")
    assert res.code == 0 and res.json() == s
    res = run_cli("lm", "sample", "--run", out, "--prompt", "The union", "--tokens", "12")
    assert res.code == 0, res.err
    assert res.out.startswith("The union") and len(res.out) > len("The union")


def test_train_on_the_bundled_corpus_with_max_tokens(run_cli, tmp_path):
    out = tmp_path / "sotu"
    res = run_cli("lm", "train", "--corpus", "builtin:sotu", "--max-docs", "12", "--out", out, "--cache-dir",
                  tmp_path / "cache", "--vocab-size", "320", "--max-tokens", "5000", "--max-iters", "10",
                  "--eval-interval", "5", "--test-max-tokens", "2000", *TINY)
    assert res.code == 0, res.err
    s = json.loads((out / "result.json").read_text())
    assert s["data"]["train_tokens_used"] == 5000 and s["extra"]["data"]["corpus"]["n_docs"] == 12
    assert s["extra"]["data"]["corpus"]["source"] == "builtin:sotu" and s["test_windows"] == (2000 - 1) // 16
    assert "after 10 iterations" in res.out


def test_prepare_and_input_errors(run_cli, tmp_path, corpus_file):
    res = run_cli("lm", "prepare", "--corpus", corpus_file, "--cache-dir", tmp_path / "c", "--vocab-size", "300", "--json")
    assert res.code == 0, res.err
    info = res.json()
    assert info["tokens"]["train"] > 0 and os.path.isdir(info["dataset_dir"])
    bad = [
        (("--corpus", tmp_path / "missing.txt"), "not found"),
        (("--corpus", corpus_file, "--vocab-size", "100"), "vocab_size must be at least 257"),
        (("--corpus", corpus_file, "--field", "body"), "no field 'body'"),
        (("--corpus", corpus_file, "--model", "huge"), "unknown model preset 'huge'"),
        (("--corpus", corpus_file, "--n-embd", "30", "--n-head", "4"), "divisible by n_head"),
        (("--corpus", corpus_file, "--max-tokens", "10000000"), "exceeds the"),
        (("--corpus", corpus_file, "--lr", "-1"), "lr must be a number > 0"),
    ]
    for extra, msg in bad:
        res = run_cli("lm", "train", "--out", tmp_path / "bad", "--cache-dir", tmp_path / "c", "--vocab-size", "300",
                      *TINY, *extra)
        assert res.code == 2 and msg in res.err, (extra, res.err)
        assert not (tmp_path / "bad" / "ckpt.pt").exists()


def test_torchrun_two_processes_gloo(tmp_path, corpus_file):
    """DDP on the CPU: 2 ranks train one model; their weights agree bit for bit at the end."""
    out = tmp_path / "ddp"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "ttlab.lm",
           "train", "--corpus", str(corpus_file), "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
           "--vocab-size", "300", "--max-iters", "20", "--eval-interval", "10", "--device", "cpu", *TINY]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    s = json.loads((out / "result.json").read_text())
    assert s["ddp"]["world_size"] == 2 and s["ddp"]["backend"] == "gloo"
    digests = s["ddp"]["param_sha256_per_rank"]
    assert len(digests) == 2 and digests[0] == digests[1] and s["ddp"]["ranks_agree"]
    assert s["tokens_per_iter"] == 2 * 4 * 16 and s["tokens_seen"] == 20 * 2 * 4 * 16
    assert s["final_val_loss"] < s["extra"]["data"]["tokens"]["train"] and s["best_val_loss"] < 5.5
    with open(out / "metrics.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert float(rows[-1]["val_loss"]) < float(rows[0]["val_loss"]) - 0.3
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*.tmp"))
