"""Analysis shared by paper B's scaling experiments: size grids, learning-rate selection, exponent fits.

Both experiments of paper B measure a scaling exponent the same way — train on a geometric grid of
sizes, keep the best learning rate per (size, seed), fit a power law to loss against size — and write
the fitted exponent with the same JSON keys (:class:`FittedExponent`):

* the LM data and model sweeps (:mod:`ttlab.lm.experiments`) and the LM suite (:mod:`ttlab.lm.suite`);
* the manifold-regression sweep (:mod:`ttlab.scaling.manifold_regression`).

May import: numpy, :mod:`ttlab.errors` and :mod:`ttlab.scaling.fit`. Not torch, matplotlib or
:mod:`ttlab.lm` (the experiments import this module, not the other way round).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ttlab.errors import TTLabInputError

__all__ = [
    "INTERVAL_RULES",
    "SMALL_FIT",
    "FittedExponent",
    "best_by",
    "curve_shapes",
    "exponent_summary",
    "geometric_sizes",
    "power_law_fits",
    "step_capped",
]

SMALL_FIT = 6
"""Below this many points a residual bootstrap is degenerate (far too narrow); the ``"auto"`` interval
rule then reports the OLS t-interval of the log-log slope."""

IntervalRule = Literal["auto", "bootstrap"]
INTERVAL_RULES: tuple[str, ...] = ("auto", "bootstrap")
"""``"auto"``: the t-interval below :data:`SMALL_FIT` points (or without a bootstrap), else the
bootstrap percentile interval (the LM sweeps: one point per size); ``"bootstrap"``: always the bootstrap
interval (the manifold sweep, which fits every seed's point)."""

_T_METHOD = "t-interval (OLS, log-log)"
_BOOT_METHOD = "bootstrap percentile"


def geometric_sizes(lo: int, hi: int, n: int) -> list[int]:
    """``n`` geometrically spaced integers from ``lo`` to ``hi`` (inclusive; repeats merged)."""
    if lo < 1 or hi < lo or n < 1:
        raise TTLabInputError(f"need 1 <= lo <= hi and n >= 1, got lo={lo}, hi={hi}, n={n}.")
    if n == 1:
        return [int(hi)]
    return sorted({int(round(x)) for x in np.geomspace(lo, hi, n)})


def step_capped(run: dict[str, Any]) -> bool:
    """True when a training run's record says it stopped at its step cap (``stop_reason == "max_iters"``; for
    the LM converged protocol, its search pass's): it was not stopped by early stopping and is not converged.
    A run that was continued (a ``continued_point``, :mod:`ttlab.lm.continuation`) is capped unless its last
    continuation was stopped by early stopping (one that hit its cap too, or failed — no stop reason — leaves it
    capped). Records that carry the continuation keys empty (``None``) were not continued."""
    if run.get("continued_point"):
        return run.get("continuation_stop_reason") != "early_stop"
    search = run.get("schedule_search") or {}
    return (search.get("stop_reason") or run.get("stop_reason")) == "max_iters"


def best_by(rows: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], Hashable],
            score: str) -> dict[Hashable, dict[str, Any]]:
    """The row with the lowest ``row[score]`` per ``key(row)`` — learning-rate selection: ``key`` leaves the
    learning rate out, ``score`` is a validation loss. The first row wins ties; keys keep first-seen order."""
    best: dict[Hashable, dict[str, Any]] = {}
    for r in rows:
        k = key(r)
        if k not in best or r[score] < best[k][score]:
            best[k] = r
    return best


def power_law_fits(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, *, bootstrap: int,
                   bootstrap_offset: int | None = None, seed: int = 0, offset: bool = True) -> dict[str, Any]:
    """The power form ``A·x^(−α)`` and, with ``offset``, the offset form ``E + A·x^(−α)`` fitted to y(x).

    Returns ``{"power": FitResult dict, "offset": FitResult dict}`` (:meth:`ttlab.scaling.fit.FitResult.to_dict`);
    a fit that cannot be made is ``{"error": message}`` (the offset form needs 4 distinct sizes).
    ``bootstrap_offset`` (default ``bootstrap``) resamples the slower offset fit.
    """
    from ttlab.scaling.fit import fit_offset_power_law, fit_power_law

    out: dict[str, Any] = {}
    try:
        out["power"] = fit_power_law(x, y, bootstrap=bootstrap, seed=seed).to_dict()
    except TTLabInputError as exc:
        out["power"] = {"error": str(exc)}
    if not offset:
        return out
    if len(set(np.asarray(x, dtype=float).tolist())) < 4:
        out["offset"] = {"error": "needs at least 4 distinct sizes"}
        return out
    try:
        nb = bootstrap if bootstrap_offset is None else bootstrap_offset
        out["offset"] = fit_offset_power_law(x, y, bootstrap=nb, seed=seed).to_dict()
    except (TTLabInputError, ValueError, RuntimeError) as exc:  # offset fits can be ill-posed on few points
        out["offset"] = {"error": str(exc)}
    return out


def _interval(fit: dict[str, Any], name: str, key: str) -> list[float | None] | None:
    v = (fit.get(name) or {}).get(key)
    return None if v is None or all(b is None for b in v) else list(v)


@dataclass(frozen=True)
class FittedExponent:
    """A fitted scaling exponent α̂ (slope magnitude of log loss against log size) with its 95 % interval.

    ``ci`` is the reported interval and ``ci_method`` how it was made; ``ci_bootstrap`` and ``ci_t`` are
    both candidates (bootstrap percentile, OLS t-interval), None where not available. Written everywhere
    with the keys of :meth:`to_dict`.
    """

    alpha_hat: float | None = None
    ci: list[float | None] | None = None
    ci_method: str | None = None
    ci_bootstrap: list[float | None] | None = None
    ci_t: list[float | None] | None = None

    @classmethod
    def from_fit(cls, power: dict[str, Any] | None, interval: IntervalRule = "auto") -> FittedExponent:
        """The exponent of a power-form fit (a ``FitResult.to_dict()``; None or ``{"error"}``: no exponent)."""
        if interval not in INTERVAL_RULES:
            raise TTLabInputError(f"interval must be one of {', '.join(INTERVAL_RULES)}, got {interval!r}.")
        if not power or "params" not in power:
            return cls()
        boot, t = _interval(power, "ci", "alpha"), _interval(power, "ci_analytic", "alpha")
        ci, method = None, None
        if interval == "auto" and t is not None and (power["n_points"] < SMALL_FIT or boot is None):
            ci, method = t, _T_METHOD
        elif boot is not None:
            ci, method = boot, _BOOT_METHOD
        return cls(alpha_hat=float(power["params"]["alpha"]), ci=ci, ci_method=method, ci_bootstrap=boot, ci_t=t)

    def to_dict(self) -> dict[str, Any]:
        """JSON keys: ``alpha_hat``, ``alpha_hat_ci``, ``alpha_hat_ci_method``, ``alpha_hat_ci_bootstrap``,
        ``alpha_hat_ci_t``."""
        return {"alpha_hat": self.alpha_hat, "alpha_hat_ci": self.ci, "alpha_hat_ci_method": self.ci_method,
                "alpha_hat_ci_bootstrap": self.ci_bootstrap, "alpha_hat_ci_t": self.ci_t}


def exponent_summary(fits: dict[str, Any], interval: IntervalRule = "auto") -> dict[str, Any]:
    """:class:`FittedExponent` keys of ``fits["power"]`` plus ``alpha_hat_offset`` (the offset form's α, or None)
    for a :func:`power_law_fits` result."""
    offset = (fits.get("offset") or {}).get("params", {}).get("alpha")
    return {**FittedExponent.from_fit(fits.get("power"), interval).to_dict(), "alpha_hat_offset": offset}


def curve_shapes(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """A power law against the two 2-parameter curves a decaying loss is most often mistaken for, on the same points.

    Each curve is fitted by least squares in the space where it is a line — power law: log y on log x; exponential:
    log y on x; logarithmic: y on log x — and all three are scored by the residual sum of squares of *log y* (a
    logarithmic fit that goes non-positive at a point scores ∞). Returns ``rss`` (per curve), ``decades``:
    log10(RSS_alternative / RSS_power) per alternative (> 0: the power law leaves less unexplained), ``closest``: the
    alternative with the smallest ``decades`` and ``n_points``. Needs ≥ 3 points with x, y > 0 and 2 distinct x.
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1 or len(xs) < 3 or not (np.all(xs > 0) and np.all(ys > 0)):
        raise TTLabInputError(f"curve_shapes needs ≥ 3 points with positive x and y of equal length, got x={xs.tolist()}, "
                              f"y={ys.tolist()}")
    if len(np.unique(xs)) < 2:
        raise TTLabInputError(f"curve_shapes needs at least 2 distinct x, got {xs.tolist()}")
    lx, ly = np.log(xs), np.log(ys)

    def line_rss(u: np.ndarray, v: np.ndarray) -> tuple[float, np.ndarray]:
        coef = np.polyfit(u, v, 1)
        fitted = np.polyval(coef, u)
        return float(np.sum((v - fitted) ** 2)), fitted

    rss = {"power": line_rss(lx, ly)[0], "exponential": line_rss(xs, ly)[0]}
    _, y_log = line_rss(lx, ys)
    rss["logarithmic"] = float(np.sum((ly - np.log(y_log)) ** 2)) if np.all(y_log > 0) else float("inf")
    floor = max(rss["power"], 1e-300)
    decades = {k: float(np.log10(max(v, 1e-300) / floor)) if np.isfinite(v) else float("inf")
               for k, v in rss.items() if k != "power"}
    return {"rss": rss, "decades": decades, "closest": min(decades, key=lambda k: decades[k]), "n_points": len(xs)}
