"""The scikit-learn estimator contract for every estimator in ``ttlab id compare``'s table:
scikit-learn's own ``check_estimator`` suite, ``clone``, ``get_params(deep=True)``, ``set_params``,
``__repr__`` and use inside a ``Pipeline``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from ttlab.errors import TTLabInputError  # noqa: E402
from ttlab.intrinsic_dim import MLE, sample_manifold  # noqa: E402
from ttlab.intrinsic_dim.compare import COMPARE_METHODS  # noqa: E402

# scikit-learn's checks fit on as few as 10 points: neighbourhood sizes small enough for that
SMALL = {"mle": {"k": 5}, "mle_harmonic": {"k": 5}, "mle_median": {"k": 5}, "tle": {"k": 5}, "mom": {"k": 5},
         "mada": {"k": 4}, "mind_ml": {"k": 5}, "corrint": {"k1": 2, "k2": 4}, "danco": {"k": 5}, "ess": {"k": 5},
         "bid": {"k": 5}}


def _estimator(method: str, n_features: int = 4):
    cls, opts = COMPARE_METHODS[method][1](n_features)
    opts = {**opts, **SMALL.get(method, {})}
    if method in ("mind_ml", "danco"):
        opts.pop("D", None)  # their defaults: 10, resp. the number of features of the data
    return cls(**opts)


ESTIMATORS = [_estimator(m) for m in COMPARE_METHODS]


def expected_failed_checks(est) -> dict[str, str]:
    """Checks that do not apply to an ID estimator, with the reason: none."""
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("method", list(COMPARE_METHODS))
def test_clone_params_repr_pickle(method):
    est = _estimator(method)
    est2 = clone(est)
    assert est2 is not est and type(est2) is type(est)
    assert est2.get_params(deep=True) == est.get_params(deep=False) == est.get_params()
    params = est.get_params()
    assert params["metric"] == "euclidean" and "batch_size" in params
    est2.set_params(seed=3)
    assert est2.seed == 3 and est.seed == 0
    assert repr(est2).startswith(type(est).__name__ + "(") and "seed=3" in repr(est2)
    assert "seed=" not in repr(est)  # defaults are not shown
    X = sample_manifold("sphere", 2, 5, 200, noise=0.0, seed=0)
    fitted = est.fit(X)
    again = pickle.loads(pickle.dumps(fitted))
    assert again.dimension_ == fitted.dimension_ and again.n_features_in_ == 5


def test_set_params_rejects_unknown_names():
    with pytest.raises(TTLabInputError, match="invalid parameter 'K' for estimator MLE; valid parameters: "):
        MLE().set_params(K=3)
    assert MLE().set_params() .k == 20


def test_repr_shows_changed_parameters_only():
    assert repr(MLE()) == "MLE()"
    assert repr(MLE(k=10, average="harmonic")) == "MLE(average='harmonic', k=10)"


def test_inside_a_pipeline():
    X = sample_manifold("sphere", 3, 8, 500, noise=0.0, seed=1) * np.arange(1, 9)  # unequal scales
    direct = MLE(k=10).fit(StandardScaler().fit_transform(X))
    pipe = Pipeline([("scale", StandardScaler()), ("id", MLE(k=10))]).fit(X)
    assert pipe.named_steps["id"].dimension_ == pytest.approx(direct.dimension_, rel=1e-12)
    assert pipe.get_params()["id__k"] == 10
    pipe.set_params(id__k=15)
    assert pipe.named_steps["id"].k == 15
    assert clone(pipe).fit(X).named_steps["id"].dimension_ != pytest.approx(direct.dimension_, rel=1e-6)
