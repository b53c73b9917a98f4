"""``ttlab --version``: ``ttlab <version>`` on stdout, exit 0."""

from __future__ import annotations

from importlib import metadata

import ttlab
from ttlab.cli import version


def test_version_prints_the_installed_version(run_cli):
    res = run_cli("--version")
    assert res.code == 0 and res.err == ""
    assert res.out == f"ttlab {metadata.version('ttlab')}\n"


def test_version_falls_back_to_the_package_attribute(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert version() == ttlab.__version__


def test_version_is_listed_in_the_help(run_cli):
    res = run_cli("--help")
    assert res.code == 0 and "--version" in res.out
