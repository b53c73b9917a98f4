"""BPE tokenizer (train, load from files) and the memory-mapped token cache."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.lm.corpus import Corpus, split_corpus
from ttlab.lm.data import TokenizedCorpus, cached_bpe, prepare_data, tokenize_split, write_token_dataset
from ttlab.lm.tokenizer import EOT, load_tokenizer, train_bpe

UNICODE = "Ünïcödé — naïve café, 東京, emoji 🙂, tabs\tand\nnewlines"


def test_bpe_roundtrip_vocab_and_determinism(texts):
    tok = train_bpe(texts, vocab_size=300)
    assert 257 < tok.vocab_size <= 300
    assert tok.eot_id is not None and tok.decode([tok.eot_id]) == EOT
    for t in texts[:3] + [UNICODE]:  # byte-level: lossless even for characters never seen
        assert tok.decode(tok.encode(t)) == t
    # merges compress the training text below one token per byte, more with a larger vocabulary
    n_bytes = sum(len(t.encode()) for t in texts)
    n_300 = sum(len(ids) for ids in tok.encode_batch(texts))
    n_400 = sum(len(ids) for ids in train_bpe(texts, vocab_size=400).encode_batch(texts))
    assert n_400 < 0.75 * n_300 and n_300 < 0.6 * n_bytes
    again = train_bpe(texts, vocab_size=300)
    assert again.fingerprint == tok.fingerprint
    assert train_bpe(texts, vocab_size=280).fingerprint != tok.fingerprint
    assert tok.encode_batch(texts[:2]) == [tok.encode(texts[0]), tok.encode(texts[1])]
    with pytest.raises(TTLabInputError, match="vocab_size must be at least 257"):
        train_bpe(texts, vocab_size=200)


def test_load_tokenizer_from_json_hf_folder_and_vocab_merges(tmp_path, texts):
    tok = train_bpe(texts, vocab_size=300)
    sample = texts[5] + " " + UNICODE
    ref = tok.encode(sample)
    p = tok.save(tmp_path / "tok")
    assert p.name == "tokenizer.json"
    assert load_tokenizer(p).encode(sample) == ref
    assert load_tokenizer(tmp_path / "tok").fingerprint == tok.fingerprint
    # a Hugging Face folder written by transformers
    pytest.importorskip("transformers")
    tok.to_hf().save_pretrained(tmp_path / "hf")
    hf_loaded = load_tokenizer(tmp_path / "hf")
    assert hf_loaded.encode(sample) == ref and hf_loaded.eot_id == tok.eot_id
    # GPT-2-style vocab.json + merges.txt
    (tmp_path / "gpt2").mkdir()
    tok.tok.model.save(str(tmp_path / "gpt2"))
    assert load_tokenizer(tmp_path / "gpt2").encode(sample) == ref
    with pytest.raises(TTLabInputError, match="not found"):
        load_tokenizer(tmp_path / "missing")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(TTLabInputError, match="cannot read tokenizer"):
        load_tokenizer(tmp_path / "bad.json")


def test_tokenized_cache_matches_encoding_and_is_reused(tmp_path, texts, monkeypatch):
    sp = split_corpus(Corpus.from_texts(texts), 0.1, 0.1, seed=0)
    tok = cached_bpe(sp, 300, tmp_path)
    assert cached_bpe(sp, 300, tmp_path).fingerprint == tok.fingerprint  # from the cache
    data = tokenize_split(sp, tok, tmp_path)
    assert data.tokens("train").dtype == np.uint16 and data.vocab_size == tok.vocab_size
    for split in ("train", "val", "test"):
        docs = list(data.documents(split))
        assert [d for d, _ in docs] == sp.ids(split)
        assert [list(ids) for _, ids in docs] == tok.encode_batch(list(sp.texts(split)))
        toks = np.asarray(data.tokens(split))
        starts = data.doc_starts(split)
        assert starts[0] == 0 and (toks[starts[1:] - 1] == tok.eot_id).all() and toks[-1] == tok.eot_id
        assert data.n_tokens(split) == sum(len(ids) + 1 for _, ids in docs)
    # a second call is a cache hit: nothing is encoded again
    monkeypatch.setattr(type(tok), "encode_batch", lambda *a, **k: (_ for _ in ()).throw(AssertionError("re-encoded")))
    assert tokenize_split(sp, tok, tmp_path).root == data.root
    monkeypatch.undo()
    # a changed corpus or tokenizer gives a different cache folder
    changed = split_corpus(Corpus.from_texts(texts[:-1] + [texts[-1] + " extra"]), 0.1, 0.1, seed=0)
    assert tokenize_split(changed, tok, tmp_path).root != data.root
    tok2 = train_bpe(sp.texts("train"), 280)
    assert tokenize_split(sp, tok2, tmp_path).root != data.root
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no leftover temporary folders


def test_prepare_data_and_readback(tmp_path, texts):
    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    prep = prepare_data(p, vocab_size=300, cache_dir=tmp_path / "cache", val_frac=0.2, test_frac=0.2, split_seed=1)
    d = prep.describe()
    assert d["split"]["val_docs"] == 6 and d["tokens"]["train"] == prep.data.n_tokens("train") > 0
    reopened = TokenizedCorpus(prep.data.root)
    assert reopened.key == prep.data.key and reopened.tokenizer().fingerprint == prep.tokenizer.fingerprint
    assert prepare_data(p, vocab_size=300, cache_dir=tmp_path / "cache", val_frac=0.2, test_frac=0.2,
                        split_seed=1).data.root == prep.data.root
    other = prepare_data(p, vocab_size=300, cache_dir=tmp_path / "cache", val_frac=0.2, test_frac=0.2, split_seed=2)
    assert other.data.root != prep.data.root
    with pytest.raises(TTLabInputError, match="not a prepared token dataset"):
        TokenizedCorpus(tmp_path)


def test_write_token_dataset_validates(tmp_path):
    d = write_token_dataset(tmp_path / "x", {"train": [[1, 2, 3]], "val": [[4]], "test": []}, vocab_size=8, eot_id=7)
    assert list(d.tokens("train")) == [1, 2, 3, 7] and d.n_tokens("test") == 0 and d.tokens("test").size == 0
    with pytest.raises(TTLabInputError, match=r"token ids must be in \[0, 8\)"):
        write_token_dataset(tmp_path / "y", {"train": [[9]]}, vocab_size=8)
