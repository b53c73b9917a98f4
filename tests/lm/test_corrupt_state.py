"""A damaged checkpoint is named, with what to do, and never deleted."""

from __future__ import annotations

import json

import pytest

from ttlab.errors import TTLabInputError
from ttlab.lm.checkpoint import load_checkpoint_state

from .conftest import make_texts

TINY = ("--model", "nano", "--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "16", "--batch-size", "4",
        "--eval-iters", "2", "--warmup-iters", "2", "--threads", "1")


@pytest.fixture
def run_args(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(make_texts(30))))
    return ("lm", "train", "--corpus", corpus, "--out", tmp_path / "run", "--cache-dir", tmp_path / "cache",
            "--vocab-size", "300", "--max-iters", "6", "--eval-interval", "3", *TINY)


def test_truncated_and_empty_checkpoints_are_named_on_resume(run_cli, tmp_path, run_args):
    assert run_cli(*run_args, "--json").code == 0
    ckpt = tmp_path / "run" / "ckpt.pt"
    data = ckpt.read_bytes()
    for damaged, why in ((data[: len(data) // 2], "bytes;"), (b"", "empty file, 0 bytes")):
        ckpt.write_bytes(damaged)
        res = run_cli(*run_args, "--resume")
        assert res.code == 2, res.err
        assert "ckpt.pt is corrupt (" in res.err and why in res.err
        err = " ".join(res.err.split())
        assert "delete it or start a new out_dir" in err and "(command-line option: --out)" in err
        assert "Traceback" not in res.err and "Aborted" not in res.err
        assert ckpt.read_bytes() == damaged  # nothing deleted or rewritten
    # load_model (used by sample / embed / export) says the same
    res = run_cli("lm", "sample", "--run", tmp_path / "run", "--which", "final", "--tokens", "3")
    assert res.code == 2 and "ckpt.pt is corrupt" in res.err


def test_load_checkpoint_state_rejects_foreign_files(tmp_path):
    import torch

    p = tmp_path / "ckpt.pt"
    torch.save({"weights": 1}, p)
    with pytest.raises(TTLabInputError, match="not a ttlab language-model checkpoint"):
        load_checkpoint_state(p)
    p.write_bytes(b"\x80\x04garbage")
    with pytest.raises(TTLabInputError, match=r"ckpt\.pt is corrupt \(9 bytes; "):
        load_checkpoint_state(p)


def test_damaged_result_json_of_a_finished_run_is_named(run_cli, tmp_path, run_args):
    assert run_cli(*run_args, "--json").code == 0
    result = tmp_path / "run" / "result.json"
    result.write_text(result.read_text()[:40])
    res = run_cli(*run_args, "--resume")
    assert res.code == 2 and "result.json is corrupt (" in res.err and "Traceback" not in res.err
