"""Output paths are checked before any work, damaged state is named, JSON is strict."""

from __future__ import annotations

import errno
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

import ttlab.outputs as outputs
from tests.reproduce.test_reproduce import fakes, registry  # noqa: F401  (fixtures)
from ttlab.errors import TTLabInputError
from ttlab.outputs import check_out_dir, check_out_file
from ttlab.provenance import atomic_write_json, to_json


def _read_only(monkeypatch):
    """Simulate a read-only file system: creating any file fails with EROFS (tests run as root, where a
    chmod-555 folder is still writable)."""

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(outputs.tempfile, "mkstemp", refuse)


# ---------------------------------------------------------------------------------------------- the helper


def test_check_out_dir_kinds(tmp_path, monkeypatch):
    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(TTLabInputError, match="is an existing file; it must be a folder"):
        check_out_dir(f)
    with pytest.raises(TTLabInputError, match="afile is a file, so no folder can be created under it"):
        check_out_dir(f / "sub" / "run")
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text("{}")
    with pytest.raises(TTLabInputError, match=r"already holds a run \(summary.json\); pass overwrite") as info:
        check_out_dir(run, run_markers=("summary.json", "metrics.csv"))
    assert info.value.params == ("out", "overwrite")
    assert check_out_dir(run, run_markers=("summary.json",), overwrite=True) == run
    assert check_out_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # checking creates nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "run"]  # the probe file is gone
    _read_only(monkeypatch)
    with pytest.raises(TTLabInputError, match=r"cannot write here: Read-only file system"):
        check_out_dir(run, overwrite=True)
    with pytest.raises(TTLabInputError, match=rf"cannot write here \(in {tmp_path}\): Read-only file system"):
        check_out_dir(tmp_path / "new")


def test_check_out_file_kinds(tmp_path, monkeypatch):
    with pytest.raises(TTLabInputError, match="is a folder; give a file name"):
        check_out_file(tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(TTLabInputError, match="f is a file, not a folder"):
        check_out_file(tmp_path / "f" / "r.json")
    with pytest.raises(TTLabInputError, match=r"must end in \.npy or \.npz"):
        check_out_file(tmp_path / "x.txt", suffixes=(".npy", ".npz"))
    assert check_out_file(tmp_path / "f") == tmp_path / "f"  # an existing file is replaced atomically
    assert check_out_file(tmp_path / "a" / "b.json") == tmp_path / "a" / "b.json"
    _read_only(monkeypatch)
    with pytest.raises(TTLabInputError, match="Read-only file system"):
        check_out_file(tmp_path / "r.json", param="plot")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into chmod-555 folders")
def test_permission_denied_without_root(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    try:
        with pytest.raises(TTLabInputError, match="Permission denied"):
            check_out_dir(d / "run")
    finally:
        d.chmod(0o755)


def test_write_problem_is_a_real_probe(tmp_path):
    assert outputs.write_problem(tmp_path) is None
    assert outputs.write_problem(tmp_path / "missing") is not None
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------- every command


@pytest.fixture
def no_work(monkeypatch):
    """Fail loudly if a command starts its work before checking --out."""

    def boom(*a, **k):
        raise AssertionError("work started before the output check")

    import ttlab.ntp.experiment as experiment

    monkeypatch.setattr(experiment, "run_dynamics", boom)
    import ttlab.ntp.train as ntp_train

    monkeypatch.setattr(ntp_train, "train", boom)
    import ttlab.lm.train_corpus as lm_train_corpus  # `lm train` prepares its data there (was ttlab.cli.lm._prepare)

    monkeypatch.setattr(lm_train_corpus, "prepare_data", boom)
    import ttlab.intrinsic_dim as idm

    monkeypatch.setattr(idm, "load_points", boom)
    import ttlab.reproduce as rep

    monkeypatch.setattr(rep, "run_reproduction", boom)


@pytest.fixture
def points_npy(tmp_path):
    p = tmp_path / "pts.npy"
    np.save(p, np.random.default_rng(0).normal(size=(60, 3)))
    return p


def _commands(tmp_path: Path, points: Path, out: Path):
    csv = tmp_path / "fit.csv"
    csv.write_text("x,y\n1,3\n10,2\n100,1.5\n1000,1.2\n")
    return {
        "ntp run": ("ntp", "run", "--out", out, "--quiet"),
        "ntp generalize": ("ntp", "generalize", "--out", out),
        "scaling manifold": ("scaling", "manifold", "--out", out, "--quick"),
        "lm train": ("lm", "train", "--corpus", "builtin:sotu", "--out", out),
        "lm data-sweep": ("lm", "data-sweep", "--out", out, "--quick"),
        "lm model-sweep": ("lm", "model-sweep", "--out", out, "--quick"),
        "reproduce": ("reproduce", "--out", out),
    }, {
        "ntp generate": ("ntp", "generate", "--out", out),
        "id estimate": ("id", "estimate", points, "--out", out),
        "id sample-manifold": ("id", "sample-manifold", "sphere", "--d", "2", "--ambient", "3", "--n", "50", "--out", out),
        "scaling fit": ("scaling", "fit", csv, "--x", "x", "--y", "y", "--bootstrap", "0", "--out", out),
        "scaling fit --plot": ("scaling", "fit", csv, "--x", "x", "--y", "y", "--bootstrap", "0", "--plot", out),
    }


def test_every_dir_command_refuses_a_file_and_a_read_only_place(run_cli, tmp_path, points_npy, no_work, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    dir_cmds, _ = _commands(tmp_path, points_npy, afile)
    for name, args in dir_cmds.items():
        r = run_cli(*args)
        assert r.code == 2, (name, r.err)
        assert "is an existing file; it must be a folder" in r.err and "Traceback" not in r.err, name
    dir_cmds, _ = _commands(tmp_path, points_npy, tmp_path / "ro" / "out")
    _read_only(monkeypatch)
    for name, args in dir_cmds.items():
        r = run_cli(*args)
        assert r.code == 2 and "Read-only file system" in r.err, (name, r.err)
        assert len(r.err.strip().splitlines()) <= 2, (name, r.err)  # one message (may wrap once)


_FILE_SUFFIX = {"ntp generate": ".txt", "id estimate": ".json", "id sample-manifold": ".npy", "scaling fit": ".json",
                "scaling fit --plot": ".png"}


def test_every_file_command_refuses_a_folder_and_a_read_only_place(run_cli, tmp_path, points_npy, monkeypatch):
    for name, suffix in _FILE_SUFFIX.items():
        folder = tmp_path / f"afolder{suffix}"  # even with the right suffix
        folder.mkdir(exist_ok=True)
        args = _commands(tmp_path, points_npy, folder)[1][name]
        r = run_cli(*args)
        assert r.code == 2, (name, r.err)
        assert "is a folder; give a file name" in r.err, (name, r.err)
    _read_only(monkeypatch)
    for name, suffix in _FILE_SUFFIX.items():
        args = _commands(tmp_path, points_npy, tmp_path / "ro" / f"out{suffix}")[1][name]
        r = run_cli(*args)
        assert r.code == 2 and "Read-only file system" in r.err, (name, r.err)


def test_ntp_run_refuses_an_existing_run_unless_overwrite(run_cli, tmp_path):
    out = tmp_path / "run"
    args = ("ntp", "run", "--out", out, "--stage1-steps", "5", "--stage2-steps", "5", "--vocab", "6",
            "--sentences", "8", "--quiet")
    assert run_cli(*args).code == 0
    before = (out / "summary.json").read_text()
    r = run_cli(*args, "--seed", "1")
    assert r.code == 2 and "already holds a run" in r.err and "--overwrite" in r.err
    assert (out / "summary.json").read_text() == before
    assert run_cli(*args, "--seed", "1", "--overwrite").code == 0
    assert json.loads((out / "summary.json").read_text())["config"]["seed"] == 1


def test_cli_turns_late_write_errors_into_one_line(run_cli, tmp_path, monkeypatch):
    """If the file system fails only while writing, the user still gets a message, not a traceback."""
    import ttlab.provenance as prov

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "g.txt"))

    monkeypatch.setattr(prov, "atomic_write_bytes", full)
    r = run_cli("ntp", "generate", "--out", tmp_path / "g.txt")
    assert r.code == 2 and "No space left on device" in r.err and "g.txt" in r.err


def test_reproduce_quick_and_full_exclude_each_other(run_cli, tmp_path):
    r = run_cli("reproduce", "--quick", "--full", "--out", tmp_path)
    assert r.code == 2 and "--quick and --full exclude each other" in r.err


def test_reproduce_reruns_a_corrupt_part_record_and_says_so(run_cli, tmp_path, fakes):  # noqa: F811
    out = tmp_path / "rep"
    assert run_cli("reproduce", "--out", out, "--part", "fake_ok").code == 0
    rec = out / "parts" / "fake_ok.json"
    good = rec.read_text()
    for damaged in (good[: len(good) // 2], ""):
        rec.write_text(damaged)
        listing = run_cli("reproduce", "--out", out, "--list")
        assert "corrupt" in listing.out
        r = run_cli("reproduce", "--out", out, "--part", "fake_ok")
        assert r.code == 0, r.err
        assert "fake_ok.json is corrupt (" in r.err.replace("\n", "") and "runs again" in r.err
        assert json.loads(rec.read_text())["status"] == "ok"  # replaced by the new record
    assert fakes["ok"] == 3


# ---------------------------------------------------------------------------------------------- strict JSON


def test_to_json_is_strict_and_names_the_undefined_values(tmp_path):
    obj = {"a": float("nan"), "b": [1.0, float("inf"), np.float32(-np.inf)], "c": {"d": np.float64("nan")},
           "e": np.array([1.0, np.nan]), "ok": 2.5, "n": np.int64(3)}
    text = to_json(obj)
    for bad in ("NaN,", "Infinity,", "NaN\n", ": NaN", ": Infinity"):
        assert bad not in text
    back = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert back["a"] is None and back["b"] == [1.0, None, None] and back["c"]["d"] is None
    assert back["e"] == [1.0, None] and back["ok"] == 2.5 and back["n"] == 3
    assert back["non_finite_values"] == {"/a": "NaN", "/b/1": "Infinity", "/b/2": "-Infinity", "/c/d": "NaN",
                                         "/e/1": "NaN"}
    assert json.loads(to_json([math.nan])) == [None]
    atomic_write_json(tmp_path / "s.json", {"x": math.inf})
    assert json.loads((tmp_path / "s.json").read_text()) == {"x": None, "non_finite_values": {"/x": "Infinity"}}
    assert "non_finite_values" not in json.loads(to_json({"x": 1.0}))
