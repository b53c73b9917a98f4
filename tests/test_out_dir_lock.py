"""Nothing lost to a second process (issue 33): every command that writes a run folder holds it for the whole run,
so a second process on the same --out is refused at once (exit 2, the flag named) and writes nothing there. A real
second process holds the folder; each command is then run against it."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = {
    "ntp run": lambda out, tmp: ["ntp", "run", "--out", out, "--stage1-steps", "2", "--stage2-steps", "2"],
    "lm train": lambda out, tmp: ["lm", "train", "--corpus", "builtin:sotu", "--out", out, "--max-iters", "2"],
    "lm data-sweep": lambda out, tmp: ["lm", "data-sweep", "--quick", "--out", out],
    "lm suite": lambda out, tmp: ["lm", "suite", "--model", _fake_hf(tmp), "--corpus", "builtin:sotu", "--out", out],
    "reproduce": lambda out, tmp: ["reproduce", "--part", "table1", "--out", out],
    "scaling manifold": lambda out, tmp: ["scaling", "manifold", "--quick", "--out", out],
}


def _fake_hf(tmp: Path) -> Path:
    model = tmp / "hf"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text('{"model_type": "gpt2"}')
    return model


@pytest.fixture
def held_folder(tmp_path):
    out = tmp_path / "o"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time\nfrom ttlab.outputs import hold_out_dir\n"
         f"with hold_out_dir({str(out)!r}):\n    print('held', flush=True)\n    time.sleep(120)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield out
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_second_process_on_the_same_out_is_refused(command, held_folder, tmp_path, run_cli):
    r = run_cli(*COMMANDS[command](held_folder, tmp_path))
    assert r.code == 2, (r.out, r.err)
    assert "in use by another ttlab process" in r.err and "--out" in r.err and "Traceback" not in r.err
    assert sorted(p.name for p in held_folder.iterdir()) == [".ttlab.lock"]  # nothing written


def test_the_library_run_holds_its_folder(held_folder):
    from ttlab.errors import TTLabInputError
    from ttlab.reproduce import PartContext, run_reproduction

    with pytest.raises(TTLabInputError, match="in use by another ttlab process") as info:
        run_reproduction(held_folder, PartContext(mode="tiny"), parts=["table1"])
    assert info.value.params == ("out_dir",)


@pytest.mark.parametrize("planted", ["record", "folder"])
def test_a_planted_link_is_refused_before_any_part_runs(planted, tmp_path):
    """A link at parts/NAME.json (or at the part's folder) pointing outside the output folder was read through and
    refused only after the part ran; it is refused first, and nothing outside is touched."""
    from ttlab.errors import TTLabInputError
    from ttlab.reproduce import PartContext, run_reproduction

    out, outside = tmp_path / "o", tmp_path / "elsewhere"
    (out / "parts").mkdir(parents=True)
    outside.mkdir()
    target = outside / ("table1.json" if planted == "record" else "table1")
    target.write_text("{}") if planted == "record" else target.mkdir()
    (out / "parts" / "table1.json" if planted == "record" else out / "table1").symlink_to(target)
    seen = []
    with pytest.raises(TTLabInputError, match="symbolic link to .*outside") as info:
        run_reproduction(out, PartContext(mode="tiny"), parts=["table1"], on_part=lambda n, s: seen.append(s))
    assert seen == [] and info.value.params == ("out_dir",)
    assert (target.read_text() == "{}") if planted == "record" else list(target.iterdir()) == []


def test_a_run_refused_before_writing_leaves_no_folder(tmp_path):
    """The folder hold_out_dir created goes again when the run stops before writing anything; a folder that existed,
    or one that holds work, stays."""
    from ttlab.outputs import hold_out_dir

    new, old, worked = tmp_path / "new", tmp_path / "old", tmp_path / "worked"
    old.mkdir()
    for folder, write in ((new, False), (old, False), (worked, True)):
        with pytest.raises(ValueError):
            with hold_out_dir(folder):
                if write:
                    (folder / "metrics.csv").write_text("step\n")
                raise ValueError("refused")
    assert not new.exists() and old.is_dir() and (worked / "metrics.csv").is_file()
