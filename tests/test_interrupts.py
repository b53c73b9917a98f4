"""Interrupts are never results (issue 23): Ctrl-C is recorded as unfinished, never reused, and every long
command prints how to resume and exits 130. Interrupts are simulated by raising KeyboardInterrupt from a
part or a progress callback (no real signals)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.reproduce.test_reproduce import registry  # noqa: F401  (fixture)
from ttlab.reproduce import load_part_record, run_reproduction
from ttlab.reproduce.registry import PartContext, register_part


def _interrupting_part(calls: dict, interrupt: type[KeyboardInterrupt] = KeyboardInterrupt) -> None:
    @register_part("fake_slow", paper="A", title="Fake part interrupted on its first run", render=lambda r: [],
                   estimate=(1, 1))
    def fake_slow(out: Path, ctx: PartContext) -> dict:
        calls["n"] += 1
        if calls["n"] == 1:
            raise interrupt
        return {"n": calls["n"], "claims": []}


def test_an_interrupted_part_is_recorded_as_interrupted_and_never_reused(registry, tmp_path):  # noqa: F811
    calls = {"n": 0}
    _interrupting_part(calls)
    seen: list[tuple[str, str]] = []
    with pytest.raises(KeyboardInterrupt):
        run_reproduction(tmp_path, PartContext(mode="tiny"), on_part=lambda n, s: seen.append((n, s)))
    rec = load_part_record(tmp_path, "fake_slow")
    assert rec["status"] == "interrupted" and "result" not in rec and "re-run the same command" in rec["error"]
    assert seen == [("fake_slow", "running"), ("fake_slow", "interrupted")]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["summary"]["failed"] == ["fake_slow"]  # the report counts it as unfinished, not ok
    assert "INTERRUPTED" in (tmp_path / "report.md").read_text()
    again = run_reproduction(tmp_path, PartContext(mode="tiny"))  # the same command again: the part runs, not "ok (reused)"
    assert calls["n"] == 2 and again["parts"]["fake_slow"]["status"] == "ok"
    assert again["parts"]["fake_slow"]["reused"] is False


def test_reproduce_cli_prints_the_resume_line_and_exits_130(registry, run_cli, tmp_path):  # noqa: F811
    _interrupting_part({"n": 0})
    r = run_cli("reproduce", "--out", tmp_path / "o", "--part", "fake_slow")
    assert r.code == 130
    assert "interrupted — re-run the same command to resume" in " ".join(r.err.split())
    assert load_part_record(tmp_path / "o", "fake_slow")["status"] == "interrupted"


def test_reproduce_stopped_by_sigterm_keeps_it_apart_from_ctrl_c(registry, run_cli, tmp_path):  # noqa: F811
    """A part stopped by SIGTERM (Terminated) is recorded as interrupted, and the run re-raises the same exception,
    so the CLI says "terminated" and exits 143, not 130."""
    from ttlab.errors import Terminated

    _interrupting_part({"n": 0}, Terminated)
    with pytest.raises(Terminated):
        run_reproduction(tmp_path / "lib", PartContext(mode="tiny"), parts=["fake_slow"])
    assert load_part_record(tmp_path / "lib", "fake_slow")["status"] == "interrupted"
    _interrupting_part({"n": 0}, Terminated)
    r = run_cli("reproduce", "--out", tmp_path / "o", "--part", "fake_slow")
    assert r.code == 143, r.err
    assert "terminated — re-run the same command to resume" in " ".join(r.err.split())


def test_ntp_figure2_interrupted_in_training_is_not_stored_as_ok(tmp_path):
    """The reported bug: the ntp training loop swallowed Ctrl-C, so ntp_figure2 was stored "ok" and reused."""

    def progress(name, description, completed, total):
        if "continued" in description and (completed or 0) >= 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_reproduction(tmp_path, PartContext(mode="tiny"), parts=["ntp_figure2"], progress=progress)
    rec = load_part_record(tmp_path, "ntp_figure2")
    assert rec["status"] == "interrupted" and "result" not in rec


def test_ntp_generalize_interrupted_writes_nothing(run_cli, tmp_path, monkeypatch):
    import ttlab.ntp.train as train_mod
    from tests.ntp.test_bounds import cycle_text

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_mod, "train", interrupt)
    data = tmp_path / "d.txt"
    data.write_text(cycle_text(40))
    r = run_cli("ntp", "generalize", "--data", data, "--out", tmp_path / "g")
    assert r.code == 130 and "interrupted — nothing was written" in " ".join(r.err.split())
    assert not (tmp_path / "g" / "generalization.json").exists()


def test_ntp_generalize_interrupted_while_evaluating_exits_130(run_cli, tmp_path, monkeypatch):
    import ttlab.ntp.generalize as generalize_mod
    from tests.ntp.test_bounds import cycle_text

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(generalize_mod, "evaluate_generalization", interrupt)  # Ctrl-C after training
    data = tmp_path / "d.txt"
    data.write_text(cycle_text(40))
    r = run_cli("ntp", "generalize", "--data", data, "--out", tmp_path / "g", "--stage1-steps", "20",
                "--stage2-steps", "20")
    assert r.code == 130 and "interrupted — nothing was written" in " ".join(r.err.split())
    assert not (tmp_path / "g" / "generalization.json").exists()


@pytest.mark.parametrize("command", ["suite", "manifold", "data-sweep", "model-sweep"])
def test_long_commands_exit_130_with_the_resume_line(run_cli, tmp_path, monkeypatch, command):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    if command == "suite":
        import ttlab.lm.suite as suite

        monkeypatch.setattr(suite, "run_suite", interrupt)
        model = tmp_path / "m"
        model.mkdir()
        monkeypatch.setattr(suite, "resolve_model", lambda spec: spec)
        args = ["lm", "suite", "--model", model, "--corpus", "builtin:sotu", "--out", tmp_path / "o"]
    elif command.endswith("sweep"):
        import ttlab.lm.experiments as ex

        monkeypatch.setattr(ex, "run_data_sweep" if command == "data-sweep" else "run_model_sweep", interrupt)
        args = ["lm", command, "--quick", "--out", tmp_path / "o"]
    else:
        import ttlab.scaling.manifold_regression as mr

        monkeypatch.setattr(mr, "run_manifold_sweep", interrupt)
        args = ["scaling", "manifold", "--quick", "--out", tmp_path / "o", "--workers", "1"]
    r = run_cli(*args)
    assert r.code == 130, r.err
    assert "interrupted — re-run the same command to resume" in " ".join(r.err.split())


def test_an_interrupted_lm_sweep_run_stops_the_sweep(monkeypatch, tmp_path):
    """A run stopped at a checkpoint raises KeyboardInterrupt (a failed task would let the next one start)."""
    import ttlab.lm.experiments as ex
    import ttlab.lm.trainer as trainer
    from ttlab.lm.configs import GPTConfig, TrainConfig

    class Stopped:
        status = "interrupted"

    monkeypatch.setattr(trainer, "train", lambda *a, **k: Stopped())
    import ttlab.lm.data as data

    monkeypatch.setattr(data, "TokenizedCorpus", lambda d: None)
    monkeypatch.setattr(GPTConfig, "from_dict", staticmethod(lambda d: None))
    monkeypatch.setattr(TrainConfig, "from_dict", staticmethod(lambda d: None))
    with pytest.raises(KeyboardInterrupt, match="run the sweep again to resume"):
        ex.train_task({"dataset_dir": str(tmp_path), "model": {}, "train": {}, "run_dir": str(tmp_path / "r"),
                       "protocol": "fixed"})


def test_a_real_sigint_in_ntp_figure2_is_recorded_as_interrupted(tmp_path):
    """End to end with a real signal: SIGINT sent to the process during the part's training."""
    import subprocess
    import sys

    code = f"""
import os, signal
from ttlab.reproduce import PartContext, run_reproduction
# a process started in the background by a non-interactive shell inherits SIGINT ignored (CI does that):
# restore Python's handler, so that the signal below is a Ctrl-C whatever started the test run
signal.signal(signal.SIGINT, signal.default_int_handler)
def progress(name, description, completed, total):
    if "stage 2" in description and (completed or 0) >= 10:
        os.kill(os.getpid(), signal.SIGINT)
try:
    run_reproduction({str(tmp_path)!r}, PartContext(mode="tiny"), parts=["ntp_figure2"], progress=progress)
except KeyboardInterrupt:
    raise SystemExit(130)
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 130, proc.stderr
    rec = load_part_record(tmp_path, "ntp_figure2")
    assert rec["status"] == "interrupted" and "result" not in rec
    assert json.loads((tmp_path / "results.json").read_text())["summary"]["n_ok"] == 0


def test_ntp_run_interrupted_before_training_exits_130(run_cli, tmp_path, monkeypatch):
    import ttlab.ntp.experiment as experiment
    from tests.ntp.test_bounds import cycle_text

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(experiment, "estimate_seconds", interrupt)  # Ctrl-C while the steps are being timed
    data = tmp_path / "d.txt"
    data.write_text(cycle_text(40))
    r = run_cli("ntp", "run", "--data", data, "--out", tmp_path / "o", "--quiet")
    assert r.code == 130 and "interrupted — outside the training steps" in " ".join(r.err.split())
    assert not (tmp_path / "o" / "summary.json").exists()


def sleeping_task(cfg: dict) -> dict:
    """A sweep task that writes its process id and sleeps (for the SIGTERM test; run in spawned workers)."""
    import time
    from pathlib import Path

    Path(cfg["pid_dir"], f"{cfg['i']}.pid").write_text(str(os.getpid()))
    time.sleep(120)
    return {"i": cfg["i"]}


def test_sigterm_stops_the_command_and_its_pool_workers(tmp_path):
    """SIGTERM (a scheduler's time limit) to a sweep's parent: exit 143 with the resume line, and the pool's workers
    (which get no signal of their own) are stopped too, not left running."""
    import signal
    import subprocess
    import sys
    import time

    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    code = f"""
from tests.test_interrupts import sleeping_task
from ttlab.cli.common import exit_on_interrupt
from ttlab.sweep import run_sweep
with exit_on_interrupt():
    run_sweep(sleeping_task, [{{"i": i, "pid_dir": {str(pid_dir)!r}}} for i in range(2)], {str(tmp_path / "c")!r},
              workers=2)
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[1])
    deadline = time.monotonic() + 120
    while len(list(pid_dir.glob("*.pid"))) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    workers = [int(p.read_text()) for p in pid_dir.glob("*.pid")]
    assert len(workers) == 2, proc.stderr.read() if proc.poll() is not None else "workers did not start"
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 143, err
    assert "terminated — re-run the same command to resume" in " ".join(err.split())
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_every_command_prints_what_an_interrupt_kept():
    """A command without a message of its own (scaling fit, id estimate, ...) stopped by Ctrl-C or SIGTERM used to exit
    130/143 printing nothing (issue 33 item 10): every command of the tree is wrapped by ``stops_cleanly``."""
    from ttlab.cli import app

    def commands(group):
        for c in group.registered_commands:
            yield c
        for g in group.registered_groups:
            yield from commands(g.typer_instance)

    found = list(commands(app))
    assert len(found) > 20 and all(getattr(c.callback, "stops_cleanly", False) for c in found)


@pytest.mark.parametrize("sig, code, word", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")])
def test_a_long_scaling_fit_stopped_by_a_signal_says_nothing_was_written(tmp_path, sig, code, word):
    """A real process: a bootstrap announced as long, then Ctrl-C or SIGTERM — one line, the exit code, no files."""
    import signal
    import subprocess
    import sys
    import time

    import numpy as np

    n = np.geomspace(1e3, 1e7, 12)
    csv = tmp_path / "f.csv"
    csv.write_text("n,loss\n" + "".join(f"{a:.6g},{(1.5 + 20 * a ** -0.34) * np.exp(0.01 * np.sin(a)):.6g}\n" for a in n))
    code_text = (f"from ttlab.cli import main; main(['scaling', 'fit', {str(csv)!r}, '--x', 'n', '--y', 'loss', "
                 f"'--form', 'offset', '--bootstrap', '1000000', '--max-hours', '100', '--out', "
                 f"{str(tmp_path / 'fit.json')!r}])")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # Ctrl-C as in a terminal: a process started in the background inherits SIGINT ignored (POSIX), and Python then
    # installs no KeyboardInterrupt handler; the child gets the default back
    proc = subprocess.Popen([sys.executable, "-c", code_text], env=env, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stderr is not None
    import queue
    import threading

    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
    try:
        seen: list[str] = []
        deadline = time.monotonic() + 120
        while not (seen and seen[-1].startswith("bootstrap: 0/")) and time.monotonic() < deadline:
            try:
                seen.append(lines.get(timeout=1))
            except queue.Empty:
                continue
        assert seen and seen[-1].startswith("bootstrap: 0/"), "".join(seen)  # announced and followed
        time.sleep(0.5)
        proc.send_signal(getattr(signal, sig))
        proc.wait(timeout=60)
        time.sleep(0.2)  # the reader drains what is left
        rest = []
        while not lines.empty():
            rest.append(lines.get())
        err = " ".join("".join(rest).split())
    finally:
        if proc.poll() is None:  # a failed check never leaves an hours-long bootstrap running
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert f"{word} — nothing was written; re-run the same command to start again" in err and "Traceback" not in err
    assert not (tmp_path / "fit.json").exists()


def test_a_command_without_its_own_message_says_its_files_are_written_whole(run_cli, tmp_path, monkeypatch):
    import numpy as np

    import ttlab.cli.id as cli_id
    from ttlab.cli.common import WRITTEN_WHOLE

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_id, "estimate_file", interrupt)
    np.save(tmp_path / "x.npy", np.zeros((50, 3)))
    r = run_cli("id", "estimate", tmp_path / "x.npy")
    assert r.code == 130 and f"interrupted — {WRITTEN_WHOLE}" in " ".join(r.err.split())
