"""Seeded samples of standard manifolds of known intrinsic dimension, rotated into R^D.

Each sampler draws ``n`` points of a ``d``-dimensional manifold in its natural space R^m,
maps them into R^D (``ambient``) with a random matrix with orthonormal columns (an isometry),
and adds isotropic Gaussian noise of standard deviation ``noise`` in R^D.

=============  ===  ==============================================================================
name           m    manifold
=============  ===  ==============================================================================
sphere         d+1  unit d-sphere S^d, uniform
cube           d    unit cube [0, 1]^d, uniform
linear         d    standard Gaussian on a d-dimensional linear subspace
swiss-roll     3    the Swiss roll (d = 2): (t cos t, 21 v, t sin t), t = 1.5 pi (1 + 2u)
nonlinear      2d   graph of a smooth coupled map over [0,1]^d:
                    (t, sin(pi (t_j + t_{j+1})) cos(pi t_{j+2}))_j, indices mod d
=============  ===  ==============================================================================
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.validation import check_int


def _sphere(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    z = rng.standard_normal((n, d + 1))
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def _cube(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    return rng.random((n, d))


def _linear(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    return rng.standard_normal((n, d))


def _swiss_roll(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    t = 1.5 * np.pi * (1 + 2 * rng.random(n))
    v = 21.0 * rng.random(n)
    return np.column_stack([t * np.cos(t), v, t * np.sin(t)])


def _nonlinear(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    t = rng.random((n, d))
    j = np.arange(d)
    extra = np.sin(np.pi * (t[:, j] + t[:, (j + 1) % d])) * np.cos(np.pi * t[:, (j + 2) % d])
    return np.hstack([t, extra])


# name -> (sampler, natural dimension m(d), fixed intrinsic dimension or None)
MANIFOLDS: dict[str, tuple[Callable[[np.random.Generator, int, int], np.ndarray], Callable[[int], int], int | None]] = {
    "sphere": (_sphere, lambda d: d + 1, None),
    "cube": (_cube, lambda d: d, None),
    "linear": (_linear, lambda d: d, None),
    "swiss-roll": (_swiss_roll, lambda d: 3, 2),
    "nonlinear": (_nonlinear, lambda d: 2 * d, None),
}


def random_isometry(rng: np.random.Generator, m: int, ambient: int) -> np.ndarray:
    """An (ambient, m) matrix with orthonormal columns (Haar-distributed)."""
    q, r = np.linalg.qr(rng.standard_normal((ambient, m)))
    return q * np.sign(np.diag(r))


def sample_manifold(
    name: str,
    d: int,
    ambient: int,
    n: int,
    *,
    noise: float = 0.0,
    seed: int = 0,
    dtype: type = np.float64,
) -> np.ndarray:
    """``n`` points of manifold ``name`` with intrinsic dimension ``d`` in R^``ambient`` (seeded).

    Raises ``TTLabInputError`` for an unknown name, ``ambient`` smaller than the manifold's
    natural dimension, or a Swiss roll with ``d != 2``.
    """
    if name not in MANIFOLDS:
        raise TTLabInputError(f"unknown manifold {name!r}; choose one of {', '.join(MANIFOLDS)}.")
    sampler, natural, fixed = MANIFOLDS[name]
    d = check_int(d, "d", 1)
    n = check_int(n, "n", 1)
    ambient = check_int(ambient, "ambient", 1)
    seed = check_int(seed, "seed", 0)
    if fixed is not None and d != fixed:
        raise TTLabInputError(f"manifold {name!r} has intrinsic dimension {fixed}; got d={d}.")
    m = natural(d)
    if ambient < m:
        raise TTLabInputError(
            f"manifold {name!r} with d={d} lives in R^{m}; ambient dimension {ambient} is too small (need >= {m})."
        )
    if not (np.isfinite(noise) and noise >= 0):
        raise TTLabInputError(f"noise must be a finite number >= 0, got {noise!r}.")
    rng = np.random.default_rng(seed)
    Y = sampler(rng, n, d)
    X = Y @ random_isometry(rng, m, ambient).T
    if noise > 0:
        X += noise * rng.standard_normal(X.shape)
    return X.astype(dtype, copy=False)


def true_dimension(name: str, d: int) -> int:
    """Intrinsic dimension of manifold ``name`` for parameter ``d``."""
    if name not in MANIFOLDS:
        raise TTLabInputError(f"unknown manifold {name!r}; choose one of {', '.join(MANIFOLDS)}.")
    fixed = MANIFOLDS[name][2]
    return fixed if fixed is not None else d
