"""Scaling exponents predicted from the intrinsic dimension (Havrilla & Liao 2024, paper B).

Theorem 1 (statistical error, ``n`` samples) and Theorem 2 (approximation error, ``N`` parameters)
for a β-Hölder target on a ``d``-dimensional manifold give

* data-scaling exponent   α_D(d, β) = 2β / (2β + d)   (squared error ~ n^(−α_D)),
* model-scaling exponent  α_N(d, β) = 2β / d          (squared error ~ N^(−α_N)).

Eliminating d (β cancels) gives the ID-free relations α_D = α_N / (1 + α_N) and
α_N = α_D / (1 − α_D), which the paper's Table 1 applies to published exponents; see
:func:`table1`. Sharma & Kaplan (2022) predicted α_N ≈ 4/d instead; :func:`id_from_alpha_n_sharma_kaplan`
gives the ID that prediction implies, for comparison.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable

from ttlab.errors import TTLabInputError

__all__ = [
    "PublishedLaw",
    "PUBLISHED_LAWS",
    "Table1Row",
    "alpha_d",
    "alpha_n",
    "alpha_d_from_alpha_n",
    "alpha_n_from_alpha_d",
    "id_from_alpha_d",
    "id_from_alpha_n",
    "id_from_alpha_n_sharma_kaplan",
    "kaplan_data_need",
    "alpha_n_sharma_kaplan",
    "check_beta",
    "check_d",
    "table1",
]

SHARMA_KAPLAN_NUMERATOR = 4.0
"""Sharma & Kaplan (2022): test loss ~ N^(−4/d)."""


def _real(value: Any, name: str) -> float:
    """``value`` as a finite float, or a clear :class:`TTLabInputError`."""
    if isinstance(value, bool):
        raise TTLabInputError(f"{name} must be a number, got the boolean {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise TTLabInputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise TTLabInputError(f"{name} must be finite, got {value!r}")
    return out


def _checked(value: Any, name: str, ok: Callable[[float], bool], requirement: str) -> float:
    """``value`` as a finite float satisfying ``ok``, or a :class:`TTLabInputError` saying it must ``requirement``."""
    v = _real(value, name)
    if not ok(v):
        raise TTLabInputError(f"{name} must {requirement}, got {v}")
    return v


def check_d(d: Any) -> float:
    """An intrinsic dimension ``d > 0`` as a float, or a :class:`TTLabInputError`."""
    return _checked(d, "intrinsic dimension d", lambda v: v > 0, "be > 0")


def check_beta(beta: Any) -> float:
    """A Hölder exponent ``0 < beta <= 1`` as a float, or a :class:`TTLabInputError`."""
    return _checked(beta, "Hölder exponent beta", lambda v: 0 < v <= 1,
                    "satisfy 0 < beta <= 1 (the theory's assumption)")


def _check_alpha_n(a: Any) -> float:
    return _checked(a, "model-scaling exponent alpha_N", lambda v: v > 0, "be > 0")


def _check_alpha_d(a: Any) -> float:
    return _checked(a, "data-scaling exponent alpha_D", lambda v: 0 < v < 1,
                    "satisfy 0 < alpha_D < 1 (2β/(2β+d) < 1 for every d > 0)")


def alpha_d(d: float, beta: float = 1.0) -> float:
    """Predicted data-scaling exponent α_D = 2β / (2β + d) (Theorem 1)."""
    d, beta = check_d(d), check_beta(beta)
    return 2.0 * beta / (2.0 * beta + d)


def alpha_n(d: float, beta: float = 1.0) -> float:
    """Predicted model-scaling exponent α_N = 2β / d (Theorem 2)."""
    d, beta = check_d(d), check_beta(beta)
    return 2.0 * beta / d


def id_from_alpha_d(alpha: float, beta: float = 1.0) -> float:
    """Intrinsic dimension implied by a data exponent: d = 2β (1 − α_D) / α_D (inverse of :func:`alpha_d`)."""
    alpha, beta = _check_alpha_d(alpha), check_beta(beta)
    return 2.0 * beta * (1.0 - alpha) / alpha


def id_from_alpha_n(alpha: float, beta: float = 1.0) -> float:
    """Intrinsic dimension implied by a model exponent: d = 2β / α_N (inverse of :func:`alpha_n`)."""
    alpha, beta = _check_alpha_n(alpha), check_beta(beta)
    return 2.0 * beta / alpha


def alpha_d_from_alpha_n(alpha: float) -> float:
    """ID-free conversion α_D = α_N / (1 + α_N)."""
    alpha = _check_alpha_n(alpha)
    return alpha / (1.0 + alpha)


def alpha_n_from_alpha_d(alpha: float) -> float:
    """ID-free conversion α_N = α_D / (1 − α_D)."""
    alpha = _check_alpha_d(alpha)
    return alpha / (1.0 - alpha)


def alpha_n_sharma_kaplan(d: float) -> float:
    """Sharma & Kaplan's (2022) model-scaling prediction α_N ≈ 4 / d."""
    d = check_d(d)
    return SHARMA_KAPLAN_NUMERATOR / d


KAPLAN_DATA_COEF, KAPLAN_DATA_POWER = 5.0e3, 0.74
"""Kaplan et al. (2020), Section 4.2: the overfitting penalty stays small while D ≳ 5×10³ · N^0.74 (tokens,
non-embedding parameters)."""


def kaplan_data_need(n_params: float) -> float:
    """Training tokens Kaplan et al.'s criterion asks for a model of ``n_params`` non-embedding parameters to be
    data-rich (not limited by overfitting): D = 5×10³ · N^0.74 (e.g. 2.5×10⁷ tokens at N = 10⁵)."""
    if not (isinstance(n_params, (int, float)) and math.isfinite(n_params) and n_params > 0):
        raise TTLabInputError(f"n_params must be a positive number of parameters, got {n_params!r}.")
    return KAPLAN_DATA_COEF * float(n_params) ** KAPLAN_DATA_POWER


def id_from_alpha_n_sharma_kaplan(alpha: float) -> float:
    """Intrinsic dimension implied by α_N under Sharma & Kaplan's α_N ≈ 4/d, i.e. d = 4 / α_N."""
    alpha = _check_alpha_n(alpha)
    return SHARMA_KAPLAN_NUMERATOR / alpha


@dataclass(frozen=True)
class PublishedLaw:
    """A published pair of loss-scaling exponents: L ~ N^(−alpha_n) and L ~ D^(−alpha_d)."""

    name: str
    short_name: str
    citation: str
    alpha_n: float
    alpha_d: float
    note: str = ""


PUBLISHED_LAWS: tuple[PublishedLaw, ...] = (
    PublishedLaw(
        name="Kaplan et al. 2020 (GPT-2 family)",
        short_name="Kaplan 2020",
        citation="Kaplan et al., Scaling laws for neural language models, arXiv:2001.08361",
        alpha_n=0.076,
        alpha_d=0.095,
        note="alpha_N and alpha_D of L(N) = (N_c/N)^alpha_N and L(D) = (D_c/D)^alpha_D",
    ),
    PublishedLaw(
        name="Chinchilla, Hoffmann et al. 2022",
        short_name="Chinchilla 2022",
        citation="Hoffmann et al., Training compute-optimal large language models, arXiv:2203.15556",
        alpha_n=0.34,
        alpha_d=0.28,
        note="alpha (N) and beta (D) of L(N, D) = E + A/N^alpha + B/D^beta",
    ),
)


@dataclass(frozen=True)
class Table1Row:
    """One row of the recomputed Table 1 (β = 1 wherever an ID is implied)."""

    law: str
    short_name: str
    alpha_n_observed: float
    alpha_n_predicted_from_alpha_d: float
    alpha_d_observed: float
    alpha_d_predicted_from_alpha_n: float
    id_from_alpha_n: float
    id_from_alpha_d: float
    id_from_alpha_n_sharma_kaplan: float
    alpha_n_sharma_kaplan_from_id_of_alpha_d: float
    allocation_a: float  # N_opt ∝ C^a of an additive law with these exponents: α_D/(α_N + α_D)
    allocation_a_from_id_of_alpha_d: float  # the a paper B predicts at the ID implied by α_D: d/(2d + 2β)
    beta: float

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (JSON-ready)."""
        return asdict(self)


def table1(laws: tuple[PublishedLaw, ...] = PUBLISHED_LAWS, beta: float = 1.0) -> list[Table1Row]:
    """Recompute the paper's Table 1: ID-free predictions for published scaling laws.

    For each law: each observed exponent next to the one predicted from the other
    (α_D = α_N/(1+α_N), α_N = α_D/(1−α_D)), the ID each exponent implies under the theory at
    Hölder exponent ``beta`` (d = 2β/α_N and d = 2β(1−α_D)/α_D), and, for comparison, Sharma &
    Kaplan's (2022) implied ID d = 4/α_N and their α_N = 4/d at the ID implied by α_D. The allocation exponents:
    a = α_D/(α_N + α_D) of an additive law L = E + A/N^α_N + B/D^α_D with the observed exponents (N_opt ∝ C^a,
    :mod:`ttlab.scaling.frontier`), and the a = d/(2d + 2β) the theory predicts at the ID implied by α_D.
    """
    beta = check_beta(beta)
    rows = []
    for law in laws:
        d_from_d = id_from_alpha_d(law.alpha_d, beta)
        rows.append(
            Table1Row(
                law=law.name,
                short_name=law.short_name,
                alpha_n_observed=law.alpha_n,
                alpha_n_predicted_from_alpha_d=alpha_n_from_alpha_d(law.alpha_d),
                alpha_d_observed=law.alpha_d,
                alpha_d_predicted_from_alpha_n=alpha_d_from_alpha_n(law.alpha_n),
                id_from_alpha_n=id_from_alpha_n(law.alpha_n, beta),
                id_from_alpha_d=d_from_d,
                id_from_alpha_n_sharma_kaplan=id_from_alpha_n_sharma_kaplan(law.alpha_n),
                alpha_n_sharma_kaplan_from_id_of_alpha_d=alpha_n_sharma_kaplan(d_from_d),
                allocation_a=law.alpha_d / (law.alpha_n + law.alpha_d),
                allocation_a_from_id_of_alpha_d=d_from_d / (2 * d_from_d + 2 * beta),
                beta=beta,
            )
        )
    return rows
