"""scikit-dimension's ``FisherS`` over ttlab's (:class:`ttlab.intrinsic_dim.FisherS`), with its pointwise IDs,
separability graph and standard plots: every number from :mod:`ttlab.intrinsic_dim.fisher_s`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ttlab.intrinsic_dim import fisher_s
from ttlab.intrinsic_dim.base import IDEstimator
from ttlab.intrinsic_dim.skdim.adapters import GlobalAdapter, point_of_row
from ttlab.intrinsic_dim.validate import check_points

__all__ = ["FisherS"]


class FisherS(GlobalAdapter):
    """Fisher separability (:class:`ttlab.intrinsic_dim.FisherS`). ``Xp_`` holds the preprocessed points (one row per
    distinct input point: ttlab drops duplicates), ``point_inseparability_to_pointID`` the pointwise IDs and
    ``getSeparabilityGraph`` the graph, both reported per input row (a duplicate row as its first copy; a graph edge
    names first copies). ``verbose`` is accepted; nothing is printed."""

    def __init__(self, conditional_number=10, project_on_sphere=1, alphas=None, produce_plots=False, verbose=0,
                 limit_maxdim=False):
        self.conditional_number = conditional_number
        self.project_on_sphere = project_on_sphere
        self.alphas = alphas
        self.produce_plots = produce_plots
        self.verbose = verbose
        self.limit_maxdim = limit_maxdim

    def to_ttlab(self) -> IDEstimator:
        """The ttlab estimator with these settings."""
        return fisher_s.FisherS(conditional_number=self.conditional_number,
                                project_on_sphere=bool(self.project_on_sphere), alphas=self.alphas,
                                limit_maxdim=self.limit_maxdim)

    def fit(self, X: Any, y: Any = None) -> "FisherS":
        """Estimate the intrinsic dimension of the rows of ``X``; keep the preprocessed points ``Xp_``; with
        ``produce_plots`` draw scikit-dimension's three figures (matplotlib's ``plt.show`` after each)."""
        X = check_points(X)
        est = self.ttlab_for(len(X)).fit(X)
        self._take(est)
        rows = np.asarray(est.point_indices_)
        self.Xp_ = fisher_s.fisher_preprocess(np.asarray(X, dtype=np.float64)[rows], float(self.conditional_number),
                                              bool(self.project_on_sphere))
        self.point_of_row_ = point_of_row(np.asarray(X, dtype=np.float64), rows)
        self.input_row_of_point_ = rows
        if self.produce_plots:
            self._plots()
        return self

    def _alpha_index(self, idx: Any) -> int:
        self._check_fitted("p_alpha_")
        if idx == "all_inseparable":
            every = np.flatnonzero(np.all(self.p_alpha_ != 0, axis=1))
            if not len(every):
                raise ValueError("no margin alpha at which every point is inseparable from some other; pass "
                                 "idx='selected' or an alpha index")
            return int(every.max())
        if idx == "selected":
            return int(np.flatnonzero(self.n_alpha_ == self.dimension_)[0])
        if isinstance(idx, (int, np.integer)) and not isinstance(idx, bool):
            return int(idx)
        raise ValueError("unknown idx parameter")

    def point_inseparability_to_pointID(self, idx: Any = "all_inseparable", force_definite_dim: bool = True,
                                        verbose: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Each input row's ID at one margin (``idx``: 'all_inseparable' — the largest alpha at which every point is
        inseparable —, 'selected' — the global estimate's — or an index of ``alphas_``) and the rows where it is
        defined (:func:`ttlab.intrinsic_dim.fisher_s.pointwise_dimensions`)."""
        n = fisher_s.pointwise_dimensions(self.p_alpha_, self.alphas_, self._alpha_index(idx), force_definite_dim)
        per_row = n[self.point_of_row_]
        return per_row, np.flatnonzero(~np.isnan(per_row))

    def getSeparabilityGraph(self, idx: Any = "all_inseparable",
                             top_edges: int = 10000) -> tuple[list[tuple[int, int]], np.ndarray]:
        """The inseparability graph of ``Xp_`` at the margin ``idx`` selects (:meth:`point_inseparability_to_pointID`),
        edges as input rows (:func:`ttlab.intrinsic_dim.fisher_s.separability_graph`)."""
        index = self._alpha_index(idx)  # checks the fit first
        alpha = float(self.alphas_[index])
        edges, weights = fisher_s.separability_graph(self.Xp_, alpha, top_edges)
        rows = self.input_row_of_point_
        return [(int(rows[i]), int(rows[j])) for i, j in edges], weights

    @staticmethod
    def buildSeparabilityGraph(data: Any, alpha: float, top_edges: int = 10000) -> tuple[list[tuple[int, int]],
                                                                                       np.ndarray]:
        """scikit-dimension's graph of already preprocessed points ``data``
        (:func:`ttlab.intrinsic_dim.fisher_s.separability_graph`)."""
        return fisher_s.separability_graph(np.asarray(data, dtype=np.float64), float(alpha), top_edges)

    @staticmethod
    def plotSeparabilityGraph(x: Any, y: Any, edges: Any, alpha: float = 0.3) -> None:
        """Draw each edge as a line between its points' coordinates ``x``, ``y`` on the current matplotlib axes."""
        import matplotlib.pyplot as plt

        for i, j in edges:
            plt.plot([x[i], x[j]], [y[i], y[j]], "k-", alpha=alpha)

    def _plots(self) -> None:
        """scikit-dimension's three figures: the dimension against alpha (the estimate marked), the histogram of
        inseparability at the selected alpha, and the mean inseparability against the uniform sphere's curves."""
        import matplotlib.pyplot as plt

        alphas, n_alpha, p = self.alphas_, self.n_alpha_, self.p_alpha_
        sel = np.flatnonzero(n_alpha == self.dimension_)
        plt.figure()
        plt.plot(alphas, n_alpha, "ko-")
        plt.plot(alphas[sel], n_alpha[sel], "rx", markersize=16)
        plt.xlabel("\u03b1", fontsize=16)
        plt.ylabel("Effective dimension", fontsize=16)
        plt.show()
        plt.figure()
        if len(sel):
            plt.hist(p[sel[0]], bins=max(20, int(round(p.shape[1] / 200))))
            plt.xlabel(f"Inseparability prob. for \u03b1={alphas[sel[0]]:.2f}", fontsize=16)
        plt.ylabel("Number of values")
        plt.show()
        finite = n_alpha[np.isfinite(n_alpha)]
        lo = max(1.0, np.floor(finite.min()) - 2) if len(finite) else 1.0
        hi = np.floor(finite.max() + 0.8) + 2 if len(finite) else 3.0
        plt.figure()
        for dim in np.arange(lo, hi + 1):
            plt.semilogy(alphas, (1 - alphas**2) ** ((dim - 1) / 2) / (alphas * np.sqrt(2 * np.pi * dim)), "-",
                         color="r")
        shown = np.isfinite(n_alpha) if np.isnan(n_alpha).any() else np.ones(len(alphas), bool)
        plt.semilogy(alphas[shown], p.mean(axis=1)[shown], "bo-")
        plt.xlim(alphas.min(), 1)
        plt.xlabel("\u03b1")
        plt.ylabel("Mean inseparability prob.", fontsize=16)
        plt.title(f"Theor.curves for n={lo:.0f}:{hi:.0f}")
        plt.show()
