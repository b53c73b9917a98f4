"""MLE variants of scikit-dimension (and R's intrinsicDimension): a noise model and the global estimate.

- Noise (Haro et al. 2008's approximation, scikit-dimension's ``dnoise='dnoiseGaussH'``): each
  distance ``R_j`` is observed with Gaussian noise of scale ``sigma``; the log-ratio ``log(R_K / R_j)``
  of the Levina–Bickel estimate is replaced by its expectation under the noise density,
  ``∫ φ_σ(R_j − x) log(R_K / x) dx / ∫ φ_σ(R_j − x) dx`` over ``[0, R_K + 100 σ]``. The integrals are
  computed with ``scipy.integrate.quad`` at scikit-dimension's tolerances (``epsrel = epsabs = 1e-2``)
  so the numbers are the same; quad's actual error is far below them on this smooth integrand.
- Global (``neighborhood_based=False``): one estimate from the ``k`` smallest *distinct* distances among
  all points' ``global_k`` nearest neighbours, ``(k − 1) / Σ log(R_k / R_j)``.
"""

from __future__ import annotations

import math

import numpy as np

DNOISE = ("dnoiseGaussH",)
"""Noise models by scikit-dimension's name: Gaussian transition density (Haro et al. 2008)."""


def mle_from_radii(radii: np.ndarray, unbiased: bool = False, sigma: float = 0.0, dnoise: str | None = None) -> float:
    """Levina–Bickel estimate from sorted radii ``R_1 <= ... <= R_K`` (``K − 1``, or ``K − 2`` if
    ``unbiased``, over the summed log-ratios), with the noise correction when ``dnoise`` is given."""
    Rs = np.asarray(radii, dtype=np.float64)
    k = len(Rs)
    kfac = k - 2 if unbiased else k - 1
    Rk = float(np.max(Rs))
    if dnoise is None:
        with np.errstate(divide="ignore"):
            return float(kfac / np.sum(np.log(Rk / Rs)))
    from scipy.integrate import quad

    upper = Rk + 100 * sigma
    exp, log = math.exp, math.log
    norm, inv = 1.0 / (sigma * math.sqrt(2 * math.pi)), 1.0 / sigma
    ratio = 0.0
    for j in range(k - 1):
        Rj = float(Rs[j])

        def density(x: float) -> float:
            z = (Rj - x) * inv
            return exp(-0.5 * z * z) * norm

        num = quad(lambda x: density(x) * log(Rk / x), 0, upper, epsrel=1e-2, epsabs=1e-2)[0]
        den = quad(density, 0, upper, epsrel=1e-2, epsabs=1e-2)[0]
        ratio += num / den
    return float(kfac / ratio)


def mle_pointwise_noisy(dist: np.ndarray, sigma: float, unbiased: bool = False) -> np.ndarray:
    """Pointwise estimates with Haro's Gaussian noise correction, one row of sorted distances per point."""
    return np.array([mle_from_radii(row, unbiased, sigma, "dnoiseGaussH") for row in dist])


def global_radii(dist: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` smallest distinct values among all neighbour distances (scikit-dimension's global MLE)."""
    return np.unique(dist)[:k]
