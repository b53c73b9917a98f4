"""Analysis of the manifold-regression experiment: the ID of every input point cloud (:func:`estimate_ids`) and
the fits of α̂_D, α̂_N and the oracles' slopes next to the theory (:func:`aggregate`). Every fitted exponent is
written with the keys of :class:`ttlab.scaling.analysis.FittedExponent` (bootstrap interval).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ttlab.scaling.analysis import FittedExponent, best_by, power_law_fits
from ttlab.scaling.manifold_config import ManifoldSweepConfig
from ttlab.scaling.targets import make_problem, make_splits

__all__ = ["aggregate", "estimate_ids", "geomean"]


def estimate_ids(cfg: ManifoldSweepConfig, seed: int = 0) -> list[dict[str, Any]]:
    """ttlab's MLE (K = ``id_k``) on ``id_points`` training inputs of every (d, D).

    Both combinations of the pointwise estimates are reported: the arithmetic mean (paper B's
    code; ``MLE(average="mean")``) and the harmonic mean 1/mean(1/·) (MacKay–Ghahramani);
    predictions use the mean, as the paper does.
    """
    import warnings

    from ttlab.intrinsic_dim import MLE
    from ttlab.scaling.theory import alpha_d

    out = []
    for d in cfg.ds:
        for D in cfg.ambients:
            problem = make_problem(d, D, manifold=cfg.manifold, beta=cfg.betas[0], profile=cfg.profile,
                                   n_features=cfg.n_features, min_freq=cfg.min_freq_of(d), max_freq=cfg.max_freq,
                                   noise=0.0, problem_seed=cfg.problem_seed, spectrum=cfg.spectrum)
            x = make_splits(problem, cfg.id_points, 1, 1, seed).x_train.astype(np.float64)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = MLE(k=cfg.id_k, average="mean", seed=seed).fit(x)
            pw = np.asarray(est.pointwise_dimension_, dtype=float)
            pw = pw[np.isfinite(pw) & (pw > 0)]
            # no finite positive pointwise estimate: no harmonic ID, and no prediction from it (None, not NaN)
            harmonic = float(1.0 / np.mean(1.0 / pw)) if pw.size else None
            row: dict[str, Any] = {"d": d, "ambient": D, "n_points": cfg.id_points, "k": cfg.id_k, "method": "mle",
                                   "id_mean": float(est.dimension_), "id_harmonic": harmonic}
            row["alpha_pred_from_id"] = {f"{b:g}": alpha_d(row["id_mean"], b) for b in cfg.betas}
            row["alpha_pred_from_id_harmonic"] = {f"{b:g}": None if harmonic is None else alpha_d(harmonic, b)
                                                  for b in cfg.betas}
            out.append(row)
    return out


# ---------------------------------------------------------------------------------------------
# aggregation and fits


def _select_lr(runs: list[dict[str, Any]], size_key: str) -> list[dict[str, Any]]:
    """Per (arch, β, regime, d, D, size, seed): the learning rate with the lowest validation MSE."""
    key = lambda r: (r["arch"], r.get("beta"), r.get("regime"), r["d"], r["ambient"], r[size_key], r["seed"])  # noqa: E731
    return list(best_by(runs, key, "val_mse").values())


def _offset_summary(offset: dict[str, Any] | None) -> dict[str, Any]:
    """The offset form's α, its bootstrap interval and E (None where the fit was not made)."""
    params = (offset or {}).get("params", {})
    ci = ((offset or {}).get("ci") or {}).get("alpha")
    return {"alpha_hat_offset": params.get("alpha"), "ci_offset": list(ci) if ci is not None else None,
            "offset_E": params.get("E")}


def _curve_fit(rows: list[dict[str, Any]], size_key: str, bootstrap: int, bootstrap_offset: int) -> dict[str, Any]:
    """Points per size (seeds pooled) and fits over sizes where no seed was step-limited."""
    sizes = sorted({r[size_key] for r in rows})
    points = []
    for s in sizes:
        rs = [r for r in rows if r[size_key] == s]
        mses = [r["test_mse"] for r in rs]
        points.append({
            size_key: s, "n_params": rs[0]["n_params"], "test_mse": mses,
            "test_mse_geomean": geomean(mses), "seeds": [r["seed"] for r in rs],
            "step_limited": any(r["step_limited"] for r in rs), "best_step": [r["best_step"] for r in rs],
            "steps_planned": rs[0]["steps_planned"], "lr": [r["lr"] for r in rs],
        })
    usable = [p for p in points if not p["step_limited"]]
    fallback = len(usable) < 3
    chosen = points if fallback else usable
    xkey = "n_params" if size_key == "width" else size_key
    x = [float(p[xkey]) for p in chosen for _ in p["test_mse"]]
    y = [float(v) for p in chosen for v in p["test_mse"]]
    fits = power_law_fits(x, y, bootstrap=bootstrap, bootstrap_offset=bootstrap_offset)
    if not fallback and len(usable) < len(points):
        x_all = [float(p[xkey]) for p in points for _ in p["test_mse"]]
        y_all = [float(v) for p in points for v in p["test_mse"]]
        power_all = power_law_fits(x_all, y_all, bootstrap=bootstrap, offset=False)["power"]
    else:
        power_all = fits["power"]
    return {"points": points, "sizes_fitted": [p[size_key] for p in chosen],
            "includes_step_limited": fallback and any(p["step_limited"] for p in points), "fits": fits,
            "exponent": FittedExponent.from_fit(fits["power"], "bootstrap").to_dict(),
            "offset": _offset_summary(fits.get("offset")),
            "alpha_hat_all_sizes": (power_all.get("params") or {}).get("alpha")}


def _setting(r: dict[str, Any]) -> tuple:
    return (r["arch"], r["beta"], r["regime"], r["d"], r["ambient"])


def _power_exponent(x: list[float], y: list[float], bootstrap: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(FittedExponent keys, the power-form fit) of y against x, bootstrap interval."""
    power = power_law_fits(x, y, bootstrap=bootstrap, offset=False)["power"]
    return FittedExponent.from_fit(power, "bootstrap").to_dict(), power


def _oracle_fit(cfg: ManifoldSweepConfig, rows: list[dict[str, Any]], base: dict[str, Any]) -> dict[str, Any]:
    """Power-law fit of the k-NN oracle's test MSE over n (geometric mean over seeds per size)."""
    sizes = sorted({r["n"] for r in rows})
    if len(sizes) < 2:
        return {**base, **FittedExponent().to_dict(), "error": "fewer than 2 oracle sizes"}
    exponent, power = _power_exponent([float(r["n"]) for r in rows], [r["test_mse"] for r in rows], cfg.bootstrap)
    pts = []
    for n in sizes:
        rs = [r for r in rows if r["n"] == n]
        pts.append({"n": n, "test_mse": [r["test_mse"] for r in rs], "k": [r["k"] for r in rs],
                    "seeds": [r["seed"] for r in rs], "test_mse_geomean": geomean([r["test_mse"] for r in rs])})
    return {**base, **exponent, "r2_log": (power.get("goodness_of_fit") or {}).get("r2_log"),
            "n_seeds": len({r["seed"] for r in rows}), "points": pts}


def _knn_fits(cfg: ManifoldSweepConfig, knn_runs: list[dict[str, Any]], n_ref: int) -> list[dict[str, Any]]:
    """The k-NN oracle's fit per (β, regime, d, D) (one D suffices: the oracle is similarity-invariant)."""
    from ttlab.scaling.theory import alpha_d, alpha_n

    out = []
    for beta in cfg.betas:
        for regime in cfg.regimes:
            for d in cfg.ds:
                for D in cfg.ambients:
                    common = {"beta": beta, "regime": regime, "noise": cfg.noise_of(regime), "d": d, "ambient": D,
                              "alpha_pred": alpha_d(d, beta), "alpha_noiseless": alpha_n(d, beta)}
                    krows = [r for r in knn_runs if r["d"] == d and r["beta"] == beta and r["regime"] == regime
                             and r["ambient"] in (D, min(cfg.ambients))]
                    if any(r["ambient"] == D for r in krows):
                        krows = [r for r in krows if r["ambient"] == D]
                    kf = _oracle_fit(cfg, krows, {**common, "oracle": "k-NN, k chosen on validation"})
                    kf["mse_at_n_ref"] = next((p["test_mse_geomean"] for p in kf.get("points", [])
                                               if p["n"] == n_ref), None)
                    out.append(kf)
    return out


def _data_fits(cfg: ManifoldSweepConfig, data_runs: list[dict[str, Any]], ids: list[dict[str, Any]],
               knn_fits: list[dict[str, Any]], n_ref: int) -> list[dict[str, Any]]:
    """α̂_D per (arch, β, regime, d, D) next to the theory, the ID-based prediction and the oracle."""
    from ttlab.scaling.theory import alpha_d, alpha_n

    id_of = {(r["d"], r["ambient"]): r for r in ids}
    knn_of = {(k["beta"], k["regime"], k["d"], k["ambient"]): k for k in knn_fits}
    data_sel = _select_lr(data_runs, "n")
    fits = []
    for arch, beta, regime, d, D in itertools.product(cfg.archs, cfg.betas, cfg.regimes, cfg.ds, cfg.ambients):
        rows = [r for r in data_sel if _setting(r) == (arch, beta, regime, d, D)]
        idr = id_of.get((d, D), {})
        ofit = knn_of.get((beta, regime, d, D), {})
        base = {"d": d, "ambient": D, "arch": arch, "beta": beta, "regime": regime,
                "noise": cfg.noise_of(regime), "alpha_pred": alpha_d(d, beta),
                "alpha_noiseless": alpha_n(d, beta), "id_hat": idr.get("id_mean"),
                "alpha_pred_from_id": (idr.get("alpha_pred_from_id") or {}).get(f"{beta:g}"),
                "oracle_alpha": ofit.get("alpha_hat"), "oracle_ci": ofit.get("alpha_hat_ci")}
        if len({r["n"] for r in rows}) < 2:
            fits.append({**base, **FittedExponent().to_dict(), "error": "fewer than 2 finished sizes"})
            continue
        cf = _curve_fit(rows, "n", cfg.bootstrap, cfg.bootstrap_offset)
        at_ref = [pt for pt in cf["points"] if pt["n"] == n_ref]
        fits.append({
            **base, **cf["exponent"], **cf["offset"], "alpha_hat_all_sizes": cf["alpha_hat_all_sizes"],
            "n_ref": n_ref, "mse_at_n_ref": at_ref[0]["test_mse_geomean"] if at_ref else None,
            "sizes_fitted": cf["sizes_fitted"], "includes_step_limited": cf["includes_step_limited"],
            "points": cf["points"], "fit_details": cf["fits"],
        })
    return fits


def _approx_fit(cfg: ManifoldSweepConfig, approx_runs: list[dict[str, Any]], beta: float, d: int) -> dict[str, Any]:
    """The approximation oracle's rate over the number of cells at (β, d)."""
    from ttlab.scaling.theory import alpha_n

    arows = [r for r in approx_runs if r["d"] == d and r["beta"] == beta]
    af: dict[str, Any] = {"beta": beta, "d": d, "ambient": min(cfg.ambients), "regime": cfg.model_regime,
                          "alpha_pred": alpha_n(d, beta), "oracle": "piecewise constant on N Voronoi cells"}
    if len({r["cells"] for r in arows}) < 2:
        return {**af, **FittedExponent().to_dict(), "error": "fewer than 2 cell counts"}
    exponent, _ = _power_exponent([float(r["cells"]) for r in arows], [r["approx_mse"] for r in arows], cfg.bootstrap)
    return {**af, **exponent, "points": [{"cells": r["cells"], "approx_mse": r["approx_mse"]}
                                         for r in sorted(arows, key=lambda r: r["cells"])]}


def _model_fit(cfg: ManifoldSweepConfig, model_runs: list[dict[str, Any]], af: dict[str, Any], arch: str) -> dict[str, Any]:
    """α̂_N of one (arch, β, d) over the widths at n = ``model_n``, with the data-limit check at 2n."""
    beta, d = af["beta"], af["d"]
    model_n = cfg.model_n or cfg.n_max
    sel = [r for r in model_runs if r["d"] == d and r["beta"] == beta and r["arch"] == arch]
    mrows = _select_lr([r for r in sel if not r.get("check")], "width")
    crows = _select_lr([r for r in sel if r.get("check")], "width")
    mf: dict[str, Any] = {"d": d, "ambient": af["ambient"], "arch": arch, "beta": beta, "regime": cfg.model_regime,
                          "n": model_n, "alpha_pred": af["alpha_pred"], "oracle_alpha": af["alpha_hat"],
                          "oracle_ci": af["alpha_hat_ci"]}
    wmax = max(cfg.model_widths)
    at_n = [r["test_mse"] for r in mrows if r["width"] == wmax]
    at_2n = [r["test_mse"] for r in crows]
    mf["data_check"] = {"width": wmax, "n": model_n, "mse_n": geomean(at_n), "mse_2n": geomean(at_2n),
                        "ratio": (geomean(at_2n) / geomean(at_n)) if at_n and at_2n else None}
    if len({r["width"] for r in mrows}) < 2:
        return {**mf, **FittedExponent().to_dict(), "error": "fewer than 2 finished widths"}
    cf = _curve_fit(mrows, "width", cfg.bootstrap, cfg.bootstrap_offset)
    offset = cf["offset"]
    return {**mf, **cf["exponent"], "A": (cf["fits"]["power"].get("params") or {}).get("A"),
            "ci_offset": offset["ci_offset"], "alpha_hat_offset": offset["alpha_hat_offset"],
            "includes_step_limited": cf["includes_step_limited"], "sizes_fitted": cf["sizes_fitted"],
            "points": cf["points"]}


def aggregate(cfg: ManifoldSweepConfig, data_runs: list[dict[str, Any]], model_runs: list[dict[str, Any]],
              knn_runs: list[dict[str, Any]], ids: list[dict[str, Any]],
              approx_runs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Fits of α̂_D per (arch, β, regime, d, D), of the k-NN oracle per (β, regime, d, D), of α̂_N and the
    approximation oracle per (arch, β, d), each next to the theory (2β/(2β+d), noiseless reference 2β/d).
    Every exponent is written with the keys of :class:`ttlab.scaling.analysis.FittedExponent` (bootstrap
    interval)."""
    sizes = cfg.sizes()
    n_ref = sizes[len(sizes) // 2]
    knn_fits = _knn_fits(cfg, knn_runs, n_ref) if cfg.knn else []
    fits = _data_fits(cfg, data_runs, ids, knn_fits, n_ref)
    model_fits, approx_fits = [], []
    if cfg.model_widths:
        for beta in cfg.betas:
            for d in cfg.ds:
                af = _approx_fit(cfg, approx_runs or [], beta, d)
                approx_fits.append(af)
                model_fits += [_model_fit(cfg, model_runs, af, arch) for arch in cfg.archs]
    return {"fits": fits, "model_fits": model_fits, "knn_fits": knn_fits, "approx_fits": approx_fits, "n_ref": n_ref}


def geomean(values: list[float]) -> float | None:
    """Geometric mean of positive values (None for none)."""
    return float(np.exp(np.mean(np.log(values)))) if values else None


def geomean_se(values: list[float]) -> float | None:
    """Standard error of the geometric mean of positive values over seeds (delta method:
    geomean · sd(log values, ddof = 1) / √k); None with fewer than 2 values (one seed has no spread)."""
    if len(values) < 2:
        return None
    logs = np.log(np.asarray(values, dtype=float))
    return float(np.exp(logs.mean()) * logs.std(ddof=1) / np.sqrt(len(logs)))
