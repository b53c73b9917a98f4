"""Text inputs: a UTF-8 byte-order mark is never data, a headerless CSV never loses a row; the small
input checks of the ID estimators."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import MLE, load_points
from ttlab.intrinsic_dim.mle import SmallKWarning, small_k_warnings
from ttlab.scaling.io import read_columns_csv

BOM = "\ufeff"


# ---------------------------------------------------------------------------------------------- point files


@pytest.mark.parametrize("bom", ["", BOM])
def test_point_csv_with_and_without_header_keeps_every_row(tmp_path, bom):
    p = tmp_path / "p.csv"
    p.write_text(bom + "1,2\n3,4.5\n5,6\n", encoding="utf-8")
    np.testing.assert_array_equal(load_points(p), [[1, 2], [3, 4.5], [5, 6]])
    p.write_text(bom + "a,b\n1,2\n3,4.5\n5,6\n", encoding="utf-8")
    np.testing.assert_array_equal(load_points(p), [[1, 2], [3, 4.5], [5, 6]])
    t = tmp_path / "p.tsv"
    t.write_text(bom + "1\t2\n3\t4\n", encoding="utf-8")
    assert load_points(t).shape == (2, 2)


def test_point_csv_first_line_mixing_numbers_and_text_is_an_error(tmp_path):
    p = tmp_path / "p.csv"
    p.write_text("1,x\n3,4\n5,6\n")
    with pytest.raises(TTLabInputError, match="line 1 mixes numbers and text"):
        load_points(p)


def test_npy_key_and_fake_npy(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.ones((5, 2)))
    with pytest.raises(TTLabInputError, match=r"key 'emb' selects an array inside an \.npz.*Drop key") as info:
        load_points(p, key="emb")
    assert info.value.params == ("key",)
    c = tmp_path / "x.csv"
    c.write_text("1,2\n3,4\n")
    with pytest.raises(TTLabInputError, match="Drop key"):
        load_points(c, key="emb")
    fake = tmp_path / "fake.npy"
    fake.write_text("not numpy at all\n")
    with pytest.raises(TTLabInputError, match=r"fake\.npy is not a NumPy \.npy file") as e:
        load_points(fake)
    assert "pickle" not in str(e.value)


# ---------------------------------------------------------------------------------------------- scaling CSV


def test_scaling_csv_bom_header(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text(BOM + "N,loss\n10,3\n100,2\n", encoding="utf-8")
    d = read_columns_csv(p, ["N", "loss"])
    np.testing.assert_array_equal(d["N"], [10, 100])


@pytest.mark.parametrize("bom", ["", BOM])
def test_scaling_csv_without_header_is_data_by_index_or_a_clear_error(tmp_path, bom):
    p = tmp_path / "s.csv"
    p.write_text(bom + "10,3\n100,2\n1000,1.5\n", encoding="utf-8")
    with pytest.raises(TTLabInputError, match=r"has no header row \(its first row is all numbers: 10, 3\).*x=0, y=1") as info:
        read_columns_csv(p, ["N", "loss"])
    assert info.value.params == ("x", "y")
    d = read_columns_csv(p, ["0", "1"])
    np.testing.assert_array_equal(d["0"], [10, 100, 1000])  # the first row is kept
    np.testing.assert_array_equal(d["1"], [3, 2, 1.5])
    with pytest.raises(TTLabInputError, match="this file has 2 columns"):
        read_columns_csv(p, ["0", "2"])


def test_scaling_fit_cli_on_headerless_csv(run_cli, tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("10,3\n100,2\n1000,1.5\n10000,1.2\n")
    r = run_cli("scaling", "fit", p, "--x", "0", "--y", "1", "--bootstrap", "0", "--json")
    assert r.code == 0, r.err
    assert r.json()["n_points"] == 4
    r = run_cli("scaling", "fit", p, "--x", "N", "--y", "loss")
    assert r.code == 2 and "no header row" in r.err


# ---------------------------------------------------------------------------------------------- corpora, tokenizer


def test_corpora_drop_the_bom(tmp_path):
    from ttlab.lm.corpus import read_directory, read_jsonl, read_text_file

    t = tmp_path / "a.txt"
    t.write_text(BOM + "First doc.\n\nSecond doc.\n", encoding="utf-8")
    c = read_text_file(t)
    assert list(c.texts()) == ["First doc.", "Second doc."]
    j = tmp_path / "b.jsonl"
    j.write_text(BOM + json.dumps({"id": "x", "text": "hello"}) + "\n" + json.dumps({"id": "y", "text": "bye"}) + "\n",
                 encoding="utf-8")
    assert list(read_jsonl(j).texts()) == ["hello", "bye"]
    d = tmp_path / "dir"
    d.mkdir()
    (d / "one.txt").write_text(BOM + "only text", encoding="utf-8")
    assert list(read_directory(d).texts()) == ["only text"]


def test_tokenizer_json_with_bom(tmp_path):
    pytest.importorskip("tokenizers")
    from ttlab.lm.tokenizer import load_tokenizer, train_bpe

    tok = train_bpe(["the union and the nation " * 20] * 5, vocab_size=280)
    text = tok.tok.to_str()
    p = tmp_path / "tokenizer.json"
    p.write_text(BOM + text, encoding="utf-8")
    again = load_tokenizer(p)
    assert again.encode("the union") == tok.encode("the union")


# ---------------------------------------------------------------------------------------------- small K


def test_mle_small_k_warns_and_k20_does_not():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(1500, 10))
    with pytest.warns(SmallKWarning) as rec:
        d2 = MLE(k=2).fit(X).dimension_
    msgs = [str(w.message) for w in rec]
    assert any("K = 2 neighbours is unreliable" in m for m in msgs)
    assert d2 > 2 and any("exceeds K = 2" in m for m in msgs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallKWarning)
        d20 = MLE(k=20).fit(X).dimension_
    assert 6 < d20 < 12


def test_small_k_rule_values():
    assert small_k_warnings(20, 8.0) == []
    assert small_k_warnings(10, 8.0) == []
    (m,) = small_k_warnings(9, 5.0)
    assert "relative spread 41 %" in m and "biased upwards by 14 %" in m  # 1/√6, 1/7
    (m,) = small_k_warnings(5, 3.0, average="harmonic")
    assert "biased" not in m and "spread 71 %" in m
    assert len(small_k_warnings(12, 13.0)) == 1 and "exceeds K = 12" in small_k_warnings(12, 13.0)[0]
