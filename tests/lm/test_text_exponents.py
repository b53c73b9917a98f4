"""The researcher's Python path (issue 34 item 1): an in-memory Hugging Face model and a list of strings → token
embeddings (:func:`ttlab.lm.embed_texts`) → the ID with its spread → paper B's exponents with the estimator band
(:func:`ttlab.predict_exponents`)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.lm.configs import EmbedConfig

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

TEXTS = [f"document {i}: the {w} sat on mat {i * 7 % 13} while a {v} ran past {i % 5} trees near the river"
         for i, (w, v) in enumerate(zip(["cat", "dog", "bird", "fox"] * 40, ["horse", "mouse", "deer", "crow"] * 40))]
SAMPLING = EmbedConfig(tokens_per_doc=8, context=32)


@pytest.fixture(scope="module")
def hf_pair():
    """A tiny GPT-2 with a BPE tokenizer trained here: in memory, no network."""
    from transformers import PreTrainedTokenizerFast

    from ttlab.lm.tokenizer import train_bpe

    tok = PreTrainedTokenizerFast(tokenizer_object=train_bpe(TEXTS, vocab_size=300, min_frequency=1).tok,
                                  eos_token="<|endoftext|>")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=32, n_layer=2, n_head=2,
                                  bos_token_id=None, eos_token_id=None)
    return transformers.GPT2LMHeadModel(cfg), tok


def test_an_in_memory_model_embeds_as_its_saved_folder_does(hf_pair, tmp_path):
    from ttlab.lm import embed_texts

    model, tok = hf_pair
    mem = embed_texts(model, TEXTS, tok, SAMPLING)
    model.save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    disk = embed_texts(tmp_path / "m", TEXTS, cfg=SAMPLING)
    assert mem.layers == disk.layers == [2] and mem.meta["n_vectors"] == len(TEXTS) * 8
    np.testing.assert_allclose(mem.layer(-1), disk.layer(-1), rtol=1e-5, atol=1e-5)
    assert mem.meta["corpus"] == disk.meta["corpus"] and mem.meta["corpus"]["n_texts"] == len(TEXTS)
    assert mem.meta["model"]["source"]["kind"] == "in-memory"
    other = embed_texts(model, TEXTS[::-1], tok, SAMPLING)
    assert other.meta["corpus"]["sha256"] != mem.meta["corpus"]["sha256"]  # the texts are fingerprinted


def test_predict_exponents_follows_the_theorems_and_the_paper_protocol(hf_pair):
    import ttlab
    from ttlab.lm.embed import embed_texts, text_intrinsic_dimension

    model, tok = hf_pair
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # two batches or more: no warning
        r = ttlab.predict_exponents(TEXTS, model, tok, embed=SAMPLING, batch_size=300, beta=0.5)
    est = text_intrinsic_dimension(embed_texts(model, TEXTS, tok, SAMPLING), -1, batch_size=300)
    d = est["intrinsic_dim"]
    assert r.intrinsic_dim == d and r.n_batches == est["n_batches"] >= 2 and r.intrinsic_dim_std > 0
    assert r.alpha_d == pytest.approx(1 / (1 + d)) and r.alpha_n == pytest.approx(1 / d)  # β = 0.5
    assert r.band["central"]["id"] == d and r.band["beta"] == 0.5
    lo, hi = r.band["lo"]["alpha_d"], r.band["hi"]["alpha_d"]
    assert lo <= r.alpha_d <= hi and len(r.band["estimator_set"]) >= 8
    assert r.settings["batch_size"] == 300 and r.settings["embed"]["tokens_per_doc"] == 8
    assert r.provenance["texts"]["n_texts"] == len(TEXTS) and r.warnings == ()


def test_one_batch_is_said_and_has_no_spread(hf_pair):
    from ttlab.lm.text_exponents import OneBatchWarning, predict_exponents

    model, tok = hf_pair
    with pytest.warns(OneBatchWarning, match="one batch .* no spread"):
        r = predict_exponents(TEXTS, model, tok, embed=SAMPLING, band=False)  # 1,280 vectors < 2 × 4,096
    assert r.n_batches == 1 and r.intrinsic_dim_std is None and r.band is None and len(r.warnings) == 1
    assert "(one batch)" in repr(r) and "±" not in repr(r)


def test_results_are_notebook_friendly(hf_pair):
    model, tok = hf_pair
    from ttlab.lm.text_exponents import predict_exponents

    r = predict_exponents(TEXTS, model, tok, embed=SAMPLING, batch_size=300)
    assert len(repr(r)) < 400 and f"ID {r.intrinsic_dim:.2f}" in repr(r)
    payload = json.loads(json.dumps(r.to_dict()))
    assert payload["alpha_d"] == r.alpha_d and payload["band"]["central_estimator"] == "mle"
    rows = r.rows()
    assert rows[0]["paper"] and rows[0]["id"] == r.intrinsic_dim and sum(x["paper"] for x in rows) == 1
    pd = pytest.importorskip("pandas")
    frame = r.to_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["estimator", "id", "alpha_d", "alpha_n", "paper"]
    assert len(frame) == len(r.band["estimators"])
    page = r._repr_html_()
    assert page.count("<tr>") == len(rows) + 1 and "&" not in page.replace("&lt;", "").replace("&gt;", "").replace("&#x27;", "")


@pytest.mark.parametrize("texts, match", [
    ("one long string", "texts is one string"),
    ([], "texts is empty"),
    (["fine", 3], r"texts\[1\] is a int, not a string"),
    (42, "texts must be a list of strings or a datasets.Dataset, got int"),
])
def test_bad_texts_are_refused_with_where(hf_pair, texts, match):
    from ttlab.lm import embed_texts

    model, tok = hf_pair
    with pytest.raises(TTLabInputError, match=match):
        embed_texts(model, texts, tok, SAMPLING)


def test_a_dataset_column_and_bad_models_are_checked(hf_pair):
    from ttlab.lm import embed_texts

    model, tok = hf_pair
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"body": TEXTS[:20]})
    assert embed_texts(model, ds, tok, SAMPLING, text_field="body").meta["corpus"]["n_texts"] == 20
    with pytest.raises(TTLabInputError, match="no column 'text' .*columns: body.*text_field"):
        embed_texts(model, ds, tok, SAMPLING)
    with pytest.raises(TTLabInputError, match="is a dict, not a Hugging Face causal language model"):
        embed_texts({"weights": 1}, TEXTS, tok)
    with pytest.raises(TTLabInputError, match="an in-memory model needs its tokenizer"):
        embed_texts(model, TEXTS)
    bert = transformers.BertForMaskedLM(transformers.BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1,
                                                                num_attention_heads=2, intermediate_size=32))
    with pytest.raises(TTLabInputError, match="is not causal"):
        embed_texts(bert, TEXTS, tok)


def test_import_ttlab_stays_light():
    code = "import sys, ttlab; f = ttlab.__all__; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
