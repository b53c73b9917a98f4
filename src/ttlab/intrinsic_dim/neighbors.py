"""The result of a k-nearest-neighbour search (:func:`ttlab.intrinsic_dim.knn.kneighbors`), which every estimator
built on neighbours takes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Neighbors:
    """k nearest neighbours of every point (self excluded), sorted by distance.

    ``distances`` (n, k) float64 and ``indices`` (n, k) int64. ``n_fallback`` counts the rows
    whose float32 selection could not be certified and were recomputed in float64.
    """

    distances: np.ndarray
    indices: np.ndarray
    backend: str
    exact: bool = True
    n_fallback: int = 0
