"""benchmarks/_timing.py: interleaving, equal warm-up and repeats, minimum/median and the ratios."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "_timing.py"
_spec = importlib.util.spec_from_file_location("bench_timing", _PATH)
timing = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = timing  # dataclasses look their module up
_spec.loader.exec_module(timing)  # type: ignore[union-attr]


class FakeClock:
    """A clock that advances only when a side 'works', by the amount that side asks for."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_calls_are_interleaved_with_equal_warmup_and_repeats() -> None:
    log: list[str] = []
    t = timing.interleave({"A": lambda: log.append("A"), "B": lambda: log.append("B")}, repeats=3, warmup=2)
    assert log == ["A", "B"] * 5  # 2 warm-up rounds + 3 timed rounds, alternating
    assert t["A"].repeats == t["B"].repeats == t.repeats == 3
    assert t.warmup == 2
    assert t.order == ("A", "B")


def test_min_median_and_ratios_from_the_measured_seconds() -> None:
    clock = FakeClock()
    a_cost = iter([9.0, 1.0, 3.0, 2.0, 5.0])  # first one is the warm-up
    b_cost = iter([9.0, 4.0, 8.0, 6.0, 4.0])

    def side(costs):
        def run():
            clock.now += next(costs)
            return clock.now
        return run

    t = timing.interleave({"A": side(a_cost), "B": side(b_cost)}, repeats=4, warmup=1, clock=clock)
    assert t["A"].seconds == (1.0, 3.0, 2.0, 5.0)
    assert t["B"].seconds == (4.0, 8.0, 6.0, 4.0)
    assert t["A"].min == 1.0 and t["A"].median == 2.5
    assert t["B"].min == 4.0 and t["B"].median == 5.0
    r = t.ratio("A", "B")
    assert r.of_min == pytest.approx(0.25) and r.of_median == pytest.approx(0.5)
    assert t.ratio("B", "A").of_min == pytest.approx(4.0)
    assert t.results["A"] == clock.now - 4.0  # last result of each side is kept
    line = t.line("A", "B")
    assert "0.25 (min)" in line and "0.5 (median)" in line and "4 interleaved repeats" in line


def test_self_timed_sides_record_their_own_seconds() -> None:
    vals = iter([0.5, 0.7, 0.2, 0.9])
    t = timing.interleave({"x": lambda: (next(vals), "rx"), "y": lambda: (next(vals), "ry")},
                          repeats=2, warmup=0, self_timed=True)
    assert t["x"].seconds == (0.5, 0.2) and t["y"].seconds == (0.7, 0.9)
    assert t.results == {"x": "rx", "y": "ry"}


def test_from_series_drops_the_same_warmup_and_requires_equal_lengths() -> None:
    t = timing.from_series({"ours": [10.0, 1.0, 2.0, 3.0], "ref": [20.0, 2.0, 2.0, 6.0]}, warmup=1)
    assert t["ours"].seconds == (1.0, 2.0, 3.0) and t["ref"].seconds == (2.0, 2.0, 6.0)
    assert t.ratio("ours", "ref").of_min == pytest.approx(0.5)
    assert t.ratio("ours", "ref").of_median == pytest.approx(1.0)
    with pytest.raises(ValueError, match="differ in length"):
        timing.from_series({"ours": [1.0, 2.0], "ref": [1.0]}, warmup=0)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        timing.interleave({}, repeats=1)
    with pytest.raises(ValueError):
        timing.interleave({"a": lambda: None}, repeats=0)
    with pytest.raises(ValueError, match="differ in timed repeats"):
        timing.Timings({"a": timing.SideStats("a", (1.0,)), "b": timing.SideStats("b", (1.0, 2.0))}, 0)
