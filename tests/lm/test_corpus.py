"""Corpus loading (text, directory, JSONL, Hugging Face datasets, builtin) and the document split."""

from __future__ import annotations

import gzip
import hashlib
import json
import lzma

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.lm.corpus import BUILTIN_CORPORA, Corpus, builtin_path, load_corpus, split_corpus


def write_jsonl(path, texts, **extra):
    with open(path, "w") as fh:
        for i, t in enumerate(texts):
            fh.write(json.dumps({"id": f"d{i:03d}", "body": t, **extra}) + "\n")
    return path


def test_text_file_blank_lines_literal_separator_and_whole(tmp_path):
    p = tmp_path / "book.txt"
    p.write_text("First para\nline two.\n\n\nSecond para.\n  \nThird <SEP> part.\n")
    c = load_corpus(p)
    assert [d.text for d in c] == ["First para\nline two.", "Second para.", "Third <SEP> part."]
    assert c.ids == ["book.txt#0", "book.txt#1", "book.txt#2"]
    c2 = load_corpus(p, doc_sep="<SEP>")
    assert len(c2) == 2 and c2[1].text.strip() == "part."
    assert len(load_corpus(p, doc_sep=None)) == 1


def test_compressed_text_files_read_the_same(tmp_path, texts):
    body = "\n\n".join(texts[:5]).encode()
    (tmp_path / "a.txt").write_bytes(body)
    (tmp_path / "b.txt.gz").write_bytes(gzip.compress(body))
    (tmp_path / "c.txt.xz").write_bytes(lzma.compress(body))
    got = [[d.text for d in load_corpus(tmp_path / n)] for n in ("a.txt", "b.txt.gz", "c.txt.xz")]
    assert got[0] == got[1] == got[2] == texts[:5]


def test_directory_one_document_per_file_sorted_skips_hidden_and_binary(tmp_path):
    d = tmp_path / "docs"
    (d / "sub").mkdir(parents=True)
    (d / "b.txt").write_text("bravo")
    (d / "a.txt").write_text("alpha")
    (d / "sub" / "c.sql").write_text("SELECT 1;")
    (d / ".hidden").write_text("secret")
    (d / "blob.bin").write_bytes(b"\x00\x01\x02")
    (d / "empty.txt").write_text("   \n")
    c = load_corpus(d)
    assert c.ids == ["a.txt", "b.txt", "sub/c.sql"]
    assert [x.text for x in c] == ["alpha", "bravo", "SELECT 1;"]
    assert c.info["binary_files_skipped"] == 1 and c.info["empty_docs_dropped"] == 1
    assert load_corpus(d, pattern="**/*.sql").ids == ["sub/c.sql"]


def test_invalid_utf8_strict_raises_replace_loads(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "x.txt").write_bytes(b"caf\xe9 au lait")
    with pytest.raises(TTLabInputError, match="not valid UTF-8"):
        load_corpus(d)
    assert load_corpus(d, errors="replace")[0].text == "caf\ufffd au lait"


def test_jsonl_field_ids_and_errors(tmp_path, texts):
    p = write_jsonl(tmp_path / "c.jsonl", texts[:4])
    c = load_corpus(p, field_name="body")
    assert c.ids == ["d000", "d001", "d002", "d003"] and [d.text for d in c] == texts[:4]
    assert load_corpus(p, field_name="body", id_field=None).ids == ["line1", "line2", "line3", "line4"]
    with pytest.raises(TTLabInputError, match=r"line 1: no field 'text'.*with field_name"):
        load_corpus(p)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"text": broken}\n')
    with pytest.raises(TTLabInputError, match="bad.jsonl, line 2: not valid JSON"):
        load_corpus(bad)
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": 1, "text": "a"}\n{"id": 1, "text": "b"}\n')
    with pytest.raises(TTLabInputError, match="occurs more than once"):
        load_corpus(dup)


def test_missing_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(TTLabInputError, match="not found"):
        load_corpus(tmp_path / "nope.txt")
    with pytest.raises(TTLabInputError, match="unknown builtin corpus 'nope'; available: sotu"):
        load_corpus("builtin:nope")


def test_hf_datasets_from_local_files_and_saved_folder(tmp_path, texts):
    datasets = pytest.importorskip("datasets")
    p = write_jsonl(tmp_path / "c.jsonl", texts[:6])
    c = load_corpus("hf:json", data_files=str(p), field_name="body", id_field="id", cache_dir=tmp_path / "hfcache")
    assert c.ids == [f"d{i:03d}" for i in range(6)]
    assert list(c.texts()) == texts[:6]
    assert c[2].text == texts[2]
    assert c.head(3).ids == c.ids[:3] and list(c.head(3).texts()) == texts[:3]
    # the same documents through the JSONL reader have the same split
    plain = load_corpus(p, field_name="body")
    assert split_corpus(c, 0.2, 0.2, 1).ids("test") == split_corpus(plain, 0.2, 0.2, 1).ids("test")
    # a dataset saved with save_to_disk; empty rows are dropped
    ds = datasets.Dataset.from_dict({"text": ["one", "", "two", "three"]})
    ds.save_to_disk(str(tmp_path / "saved"))
    c2 = load_corpus(f"hf:{tmp_path / 'saved'}")
    assert list(c2.texts()) == ["one", "two", "three"] and c2.ids == ["row0", "row2", "row3"]
    assert c2.info["empty_docs_dropped"] == 1
    with pytest.raises(TTLabInputError, match="no column 'body'"):
        load_corpus(f"hf:{tmp_path / 'saved'}", field_name="body")
    with pytest.raises(TTLabInputError, match="cannot load the dataset"):
        load_corpus("hf:json", data_files=str(tmp_path / "missing.jsonl"), cache_dir=tmp_path / "hfcache")


def test_split_is_deterministic_disjoint_and_sized(texts):
    c = Corpus.from_texts(texts)
    a, b = split_corpus(c, 0.1, 0.2, seed=3), split_corpus(c, 0.1, 0.2, seed=3)
    for s in ("train", "val", "test"):
        assert a.ids(s) == b.ids(s)
    all_ids = a.ids("train") + a.ids("val") + a.ids("test")
    assert sorted(all_ids) == sorted(c.ids) and len(set(all_ids)) == len(c)
    assert (a.n_docs("val"), a.n_docs("test"), a.n_docs("train")) == (3, 6, 21)
    other = split_corpus(c, 0.1, 0.2, seed=4)
    assert other.ids("test") != a.ids("test")
    # the train order is shuffled too (so a token prefix is a random subset of documents)
    assert a.ids("train") != sorted(a.ids("train"), key=c.ids.index)
    assert a.fingerprint() == b.fingerprint() != other.fingerprint()


def test_split_small_fractions_get_one_document_and_too_few_documents_raise():
    c = Corpus.from_texts(["a", "b", "c"])
    sp = split_corpus(c, 0.01, 0.01)
    assert (sp.n_docs("train"), sp.n_docs("val"), sp.n_docs("test")) == (1, 1, 1)
    assert split_corpus(c, 0.0, 0.0).n_docs("train") == 3
    with pytest.raises(TTLabInputError, match="too few for a split"):
        split_corpus(Corpus.from_texts(["a", "b"]), 0.1, 0.1)
    with pytest.raises(TTLabInputError, match="val_frac must be in"):
        split_corpus(c, 1.0, 0.0)


def test_fingerprint_tracks_content():
    a = Corpus.from_texts(["hello world", "bye"])
    assert a.fingerprint() == Corpus.from_texts(["hello world", "bye"]).fingerprint()
    assert a.fingerprint() != Corpus.from_texts(["hello world!", "bye"]).fingerprint()
    assert a.fingerprint() != Corpus.from_texts(["hello world", "bye"], ids=["x", "y"]).fingerprint()


def test_builtin_sotu_is_intact_and_documented():
    path = builtin_path("sotu")
    meta = json.loads(path.with_name("sotu.meta.json").read_text())
    raw = lzma.decompress(path.read_bytes())
    assert hashlib.sha256(raw).hexdigest() == meta["sha256_jsonl"]
    assert path.stat().st_size <= 3_000_000
    c = load_corpus("builtin:sotu")
    assert len(c) == meta["n_docs"] == 233
    assert c.ids[0] == "1790_george_washington_n" and len(set(c.ids)) == 233
    assert sum(len(t) for t in c.texts()) == meta["n_chars"]
    assert "CC0" in meta["licence"] and "sotu" in BUILTIN_CORPORA
    sp = split_corpus(c, 0.1, 0.1, 0)
    assert (sp.n_docs("val"), sp.n_docs("test")) == (23, 23)
    assert np.mean([len(t) for t in c.texts()]) > 10_000


def test_builtin_python_is_intact_code_and_documented():
    """builtin:python is what its README says: the Python 3.11 standard library's modules (no test suites),
    PSF-2.0, built from the Debian package recorded in its meta file, a few MB at most."""
    path = builtin_path("python")
    meta = json.loads(path.with_name("python.meta.json").read_text())
    raw = lzma.decompress(path.read_bytes())
    assert hashlib.sha256(raw).hexdigest() == meta["sha256_jsonl"]
    assert path.stat().st_size <= 2_000_000 and meta["kind"] == "code" and "PSF-2.0" in meta["licence"]
    assert meta["package"]["name"] == "libpython3.11-stdlib" and meta["package"]["client"] == "apt"
    c = load_corpus("builtin:python")
    assert len(c) == meta["n_docs"] == 238 and len(set(c.ids)) == 238
    assert {"difflib.py", "json/decoder.py", "asyncio/events.py"} <= set(c.ids)
    assert not any(i.startswith("test/") or "/test/" in i or "/tests/" in i or "idle_test" in i for i in c.ids)
    assert all(i.endswith(".py") for i in c.ids)
    texts = list(c.texts())
    assert sum(len(t) for t in texts) == meta["n_chars"]
    assert sum(t.count("def ") for t in texts) > 5_000 and sum(t.count("import ") for t in texts) > 1_000  # code
    readme = path.with_name("README.md").read_text()
    assert "builtin:python" in readme and "PSF" in readme and "ttlab lm corpus build python" in readme
