"""docs/quickstart.md runs as written (issue 34 item 9): its ```bash blocks (one ``ttlab`` command per line) and its
```python blocks are executed in order, in an empty folder, the Python blocks sharing one namespace."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

QUICKSTART = Path(__file__).resolve().parents[1] / "docs" / "quickstart.md"
BLOCK = re.compile(r"```(bash|python)\n(.*?)```", re.S)


def blocks() -> list[tuple[str, str]]:
    return BLOCK.findall(QUICKSTART.read_text(encoding="utf-8"))


def test_the_quickstart_has_three_paths_with_code():
    text = QUICKSTART.read_text(encoding="utf-8")
    assert [h for h in re.findall(r"^## (\d)\.", text, re.M)] == ["1", "2", "3"]
    kinds = [k for k, _ in blocks()]
    assert kinds.count("bash") >= 3 and kinds.count("python") >= 5


def test_the_quickstart_runs_as_written(tmp_path, monkeypatch, run_cli):
    pytest.importorskip("transformers")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for kind, code in blocks():
        if kind == "python":
            exec(compile(code, str(QUICKSTART), "exec"), namespace)  # noqa: S102 — the page's own code
            continue
        for line in filter(None, (ln.strip() for ln in code.replace("\\\n", " ").splitlines())):
            args = shlex.split(line)
            assert args[0] == "ttlab", f"a bash block of the quickstart runs ttlab commands only: {line}"
            r = run_cli(*args[1:])
            assert r.code == 0, f"{line}\n{r.err[-800:]}"
    assert namespace["result"].alpha_d > 0 and (tmp_path / "fit.png").is_file()
