"""Symmetric timing for the benchmarks: every side of a ratio gets the same warm-up and the same number
of timed repeats, run interleaved (A, B, A, B, ...), and is reported by its minimum and median.

    from _timing import interleave
    t = interleave({"ttlab": ours, "reference": ref}, repeats=5, warmup=1)
    print(t.line("ttlab", "reference"))            # min/median of each side and both ratios
    t.ratio("ttlab", "reference").of_min           # ratio of the minima (ours / reference)

``interleave`` times each call with ``time.perf_counter``; with ``self_timed=True`` each call returns
``(seconds, result)`` instead (a subprocess that measures its own work, say). Loops that already alternate
the two sides step by step (the LM trainer's hook) hand their per-step times to :func:`from_series`,
which checks that both sides have as many timed repeats and drops the same warm-up from each.

Kept free of ttlab imports so the tests can load it by path.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SideStats:
    """The timed repeats of one side (seconds, in run order) and their minimum, median and mean."""

    name: str
    seconds: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.seconds:
            raise ValueError(f"side {self.name!r} has no timed repeats")

    @property
    def min(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.seconds)

    @property
    def repeats(self) -> int:
        return len(self.seconds)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (seconds)."""
        return {"min_s": self.min, "median_s": self.median, "mean_s": self.mean, "repeats": self.repeats,
                "all_s": list(self.seconds)}


@dataclass(frozen=True)
class Ratio:
    """``a / b`` of the minima and of the medians (below 1: ``a`` is faster)."""

    a: str
    b: str
    of_min: float
    of_median: float

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "ratio_of_min": self.of_min, "ratio_of_median": self.of_median}


@dataclass(frozen=True)
class Timings:
    """Per-side statistics of one interleaved measurement; every side has the same repeats and warm-up."""

    sides: dict[str, SideStats]
    warmup: int
    order: tuple[str, ...] = ()
    results: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        counts = {s.repeats for s in self.sides.values()}
        if len(counts) > 1:
            raise ValueError(f"sides differ in timed repeats: { {k: s.repeats for k, s in self.sides.items()} }")

    def __getitem__(self, name: str) -> SideStats:
        return self.sides[name]

    @property
    def repeats(self) -> int:
        return next(iter(self.sides.values())).repeats

    def ratio(self, a: str, b: str) -> Ratio:
        """``a`` over ``b`` (ratio of minima and ratio of medians)."""
        A, B = self.sides[a], self.sides[b]
        return Ratio(a, b, A.min / B.min, A.median / B.median)

    def line(self, a: str, b: str, unit: str = "s") -> str:
        """One printable line: min and median of both sides and the two ratios ``a/b``."""
        scale = {"s": 1.0, "ms": 1e3}[unit]
        r = self.ratio(a, b)
        A, B = self.sides[a], self.sides[b]
        return (f"{a} min {scale * A.min:.4g} {unit} / median {scale * A.median:.4g} {unit}; "
                f"{b} min {scale * B.min:.4g} {unit} / median {scale * B.median:.4g} {unit}; "
                f"{a}/{b} = {r.of_min:.3g} (min), {r.of_median:.3g} (median) "
                f"[{self.repeats} interleaved repeats, {self.warmup} warm-up each]")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary of every side."""
        return {"warmup": self.warmup, "repeats": self.repeats, "sides": {k: s.to_dict() for k, s in self.sides.items()}}


def interleave(sides: Mapping[str, Callable[[], Any]], *, repeats: int, warmup: int = 1,
               self_timed: bool = False, clock: Callable[[], float] = time.perf_counter) -> Timings:
    """Run every side ``warmup`` times untimed, then ``repeats`` timed rounds, one call of each side per round
    in the given order (A, B, A, B, ...). The last result of each side is kept in ``Timings.results``.

    With ``self_timed`` a call returns ``(seconds, result)`` and those seconds are recorded.
    """
    if not sides:
        raise ValueError("no sides to time")
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats} and {warmup}")
    names = tuple(sides)
    results: dict[str, Any] = {}
    for _ in range(warmup):
        for name in names:
            results[name] = sides[name]()
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(repeats):
        for name in names:
            if self_timed:
                sec, results[name] = sides[name]()
                sec = float(sec)
            else:
                t0 = clock()
                results[name] = sides[name]()
                sec = clock() - t0
            seconds[name].append(sec)
    return Timings({n: SideStats(n, tuple(s)) for n, s in seconds.items()}, warmup, names, results)


def from_series(series: Mapping[str, Sequence[float]], *, warmup: int) -> Timings:
    """Timings of loops that already alternate their sides step by step: the first ``warmup`` entries of
    every series are dropped, and the remaining timed repeats must be equally many on every side."""
    if warmup < 0:
        raise ValueError(f"warmup must be >= 0, got {warmup}")
    lengths = {k: len(v) for k, v in series.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"series differ in length: {lengths}")
    return Timings({k: SideStats(k, tuple(float(x) for x in v[warmup:])) for k, v in series.items()},
                   warmup, tuple(series))


def load_note() -> str:
    """The machine's 1-minute load average against its core count, to print next to timings."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - platforms without getloadavg
        return "load average unavailable"
    return f"load average (1 min) {load:.1f} on {os.cpu_count()} cores"
