"""The part registry of ``ttlab reproduce``: what a part is, the context it runs in, and claim verdicts.

See the package docstring (:mod:`ttlab.reproduce`) for how to add a part.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from ttlab.errors import TTLabInputError
from ttlab.provenance import read_json
from ttlab.reproduce.verdict_base import KINDS, VERDICTS
from ttlab.validation import check_int

__all__ = [
    "MODES",
    "QUICK_BUDGET_MINUTES",
    "STANDARD_BUDGET_MINUTES",
    "PAPERS",
    "PARTS",
    "Part",
    "PartContext",
    "PerMode",
    "ProgressHook",
    "check_claims",
    "finite",
    "part_names",
    "register_part",
]

MODES = ("quick", "standard", "full", "tiny")
"""``quick`` (the ``make demo`` default, within :data:`QUICK_BUDGET_MINUTES`), ``standard`` (within
:data:`STANDARD_BUDGET_MINUTES`: paper B judged at this machine's scale — converged data sweeps on two corpora, a
≥ 4-layer ID profile on 3 seeds, Gemma 3 270M's IDs; parts without a standard size run their quick size), ``full``
(this machine's largest sensible run) and ``tiny`` (test size: seconds per part, numbers not meaningful; used by the
test suite only). Each part states its sizes per mode in :class:`PerMode` tables."""
QUICK_BUDGET_MINUTES = 12
"""What ``--quick`` (``make demo``) may take on 2 cores; ``--help`` and docs/reproduce.md quote it (a test checks)."""
STANDARD_BUDGET_MINUTES = 60
"""What ``--standard`` may take on 2 cores; ``--help`` and docs/reproduce.md quote it (a test checks)."""

T = TypeVar("T")


@dataclass(frozen=True)
class PerMode(Generic[T]):
    """A part's value in each mode of :data:`MODES`, every one written out (a part without a standard size writes
    its quick value there): read with :meth:`PartContext.pick`, the one way a part asks its mode."""

    quick: T
    standard: T
    full: T
    tiny: T

PAPERS = {
    "A": "Paper A — next-token prediction (Huang, Liang, Yang: Non-asymptotic Convergence of Training "
    "Transformers for Next-token Prediction, NeurIPS 2024)",
    "B": "Paper B — scaling laws from the intrinsic dimension (Havrilla, Liao: Understanding Scaling Laws "
    "with Statistical and Approximation Theory for Transformer Neural Networks on Intrinsically "
    "Low-dimensional Data, NeurIPS 2024)",
}


ProgressHook = Callable[[str, "float | None", "float | None"], None]
"""``hook(description, completed, total)``: a part's sub-step progress (``total`` None = unknown)."""


@dataclass
class PartContext:
    """What a part needs to know about the run it belongs to.

    ``mode``: ``quick`` | ``standard`` | ``full`` | ``tiny`` (see :data:`MODES`); ``backend``/``ray_address``: where
    sweep-style parts send their tasks (:mod:`ttlab.sweep`); ``seed``: the base seed every part
    derives its randomness from; ``workers``: parallel processes for sweep-style parts (default:
    the machine's cores); ``progress``: optional sub-step hook (use :meth:`step`, never print).
    """

    mode: str = "quick"
    backend: str = "local"
    ray_address: str | None = None
    seed: int = 0
    workers: int | None = None
    progress: ProgressHook | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        """The one check of a run's settings (the CLI builds this object from its flags; the library takes it)."""
        from ttlab.sweep import check_backend

        if self.mode not in MODES:
            raise TTLabInputError(f"unknown reproduction mode {self.mode!r}; choose one of {', '.join(MODES)}",
                                  params=("mode",))
        check_backend(self.backend)
        check_int(self.seed, "seed", 0)
        if self.workers is not None:
            check_int(self.workers, "workers", 1)
        if self.ray_address is not None and self.backend != "ray":
            raise TTLabInputError(f"ray_address is given but backend is {self.backend!r}: a Ray address needs backend "
                                  "'ray'", params=("ray_address", "backend"))

    @property
    def n_workers(self) -> int:
        """``workers``, defaulting to the number of CPU cores."""
        return self.workers or max(1, os.cpu_count() or 1)

    def pick(self, values: PerMode[T]) -> T:
        """The value of ``values`` for this run's mode."""
        return getattr(values, self.mode)

    def step(self, description: str, completed: float | None = None, total: float | None = None) -> None:
        """Report a sub-step (shown as a progress bar by the CLI; a no-op without a hook)."""
        if self.progress is not None:
            self.progress(description, completed, total)


PartFn = Callable[[Path, PartContext], dict]
RenderFn = Callable[[dict], list]
ClaimsFn = Callable[[dict], list]
EstimateFn = Callable[[PartContext, "Path | None"], float]


@dataclass(frozen=True)
class Part:
    """A registered part: the function that runs it and what the report needs to know about it.

    ``claims(result) -> list[claim record]`` judges the paper's claims from the numbers in the part's
    result (:func:`ttlab.reproduce.verdicts.make_claim`); it runs when the part ends and again every time
    the report is written, so cached results are judged by the current rules.
    ``estimate`` is (quick seconds, full seconds) on 2 cores, ``estimate_standard`` the standard mode's (None:
    the quick estimate, as the part then runs its quick size); ``estimate_fn(ctx, out_dir)``, when
    given, replaces it with a live estimate (it must be cheap: a few seconds at most; ``out_dir`` may
    be None, else it can discount work already cached there). ``version``: bump it
    when the part's output changes so that cached results of older code are not reused.
    """

    name: str
    fn: PartFn
    paper: str
    title: str
    render: RenderFn
    claims: ClaimsFn | None = None
    estimate: tuple[float, float] = (60.0, 600.0)
    estimate_fn: EstimateFn | None = None
    version: int = 1
    order: int = 0
    estimate_standard: float | None = None

    def estimated_seconds(self, ctx: PartContext, out_dir: Path | None = None) -> float:
        """Estimated wall time of this part in ``ctx``'s mode (live estimate when the part has one)."""
        if self.estimate_fn is not None:
            try:
                return float(self.estimate_fn(ctx, out_dir))
            except Exception:  # noqa: BLE001 - an estimate must never stop a run
                pass
        return float(ctx.pick(self.static_estimates))

    @property
    def static_estimates(self) -> PerMode[float]:
        """The registered estimates by mode (standard: ``estimate_standard``, else the quick one; tiny: the quick)."""
        quick, full = self.estimate
        standard = quick if self.estimate_standard is None else self.estimate_standard
        return PerMode(quick=quick, standard=standard, full=full, tiny=quick)


PARTS: dict[str, Part] = {}
"""Every registered part by name (registration order); :func:`part_names` gives the report order."""


def register_part(
    name: str,
    *,
    paper: str,
    title: str,
    render: RenderFn,
    claims: ClaimsFn | None = None,
    estimate: tuple[float, float] = (60.0, 600.0),
    estimate_fn: EstimateFn | None = None,
    version: int = 1,
    estimate_standard: float | None = None,
) -> Callable[[PartFn], PartFn]:
    """Decorator: register ``fn(out: Path, ctx: PartContext) -> dict`` as part ``name``.

    ``render(result) -> list[Block]`` turns the returned dict into the part's report section
    (blocks from :mod:`ttlab.reproduce.report_blocks`); ``claims(result) -> list[claim record]`` judges the
    paper's claims from that dict (see :class:`Part`). Re-registering a name replaces the part.
    """
    if not name or not name.replace("_", "").isalnum():
        raise ValueError(f"part names are identifiers like 'lm_data_scaling', got {name!r}")
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, got {paper!r}")

    def deco(fn: PartFn) -> PartFn:
        order = PARTS[name].order if name in PARTS else len(PARTS)
        PARTS[name] = Part(name=name, fn=fn, paper=paper, title=title, render=render, claims=claims, estimate=estimate,
                           estimate_fn=estimate_fn, version=version, order=order,
                           estimate_standard=estimate_standard)
        return fn

    return deco


def part_names() -> list[str]:
    """Registered part names in report order: paper A, then paper B, each in registration order."""
    return [p.name for p in sorted(PARTS.values(), key=lambda p: (p.paper, p.order))]


# ---------------------------------------------------------------------------------------------
# claims


_CLAIM_KEYS = {"id", "statement", "kind", "verdict", "rule", "rule_id", "measured", "thresholds", "reason", "summary"}


def check_claims(result: Any) -> None:
    """Raise ``ValueError`` unless ``result`` is a dict whose ``claims`` are well-formed claim records."""
    if not isinstance(result, dict):
        raise ValueError(f"a part must return a dict, got {type(result).__name__}")
    claims = result.get("claims", [])
    if not isinstance(claims, list):
        raise ValueError("'claims' must be a list of claim records (ttlab.reproduce.verdicts.make_claim)")
    for c in claims:
        if not isinstance(c, dict) or not _CLAIM_KEYS <= set(c):
            missing = sorted(_CLAIM_KEYS - set(c)) if isinstance(c, dict) else sorted(_CLAIM_KEYS)
            raise ValueError(f"a claim record lacks {', '.join(missing)}: {c!r}")
        if c["kind"] not in KINDS:
            raise ValueError(f"claim {c['id']}: kind must be one of {KINDS}, got {c['kind']!r}")
        if c["verdict"] not in VERDICTS:
            raise ValueError(f"claim verdict must be one of {VERDICTS}, got {c['verdict']!r}")
        if not isinstance(c["measured"], dict) or not isinstance(c["thresholds"], dict):
            raise ValueError(f"claim {c['id']}: measured and thresholds must be dicts of named numbers")


def finite(*values: Any) -> bool:
    """True when every value is a finite real number."""
    try:
        return all(v is not None and math.isfinite(float(v)) for v in values)
    except (TypeError, ValueError):
        return False


def load_part_record(out_dir: str | Path, name: str) -> dict | None:
    """The stored record ``DIR/parts/<name>.json`` (None when missing or unreadable)."""
    try:
        rec = read_json(Path(out_dir) / "parts" / f"{name}.json")
    except (OSError, ValueError):  # damaged records: ttlab.reproduce.part_record_problem says why
        return None
    return rec if isinstance(rec, dict) else None
