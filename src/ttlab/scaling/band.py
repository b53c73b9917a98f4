"""Exponent predictions as bands over intrinsic-dimension estimators.

Havrilla & Liao predict α_D = 2β/(2β + d) and α_N = 2β/d from one estimate of d (Levina–Bickel
MLE, K = 20, arithmetic mean of pointwise estimates). Estimator and combination rule move d̂ by
more than the paper's ±0.02 agreement allows, so :func:`prediction_band` reports the central
prediction from the paper's estimator together with the min–max range over a documented set of
estimators of the *manifold* dimension (:data:`BAND_ESTIMATORS`: MLE with the mean, harmonic and
median rules, TwoNN, GRIDE, TLE, MOM, MADA, MiND_ML, CorrInt, DANCo, ESS — the names of
``ttlab id compare``). PCA-based dimensions (``lpca``, ``lpca_pr``) measure the linear span, not the
manifold, and are left out unless listed explicitly; so are ``twonn_bayes`` (TwoNN's likelihood again: it adds an
interval, not another estimate) and ``bid`` (a second, count-based reading of the K = 20 neighbourhood, with a ratio
parameter; docs/intrinsic_dim.md, "Not in the prediction band").
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ttlab.errors import TTLabInputError
from ttlab.provenance import read_json
from ttlab.scaling.theory import alpha_d, alpha_n, check_beta, check_d
from ttlab.validation import parse_named_values

BAND_ESTIMATORS: tuple[str, ...] = (
    "mle", "mle_harmonic", "mle_median", "twonn", "gride", "tle", "mom", "mada", "mind_ml", "corrint", "danco", "ess",
)
"""Estimators whose spread forms the band (names as in ``ttlab id compare``)."""

PAPER_ESTIMATOR = "mle"
"""The paper's estimator: MLE, K = 20, arithmetic mean (``mle_mean`` is accepted as an alias)."""

_ALIASES = {"mle_mean": "mle"}


def _name(n: str) -> str:
    n = str(n).strip().lower()
    return _ALIASES.get(n, n)


@dataclass
class PredictionBand:
    """Central prediction (paper's estimator) and the min–max range over the estimator set."""

    beta: float
    central_estimator: str
    central: dict[str, float]
    lo: dict[str, float]
    hi: dict[str, float]
    estimators: dict[str, dict[str, float]]
    estimator_set: list[str]
    not_in_band: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary."""
        return asdict(self)

    def for_exponent(self, kind: str) -> dict[str, Any]:
        """The band of one exponent (``'alpha_d'`` or ``'alpha_n'``), flattened:
        ``{central, lo, hi, estimators: {name: {id, alpha}}, central_estimator, kind, beta, id_lo, id_hi}``."""
        if kind not in ("alpha_d", "alpha_n"):
            raise TTLabInputError(f"kind must be 'alpha_d' or 'alpha_n', got {kind!r}.")
        return {
            "central": self.central[kind], "lo": self.lo[kind], "hi": self.hi[kind],
            "estimators": {k: {"id": v["id"], "alpha": v[kind]} for k, v in self.estimators.items()},
            "central_estimator": self.central_estimator, "kind": kind, "beta": self.beta,
            "id_central": self.central["id"], "id_lo": self.hi["id"], "id_hi": self.lo["id"],
        }


def prediction_band(
    ids: Mapping[str, float],
    beta: float = 1.0,
    central: str = "mle_mean",
    estimators: Iterable[str] | None = None,
) -> PredictionBand:
    """Predicted α_D, α_N from the ``central`` estimator's ID, and their min–max over ``estimators``
    (default :data:`BAND_ESTIMATORS`) among the given ``ids`` (``{name: d̂}``, e.g. from
    ``ttlab id compare``). ``lo`` holds the smallest exponents (from the largest ID), ``hi`` the
    largest. Names given but outside the set are listed in ``not_in_band``; missing ones are skipped."""
    beta = check_beta(beta)
    if not isinstance(ids, Mapping) or not ids:
        raise TTLabInputError("ids must be a non-empty mapping {estimator: intrinsic dimension}.")
    clean: dict[str, float] = {}
    for k, v in ids.items():
        name = _name(k)
        if v is None:
            continue
        if isinstance(v, float) and math.isnan(v):
            continue
        try:
            clean[name] = check_d(v)
        except TTLabInputError as exc:
            raise TTLabInputError(
                f"estimator {name!r}: {str(exc).rstrip('.')}. Leave {name!r} out (or re-run it on data where it is defined) "
                "to predict from the other estimators."
            ) from None
    wanted = [_name(e) for e in (BAND_ESTIMATORS if estimators is None else estimators)]
    c = _name(central)
    if c not in clean:
        raise TTLabInputError(
            f"the central estimator {central!r} has no ID among the given ones ({', '.join(sorted(clean)) or 'none'})."
        )
    if c not in wanted:
        wanted.append(c)
    used = [e for e in wanted if e in clean]
    per = {e: {"id": clean[e], "alpha_d": alpha_d(clean[e], beta), "alpha_n": alpha_n(clean[e], beta)} for e in used}
    dmin, dmax = min(clean[e] for e in used), max(clean[e] for e in used)
    return PredictionBand(
        beta=beta,
        central_estimator=c,
        central=per[c],
        lo={"id": dmax, "alpha_d": alpha_d(dmax, beta), "alpha_n": alpha_n(dmax, beta)},
        hi={"id": dmin, "alpha_d": alpha_d(dmin, beta), "alpha_n": alpha_n(dmin, beta)},
        estimators=per,
        estimator_set=used,
        not_in_band=sorted(set(clean) - set(used)),
    )


def parse_ids(text: str) -> dict[str, float]:
    """``"mle=15.6,twonn=14.2"`` → ``{"mle": 15.6, "twonn": 14.2}`` (estimator names made canonical), or a clear
    error."""
    return parse_named_values(text, "ids", example="mle=15.6,twonn=14.2", key=_name, what="estimator")


def ids_from_compare_json(path: str | Path) -> tuple[dict[str, float], float | None]:
    """The ``{method: d̂}`` of a ``ttlab id compare --json/--out`` file, and the β it used."""
    p = Path(path)
    try:
        data = read_json(p)
    except FileNotFoundError:
        raise TTLabInputError(f"{p} does not exist.") from None
    except (OSError, ValueError) as exc:
        raise TTLabInputError(f"{p} is not a readable JSON file: {exc}") from None
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise TTLabInputError(f"{p} is not the output of `ttlab id compare` (no 'rows' list).")
    ids: dict[str, float] = {}
    for i, r in enumerate(rows):
        if not (isinstance(r, dict) and "method" in r and r.get("dimension") is not None):
            continue
        name, value = str(r["method"]), r["dimension"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TTLabInputError(
                f"{p}: rows[{i}] ({name!r}) has dimension {value!r}, not a number; "
                "re-create the file with `ttlab id compare --out`."
            )
        if _name(name) in ids:
            raise TTLabInputError(f"{p}: estimator {name!r} appears twice in 'rows'.")
        ids[_name(name)] = float(value)
    if not ids:
        raise TTLabInputError(f"{p} has no estimator with a number.")
    return ids, data.get("beta")
