"""The README is the front door: its Python example runs as written and every page it links exists."""

from __future__ import annotations

import json
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


def test_committed_standard_results_are_whole():
    """docs/results/standard (linked from the README): the standard tier's results.json in mode `standard`, its
    report stating the commit it came from, and every figure the report shows."""
    base = ROOT / "docs" / "results" / "standard"
    assert "docs/results/standard/report.md" in README
    results = json.loads((base / "results.json").read_text())
    assert results["mode"] == "standard" and results["run"]["source"]["commit"]
    report = (base / "report.md").read_text()
    assert f"Run from commit `{results['run']['source']['commit'][:12]}`" in report
    figures = re.findall(r"\]\(([^)]+\.png)\)", report)
    assert figures and all((base / f).is_file() for f in figures)
