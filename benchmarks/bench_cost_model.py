"""Printed time estimates of `ttlab ntp run` against the measured time of the whole command.

Run on demand: `python benchmarks/bench_cost_model.py [--vocab 3000 --vocab 5000 --vocab 50257] [--md FILE]`.

For every |V|: the data is written by `ttlab ntp generate --vocab V --sentences 20000 --max-len 16` (the
sizes of ttlab issue 23), then `ttlab ntp run --data FILE --quiet` (defaults: 900 + 900 steps) runs in a
fresh subprocess. Recorded: the estimate the command printed before training (summary.json "time": the
whole command and the training alone), the command's wall time measured here around the subprocess, the
training's own wall time, the subprocess's CPU time (user + system) and the 1-minute load average before
and after (the machine may be shared: a loaded machine lengthens the wall time, and the estimate, which
times steps on the same machine a moment earlier, follows only the load it saw). One more row runs the
issue's literal command, which generates the data inside the run (`--vocab 5000` without `--data`).

Imports: the standard library only (ttlab runs in the subprocesses).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TTLAB = [str(Path(sys.executable).with_name("ttlab"))]  # the console script of this environment


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(run_args: list[str], out: Path) -> dict:
    """Run `ttlab ntp run RUN_ARGS --out OUT --quiet`; the printed estimates against the measured times."""
    load0, cpu0, t0 = os.getloadavg()[0], _cpu(), time.perf_counter()
    subprocess.run([*TTLAB, "ntp", "run", *run_args, "--out", str(out), "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    wall, cpu, load1 = time.perf_counter() - t0, _cpu() - cpu0, os.getloadavg()[0]
    s = json.loads((out / "summary.json").read_text())
    return {"args": " ".join(run_args), "vocab": s["dataset"]["vocab_size"], "estimated_total_s": s["time"]["estimated_total_s"],
            "wall_s": wall, "cpu_s": cpu, "estimated_training_s": s["time"]["estimated_training_s"],
            "training_s": s["wall_time_s"], "load": (load0, load1)}


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table (ratios estimate / measured)."""
    head = ("| command | estimated, whole command | measured wall | ratio | CPU time | estimated training | "
            "measured training | ratio | load (1 min) before → after |\n|---|---|---|---|---|---|---|---|---|\n")
    return head + "".join(
        f"| `ntp run {r['args']}` | {r['estimated_total_s']:.1f} s | {r['wall_s']:.1f} s | "
        f"{r['estimated_total_s'] / r['wall_s']:.2f} | {r['cpu_s']:.1f} s | {r['estimated_training_s']:.1f} s | "
        f"{r['training_s']:.1f} s | {r['estimated_training_s'] / r['training_s']:.2f} | "
        f"{r['load'][0]:.1f} → {r['load'][1]:.1f} |\n" for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=int, action="append", help="|V| (repeatable; default 3000, 5000, 50257)")
    ap.add_argument("--no-inline", action="store_true", help="skip the run that generates its data in-process")
    ap.add_argument("--md", type=Path, help="also write the table to this file")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for v in a.vocab or [3000, 5000, 50_257]:
            data = Path(tmp) / f"v{v}.txt"
            subprocess.run([*TTLAB, "ntp", "generate", "--vocab", str(v), "--sentences", "20000", "--max-len", "16",
                            "--out", str(data)], check=True, stdout=subprocess.DEVNULL)
            rows.append(measure(["--data", str(data)], Path(tmp) / f"run{v}"))
            rows[-1]["args"] = f"--data <generate --vocab {v} --sentences 20000 --max-len 16>"
            print(table(rows[-1:]).splitlines()[-1], flush=True)
        if not a.no_inline:
            rows.append(measure(["--vocab", "5000", "--sentences", "20000", "--max-len", "16"], Path(tmp) / "inline"))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(table(rows))
    if a.md:
        a.md.write_text(table(rows))


if __name__ == "__main__":
    main()
