"""ttlab.intrinsic_dim.views: the estimate and compare views built from real results, rendered, showing their numbers;
and the CLI naming the flag of the parameter a library error names."""

from __future__ import annotations

from functools import partial

import numpy as np

from tests.conftest import view_text as render
from ttlab.intrinsic_dim import compare, make_estimator, sample_manifold
from ttlab.intrinsic_dim.files import compare_file, estimate_file
from ttlab.intrinsic_dim.views import compare_view, estimate_view


def points(tmp_path, n=600):
    path = tmp_path / "x.npy"
    np.save(path, sample_manifold("sphere", 3, 12, n, seed=1))
    return path


def test_estimate_view_shows_the_estimate_and_its_batches(tmp_path):
    path = points(tmp_path)
    res, _, _ = estimate_file(path, make_estimator("mle", k=10, batch_size=200, seed=0))
    text = render(estimate_view(res, path, "euclidean"))
    assert f"{path}: mle ID = {res.dimension:.3f}" in text
    assert f"points {res.n_points}, duplicates removed 0, used {res.n_used}; metric euclidean" in text
    assert f"3 batch(es) of 200: mean {res.dimension:.3f}, std {res.dimension_std:.3f}" in text
    assert "per batch: " + ", ".join(f"{v:.3f}" for v in res.batches) in text
    res, _, _ = estimate_file(path, make_estimator("twonn"))
    text = render(estimate_view(res, path, "chord"))
    assert f"twonn ID = {res.dimension:.3f}" in text and "metric chord" in text and "batch(es)" not in text
    if "error" in res.extras:
        assert f"standard error {res.extras['error']:.3f}" in text


def test_compare_view_has_a_row_per_estimator(tmp_path):
    path = points(tmp_path)
    res, _, _ = compare_file(path, partial(compare, methods="mle,twonn,lpca", beta=0.5))
    text = render(compare_view(res, path))
    assert "x.npy: 600 points × 12, 0 duplicate(s) removed" in text and "α_D (β=0.5)" in text
    for r in res.rows:
        assert f"{r.method} │ {r.dimension:.3f} │" in text and f"│ {r.alpha_d:.4f} │ {r.alpha_n:.4f} │" in text
    assert f"shared neighbour search: k = {res.knn_k}" in text and f"total {res.total_seconds:.2f} s" in text
    res, _, _ = compare_file(path, partial(compare, methods="mle", batch_size=300))
    text = render(compare_view(res, path))
    assert "2 batch(es) of 300" in text and "std over batches" in text and f"{res.rows[0].dimension_std:.3f}" in text


def test_the_cli_shows_the_flag_of_the_key_parameter(run_cli, tmp_path):
    path = tmp_path / "two.npz"
    np.savez(path, a=np.zeros((30, 2)), b=np.ones((30, 2)))
    r = run_cli("id", "estimate", path)
    err = " ".join(r.err.split())
    assert r.code == 2 and "holds 2 arrays (a, b); choose one with key. (command-line option: --key)" in err, err
