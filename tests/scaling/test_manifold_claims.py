"""The manifold part's claims: every verdict follows from the stored numbers (oracle guard, regimes, model size)."""

from __future__ import annotations

import pytest

from ttlab.reproduce.parts.manifold_regression import claims as manifold_claims
from ttlab.reproduce.parts.manifold_regression import render as render_manifold
from ttlab.reproduce.report_blocks import fmt
from ttlab.reproduce.verdict_base import HOLDS, INCONCLUSIVE, NOT_REPRODUCED, PARTLY
from ttlab.reproduce.verdicts import rejudge


def _fit(arch="softmax", beta=1.0, regime="noisy", d=2, D=16, alpha=0.5, ci=(0.45, 0.55), oracle=0.51, limited=False):
    pred = 2 * beta / (2 * beta + d)
    return {"arch": arch, "beta": beta, "regime": regime, "noise": 1.0 if regime == "noisy" else 0.0, "d": d,
            "ambient": D, "alpha_pred": pred, "alpha_noiseless": 2 * beta / d, "alpha_hat": alpha,
            "alpha_hat_ci": list(ci) if ci else None, "oracle_alpha": oracle, "oracle_ci": [None, None] if oracle is None else [oracle - 0.02, oracle + 0.02],
            "sizes_fitted": [128, 256, 512, 1024, 2048] if alpha is not None else [], "includes_step_limited": limited,
            "mse_at_n_ref": 0.1 * d, "id_hat": d + 0.1}


def _result(fits, model_fits=()):
    return {"config": {"betas": [1.0], "regimes": ["noisy", "noiseless"], "archs": sorted({f["arch"] for f in fits}),
                       "ds": [2, 4], "ambients": [16, 128], "sizes": [128, 256, 512, 1024, 2048], "n_features": 1024,
                       "min_freq": 1.0, "max_freq": 1024.0, "noise": 1.0, "seeds": 1, "oracle_seeds": 4,
                       "width": 32, "depth": 2, "tokens": 4, "model_widths": [8, 16, 32], "backend": "local"},
            "fits": fits, "model_fits": list(model_fits), "n_ref": 512,
            "intrinsic_dim": [{"d": 2, "ambient": 16, "id_mean": 2.05}], "sweep": {"n_ok": 1, "n_tasks": 1},
            "wall_seconds": 12.0, "figure": "x.png", "results_file": "x.json"}


def _by_id(claims):
    return {c["id"]: c for c in claims}


def test_rate_verdicts_follow_the_oracle_and_the_regime():
    fits = [
        _fit(d=2, D=16),  # design passes, α̂ on the theory → holds
        _fit(d=2, D=128, alpha=0.636, ci=(0.6, 0.67), oracle=0.64),  # the case: oracle as steep → inconclusive
        _fit(d=4, D=16, alpha=0.2, ci=(0.18, 0.22), oracle=0.35),  # design passes, α̂ far too shallow → not reproduced
        _fit(d=4, D=128, alpha=None, ci=None, oracle=0.35),  # no network fit: reported, inconclusive
        _fit(regime="noiseless", d=2, D=16, alpha=0.95, ci=(0.9, 1.0), oracle=1.0),  # the bound holds
        _fit(regime="noiseless", d=2, D=128, alpha=0.4, ci=(0.37, 0.43), oracle=0.98),  # within the partly band
    ]
    claims = _by_id(manifold_claims(_result(fits)))
    v = {k.removeprefix("manifold_regression.rate_softmax_b1_"): c["verdict"] for k, c in claims.items()
         if ".rate_" in k}
    assert v == {"noisy_d2_D16": HOLDS, "noisy_d2_D128": INCONCLUSIVE, "noisy_d4_D16": NOT_REPRODUCED,
                 "noisy_d4_D128": INCONCLUSIVE, "noiseless_d2_D16": HOLDS, "noiseless_d2_D128": PARTLY}
    steep = claims["manifold_regression.rate_softmax_b1_noisy_d2_D128"]
    assert "steeper" in steep["reason"] and "not in the asymptotic regime" in steep["reason"]
    assert steep["measured"]["oracle"] == 0.64 and steep["thresholds"]["oracle_tol"] == 0.05
    assert "noiseless reference 2β/d = 1.000" in claims["manifold_regression.rate_softmax_b1_noiseless_d2_D16"]["summary"]
    assert claims["manifold_regression.rate_softmax_b1_noiseless_d2_D16"]["thresholds"]["bound"] == 1
    # every record is structured and re-judged from its numbers alone
    for c in claims.values():
        assert rejudge(c)["verdict"] == c["verdict"]
    # ambient invariance: per (arch, β, regime, d) across D
    inv = claims["manifold_regression.ambient_invariance_softmax_b1_noisy_d2"]
    assert inv["rule_id"] == "intervals_agree" and inv["measured"]["ambient"] == [16, 128]
    assert inv["verdict"] == NOT_REPRODUCED  # 0.50 [0.45, 0.55] vs 0.636 [0.60, 0.67]


def test_architectures_model_size_and_report_table():
    # intervals narrower than the 0.05 tolerance: wider overlapping ones cannot show agreement (inconclusive)
    fits = [_fit(arch=a, alpha=x, ci=(x - 0.02, x + 0.02)) for a, x in (("softmax", 0.5), ("relu", 0.52), ("mlp", 0.51))]
    mf = {"arch": "relu", "beta": 1.0, "d": 2, "ambient": 16, "regime": "noiseless", "n": 2048, "alpha_hat": 0.97,
          "alpha_hat_ci": [0.9, 1.04], "alpha_pred": 1.0, "oracle_alpha": 1.01, "sizes_fitted": [8, 16, 32],
          "includes_step_limited": False, "data_check": {"width": 32, "n": 2048, "mse_n": 0.1, "mse_2n": 0.098,
                                                         "ratio": 0.98}}
    limited = {**mf, "arch": "mlp", "data_check": {**mf["data_check"], "mse_2n": 0.05, "ratio": 0.5}}
    r = _result(fits, [mf, limited])
    claims = _by_id(manifold_claims(r))
    agree = claims["manifold_regression.archs_agree_b1_noisy_d2"]
    assert agree["verdict"] == HOLDS and agree["measured"]["arch"] == ["softmax", "relu", "mlp"]
    assert claims["manifold_regression.model_rate_relu_b1_d2"]["verdict"] == HOLDS
    lim = claims["manifold_regression.model_rate_mlp_b1_d2"]
    assert lim["verdict"] == INCONCLUSIVE and "data-limited" in lim["reason"]
    r["claims"] = list(claims.values())
    blocks = render_manifold(r)
    table = next(b for b in blocks if getattr(b, "header", None) and "oracle slope" in b.header)
    row = next(x for x in table.rows if x[0] == "relu")
    assert row[5] == fmt(0.51, 3) and row[6] == "passed" and row[7] == fmt(0.52, 3) and row[-1] == HOLDS
    text = " ".join(getattr(b, "text", "") for b in blocks)
    assert "Two regimes" in text and "2β/d" in text


@pytest.mark.parametrize("oracle, expected", [(0.5, "passed"), (0.58, "failed"), (None, "—")])
def test_design_column(oracle, expected):
    r = _result([_fit(oracle=oracle)])
    r["claims"] = manifold_claims(r)
    table = next(b for b in render_manifold(r) if getattr(b, "header", None) and "design" in b.header)
    assert table.rows[0][6] == expected
