"""scikit-dimension's API, computed by ttlab: the adapter that runs scikit-dimension's installed tests.

Each class takes scikit-dimension's constructor and ``fit`` arguments, translates them to the ttlab
estimator with the same meaning, and exposes the result under scikit-dimension's attribute names
(``dimension_``, ``dimension_pw_``, ...). Nothing is computed here: every number comes from ttlab.
Where ttlab deliberately differs, or lacks the feature, the shim raises :class:`Documented` with a key
of :data:`DIFFERENCES`; each key is explained in docs/scikit_dimension.md ("Conformance").
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

import ttlab.intrinsic_dim as tid
import ttlab.intrinsic_dim.skdim as dropin
from ttlab.intrinsic_dim.pointwise import smooth_pointwise
from ttlab.intrinsic_dim.single_set import danco_statistics, ess_single_neighbourhood

DIFFERENCES = {
    "duplicates-dropped": "ttlab drops duplicate rows before estimating, so pointwise outputs have one value per "
                          "distinct point (scikit-dimension's have one per row, and degenerate on the copies).",
}
"""Why a scikit-dimension test statement cannot run on ttlab, by key."""

PRECOMPUTED = ("the shims take points, not precomputed neighbour arrays or distance matrices; the drop-in "
               "ttlab.intrinsic_dim.skdim takes the local estimators' precomputed neighbours (no shipped test of the "
               "three modules run here needs them)")

MISSING: dict[str, str] = {}
"""scikit-dimension features ttlab does not have (yet), by key: none since DANCoFit, lPCA on a spectrum and TwoNN on
neighbour distances came with the drop-in (the shims below hand those cases to it)."""


class Documented(Exception):
    """A scikit-dimension test statement hits a documented difference (``key`` in DIFFERENCES or MISSING)."""

    def __init__(self, key: str) -> None:
        if key not in DIFFERENCES and key not in MISSING:
            raise KeyError(f"undocumented difference {key!r}")
        super().__init__(key)
        self.key = key


_COMB = {"mle": "harmonic", "mean": "mean", "median": "median"}


class _Shim:
    """Copies a fitted ttlab estimator's results under scikit-dimension's names."""

    def _take(self, est: Any) -> "_Shim":
        self.est_ = est
        self.dimension_ = est.dimension_
        for key, value in vars(est).items():
            if key.endswith("_") and not key.startswith("_") and key not in ("pointwise_dimension_",):
                setattr(self, key, value)
        return self

    @property
    def dimension_pw_(self) -> np.ndarray:
        if self.est_.n_duplicates_removed_:
            raise Documented("duplicates-dropped")
        if self.est_.pointwise_dimension_ is None:
            raise AttributeError(f"{type(self.est_).__name__} has no pointwise estimates")
        return self.est_.pointwise_dimension_

    def _smooth(self, X: Any, est: Any, smooth: bool) -> "_Shim":
        if smooth:
            idx = tid.kneighbors(np.asarray(X, dtype=np.float64), int(est.k)).indices
            self.dimension_pw_smooth_ = smooth_pointwise(self.dimension_pw_, idx)
        return self

    def transform(self, X: Any = None) -> float:
        return self.dimension_

    def fit_transform(self, X: Any, y: Any = None, **kw: Any) -> float:
        return self.fit(X, **kw).dimension_


class MLE(_Shim):
    def __init__(self, dnoise=None, sigma=0, n=None, integral_approximation="Haro", unbiased=False,
                 neighborhood_based=True, K=5):
        self.dnoise, self.sigma, self.n = dnoise, sigma, n
        self.integral_approximation, self.unbiased = integral_approximation, unbiased
        self.neighborhood_based, self.K = neighborhood_based, K

    def fit(self, X, y=None, precomputed_knn_arrays=None, smooth=False, n_neighbors=None, comb="mle", n_jobs=1):
        if precomputed_knn_arrays is not None:
            raise NotImplementedError(PRECOMPUTED)
        opts: dict[str, Any] = dict(k=20 if n_neighbors is None else n_neighbors, average=_COMB[comb],
                                    unbiased=self.unbiased)
        if self.dnoise is not None:
            opts.update(dnoise=self.dnoise, sigma=self.sigma)
        if not self.neighborhood_based:
            opts.update(neighborhood_based=False, global_k=self.K)
        return self._take(tid.MLE(**opts).fit(X))


class TwoNN(_Shim):
    def __init__(self, discard_fraction=0.1, dist=False, method="linear"):
        self.discard_fraction, self.dist, self.method = discard_fraction, dist, method

    def to_ttlab(self) -> tid.TwoNN:
        return tid.TwoNN(discard_fraction=self.discard_fraction, method=self.method)

    def fit(self, X, y=None):
        if self.dist:  # X holds each row's (r1, r2): the drop-in's TwoNN reads them
            self.dimension_ = dropin.TwoNN(self.discard_fraction, dist=True, method=self.method).fit(X).dimension_
            return self
        return self._take(self.to_ttlab().fit(X))


class GRIDE(_Shim):
    def __init__(self, n1=1, n2=None, multiscale=False, range_max=64):
        self.n1, self.n2, self.multiscale, self.range_max = n1, n2, multiscale, range_max

    def to_ttlab(self) -> tid.GRIDE:
        return tid.GRIDE(n1=self.n1, n2=self.n2, multiscale=self.multiscale, range_max=self.range_max)

    def fit(self, X, y=None):
        return self._take(self.to_ttlab().fit(X))


class lPCA(_Shim):
    def __init__(self, ver="FO", alphaRatio=0.05, alphaFO=0.05, alphaFan=10, betaFan=0.8, PFan=0.95, verbose=True,
                 center=True, fit_explained_variance=False, *, n_samples=None, noise_var=None, alphaKN=0.05,
                 n_permutations=100, quantile=0.95, null="permute", random_state=None):
        self.ver, self.fit_explained_variance = ver, fit_explained_variance
        self.spectrum_opts = dict(alphaRatio=alphaRatio, alphaFO=alphaFO, alphaFan=alphaFan, betaFan=betaFan,
                                  PFan=PFan, verbose=verbose, center=center, n_samples=n_samples, noise_var=noise_var,
                                  alphaKN=alphaKN, n_permutations=n_permutations, quantile=quantile, null=null,
                                  random_state=random_state)
        self.opts = dict(alpha_ratio=alphaRatio, alpha_fo=alphaFO, alpha_fan=alphaFan, beta_fan=betaFan, p_fan=PFan,
                         center=center, noise_var=noise_var, alpha_kn=alphaKN, n_permutations=n_permutations,
                         quantile=quantile, null=null, random_state=random_state or 0)

    def fit(self, X, y=None):
        if self.ver not in tid.lpca.LPCA_VERSIONS:
            raise Documented(f"lpca-{self.ver}")
        if self.fit_explained_variance:  # X is a spectrum: the drop-in's lPCA runs ttlab's LPCA.fit_spectrum
            spectrum = dropin.lPCA(ver=self.ver, fit_explained_variance=True, **self.spectrum_opts)
            self.dimension_ = spectrum.fit(X).dimension_
            return self
        est = self._take(tid.LPCA(ver=self.ver, **self.opts).fit(X))
        self.explained_var_ = est.explained_variance_
        return est


class ESS(_Shim):
    def __init__(self, ver="a", d=1, random_state=None):
        self.ver, self.d, self.random_state = ver, d, random_state

    def _est(self, k: int = 100):
        return tid.ESS(k=k, ver=self.ver, d=self.d, random_state=self.random_state or 0)

    def fit(self, X, y=None, n_neighbors=None, comb="mean", smooth=False, n_jobs=1):
        est = tid.ESS(k=n_neighbors or 100, ver=self.ver, d=self.d, average=_COMB[comb],
                      random_state=self.random_state or 0)
        return self._take(est.fit(X))._smooth(X, est, smooth)

    def fit_once(self, X, y=None):
        self.dimension_, self.essval_ = ess_single_neighbourhood(
            np.asarray(X, dtype=np.float64), ver=self.ver, d=self.d, random_state=self.random_state or 0)
        return self


class MiND_ML(_Shim):
    def __init__(self, k=20, D=10, ver="MLk"):
        self.k, self.D, self.ver = k, D, ver

    def fit(self, X, y=None):
        return self._take(tid.MiND_ML(k=self.k, D=self.D, ver=self.ver).fit(X))


class DANCo(_Shim):
    def __init__(self, k=10, D=None, calibration_data=None, ver="DANCo", fractal=True, verbose=False,
                 random_state=None):
        self.k, self.D, self.calibration_data, self.ver = k, D, calibration_data, ver
        self.fractal, self.random_state = fractal, random_state

    def _dancoDimEstNoCalibration(self, X, D):  # the test sets est._k first, as scikit-dimension's fit does
        return danco_statistics(X, k=self._k, D=D)

    def fit(self, X, y=None):
        if self.ver == "DANCoFit":  # scikit-dimension's calibration table: the drop-in's DANCo reads it
            self.dimension_ = dropin.DANCo(k=self.k, D=self.D, ver="DANCoFit", fractal=self.fractal,
                                           random_state=self.random_state).fit(X).dimension_
            return self
        opts: dict[str, Any] = dict(k=self.k, D=self.D, fractal=self.fractal, random_state=self.random_state or 0)
        if self.ver != "DANCo":
            opts["ver"] = self.ver
        if self.calibration_data is not None:
            opts["calibration_data"] = self.calibration_data
        return self._take(tid.DANCo(**opts).fit(X))


class _Local(_Shim):
    """scikit-dimension's local estimators: ``fit(X, n_neighbors=..., comb='mean')``."""

    default_k = 100
    cls: Any = None

    def _opts(self) -> dict[str, Any]:
        return {}

    def fit(self, X, y=None, precomputed_knn_arrays=None, smooth=False, n_neighbors=None, comb="mean", n_jobs=1):
        if precomputed_knn_arrays is not None:
            raise NotImplementedError(PRECOMPUTED)
        est = self.cls(k=n_neighbors or self.default_k, average=_COMB[comb], **self._opts())
        return self._take(est.fit(X))._smooth(X, est, smooth)


class TLE(_Local):
    default_k, cls = 20, tid.TLE

    def __init__(self, epsilon=1e-4):
        self.epsilon = epsilon

    def _opts(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon}


class MOM(_Local):
    default_k, cls = 100, tid.MOM


class MADA(_Local):
    default_k, cls = 20, tid.MADA

    def __init__(self, DM=False):
        if DM:
            raise NotImplementedError(PRECOMPUTED)


class CorrInt(_Shim):
    def __init__(self, k1=10, k2=20, DM=False):
        self.k1, self.k2, self.DM = k1, k2, DM

    def fit(self, X, y=None):
        if self.DM:
            raise NotImplementedError(PRECOMPUTED)
        return self._take(tid.CorrInt(k1=self.k1, k2=self.k2).fit(X))


class FisherS(_Shim):
    def __init__(self, conditional_number=10, project_on_sphere=1, alphas=None, produce_plots=False, verbose=0,
                 limit_maxdim=False):
        self.opts = dict(conditional_number=conditional_number, project_on_sphere=bool(project_on_sphere),
                         alphas=alphas, limit_maxdim=limit_maxdim)

    def to_ttlab(self) -> tid.FisherS:
        return tid.FisherS(**self.opts)

    def fit(self, X, y=None):
        return self._take(self.to_ttlab().fit(X))


class KNN(_Shim):
    def __init__(self, k=None, ps=None, M=1, gamma=2, random_state=None):
        self.opts = dict(k=k, ps=ps, M=M, gamma=gamma, random_state=random_state or 0)

    def fit(self, X, y=None):
        return self._take(tid.KNN(**self.opts).fit(X))


class PH(_Shim):
    def __init__(self, alpha=1.0, n_range_min=0.5, n_range_max=1.0, range_type="fraction", nsteps=100, subsamples=10,
                 metric="euclidean", random_state=None, n_jobs=1):
        self.opts = dict(alpha=alpha, n_range_min=n_range_min, n_range_max=n_range_max, range_type=range_type,
                         nsteps=nsteps, subsamples=subsamples, random_state=random_state or 0)

    def fit(self, X, y=None):
        return self._take(tid.PH(**self.opts).fit(X))


def build() -> types.SimpleNamespace:
    """The ``skdim`` stand-in: ``skdim.id.<Name>`` are the shims; ``skdim.datasets`` is scikit-dimension's own
    (data generation is not under test)."""
    import skdim

    ids: dict[str, Any] = {c.__name__: c for c in (MLE, TwoNN, GRIDE, lPCA, ESS, MiND_ML, DANCo, TLE, MOM, MADA,
                                                     CorrInt, FisherS, KNN, PH)}
    ids["_gride"] = tid.gride_mle  # skdim.id._GRIDE._gride(dists, n1, n2) -> (estimate, standard error)
    return types.SimpleNamespace(id=types.SimpleNamespace(**ids), datasets=skdim.datasets)
