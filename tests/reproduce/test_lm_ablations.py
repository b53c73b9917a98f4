"""Figure 4's ablations: the layer peak over seeds against untrained copies, Gemma's sequence-length profile against
shuffled tokens, and the seeds a data sweep lacks trained with its own settings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.reproduce.parts import lm_id_ablations as abl
from ttlab.reproduce.parts.common_lm_id import GEMMA_LENGTH_EDGES, seed_layer_profile
from ttlab.reproduce.verdict_base import HOLDS, INCONCLUSIVE, NOT_REPRODUCED


def _row(d: float, layer: int | None = None, sd: float = 0.2, n: int = 1000, bs: int = 250, **kw) -> dict:
    out = {"intrinsic_dim": d, "intrinsic_dim_std": sd, "intrinsic_dim_harmonic": d - 0.5, "n_vectors": n,
           "batch_size": bs, **kw}
    return out if layer is None else {**out, "layer": layer}


def test_seed_profile_is_the_mean_with_the_seeds_and_the_batches_spread():
    """Per layer: the mean over seeds; SE² = s²/n + mean(SE_batch²)/n, checked against numpy."""
    ids = np.array([[8.0, 9.0, 7.0], [8.4, 9.6, 6.8], [7.9, 9.3, 7.3]])  # seeds × layers 1…3
    sds = [0.2, 0.4, 0.6]  # per seed: batch SE = sd/√4
    profiles = [[_row(3.0, 0, sd=sd)] + [_row(d, i + 1, sd=sd) for i, d in enumerate(seed)] for seed, sd in zip(ids, sds)]
    p = seed_layer_profile(profiles)
    assert p["n_seeds"] == 3 and p["layers"] == [1, 2, 3]
    assert p["values"] == pytest.approx(ids.mean(axis=0), rel=1e-12)
    batch_se2 = np.array([(sd / 2) ** 2 for sd in sds])
    want = np.sqrt(ids.var(axis=0, ddof=1) / 3 + batch_se2.mean() / 3)
    assert p["se"] == pytest.approx(want, rel=1e-12)
    assert p["layer0"]["intrinsic_dim"] == 3.0  # layer 0 apart, from the first seed
    one = seed_layer_profile(profiles[:1])  # one seed: no spread, its batches' SE
    assert one["se"] == pytest.approx([0.1] * 3, rel=1e-12)
    no_se = [[_row(d, i + 1, n=200) for i, d in enumerate(seed)] for seed in ids]  # one batch each: no SE
    assert seed_layer_profile(no_se)["se"] == [None] * 3
    assert seed_layer_profile([]) == {"values": [], "se": [], "layers": [], "layer0": None, "n_seeds": 0}
    with pytest.raises(ValueError, match="different layers"):
        seed_layer_profile([profiles[0], profiles[1][:-1]])


def _length(values, control=None, n: int = 4096, bs: int = 1024, sd: float = 0.2) -> dict:
    edges = list(zip(GEMMA_LENGTH_EDGES, GEMMA_LENGTH_EDGES[1:]))
    rows = [_row(v, n=n, bs=bs, sd=sd, positions=list(e)) for v, e in zip(values, edges)]
    g = {"status": "measured", "context": 1024, "rows": rows}
    if control is not None:
        g["control"] = {"rows": [_row(v, n=n, bs=bs, sd=sd, positions=list(e)) for v, e in zip(control, edges)]}
    return {"per_layer": {"rows": []}, "per_position": {"rows": []}, "gemma_length": g}


def test_sequence_length_claim_needs_the_fall_to_beat_shuffled_tokens():
    c = abl.length_claim(_length([16.0, 15.0, 14.0, 13.0], control=[9.0, 9.0, 9.0, 9.0]))
    assert (c["id"], c["kind"], c["rule_id"], c["verdict"]) == ("lm_id_ablations.sequence_length", "paper",
                                                              "exceeds_control", HOLDS)
    assert c["thresholds"] == {"direction": -1, "z": 2.0}
    assert c["measured"]["values"] == [16.0, 15.0, 14.0, 13.0] and c["measured"]["batches"] == [4] * 4
    assert c["measured"]["se"] == pytest.approx([0.1] * 4, rel=1e-12)  # 0.2/√4
    assert c["summary"] == ("Gemma 3 270M, ID by sequence length: 1–32 tokens: 16, 33–128 tokens: 15, 129–512 tokens: "
                            "14, 513–1024 tokens: 13; shuffled tokens (control): 9, 9, 9, 9")
    # shuffled tokens fall as much: the fall is no evidence about text
    same = abl.length_claim(_length([16.0, 15.0, 14.0, 13.0], control=[12.0, 11.0, 10.0, 9.0]))
    assert same["verdict"] == INCONCLUSIVE and "the control meets it" in same["reason"]
    # a rise is judged without a control (none is measured then)
    rise = abl.length_claim(_length([13.0, 14.0, 15.0, 16.0]))
    assert rise["verdict"] == NOT_REPRODUCED
    # a fall without its control: inconclusive, never holds
    assert abl.length_claim(_length([16.0, 15.0, 14.0, 13.0]))["verdict"] == INCONCLUSIVE
    # too few batches per group: inconclusive, saying why
    few = abl.length_claim(_length([16.0, 15.0, 14.0, 13.0], control=[9.0] * 4, n=3000))
    assert few["verdict"] == INCONCLUSIVE and few["measured"]["why"] == (
        "the sequence-length groups hold 2, 2, 2, 2 ID batch(es): a trend needs ≥ 4 per group (more test documents)")
    # not measured (quick mode, no package): the paper claim says what it needs
    none = abl.length_claim({"gemma_length": {"status": "not installed (pip install 'x')"}})
    assert none["verdict"] == INCONCLUSIVE and "not installed (pip install 'x')" in none["reason"]
    assert "install the pretrained extra" in none["reason"]
    assert "earlier version" in abl.length_claim({})["reason"]


def test_the_control_is_measured_only_when_the_profile_falls(monkeypatch):
    calls = []

    def fake(corpus, ctx, *, shuffle_tokens=False):
        calls.append(shuffle_tokens)
        return _length([16.0, 15.0, 14.0, 13.0] if fall else [13.0, 13.0, 13.1, 13.0])["gemma_length"]

    monkeypatch.setattr(abl, "gemma_length_profile", fake)
    fall = True
    g = abl.length_with_control("c", None)  # type: ignore[arg-type]
    assert calls == [False, True] and g["control"]["status"] == "measured"
    calls.clear()
    fall = False
    g = abl.length_with_control("c", None)  # type: ignore[arg-type]
    assert calls == [False] and g["control"] == {"status": "not measured: the profile does not fall (inconclusive)"}
    monkeypatch.setattr(abl, "gemma_length_profile", lambda corpus, ctx, shuffle_tokens=False: {"status": "off"})
    assert abl.length_with_control("c", None) == {"status": "off"}  # type: ignore[arg-type]


def test_missing_seeds_fill_up_from_zero():
    assert abl.missing_seeds([0, 1], 3) == [2]
    assert abl.missing_seeds([1, 5], 3) == [0]
    assert abl.missing_seeds([], 3) == [0, 1, 2]
    assert abl.missing_seeds([0, 1, 2, 3], 3) == []


def test_seed_replicates_train_with_the_sweeps_own_settings(tmp_path, monkeypatch):
    """A further seed of one size: the sweep's protocol, model and training config, its selected learning rate."""
    import json

    from tests.tiny_sweep import tiny_data_sweep
    from ttlab.lm.configs import TrainConfig
    from ttlab.lm.experiments import train_seed_replicates

    monkeypatch.setenv("TTLAB_CACHE", str(tmp_path / "cache"))
    sweep = tiny_data_sweep(tmp_path / "s", protocol="early-stop", lrs=[1e-3, 3e-3],
                            train=TrainConfig(batch_size=4, max_iters=6, warmup_iters=1, eval_interval=3, eval_iters=2,
                                              patience=2, test_max_tokens=500))
    chosen = next(r for r in sweep["runs"] if r["selected"] and r["train_tokens"] == 1600)
    runs = train_seed_replicates(sweep, 1600, [1], tmp_path / "extra")
    assert len(runs) == 1 and runs[0]["status"] == "ok" and runs[0]["seed"] == 1 and runs[0]["train_tokens"] == 1600
    assert runs[0]["lr"] == chosen["lr"] and runs[0]["name"] == f"D1600_s1_lr{chosen['lr']:g}"
    cfg = json.loads((tmp_path / "extra" / "runs" / runs[0]["name"] / "config.json").read_text())
    want = {**sweep["config"]["train"], "max_tokens": 1600, "seed": 1, "lr": chosen["lr"]}
    assert {k: cfg["train"][k] for k in want} == want
    assert cfg["model"] == {**sweep["config"]["model"]}
    # seed 0 again reproduces the sweep's own run exactly (same settings, same seed)
    again = train_seed_replicates(sweep, 1600, [0], tmp_path / "again")[0]
    assert again["test_loss"] == chosen["test_loss"] and math.isfinite(again["test_loss"])
    assert train_seed_replicates(sweep, 1600, [], tmp_path / "none") == []
    with pytest.raises(TTLabInputError, match=r"no selected run at 999 training tokens \(it has \[400, 800, 1600\]\)"):
        train_seed_replicates(sweep, 999, [1], tmp_path / "bad")


def test_id_by_network_lists_every_measuring_network_of_the_run():
    from ttlab.reproduce.parts.common_lm_id import id_by_network

    data = {"gemma": {"status": "measured", "context": 128, **_row(22.2)}}
    model = {"config": {"models": [{"block_size": 64}]},
             "id_by_model": [_row(4.0, n_layer=2, n_embd=32, params_non_embedding=25000)],
             "id_untrained": [_row(11.8, params_non_embedding=25000)]}  # as stored: the shape from the trained row
    suite = {"config": {"context": 64}, "models": [_row(4.1, name="m1", params_non_embedding=25000)],
             "models_untrained": [_row(float("nan"), name="m1")]}  # an ID that is not a number gives no row
    ablations = {"context": 64, "by_data": [{"train_tokens": 320000, "intrinsic_dim": 6.8}],
                 **_length([16.0, 15.0, 14.0, 13.0])}
    rows = id_by_network(data, model, suite, ablations)
    assert [(x["network"], x["trained"], x["params"], x["context"], x["intrinsic_dim"], x["source"]) for x in rows] == [
        ("data-sweep model, trained on 320,000 tokens", True, None, 64, 6.8, "lm_id_ablations"),
        ("model sweep, 2 layers × width 32", True, 25000, 64, 4.0, "lm_model_scaling"),
        ("model sweep, 2 layers × width 32", False, 25000, 64, 11.8, "lm_model_scaling"),
        ("suite model m1", True, 25000, 64, 4.1, "lm_suite_scaling"),
        ("Gemma 3 270M (reference), final layer", "pretrained", None, 128, 22.2, "lm_data_scaling"),
        ("Gemma 3 270M (reference), final layer, tokens 513–1024 of 1024-token windows", "pretrained", None, 1024,
         13.0, "lm_id_ablations")]
    assert rows[1]["se"] == pytest.approx(0.1) and rows[0]["se"] is None  # no batch numbers: no SE
    assert id_by_network(None, None, None, {}) == []


def test_the_ablations_section_shows_the_seeds_the_length_profile_and_the_networks():
    layers = [_row(d, i) for i, d in enumerate([3.0, 8.0, 9.0, 7.0, 4.0])]
    r = {**_length([16.0, 15.0, 14.0, 13.0], control=[9.0] * 4), "run": "r", "context": 64, "figure": "f.png",
         "per_layer": {"rows": layers}, "per_position": {"rows": []},
         "per_layer_seeds": [{"seed": s, "run": f"r{s}", "rows": layers, "untrained_rows": layers} for s in range(3)],
         "id_by_network": [{"network": "n", "trained": False, "params": None, "context": 64, "intrinsic_dim": 5.0,
                            "se": None, "source": "p"}]}
    r["claims"] = abl.claims(r)
    tables = {tuple(b.header): b for b in abl.render(r) if hasattr(b, "header")}
    net = tables[("measuring network", "trained", "non-embedding params", "tokens seen (at most)", "ID (mean)", "SE",
                  "part")]
    assert net.rows == [["n", "untrained copy", "—", 64, 5.0, "—", "p"]]
    length = tables[("sequence length (tokens)", "ID (mean)", "batches", "shuffled tokens (control)")]
    assert [x[0] for x in length.rows] == ["1–32", "33–128", "129–512", "513–1024"] and length.rows[0][3] == 9.0
    seeds = next(b for h, b in tables.items() if h[0] == "seed")
    assert [x[0] for x in seeds.rows] == [0, 1, 2] and seeds.rows[0][2:6] == [8.0, 9.0, 7.0, 4.0]
