"""A boolean flag takes no value, so its ``--help`` line shows no value placeholder: typer wrote ``--quick <bool>``.
Read from every command's and every group's rendered help, ``--help`` and ``ttlab --version`` included."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from tests.conftest import cli_params

WIDE = "250"  # one line per option


def _flags_by_command() -> dict[str, list[tuple[str, bool]]]:
    """``command -> [(its longest option name, whether it is a boolean flag)]`` for every option of every command."""
    out: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for command, p in cli_params():
        if getattr(p, "param_type_name", "") == "option":
            out[command].append((max(p.opts, key=len), bool(getattr(p, "is_bool_flag", False))))
    return out


FLAGS = _flags_by_command()
GROUPS = sorted({" ".join(c.split()[:i]) for c in FLAGS for i in range(len(c.split()))})


def _placeholder(help_text: str, option: str) -> str | None:
    """The value placeholder (``<int>``, ``<bool>``) after ``option`` on its line of ``help_text``, None if none."""
    for line in help_text.splitlines():
        m = re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])[ ,\w-]*?\s+(<[^>]*>)", line)
        if m and line.split(option)[0].strip(" │*") == "":
            return m.group(1)
    return None


def test_every_command_has_boolean_flags_to_check():
    assert sum(flag for opts in FLAGS.values() for _, flag in opts) >= 20
    assert "scaling" in GROUPS and "" in GROUPS


@pytest.mark.parametrize("command", sorted(FLAGS))
def test_no_boolean_flag_shows_a_value_placeholder(run_cli, monkeypatch, command):
    monkeypatch.setenv("COLUMNS", WIDE)
    res = run_cli(*command.split(), "--help")
    assert res.code == 0, res.err
    shown = {option: _placeholder(res.out, option) for option, _ in [*FLAGS[command], ("--help", True)]}
    flags = {option for option, flag in FLAGS[command] if flag} | {"--help"}
    assert {o: shown[o] for o in flags if shown[o] is not None} == {}
    # the check sees placeholders where there are some: every option that takes a value shows one
    assert [o for o, _ in FLAGS[command] if o not in flags and shown[o] is None] == []


@pytest.mark.parametrize("group", GROUPS)
def test_no_group_flag_shows_a_value_placeholder(run_cli, monkeypatch, group):
    monkeypatch.setenv("COLUMNS", WIDE)
    res = run_cli(*group.split(), "--help")
    assert res.code == 0, res.err
    options = ["--help", *(["--version"] if group == "" else [])]
    assert all(o in res.out for o in options)
    assert {o: _placeholder(res.out, o) for o in options} == dict.fromkeys(options)
