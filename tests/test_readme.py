"""The README is the front door: its Python example runs as written and every page it links exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_python_example_runs_and_reads_the_dimension(capsys):
    (block,) = re.findall(r"```python\n(.*?)```", README, re.S)
    exec(compile(block, "README.md", "exec"), {})
    last = capsys.readouterr().out.strip().splitlines()[-1].split()
    d, alpha = float(last[0]), float(last[1])
    assert abs(d - 5.0) < 0.6  # a 5-dim subspace
    assert abs(alpha - 2.0 / (2.0 + d)) < 1e-12


def test_every_linked_page_exists_and_the_readme_stays_short():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert links, "the README links its manuals"
    missing = [p for p in links if not (ROOT / p).exists()]
    assert not missing, f"README links to missing files: {missing}"
    assert len(README.splitlines()) <= 150
