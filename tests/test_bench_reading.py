"""The reading paragraph of docs/intrinsic_dim_accuracy.md is computed from the estimates, not typed in."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(_BENCH))  # the script imports its sibling _timing.py
    try:
        spec = importlib.util.spec_from_file_location("bench_intrinsic_dim_for_test", _BENCH / "bench_intrinsic_dim.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        yield mod
    finally:
        sys.path.remove(str(_BENCH))
        sys.modules.pop("bench_intrinsic_dim_for_test", None)


NAMES = ["MLE K=20, mean (paper)", "MLE K=20, mean, K-2", "GRIDE n1=10, n2=20"]


def _records(factor_high_d: float, noisy_gride: float, skdim_offset: float = 0.0) -> list[dict]:
    out = []
    for noise in (0.0, 0.01):
        for m, d in (("sphere", 2), ("cube", 8)):
            for name in NAMES:
                est = float(d) * (factor_high_d if d >= 8 else 1.0)
                if name == NAMES[0]:
                    est *= 19 / 18
                if noise:
                    est *= noisy_gride if name == NAMES[2] else 1.2
                out.append({"noise": noise, "manifold": m, "d": d, "true": d, "seed": 0, "n": 500, "name": name,
                            "ours": est, "skdim": est + skdim_offset})
    return out


def test_statements_follow_the_numbers(bench) -> None:
    text = bench.reading(_records(factor_high_d=0.7, noisy_gride=1.05), NAMES)
    assert text[0].startswith("ttlab and scikit-dimension agree on the 12 estimates")
    assert "6 of 6 mean estimates" in text[1] and "below the true dimension" in text[1]
    assert "1.0556 times the K − 2 version in every case" in text[2]
    assert "most for MLE K=20, mean (paper)" in text[3] and "least for GRIDE n1=10, n2=20" in text[3]


def test_statements_change_when_the_numbers_do(bench) -> None:
    text = bench.reading(_records(factor_high_d=1.1, noisy_gride=1.5, skdim_offset=0.5), NAMES)
    assert "differ on some of the 12 estimates" in text[0] and "5.0e-01" in text[0]
    assert "0 of 6 mean estimates" in text[1]  # all above the truth now
    assert "least for MLE K=20, mean, K-2" in text[3] and "most for GRIDE n1=10, n2=20" in text[3]
