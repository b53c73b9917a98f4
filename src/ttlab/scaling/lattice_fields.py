"""Genuinely d-dimensional regression targets for the model-size test of paper B: lattice value-noise fields.

A sum of a few ridge functions cos(⟨ω, u⟩ + φ) is not a d-dimensional target: a ReLU network approximates each
ridge at the one-dimensional rate whatever d. The targets here are random functions of all d coordinates at once,
built on the cubic lattice of R^m that contains the sphere S^d ⊂ R^m (m = d + 1):

    V_ℓ(u) = Σ_{z ∈ Z^m} v(z) Π_i φ(u_i/ℓ + s_i − z_i),     φ(t) = 1 − fade(|t|) on [−1, 1], 0 outside,

the C² interpolation ("value noise") of independent uniform values v(z) ∈ [−1, 1] at the lattice points, with
Perlin's quintic fade(t) = 6t⁵ − 15t⁴ + 10t³ and a random shift s. Each point is touched by the 2^m corners of its
lattice cell, so a field costs 2^m look-ups per point and level — labels are cheap enough to draw fresh at every
training step. The lattice values come from a seeded table of ``TABLE_SIZE`` uniforms indexed by a hash of (level,
z) (the permutation-table idea of Perlin noise).

* ``kind="smooth"``: one level at spacing ℓ, a C² field with bounded second derivatives at scale ℓ. A
  piecewise-linear approximant with N pieces reaches squared error ∝ N^(−4/d) on it (the rate ReLU networks reach
  on smooth targets: 2β/d with the effective β = 2 of a piecewise-linear model); ℓ sets the difficulty.
* ``kind="holder"``: ``levels`` levels, level k at spacing ℓ·2^(−k) with amplitude 2^(−kβ) (0 < β ≤ 1): a
  multi-scale field whose Hölder exponent is β at every scale from ℓ down to ℓ·2^(−levels+1) and in every
  direction, so that squared error ∝ N^(−2β/d) is the sharp rate, not merely a bound.

Both are centred and scaled to unit variance on the sphere (``center``, ``scale`` from ``REFERENCE_POINTS``
seeded points). :class:`SphereProblem` puts a field on S^d embedded isometrically in R^D (x = √D·Qu with Q
orthonormal columns: every ambient coordinate has unit mean square) and draws seeded samples.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim import random_isometry
from ttlab.validation import check_choice, check_float, check_int

__all__ = ["FIELD_KINDS", "REFERENCE_POINTS", "TABLE_SIZE", "LatticeField", "SphereProblem", "fade", "make_field",
           "make_sphere_problem"]

FIELD_KINDS = ("smooth", "holder")
TABLE_SIZE = 1_048_573
"""Lattice values per field (a prime): hashed look-ups keep memory fixed however fine the finest level is."""
REFERENCE_POINTS = 20_000
"""Seeded sphere points that centre and scale a field to unit variance."""
_HASH_LEVEL = 2_654_435_761
_STREAM_FIELD, _STREAM_REF, _STREAM_ISO = 21, 22, 23


def fade(t: torch.Tensor) -> torch.Tensor:
    """Perlin's quintic fade 6t⁵ − 15t⁴ + 10t³: 0 → 1 on [0, 1] with zero first and second derivatives at both ends."""
    return t * t * t * (t * (6.0 * t - 15.0) + 10.0)


@dataclass(frozen=True, eq=False)
class LatticeField:
    """A value-noise field on R^m (see the module docstring); call it on natural coordinates ``u`` (n, m)."""

    kind: str
    m: int
    spacing: float
    levels: int
    beta: float
    seed: int
    center: float = 0.0
    scale: float = 1.0
    table: torch.Tensor = field(repr=False, default_factory=lambda: torch.zeros(1))
    primes: torch.Tensor = field(repr=False, default_factory=lambda: torch.zeros(1, dtype=torch.long))
    shifts: torch.Tensor = field(repr=False, default_factory=lambda: torch.zeros(1))
    corners: torch.Tensor = field(repr=False, default_factory=lambda: torch.zeros(1, dtype=torch.long))

    def amplitudes(self) -> list[float]:
        """Amplitude of each level: 1 for the smooth field; 2^(−kβ) for level k of the Hölder field."""
        return [2.0 ** (-k * self.beta) for k in range(self.levels)]

    def raw(self, u: torch.Tensor) -> torch.Tensor:
        """The field before centring and scaling, in ``u``'s dtype; differentiable in ``u``."""
        offsets = (self.corners * self.primes).sum(dim=-1)  # hash offset of each of the 2^m cell corners
        out = torch.zeros(u.shape[0], dtype=u.dtype)
        for k, amp in enumerate(self.amplitudes()):
            y = u / (self.spacing * 2.0 ** (-k)) + self.shifts[k].to(u.dtype)
            z0 = torch.floor(y.detach())
            w1 = fade(y - z0)
            w = torch.ones(u.shape[0], 1, dtype=u.dtype)
            for i in range(self.m):  # corner weights Π_i (w1_i or 1 − w1_i), corners in itertools.product order
                w = (w[:, :, None] * torch.stack((1.0 - w1[:, i], w1[:, i]), dim=1)[:, None, :]).reshape(u.shape[0], -1)
            base = (z0.long() * self.primes).sum(dim=-1) + k * _HASH_LEVEL
            idx = torch.remainder(base[:, None] + offsets[None, :], TABLE_SIZE)
            out = out + amp * (w * self.table[idx].to(u.dtype)).sum(dim=-1)
        return out

    def __call__(self, u: torch.Tensor) -> torch.Tensor:
        """The centred, unit-variance field at ``u`` (n, m)."""
        return (self.raw(u) - self.center) / self.scale

    def describe(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {"kind": self.kind, "m": self.m, "spacing": self.spacing, "levels": self.levels,
                "beta": self.beta if self.kind == "holder" else None, "seed": self.seed, "center": self.center,
                "scale": self.scale, "table_size": TABLE_SIZE}


def _sphere_points(gen: torch.Generator, n: int, m: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """``n`` uniform points of the unit sphere S^(m−1) ⊂ R^m."""
    g = torch.randn(n, m, generator=gen, dtype=torch.float64)
    return (g / g.norm(dim=1, keepdim=True)).to(dtype)


def make_field(kind: str, d: int, *, spacing: float, levels: int = 1, beta: float = 1.0, seed: int = 0) -> LatticeField:
    """The ``kind`` field for S^d (on R^(d+1)), centred and scaled to unit variance on the sphere (deterministic).

    ``spacing``: the coarsest lattice spacing ℓ (the sphere has radius 1); ``levels`` and ``beta`` apply to
    ``kind="holder"`` (the smooth field has one level).
    """
    check_choice(kind, "target kind", FIELD_KINDS)
    d = check_int(d, "intrinsic dimension d", 1)
    spacing = check_float(spacing, "lattice spacing", 0.0, lo_open=True)
    levels = check_int(levels, "levels", 1)
    beta = check_float(beta, "Hölder exponent beta", 0.0, 1.0, lo_open=True)
    seed = check_int(seed, "seed", 0)
    if kind == "smooth":
        levels = 1
    m = d + 1
    rng = np.random.default_rng([seed, _STREAM_FIELD, d])
    table = torch.from_numpy(rng.uniform(-1.0, 1.0, TABLE_SIZE))
    primes = torch.from_numpy(rng.integers(1 << 20, 1 << 30, m)).long()
    shifts = torch.from_numpy(rng.uniform(0.0, 1.0, (levels, m)))
    corners = torch.tensor(list(itertools.product((0, 1), repeat=m)), dtype=torch.long)
    base = LatticeField(kind, m, float(spacing), levels, float(beta), seed, 0.0, 1.0, table, primes, shifts, corners)
    gen = torch.Generator().manual_seed(int(np.random.default_rng([seed, _STREAM_REF, d]).integers(1 << 62)))
    vals = base.raw(_sphere_points(gen, REFERENCE_POINTS, m, torch.float64))
    sd = float(vals.std())
    if not sd > 0:
        raise TTLabInputError(f"the {kind} field is constant on the sphere; use a smaller spacing", params=("spacing",))
    return LatticeField(kind, m, float(spacing), levels, float(beta), seed, float(vals.mean()), sd, table, primes,
                        shifts, corners)


@dataclass(frozen=True, eq=False)
class SphereProblem:
    """A field on S^d embedded isometrically in R^D (x = √D·Qu); :meth:`sample` draws (x, f(u))."""

    field: LatticeField
    d: int
    ambient: int
    isometry: torch.Tensor  # (D, d + 1) orthonormal columns, float32

    def embed(self, u: torch.Tensor) -> torch.Tensor:
        """Natural coordinates (n, d + 1) → R^D, float32."""
        return math.sqrt(self.ambient) * (u.float() @ self.isometry.T)

    def sample(self, gen: torch.Generator, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``n`` fresh points: inputs x (n, D), natural coordinates u (n, d + 1) and clean labels f(u), float32."""
        u = _sphere_points(gen, n, self.d + 1)
        return self.embed(u), u, self.field(u).float()

    def describe(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {"manifold": "sphere", "d": self.d, "ambient": self.ambient, "field": self.field.describe()}


def make_sphere_problem(fld: LatticeField, ambient: int, seed: int = 0) -> SphereProblem:
    """``fld`` on S^d embedded in R^``ambient`` by a seeded isometry (needs ``ambient`` ≥ d + 1)."""
    ambient = check_int(ambient, "ambient dimension D", 1)
    d = fld.m - 1
    if ambient < fld.m:
        raise TTLabInputError(f"the sphere S^{d} lives in R^{fld.m}; ambient dimension D={ambient} is too small "
                              f"(need D >= {fld.m})", params=("ambient",))
    iso = random_isometry(np.random.default_rng([seed, _STREAM_ISO, d, ambient]), fld.m, ambient)
    return SphereProblem(fld, d, ambient, torch.from_numpy(np.asarray(iso, dtype=np.float32)))
