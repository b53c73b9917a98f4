"""Outputs never replace anything but a previous output of the same command (issue 23).

Every device file, FIFO and symlink here is created inside pytest's tmp_path; no command under test is
ever pointed at a system path (as root, ``--out /dev/null`` would replace the system's /dev/null)."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.outputs import check_out_dir, check_out_file, replace_problem
from ttlab.provenance import atomic_write_text, read_json


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "pipe.json"
    os.mkfifo(p)
    return p


@pytest.fixture
def chardev(tmp_path):
    """A character device node made in tmp_path (same numbers as /dev/null); skipped where mknod is refused."""
    p = tmp_path / "null.npy"
    try:
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"mknod not permitted here: {exc}")
    return p


@pytest.fixture
def link_out(tmp_path):
    """out/link.json → outside/target.json (a file outside the output folder), with known content."""
    (tmp_path / "outside").mkdir()
    target = tmp_path / "outside" / "target.json"
    target.write_text("user's file\n")
    (tmp_path / "out").mkdir()
    link = tmp_path / "out" / "link.json"
    os.symlink(target, link)
    return link, target


def _still(path: Path, test) -> None:
    assert test(os.lstat(path).st_mode), f"{path} was replaced"


# --------------------------------------------------------------------------------------- the helpers
def test_replace_problem_names_each_kind(fifo, link_out, tmp_path):
    assert "FIFO" in replace_problem(fifo)
    link, target = link_out
    assert f"symbolic link to {target}" in replace_problem(link)
    inside = tmp_path / "out" / "inside.json"
    (tmp_path / "out" / "real.json").write_text("{}")
    os.symlink(tmp_path / "out" / "real.json", inside)
    assert replace_problem(inside) is None  # a link within its folder may be replaced
    assert replace_problem(tmp_path / "out" / "real.json") is None
    assert replace_problem(tmp_path / "missing.json") is None


def test_device_file_is_refused_and_kept(chardev):
    assert "character device" in replace_problem(chardev)
    with pytest.raises(TTLabInputError, match="character device file, not a regular file"):
        check_out_file(chardev)
    with pytest.raises(OSError) as info:
        atomic_write_text(chardev, "x")
    assert info.value.errno == errno.EEXIST
    _still(chardev, stat.S_ISCHR)


def test_atomic_writers_never_replace_a_fifo_or_a_link_out(fifo, link_out):
    for path in (fifo, link_out[0]):
        with pytest.raises(OSError) as info:
            atomic_write_text(path, "new")
        assert info.value.errno == errno.EEXIST
    _still(fifo, stat.S_ISFIFO)
    _still(link_out[0], stat.S_ISLNK)
    assert link_out[1].read_text() == "user's file\n"
    assert sorted(p.name for p in link_out[0].parent.iterdir()) == ["link.json"]  # no temporary file left


def test_check_out_file_refuses_inputs_by_inode_and_existing_files_when_asked(tmp_path):
    data = tmp_path / "runs.csv"
    data.write_text("n,loss\n1,2\n")
    hard = tmp_path / "hard.csv"
    os.link(data, hard)
    for same in (data, hard, tmp_path / "." / "runs.csv"):
        with pytest.raises(TTLabInputError, match="is this command's input"):
            check_out_file(same, inputs=(data,))
    assert check_out_file(tmp_path / "other.csv", inputs=(data,)) == tmp_path / "other.csv"
    with pytest.raises(TTLabInputError, match="already exists; pass overwrite") as info:
        check_out_file(data, overwrite=False)
    assert info.value.params == ("out", "overwrite")
    assert check_out_file(data, overwrite=True) == data and check_out_file(data) == data


def test_check_out_dir_refuses_special_files_it_would_write(tmp_path, fifo):
    with pytest.raises(TTLabInputError, match="is a FIFO .* it must be a folder"):
        check_out_dir(fifo)
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "summary.json")
    for overwrite in (False, True):
        with pytest.raises(TTLabInputError, match="summary.json is a FIFO"):
            check_out_dir(run, run_markers=("summary.json",), overwrite=overwrite)
    os.symlink(tmp_path, run / "results.json")  # a link out of the folder, among the files the command writes
    with pytest.raises(TTLabInputError, match="results.json is a symbolic link"):
        check_out_dir(run, files=("results.json",))


# ------------------------------------------------------------------------------------------ commands
def test_file_commands_refuse_fifos_devices_and_links_out(run_cli, tmp_path, fifo, link_out):
    npy_fifo = tmp_path / "pipe.npy"
    os.mkfifo(npy_fifo)
    r = run_cli("id", "sample-manifold", "sphere", "--d", "2", "--ambient", "3", "--n", "20", "--out", npy_fifo)
    assert r.code == 2 and "FIFO" in r.err
    _still(npy_fifo, stat.S_ISFIFO)
    r = run_cli("ntp", "generate", "--out", link_out[0], "--overwrite")
    assert r.code == 2 and "symbolic link" in r.err
    assert link_out[1].read_text() == "user's file\n"
    csv = tmp_path / "runs.csv"
    csv.write_text("n,loss\n" + "".join(f"{n},{3 * n ** -0.5}\n" for n in (10, 100, 1000, 10000)))
    r = run_cli("scaling", "fit", csv, "--x", "n", "--y", "loss", "--plot", fifo.with_suffix(".png"))
    assert r.code == 0  # not a FIFO: writes
    os.mkfifo(tmp_path / "p.png")
    r = run_cli("scaling", "fit", csv, "--x", "n", "--y", "loss", "--plot", tmp_path / "p.png")
    assert r.code == 2 and "--plot" in r.err and "FIFO" in r.err
    _still(tmp_path / "p.png", stat.S_ISFIFO)


def test_outputs_never_replace_the_commands_input(run_cli, tmp_path, monkeypatch):
    csv = tmp_path / "runs.csv"
    text = "n,loss\n" + "".join(f"{n},{3 * n ** -0.5}\n" for n in (10, 100, 1000, 10000))
    csv.write_text(text)
    for opt in ("--out", "--plot"):
        target = csv if opt == "--out" else tmp_path / "runs.png"
        if opt == "--plot":
            os.symlink(csv, target)  # the input under another name
        r = run_cli("scaling", "fit", csv, "--x", "n", "--y", "loss", opt, target)
        assert r.code == 2 and "is this command's input" in r.err, r.err
    assert csv.read_text() == text
    emb = tmp_path / "emb.npy"
    np.save(emb, np.random.default_rng(0).normal(size=(60, 3)))
    before = emb.read_bytes()
    import ttlab.intrinsic_dim as idm

    def no_work(*a, **k):
        raise AssertionError("the output must be checked before any work")

    monkeypatch.setattr(idm, "compare", no_work)
    monkeypatch.setattr(idm, "load_points", no_work)
    for cmd in ("compare", "estimate"):
        r = run_cli("id", cmd, emb, "--out", emb)
        assert r.code == 2 and "is this command's input" in r.err and "Traceback" not in r.err
    assert emb.read_bytes() == before


@pytest.mark.parametrize("command", ["ntp generate", "id sample-manifold", "id compare"])
def test_no_silent_overwrite_without_overwrite(run_cli, tmp_path, command):
    existing = tmp_path / ("old.npy" if command == "id sample-manifold" else "old.json")
    existing.write_text("the user's file\n")
    emb = tmp_path / "emb.npy"
    np.save(emb, np.random.default_rng(0).normal(size=(80, 3)))
    args = {"ntp generate": ("ntp", "generate", "--vocab", "6", "--sentences", "20"),
            "id sample-manifold": ("id", "sample-manifold", "sphere", "--d", "2", "--ambient", "3", "--n", "50"),
            "id compare": ("id", "compare", emb, "--methods", "mle,twonn")}[command]
    r = run_cli(*args, "--out", existing)
    err = " ".join(r.err.split())
    assert r.code == 2 and "already exists; pass overwrite" in err and "(command-line options: --out, --overwrite)" in err
    assert existing.read_text() == "the user's file\n"
    r = run_cli(*args, "--out", existing, "--overwrite")
    assert r.code == 0, r.err
    assert existing.read_bytes() != b"the user's file\n"


# ---------------------------------------------------------------------------------------- lm suite
def _suite_dir(tmp_path, cfg) -> Path:
    out = tmp_path / "suite"
    out.mkdir()
    (out / "windows.json").write_text(json.dumps({"config": cfg.to_dict(), "windows": []}))
    (out / "results.json").write_text('{"old": true}')
    return out


def test_suite_refuses_another_configuration_unless_overwrite(tmp_path):
    from ttlab.lm.suite import check_suite_folder
    from ttlab.lm.suite_windows import SuiteConfig

    old = SuiteConfig(corpus="builtin:sotu", seed=0)
    out = _suite_dir(tmp_path, old)
    check_suite_folder(out, old)  # the same configuration: resume
    new = SuiteConfig(corpus="builtin:sotu", seed=1)
    with pytest.raises(TTLabInputError, match=r"another configuration: seed 0 → 1.*Pass overwrite") as info:
        check_suite_folder(out, new)
    assert info.value.params == ("out", "overwrite")
    assert (out / "results.json").exists()
    check_suite_folder(out, new, overwrite=True)
    assert not (out / "results.json").exists() and not (out / "windows.json").exists()  # no stale result survives


def test_suite_cli_refuses_a_changed_configuration_before_work(run_cli, tmp_path, monkeypatch):
    import ttlab.lm.suite as suite
    from ttlab.lm.suite_windows import SuiteConfig

    out = _suite_dir(tmp_path, SuiteConfig(corpus="builtin:sotu", seed=0))
    spec = {"label": "m", "spec": "m", "kind": "hf", "target": "m"}
    monkeypatch.setattr(suite, "resolve_model", lambda s: spec)
    monkeypatch.setattr(suite, "split_texts", lambda cfg: (_ for _ in ()).throw(AssertionError("work started")))
    r = run_cli("lm", "suite", "--model", "m", "--corpus", "builtin:sotu", "--seed", "1", "--out", out)
    assert r.code == 2 and "another configuration" in r.err and "--overwrite" in r.err
    assert json.loads((out / "results.json").read_text()) == {"old": True}


# -------------------------------------------------------------------------------------------- BOMs
def test_json_with_a_byte_order_mark_is_read_everywhere(tmp_path):
    from ttlab.lm.suite_models import read_suite_file
    from ttlab.scaling.band import ids_from_compare_json

    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps({"rows": [{"method": "mle", "dimension": 4.5}], "beta": 1.0}).encode())
    assert read_json(p)["beta"] == 1.0
    assert ids_from_compare_json(p) == ({"mle": 4.5}, 1.0)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_bytes(b"\xef\xbb\xbf" + b'{"model_type": "gpt2"}')
    s = tmp_path / "suite.json"
    s.write_bytes(b"\xef\xbb\xbf" + json.dumps({"models": [{"model": "model", "name": "g"}], "reference": "g"}).encode())
    specs, ref = read_suite_file(s)
    assert [(x["label"], x["kind"]) for x in specs] == [("g", "huggingface")] and ref == "g"


def test_a_run_folder_without_ckpt_is_named_not_taken_for_hugging_face(tmp_path, run_cli):
    from ttlab.lm.suite_models import resolve_model

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"model": {"n_layer": 2}, "train": {"max_iters": 10}, "data": {}}))
    with pytest.raises(TTLabInputError, match="is a ttlab run folder .* but has no ckpt.pt.*--resume"):
        resolve_model(str(run))
    r = run_cli("id", "embed", "--model", run, "--out", tmp_path / "v.npy")
    assert r.code == 2 and "has no ckpt.pt" in r.err and "Traceback" not in r.err


def test_a_failed_write_names_the_users_file_not_the_temporary_one(tmp_path, monkeypatch):
    import ttlab.provenance as prov

    def full_disk(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(prov.os, "fsync", full_disk)
    target = tmp_path / "result.json"
    with pytest.raises(OSError) as info:
        atomic_write_text(target, "x")
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []  # the temporary file is gone
