"""``ttlab --help`` starts in about a second: importing the command line, and printing the help of any command, loads
none of the heavy libraries (torch alone took a second; scipy.optimize and scipy.stats another half). Each is imported
inside the function that needs it. Checked in a fresh interpreter, where nothing else has loaded them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
HEAVY = ("torch", "matplotlib", "scipy", "sklearn", "transformers", "datasets", "tokenizers")

PROBE = """
import contextlib, io, json, sys
HEAVY = {heavy!r}
loaded = lambda: [m for m in HEAVY if m in sys.modules]
import ttlab.cli
out = {{"import ttlab.cli": loaded()}}
import typer
def walk(cmd, path):
    yield path
    for name, sub in getattr(cmd, "commands", {{}}).items():
        yield from walk(sub, [*path, name])
for path in walk(typer.main.get_command(ttlab.cli.app), []):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            ttlab.cli.main([*path, "--help"])
        except SystemExit:
            pass
    out[" ".join(["ttlab", *path, "--help"])] = loaded()
print(json.dumps(out))
"""


def test_the_command_line_loads_no_heavy_library():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])}
    res = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    loaded = json.loads(res.stdout)
    assert len(loaded) > 20 and "ttlab scaling manifold --help" in loaded
    assert {what: mods for what, mods in loaded.items() if mods} == {}
