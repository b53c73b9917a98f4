"""FisherS's pointwise IDs and separability graph (ttlab.intrinsic_dim.fisher_s), against scikit-dimension's and by
definition, and the drop-in's FisherS that reports them per input row."""

import contextlib
import io

import numpy as np
import pytest

import ttlab.intrinsic_dim.skdim as skdim_id
from ttlab.intrinsic_dim.fisher_s import FisherS, fisher_preprocess, pointwise_dimensions, separability_graph

skdim = pytest.importorskip("skdim")


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).normal(size=(700, 6)) * np.array([1, 1, 1, 0.5, 0.3, 0.1])


def _quiet(fn, *args, **kw):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def reference(X):
    return _quiet(skdim.id.FisherS(conditional_number=10000).fit, X)


@pytest.mark.parametrize("alpha, top", [(0.9, 300), (0.8, -1), (0.8, 0)])
def test_graph_equals_scikit_dimension(reference, alpha, top):
    want_e, want_w = _quiet(reference.buildSeparabilityGraph, reference.Xp_, alpha, top_edges=top)
    got_e, got_w = separability_graph(reference.Xp_, alpha, top)
    assert got_e == want_e and np.allclose(got_w, want_w, atol=1e-12, rtol=0)


def test_graph_by_definition_off_the_sphere_and_across_blocks(X):
    Z = fisher_preprocess(X, 10, project_on_sphere=False)
    R = (Z @ Z.T) / np.einsum("ij,ij->i", Z, Z)[:, None]
    np.fill_diagonal(R, -np.inf)
    want = {(int(i), int(j)) for i, j in zip(*np.nonzero(R > 0.5))}
    edges, w = separability_graph(Z, 0.5, top_edges=-1, chunk=128)  # several blocks; both directions listed
    assert set(edges) == want and len(edges) == len(want)
    assert np.allclose(w, [R[i, j] - 0.5 for i, j in edges])
    assert any((j, i) not in want for i, j in want)  # the relation is not symmetric off the sphere


@pytest.mark.parametrize("idx", ["all_inseparable", "selected", 3])
@pytest.mark.parametrize("force", [True, False])
def test_pointwise_ids_equal_scikit_dimension(X, reference, idx, force):
    want, want_inds = _quiet(reference.point_inseparability_to_pointID, idx=idx, force_definite_dim=force)
    got, got_inds = skdim_id.FisherS(conditional_number=10000).fit(X).point_inseparability_to_pointID(idx, force)
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.allclose(got, want, equal_nan=True, rtol=1e-12)
    assert np.array_equal(got_inds, want_inds)


def test_pointwise_ids_invert_the_sphere_formula():
    alpha, dims = 0.8, np.array([2.0, 5.0, 11.0])
    p = (1 - alpha**2) ** ((dims - 1) / 2) / (alpha * np.sqrt(2 * np.pi * dims))
    got = pointwise_dimensions(np.array([[0.5, 0.5, 0.5], p]), np.array([0.6, alpha]), 1)
    assert np.allclose(got, dims, rtol=1e-10)


def test_duplicate_rows_read_as_their_first_copy(X):
    Xd = np.vstack([X, X[:5]])
    with pytest.warns(UserWarning):
        est = skdim_id.FisherS().fit(Xd)
    ids, _ = est.point_inseparability_to_pointID()
    assert len(ids) == len(Xd) and np.array_equal(ids[-5:], ids[:5], equal_nan=True)
    edges, _ = est.getSeparabilityGraph(top_edges=-1)
    assert max(max(e) for e in edges) < len(X)  # edges name first copies
    solo = FisherS().fit(X)
    assert np.allclose(ids[: len(X)], pointwise_dimensions(solo.p_alpha_, solo.alphas_,
                                                           int(np.flatnonzero(np.all(solo.p_alpha_ != 0, 1)).max())),
                       equal_nan=True)


def test_bad_idx_and_unfitted_are_refused(X):
    with pytest.raises(ValueError, match="unknown idx"):
        skdim_id.FisherS().fit(X).point_inseparability_to_pointID(idx="largest")
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        skdim_id.FisherS().getSeparabilityGraph()


def test_produce_plots_draws_three_figures(X, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(len(plt.gcf().axes[0].lines + plt.gcf().axes[0].patches)))
    skdim_id.FisherS(produce_plots=True).fit(X)
    plt.close("all")
    assert len(shown) == 3 and all(n > 0 for n in shown)
