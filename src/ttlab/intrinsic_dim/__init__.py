"""Intrinsic-dimension (ID) estimation: correct, fast, robust, and paper B's protocol.

Estimators (scikit-learn style: parameters in ``__init__``, ``fit(X)`` sets ``dimension_`` and
``pointwise_dimension_``; their base is :mod:`ttlab.intrinsic_dim.base`), one family per module: :class:`MLE`
(:mod:`~ttlab.intrinsic_dim.mle`; Levina–Bickel; mean, harmonic = MacKay–Ghahramani, or median of pointwise
estimates; optional K − 2 variant), :class:`TwoNN` (:mod:`~ttlab.intrinsic_dim.twonn`; Facco et al. 2017) and
:class:`GRIDE` (:mod:`~ttlab.intrinsic_dim.gride`; Denti et al. 2022, multiscale); and, equal to scikit-dimension's
for the same settings, :class:`LPCA` (``lPCA``; :mod:`~ttlab.intrinsic_dim.lpca`), :class:`TLE`
(:mod:`~ttlab.intrinsic_dim.tle`), :class:`CorrInt` (:mod:`~ttlab.intrinsic_dim.corrint`), :class:`DANCo` and
:class:`MiND_ML` (:mod:`~ttlab.intrinsic_dim.mind`), :class:`ESS` (:mod:`~ttlab.intrinsic_dim.ess`), :class:`MOM`
and :class:`MADA` (:mod:`~ttlab.intrinsic_dim.local`), :class:`FisherS` (:mod:`~ttlab.intrinsic_dim.fisher_s`),
:class:`KNN` (:mod:`~ttlab.intrinsic_dim.knn_length`) and :class:`PH` (:mod:`~ttlab.intrinsic_dim.ph`); and, with an
interval for d, :class:`TwoNNBayes` (:mod:`~ttlab.intrinsic_dim.twonn_bayes`; the TwoNN posterior under a Gamma prior)
and :class:`BID` (:mod:`~ttlab.intrinsic_dim.binomial`; Macocco et al. 2023's binomial estimator). Each supports
``metric='euclidean'|'chord'|'cosine'`` (``cosine`` = 1 − cos as in scipy, for the estimators that read distances only)
and
``batch_size`` (the paper's protocol: shuffled, seeded batches, estimates averaged).

Neighbours are exact, from blocked float32 matrix products certified and re-measured in
float64 (:func:`kneighbors`). Exact duplicate points are dropped with a warning and counted.

:func:`compare` runs many estimators on the same data with one shared neighbour search; :func:`id_scale` gives the ID
against the scale it is read at (2NN by decimation, GRIDE across neighbour orders: :mod:`~ttlab.intrinsic_dim.scale`).
One-call helpers return a self-describing :class:`IDResult`: :func:`estimate_id` and
:func:`paper_protocol`. Known-answer data: :func:`sample_manifold`. Files: :func:`load_points`.
"""

from ttlab.intrinsic_dim.api import IDResult, estimate_id, fit_estimate, make_estimator, paper_protocol
from ttlab.intrinsic_dim.base import DegeneratePointsWarning, split_batches
from ttlab.intrinsic_dim.binomial import BID
from ttlab.intrinsic_dim.compare import COMPARE_METHODS, CompareResult, CompareRow, compare
from ttlab.intrinsic_dim.corrint import CorrInt
from ttlab.intrinsic_dim.ess import ESS
from ttlab.intrinsic_dim.fisher_s import FisherS
from ttlab.intrinsic_dim.gride import GRIDE, gride_mle
from ttlab.intrinsic_dim.io import load_points
from ttlab.intrinsic_dim.knn import faiss_available, kneighbors
from ttlab.intrinsic_dim.knn_length import KNN
from ttlab.intrinsic_dim.local import MADA, MOM
from ttlab.intrinsic_dim.lpca import LPCA, lPCA
from ttlab.intrinsic_dim.manifolds import MANIFOLDS, random_isometry, sample_manifold, true_dimension
from ttlab.intrinsic_dim.mind import DANCo, MiND_ML
from ttlab.intrinsic_dim.mle import MLE, mle_pointwise
from ttlab.intrinsic_dim.neighbors import Neighbors
from ttlab.intrinsic_dim.ph import PH
from ttlab.intrinsic_dim.protocol import PAPER, PAPER_BATCH_SIZE, PAPER_K, IDProtocol
from ttlab.intrinsic_dim.scale import IDScaleResult, id_scale
from ttlab.intrinsic_dim.tle import TLE
from ttlab.intrinsic_dim.twonn import TwoNN
from ttlab.intrinsic_dim.twonn_bayes import TwoNNBayes
from ttlab.intrinsic_dim.validate import DuplicatePointsWarning, check_points

__all__ = [
    "MLE",
    "LPCA",
    "lPCA",
    "TLE",
    "CorrInt",
    "DANCo",
    "ESS",
    "MOM",
    "MiND_ML",
    "MADA",
    "FisherS",
    "KNN",
    "PH",
    "TwoNN",
    "TwoNNBayes",
    "GRIDE",
    "BID",
    "IDResult",
    "IDScaleResult",
    "COMPARE_METHODS",
    "CompareResult",
    "CompareRow",
    "compare",
    "Neighbors",
    "MANIFOLDS",
    "PAPER",
    "IDProtocol",
    "PAPER_BATCH_SIZE",
    "PAPER_K",
    "DuplicatePointsWarning",
    "DegeneratePointsWarning",
    "check_points",
    "estimate_id",
    "fit_estimate",
    "faiss_available",
    "gride_mle",
    "id_scale",
    "kneighbors",
    "load_points",
    "make_estimator",
    "mle_pointwise",
    "paper_protocol",
    "random_isometry",
    "sample_manifold",
    "split_batches",
    "true_dimension",
]
