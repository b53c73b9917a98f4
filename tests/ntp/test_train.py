"""Algorithm 1 and its ablations against the paper's theorems (Proposition 1, Theorems 1–3)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import TrainConfig
from ttlab.ntp.diagnostics import fit_direction_rate, fit_loss_rate, norm_bounds_hold, summarize
from ttlab.ntp.examples import svop
from ttlab.ntp.generalize import evaluate_generalization, theory_prediction, unseen_sentences
from ttlab.ntp.generate import generate_dataset
from ttlab.ntp.model import NTPTransformer
from ttlab.ntp.structure import analyze
from ttlab.ntp.train import train


@pytest.fixture(scope="module")
def paper_run():
    """The paper's Section 7 setting: |V| = 20, d = |V|, 900 + 900 NGD steps."""
    ds = generate_dataset(20, 100, 2, 6, seed=0)
    return ds, train(ds, TrainConfig())


def test_stage1_from_zero_stays_on_the_max_margin_ray(paper_run):
    _, res = paper_run
    r = res.rows("1")
    eta0 = res.config.eta0
    assert eta0 == pytest.approx(0.2 / math.sqrt(20))
    # cosine 1 from step 1, and ‖W_ov(t)‖ = η0·t exactly (SPEC note on Algorithm 1)
    assert np.all(1 - r["cosine"][1:] < 1e-12)
    np.testing.assert_allclose(r["norm"], eta0 * r["step"], rtol=1e-12, atol=1e-12)


def test_norm_bounds_of_proposition1_and_theorem1_hold(paper_run):
    _, res = paper_run
    for stage in ("1", "2"):
        r = res.rows(stage)
        ok = norm_bounds_hold(r["step"], r["norm"], r["norm_lower_bound"], r["norm_upper_bound"])
        assert ok["fraction"] == 1.0, (stage, ok)


def test_stage2_converges_in_direction_and_loss(paper_run):
    _, res = paper_run
    r = res.rows("2")
    one_minus = 1 - r["cosine"]
    # measured: 0.27 at t = 10, 0.19 at 100, 0.081 at 900 (O(log²t / t) is slow)
    assert one_minus[-1] < 0.1
    assert one_minus[-1] < one_minus[300] < one_minus[100] < one_minus[10]
    # the loss decreases towards the limit with all attention on optimal tokens
    assert r["loss"][-1] < r["loss"][0]
    assert r["loss"][-1] - res.limit_loss < 0.1 * (r["loss"][0] - res.limit_loss)
    assert r["min_optimal_attention"][-1] > 0.5


def test_long_stage2_approaches_the_max_margin_direction():
    """Theorem 1/2 asymptotics: with more steps, 1 − cos → 0 and the optimal attention → 1."""
    ds = generate_dataset(12, 40, 2, 5, seed=3)
    res = train(ds, TrainConfig(stage1_steps=300, stage2_steps=4000))
    r = res.rows("2")
    one_minus = 1 - r["cosine"]
    # measured: 0.049 at t = 1000, 0.029 at t = 4000
    assert one_minus[4000] < 0.7 * one_minus[1000] and one_minus[4000] < 0.04
    assert r["min_optimal_attention"][-1] > 0.99


def test_stage1_loss_falls_exponentially(paper_run):
    _, res = paper_run
    s = summarize(res)["stage_1"]
    assert s["loss_fit"]["rate"] > 0 and s["loss_fit"]["r2"] > 0.99
    # the fitted exponential rate is at least the theorem's guaranteed rate η0/(4‖W*_ov‖)
    assert s["loss_fit"]["rate"] >= s["theory_loss_rate"]


def test_summary_reports_fits(paper_run):
    _, res = paper_run
    s2 = summarize(res)["stage_2"]
    fit = s2["direction_fit"]
    assert fit["log_t_over_t"]["C"] > 0 and fit["log2_t_over_t"]["C"] > 0
    assert fit["loglog_slope"] < 0
    assert s2["theory_attention_rate_C1"] > 0


def test_svop_training_reaches_max_margin_and_generalizes_like_example2():
    ds = svop()
    model = NTPTransformer(ds)
    res = train(ds, TrainConfig(), model=model)
    assert res.rows("2")["cosine"][-1] > 0.99
    preds = model.predict(res.W_ov, res.W_kq, [("S", "P"), ("O", "S", "P")])
    assert preds == ["V", "P"]


@pytest.mark.parametrize("cfg", [
    TrainConfig(schedule="joint", stage1_steps=100, stage2_steps=100),
    TrainConfig(optimizer="gd", eta0=1.0, eta=1.0, stage1_steps=100, stage2_steps=100),
    TrainConfig(optimizer="adam", eta0=0.05, eta=0.05, stage1_steps=100, stage2_steps=100),
    TrainConfig(init="random", init_scale=0.1, stage1_steps=100, stage2_steps=100),
    TrainConfig(dtype="float32", stage1_steps=100, stage2_steps=100),
], ids=["joint", "gd", "adam", "random-init", "float32"])
def test_ablations_train_and_reduce_the_loss(cfg):
    ds = generate_dataset(10, 40, 2, 5, seed=1)
    res = train(ds, cfg)
    stage = "joint" if cfg.schedule == "joint" else "2"
    r = res.rows(stage)
    assert np.all(np.isfinite(r["loss"]))
    assert r["loss"][-1] < r["loss"][0]
    assert r["cosine"][-1] > 0.5
    again = train(ds, cfg)
    np.testing.assert_array_equal(r["loss"], again.rows(stage)["loss"])


def test_random_init_is_not_on_the_ray_but_converges():
    ds = generate_dataset(10, 40, 2, 5, seed=2)
    res = train(ds, TrainConfig(init="random", init_scale=0.5, stage1_steps=300, stage2_steps=10))
    c = res.rows("1")["cosine"]
    assert 1 - c[1] > 1e-4 and c[-1] > c[1]


def test_general_embeddings_train_towards_their_max_margin():
    from ttlab.ntp.model import make_embeddings

    ds = generate_dataset(8, 30, 2, 4, seed=4)
    E = make_embeddings("orthogonal", 8, 12, seed=1)
    res = train(ds, TrainConfig(stage1_steps=300, stage2_steps=300), embeddings=E)
    assert res.config.eta0 == pytest.approx(0.2 / math.sqrt(12))
    assert res.rows("1")["cosine"][-1] > 0.999
    assert res.rows("2")["cosine"][-1] > 0.9


def test_bad_config_cannot_be_built():
    """A TrainConfig validates on construction and on dataclasses.replace: an invalid one never exists."""
    with pytest.raises(TTLabInputError, match="eta0") as info:
        TrainConfig(eta0=0.0)
    assert info.value.params == ("eta0",)
    with pytest.raises(TTLabInputError, match="schedule") as info:
        TrainConfig(schedule="alternating")
    assert info.value.params == ("schedule",)
    with pytest.raises(TTLabInputError, match="stage2_steps") as info:
        TrainConfig(stage2_steps=-1)
    assert info.value.params == ("stage2_steps",)
    with pytest.raises(TTLabInputError, match="impl") as info:
        dataclasses.replace(TrainConfig(), impl="sparse")
    assert info.value.params == ("impl",)
    resolved = TrainConfig(eta=0.3).resolved(16)
    assert (resolved.eta0, resolved.eta) == (0.2 / 4, 0.3)


# ------------------------------------------------------------------ diagnostics fits on known curves
def test_direction_fit_recovers_constant_and_prefers_the_right_shape():
    t = np.arange(1, 2000)
    y = 0.7 * np.log(t) / t
    fit = fit_direction_rate(t, y)
    assert fit["log_t_over_t"]["C"] == pytest.approx(0.7, rel=1e-9)
    assert fit["log_t_over_t"]["log_residual_std"] < 1e-9 < fit["log2_t_over_t"]["log_residual_std"]
    y2 = 0.3 * np.log(t) ** 2 / t
    fit2 = fit_direction_rate(t, y2)
    assert fit2["log2_t_over_t"]["C"] == pytest.approx(0.3, rel=1e-9)
    assert fit_direction_rate(t, np.zeros_like(y))["n_points"] == 0


def test_loss_fit_recovers_exponential_rate():
    t = np.arange(0, 500)
    fit = fit_loss_rate(t, 0.2 + 3.0 * np.exp(-0.013 * t), limit=0.2)
    assert fit["rate"] == pytest.approx(0.013, rel=1e-6) and fit["r2"] == pytest.approx(1.0)


# ------------------------------------------------------------------ Theorem 3 classification
def test_theory_predictions_on_svop():
    st = analyze(svop())
    sp = theory_prediction(st, ("S", "P"))
    assert (sp.case, sp.prediction) == ("non-comparable", "V")
    osp = theory_prediction(st, ("O", "S", "P"))
    assert (osp.case, osp.prediction) == ("optimal", "P")
    assert theory_prediction(st, ("P", "P")).case == "none"  # only non-optimal tokens
    assert theory_prediction(st, ("S", "V", "P")).case == "none"  # non-comparable S, V disagree (V vs O)


def test_unseen_sentences_enumerated_and_sampled():
    st = analyze(svop())
    sents = unseen_sentences(st)
    seen = {s.tokens for s in st.dataset.sentences}
    assert len(sents) == 4**2 + 4**3 - sum(1 for s in seen if len(s) >= 2)
    assert not set(sents) & seen
    ds = generate_dataset(40, 200, 2, 8, seed=1)
    st = analyze(ds)
    sampled = unseen_sentences(st, n_samples=200, seed=0)
    cases = [theory_prediction(st, s).case for s in sampled]
    assert 80 <= cases.count("optimal") <= 100 and 80 <= cases.count("non-comparable") <= 100
    assert len(set(sampled)) == len(sampled) and not set(sampled) & {s.tokens for s in ds.sentences}
    assert sampled == unseen_sentences(st, n_samples=200, seed=0)


def test_trained_model_agrees_with_theorem3_on_random_data():
    """Theorem 3 is asymptotic: measured agreement (optimal / non-comparable case) is 97% / 74% after
    900 stage-2 steps, 100% / 98% after 3,000 and 100% / 100% after 10,000; the max-margin direction
    itself (W*_kq scaled up) agrees on every sentence."""
    ds = generate_dataset(20, 100, 2, 6, seed=0)
    model = NTPTransformer(ds)
    res = train(ds, TrainConfig(stage2_steps=3000), model=model)
    sents = unseen_sentences(model.structure, n_samples=300, seed=1)
    rep = evaluate_generalization(model, res.W_ov, res.W_kq, sents)
    assert rep["by_case"]["optimal"]["agreement"] >= 0.98
    assert rep["by_case"]["non-comparable"]["agreement"] >= 0.95
    scaled = torch.as_tensor(res.wkq_star.W) * (10 * float(res.W_kq.norm()) / res.wkq_star.norm)
    limit = evaluate_generalization(model, res.W_ov, scaled, sents)
    assert limit["agreement"] == 1.0



def test_the_python_api_refuses_what_ntp_run_refuses():
    """``ttlab.ntp.train`` trained on data that breaks the paper's assumptions and returned numbers without a word,
    where ``ttlab ntp run`` refuses the same file (issue 34 item 4); check_assumptions=False still trains, on purpose."""
    from ttlab.ntp.dataset import NTPDataset

    bad = NTPDataset.from_text("a => b\nb => c\nc => a\na b => a\n", source="bad.txt")
    cfg = TrainConfig(stage1_steps=3, stage2_steps=3)
    with pytest.raises(TTLabInputError, match=r"(?s)bad.txt breaks the paper's assumptions .*'a b => a' \(line 4\)"):
        train(bad, cfg)
    assert len(train(bad, cfg, check_assumptions=False).metrics["step"]) > 0


@pytest.mark.parametrize("structured", [False, True])
def test_a_train_result_is_notebook_friendly(structured):
    """A TrainResult's repr was 285,600 characters (the weights and every step); now one line, with to_dict/to_frame."""
    import json

    cfg = TrainConfig(stage1_steps=20, stage2_steps=20, impl="structured" if structured else "dense")
    r = train(svop(), cfg)
    text = repr(r)
    last = r.final()
    assert len(text) < 300 and "stage 1 21 steps, stage 2 21 steps" in text and f"loss {last['loss']:.4g}" in text
    d = json.loads(json.dumps(r.to_dict()))
    assert d["final"]["cosine"] == last["cosine"] and len(d["metrics"]["loss"]) == len(r.metrics["loss"])
    pd = pytest.importorskip("pandas")
    frame = r.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 42 and frame["loss"].iloc[-1] == last["loss"]
