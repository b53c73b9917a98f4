"""What ``ttlab scaling predict``, ``convert`` and ``table1`` report, as JSON-ready dictionaries: exponents predicted
from an intrinsic dimension (or a band over several estimates), the ID-free conversion between α_N and α_D, and
the recomputed Table 1 with its formulas.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ttlab.errors import TTLabInputError
from ttlab.scaling import theory
from ttlab.scaling.band import ids_from_compare_json, parse_ids, prediction_band

__all__ = ["TABLE1_FORMULAS", "TABLE1_ROWS", "convert_exponents", "predict_exponents", "table1_payload"]

TABLE1_FORMULAS = {
    "alpha_d_predicted_from_alpha_n": "alpha_n / (1 + alpha_n)",
    "alpha_n_predicted_from_alpha_d": "alpha_d / (1 - alpha_d)",
    "id_from_alpha_n": "2 beta / alpha_n",
    "id_from_alpha_d": "2 beta (1 - alpha_d) / alpha_d",
    "id_from_alpha_n_sharma_kaplan": "4 / alpha_n",
    "alpha_n_sharma_kaplan_from_id_of_alpha_d": "4 / id_from_alpha_d",
    "allocation_a": "alpha_d / (alpha_n + alpha_d)",
    "allocation_a_from_id_of_alpha_d": "id_from_alpha_d / (2 id_from_alpha_d + 2 beta)",
}
"""How each column of :func:`ttlab.scaling.theory.table1` is computed."""
TABLE1_ROWS: tuple[tuple[str, str, str], ...] = (
    ("alpha_n_observed", "α_N observed", ".4f"),
    ("alpha_n_predicted_from_alpha_d", "α_N predicted = α_D/(1−α_D)", ".4f"),
    ("alpha_d_observed", "α_D observed", ".4f"),
    ("alpha_d_predicted_from_alpha_n", "α_D predicted = α_N/(1+α_N)", ".4f"),
    ("id_from_alpha_n", "d implied by α_N (2β/α_N)", ".2f"),
    ("id_from_alpha_d", "d implied by α_D (2β(1−α_D)/α_D)", ".2f"),
    ("id_from_alpha_n_sharma_kaplan", "d implied by α_N, Sharma–Kaplan (4/α_N)", ".2f"),
    ("alpha_n_sharma_kaplan_from_id_of_alpha_d", "α_N Sharma–Kaplan at d(α_D) (4/d)", ".4f"),
    ("allocation_a", "N_opt ∝ C^a: a = α_D/(α_N+α_D) (additive law)", ".3f"),
    ("allocation_a_from_id_of_alpha_d", "a predicted at d(α_D): d/(2d+2β)", ".3f"),
)
"""The rows of the printed Table 1: (key of a :class:`ttlab.scaling.theory.Table1Row`, label, number format)."""


def predict_exponents(
    intrinsic_dim: float | None = None,
    ids: str | None = None,
    from_compare: Path | None = None,
    *,
    beta: float = 1.0,
    central: str = "mle_mean",
) -> dict[str, Any]:
    """Exponents predicted from exactly one of: an ID ``intrinsic_dim`` (α_D, α_N and Sharma–Kaplan's α_N), the
    estimates ``ids`` (``"mle=15.6,twonn=14.2"``) or the JSON of ``ttlab id compare`` (``from_compare``) — the
    last two as a band (:func:`ttlab.scaling.band.prediction_band`, with ``source``)."""
    given = sum(v is not None for v in (intrinsic_dim, ids, from_compare))
    if given != 1:
        raise TTLabInputError("give exactly one of intrinsic_dim, ids or from_compare",
                              params=("intrinsic_dim", "ids", "from_compare"))
    if intrinsic_dim is not None:
        return {
            "id": intrinsic_dim,
            "beta": beta,
            "alpha_d": theory.alpha_d(intrinsic_dim, beta),
            "alpha_n": theory.alpha_n(intrinsic_dim, beta),
            "alpha_n_sharma_kaplan": theory.alpha_n_sharma_kaplan(intrinsic_dim),
        }
    source = "--ids"
    if ids is not None:
        estimates = parse_ids(ids)
    else:
        estimates, _ = ids_from_compare_json(from_compare)  # type: ignore[arg-type]
        source = str(from_compare)
    band = prediction_band(estimates, beta=beta, central=central)
    return {"source": source, **band.to_dict()}


def convert_exponents(alpha_n: float | None = None, alpha_d: float | None = None, beta: float = 1.0) -> dict[str, Any]:
    """The ID-free conversion of exactly one of ``alpha_n``, ``alpha_d`` into the other, and the ID implied at β."""
    if (alpha_n is None) == (alpha_d is None):
        raise TTLabInputError("give exactly one of alpha_n or alpha_d", params=("alpha_n", "alpha_d"))
    if alpha_n is not None:
        out: dict[str, Any] = {
            "given": "alpha_n",
            "alpha_n": alpha_n,
            "alpha_d": theory.alpha_d_from_alpha_n(alpha_n),
            "implied_id": theory.id_from_alpha_n(alpha_n, beta),
        }
    else:
        out = {
            "given": "alpha_d",
            "alpha_d": alpha_d,
            "alpha_n": theory.alpha_n_from_alpha_d(alpha_d),
            "implied_id": theory.id_from_alpha_d(alpha_d, beta),
        }
    out["beta"] = beta
    return out


def table1_payload(beta: float = 1.0) -> dict[str, Any]:
    """The paper's Table 1 recomputed at ``beta`` (rows of :func:`ttlab.scaling.theory.table1`) and its formulas."""
    return {"rows": [r.to_dict() for r in theory.table1(beta=beta)], "beta": beta, "formulas": dict(TABLE1_FORMULAS)}
