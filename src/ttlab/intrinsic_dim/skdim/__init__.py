"""scikit-dimension's ``skdim.id`` API, computed by ttlab: a drop-in for user code.

::

    import ttlab.intrinsic_dim.skdim as skdim_id     # instead of: from skdim import id as skdim_id
    skdim_id.TwoNN().fit(X).dimension_
    skdim_id.MLE().fit(X, n_neighbors=20, comb="median").dimension_pw_

Every class of ``skdim.id`` 0.5 (:data:`__all__`) with scikit-dimension's class name, constructor parameters (names
and defaults), ``fit`` options (``n_neighbors``, ``comb``, ``smooth``, ``precomputed_knn_arrays`` of the local
estimators), methods (``fit_transform``, ``transform``, ``fit_pw``, ``transform_pw``, ``fit_transform_pw``) and
fitted attributes (``dimension_``, ``dimension_pw_``, ``dimension_pw_smooth_``, ``n_neighbors_``, ...); and
:func:`asPointwise`. Each class is a thin adapter: it translates the options to the ttlab estimator with the same
meaning (:attr:`to_ttlab`) and every number comes from ttlab. Where ttlab deliberately differs the result follows
ttlab (duplicate rows dropped before estimating: a duplicate row's pointwise estimate is that of its first copy);
an option ttlab does not have raises :class:`NotImplementedError` naming it. ``n_jobs`` is accepted and ignored
(ttlab's neighbour search uses every core). docs/scikit_dimension.md, "A drop-in for skdim.id", lists what of
scikit-dimension's own tests does not pass.
"""

from ttlab.intrinsic_dim.skdim.adapters import NotFittedError, asPointwise
from ttlab.intrinsic_dim.skdim.fisher_s import FisherS
from ttlab.intrinsic_dim.skdim.global_estimators import (
    GRIDE,
    KNN,
    PH,
    CorrInt,
    DANCo,
    MiND_ML,
    TwoNN,
    lPCA,
)
from ttlab.intrinsic_dim.skdim.local_estimators import ESS, MADA, MLE, MOM, TLE

__all__ = [
    "CorrInt",
    "DANCo",
    "ESS",
    "FisherS",
    "GRIDE",
    "KNN",
    "MADA",
    "MLE",
    "MOM",
    "MiND_ML",
    "PH",
    "TLE",
    "TwoNN",
    "lPCA",
    "asPointwise",
    "NotFittedError",
]
