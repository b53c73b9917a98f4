"""The compute-optimal frontier of a Chinchilla-form scaling law, with bootstrap intervals — and predicted from the ID.

For L(N, D) = E + A·N^(−α) + B·D^(−β) and a compute budget C = k·N·D (k FLOPs per parameter and token, 6 for a
dense transformer's forward and backward pass), minimising L on the curve N·D = C/k gives (Hoffmann et al. 2022,
Appendix D.2)

    N_opt(C) = G·(C/k)^a,   D_opt(C) = G^(−1)·(C/k)^b,   a = β/(α+β),   b = α/(α+β),   G = (αA/(βB))^(1/(α+β)),

and L_opt(C) = E + A·N_opt^(−α) + B·D_opt^(−β). Every quantity's interval is the percentile interval of the same
quantity computed on each bootstrap replicate of the fit (the fit's own resamples), at the fit's confidence level.

Paper B predicts the two exponents from the intrinsic dimension d of the data (Havrilla & Liao, Theorems 1–2):
α = α_N = 2β_H/d and β = α_D = 2β_H/(2β_H + d), β_H the Hölder smoothness, so before any sweep is run

    a = α_D/(α_N + α_D) = d/(2d + 2β_H),   b = (d + 2β_H)/(2d + 2β_H)

(:func:`id_allocation`; the coefficients A, B, E are not predicted, so neither are N_opt and L_opt themselves).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.scaling.fit_models import PARAM_NAMES
from ttlab.scaling.theory import alpha_d, alpha_n, check_beta, check_d

__all__ = ["DEFAULT_FLOPS_PER_TOKEN", "Frontier", "check_compute", "check_flops_per_token", "compute_optimal",
           "id_allocation"]

DEFAULT_FLOPS_PER_TOKEN = 6.0
"""k in C = k·N·D: 6 FLOPs per parameter and training token (2 forward, 4 backward; Kaplan et al. 2020)."""
QUANTITIES = ("n_opt", "d_opt", "loss_opt", "tokens_per_param")


def check_flops_per_token(flops_per_token: float) -> float:
    """k of C = k·N·D as a float, or a clear error (a positive, finite number)."""
    if isinstance(flops_per_token, bool) or not isinstance(flops_per_token, (int, float)) or not (
            math.isfinite(flops_per_token) and flops_per_token > 0):
        raise TTLabInputError(f"flops_per_token must be a positive number (6 for a dense transformer), got "
                              f"{flops_per_token!r}", params=("flops_per_token",))
    return float(flops_per_token)


def check_compute(compute: Sequence[float] | np.ndarray, flops_per_token: float) -> tuple[np.ndarray, float]:
    """The budgets as a float array and k, or a clear error (finite, positive, at least one budget)."""
    check_flops_per_token(flops_per_token)
    c = np.asarray(list(compute), dtype=float)
    if c.ndim != 1 or c.size == 0:
        raise TTLabInputError("give at least one compute budget in FLOPs (e.g. 1e18,1e20,1e22)", params=("compute",))
    bad = [float(v) for v in c if not (np.isfinite(v) and v > 0)]
    if bad:
        raise TTLabInputError(f"compute budgets must be positive finite FLOPs, got {bad[:5]}", params=("compute",))
    return c, float(flops_per_token)


def _allocation(params: np.ndarray, budgets: np.ndarray, k: float) -> dict[str, np.ndarray]:
    """The frontier of each parameter row (E, A, alpha, B, beta) at each budget: arrays (rows, budgets) and (rows,)."""
    E, A, al, B, be = (params[:, i][:, None] for i in range(5))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a, b = be / (al + be), al / (al + be)
        G = (al * A / (be * B)) ** (1.0 / (al + be))
        n = G * (budgets[None, :] / k) ** a
        d = (budgets[None, :] / k) / n
        loss = E + A * n ** (-al) + B * d ** (-be)
    return {"a": a[:, 0], "b": b[:, 0], "G": G[:, 0], "n_opt": n, "d_opt": d, "loss_opt": loss,
            "tokens_per_param": d / n}


@dataclass(frozen=True)
class Frontier:
    """The compute-optimal allocation of a Chinchilla-form fit: exponents ``a``, ``b`` (N_opt ∝ C^a, D_opt ∝ C^b)
    with intervals, and one entry per budget in ``budgets`` (``compute``, ``n_opt``, ``d_opt``, ``loss_opt``,
    ``tokens_per_param``, each ``{"value", "ci"}``). ``ci`` is None without bootstrap replicates."""

    a: dict[str, Any]
    b: dict[str, Any]
    coefficient: float
    budgets: list[dict[str, Any]]
    params: dict[str, float]
    flops_per_token: float
    ci_level: float
    n_replicates: int

    def __repr__(self) -> str:
        ci = self.a["ci"]
        shown = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
        return (f"Frontier(a = {self.a['value']:.3f}{shown}, b = {self.b['value']:.3f}; {len(self.budgets)} budget(s) "
                f"from {self.budgets[0]['compute']:.3g} FLOPs; {self.n_replicates} replicates)")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary of every field."""
        return asdict(self)

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per budget: compute, then each quantity with its interval bounds (``n_opt_lo`` …)."""
        out = []
        for e in self.budgets:
            row: dict[str, Any] = {"compute": e["compute"]}
            for q in QUANTITIES:
                ci = e[q]["ci"] or (None, None)
                row.update({q: e[q]["value"], f"{q}_lo": ci[0], f"{q}_hi": ci[1]})
            out.append(row)
        return out

    def to_frame(self) -> Any:
        """:meth:`rows` as a ``pandas.DataFrame`` (pandas is optional: ``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError:
            raise TTLabInputError("to_frame needs pandas: pip install pandas (or use rows() / to_dict()).") from None
        return pd.DataFrame(self.rows())


def _value_ci(value: float, draws: np.ndarray | None, ci_level: float) -> dict[str, Any]:
    """``{"value", "ci"}``: the percentile interval of the finite ``draws`` (None without any)."""
    if draws is None:
        return {"value": float(value), "ci": None}
    ok = draws[np.isfinite(draws)]
    if ok.size < 2:
        return {"value": float(value), "ci": None}
    q = (1 - ci_level) / 2
    lo, hi = np.quantile(ok, [q, 1 - q])
    return {"value": float(value), "ci": [float(lo), float(hi)]}


def compute_optimal(
    params: Mapping[str, float],
    compute: Sequence[float] | np.ndarray,
    *,
    flops_per_token: float = DEFAULT_FLOPS_PER_TOKEN,
    samples: np.ndarray | None = None,
    ci_level: float = 0.95,
) -> Frontier:
    """The compute-optimal frontier of the Chinchilla-form ``params`` (``E, A, B, alpha, beta``, as
    :func:`ttlab.scaling.fit.fit_chinchilla` gives them) at each ``compute`` budget (FLOPs, C = k·N·D with
    k = ``flops_per_token``). ``samples``: the fit's bootstrap replicates of the natural parameters (rows in the
    order E, A, alpha, B, beta, :data:`ttlab.scaling.fit_models.PARAM_NAMES`); each interval is the percentile
    interval of the quantity over them at ``ci_level``."""
    budgets, k = check_compute(compute, flops_per_token)
    names = PARAM_NAMES["chinchilla"]
    missing = [n for n in names if n not in params]
    if missing:
        raise TTLabInputError(f"a frontier needs a Chinchilla-form fit (E, A, B, alpha, beta); missing {missing} — fit "
                              "with form='chinchilla' (ttlab scaling fit --form chinchilla --x2 D)", params=("fit",))
    point = np.array([[float(params[n]) for n in names]])
    if not np.all(np.isfinite(point)) or np.any(point[0, 1:] <= 0):
        raise TTLabInputError(f"the fit's parameters must be finite with A, B, alpha, beta > 0, got "
                              f"{dict(zip(names, point[0].tolist()))}", params=("fit",))
    if not 0 < ci_level < 1:
        raise TTLabInputError(f"ci_level must be in (0, 1), got {ci_level!r}", params=("ci_level",))
    best = _allocation(point, budgets, k)
    draws = None
    if samples is not None and len(samples):
        s = np.asarray(samples, dtype=float)
        if s.ndim != 2 or s.shape[1] != len(names):
            raise TTLabInputError(f"samples must have one column per parameter ({', '.join(names)}), got shape {s.shape}",
                                  params=("samples",))
        draws = _allocation(s[np.all(np.isfinite(s), axis=1)], budgets, k)
    def pick(key: str, j: int | None = None) -> np.ndarray | None:
        """The replicates' values of ``key`` (at budget ``j``), or None without replicates."""
        return None if draws is None else (draws[key] if j is None else draws[key][:, j])

    entries = [{"compute": float(c), **{q: _value_ci(best[q][0, j], pick(q, j), ci_level) for q in QUANTITIES}}
               for j, c in enumerate(budgets)]
    return Frontier(a=_value_ci(best["a"][0], pick("a"), ci_level), b=_value_ci(best["b"][0], pick("b"), ci_level),
                    coefficient=float(best["G"][0]), budgets=entries, params={n: float(params[n]) for n in names},
                    flops_per_token=k, ci_level=float(ci_level), n_replicates=0 if draws is None else len(draws["a"]))


def id_allocation(intrinsic_dim: float, beta: float = 1.0) -> dict[str, float]:
    """The allocation exponents paper B predicts from the ID: α_N = 2β/d, α_D = 2β/(2β + d) as Chinchilla's α (of N)
    and β (of D), so a = α_D/(α_N + α_D) = d/(2d + 2β) and b = 1 − a (see the module doc)."""
    d, h = check_d(intrinsic_dim), check_beta(beta)
    an, ad = alpha_n(d, h), alpha_d(d, h)
    return {"id": d, "beta": h, "alpha_n": an, "alpha_d": ad, "a": ad / (an + ad), "b": an / (an + ad)}
