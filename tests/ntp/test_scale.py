"""Theorem 3 from the structured parameters: same predictions as the dense model, same theory rule."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import TrainConfig
from ttlab.ntp.generalize import (
    LIMIT_SCORE_GAP,
    evaluate_generalization,
    max_margin_limit_norm,
    theory_prediction,
    unseen_sentences,
)
from ttlab.ntp.generate import generate_dataset
from ttlab.ntp.model import NTPTransformer
from ttlab.ntp.scale import ScaleGeneralization, structured_predict
from ttlab.ntp.structure import analyze
from ttlab.ntp.train import train


@pytest.fixture(scope="module")
def trained():
    ds = generate_dataset(60, 400, 2, 8, seed=2)
    res = train(ds, TrainConfig(stage1_steps=200, stage2_steps=300, impl="structured"))
    return ds, analyze(ds), res


def test_structured_predictions_equal_the_dense_model(trained):
    ds, st, res = trained
    gen = ScaleGeneralization(st)
    sents = gen.sample(300, seed=1) + unseen_sentences(st, n_samples=200, seed=4)
    model = NTPTransformer(ds, dtype="float64", structure=st)
    dense = model.predict(res.W_ov, res.W_kq, sents)
    fast = [ds.vocab[i] for i in structured_predict(res.structured, [ds.encode(s) for s in sents])]
    logits, _ = model.forward(res.W_ov, res.W_kq, sents)
    top2 = logits.topk(2, dim=1).values
    tie = ((top2[:, 0] - top2[:, 1]) <= 1e-12 * top2[:, 0].abs().clamp(min=1)).tolist()
    # equal up to exact ties (e.g. two optimal-looking classes with equal counts and scores: rounding picks one)
    assert all(f == d or t for f, d, t in zip(fast, dense, tie))
    assert sum(tie) < len(sents) // 20 and sum(f == d for f, d in zip(fast, dense)) >= len(sents) - sum(tie)
    # training sentences too (their attention scores are the stored pairs)
    train_s = [tuple(s.tokens) for s in ds.sentences]
    assert [ds.vocab[i] for i in structured_predict(res.structured, [ds.encode(s) for s in train_s])] == \
        model.predict(res.W_ov, res.W_kq, train_s)
    # and the untrained W_kq = 0 (uniform attention) with a W_ov that favours nothing: ties go to index 0
    assert structured_predict(res.structured, [[0, 1]])[0] in range(ds.vocab_size)


def test_theory_rule_equals_generalize(trained):
    ds, st, res = trained
    gen = ScaleGeneralization(st)
    rng = np.random.default_rng(0)
    sents = [tuple(ds.vocab[i] for i in rng.integers(ds.vocab_size, size=rng.integers(2, 7))) for _ in range(400)]
    sents += gen.sample(200, seed=3)
    for s in sents:
        assert gen.theory(s) == theory_prediction(st, s)


def test_sampler_is_stratified_unseen_and_seeded(trained):
    ds, st, res = trained
    gen = ScaleGeneralization(st)
    a = gen.sample(100, seed=5)
    assert a == ScaleGeneralization(st).sample(100, seed=5) and a != gen.sample(100, seed=6)
    seen = {tuple(s.tokens) for s in ds.sentences}
    assert len(set(a)) == len(a) == 100 and not (set(a) & seen)
    cases = [gen.theory(s).case for s in a]
    assert cases.count("optimal") == 50 and cases.count("non-comparable") == 50
    rep = gen.evaluate(res.structured, a)
    ref = evaluate_generalization(NTPTransformer(ds, dtype="float64", structure=st), res.W_ov, res.W_kq, a)
    assert rep["by_case"] == ref["by_case"] and rep["agreement"] == ref["agreement"]


def test_from_quick_check_equals_from_structure(trained):
    from ttlab.ntp.fastcheck import quick_check

    ds, st, res = trained
    a = ScaleGeneralization(st)
    b = ScaleGeneralization.from_quick_check(quick_check(ds.to_text()), ds)
    assert a.queries == b.queries and a.colloc == b.colloc and a.known == b.known
    for q in a.queries:
        assert a._above_below(q) == b._above_below(q)
    sa, sb = a.sample(120, seed=2), b.sample(120, seed=2)
    assert sa == sb
    assert a.evaluate(res.structured, sa)["by_case"] == b.evaluate(res.structured, sb)["by_case"]
    bad = quick_check("a => b\nb => a\na => a\n")
    with pytest.raises(TTLabInputError, match="valid one"):
        ScaleGeneralization.from_quick_check(bad, ds)


def test_max_margin_limit_norm_makes_every_score_gap_at_least_40() -> None:
    # smallest nonzero |entry| 0.25 of a W* of norm 1: the scale must reach 40 / 0.25 = 160 (10 × trained is 20)
    vals = np.array([0.0, 0.5, -0.25, 0.0])
    norm = max_margin_limit_norm(vals, 1.0, trained_norm=2.0)
    assert norm == pytest.approx(LIMIT_SCORE_GAP / 0.25)
    assert np.min(np.abs(vals[vals != 0])) * norm / 1.0 == pytest.approx(LIMIT_SCORE_GAP)
    # entries of at least 1 (the margin): 40 × ‖W*‖ unless 10 × the trained norm is larger
    assert max_margin_limit_norm(np.array([2.0, -1.0]), 3.0, trained_norm=1.0) == pytest.approx(120.0)
    assert max_margin_limit_norm(np.array([2.0, -1.0]), 3.0, trained_norm=50.0) == pytest.approx(500.0)
    with pytest.raises(TTLabInputError, match="W\\*_kq is zero"):
        max_margin_limit_norm(np.zeros(3), 0.0, trained_norm=1.0)
