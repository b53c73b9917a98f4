"""The sweep tasks of the model-size experiment: one network trained online, the oracles, the untrained control.

Every task is a module-level function of a JSON config (picklable, cacheable by :func:`ttlab.sweep.run_sweep`):

* :func:`online_run` trains one network on fresh, noiseless samples drawn at every step (never reused) under an
  :class:`~ttlab.scaling.model_scaling_config.OnlineSchedule`, and returns its normalised test MSE
  (MSE / Var(f) on a fixed clean test set) with the untrained network's (the same initialisation, step 0: the
  trivial control);
* :func:`oracle_run` gives the two approximants on the same N axis — piecewise-constant on N Voronoi cells
  (squared error ∝ N^(−2/d) on a Lipschitz target, N^(−2β/d) on a β-Hölder one) and piecewise-linear on
  N/(d+1) cells, each cell carrying the first-order Taylor expansion of the target at its centre (N^(−4/d) on a
  C² target; still N^(−2β/d) on a β-Hölder one) — so a reader sees which regime each network reaches.

The seed fixes the initialisation and the stream of training samples; the test set depends on the problem only.
"""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np
import torch

from ttlab.scaling.lattice_fields import SphereProblem, make_field, make_sphere_problem
from ttlab.scaling.model_scaling_config import OnlineSchedule
from ttlab.scaling.regressor_config import RegressorConfig
from ttlab.scaling.regressors import build_regressor, count_parameters, train_step
from ttlab.validation import check_int

__all__ = ["online_run", "oracle_errors", "oracle_run", "problem_of", "test_set"]

_STREAM_TEST, _STREAM_TRAIN, _STREAM_CENTRES = 31, 32, 33


@functools.lru_cache(maxsize=8)
def _problem(kind: str, d: int, spacing: float, levels: int, beta: float, seed: int, ambient: int) -> SphereProblem:
    return make_sphere_problem(make_field(kind, d, spacing=spacing, levels=levels, beta=beta, seed=seed), ambient, seed)


def problem_of(config: dict[str, Any]) -> SphereProblem:
    """The (per-process cached) problem of a task config: ``config["target"]`` holds make_field's arguments."""
    t = config["target"]
    return _problem(t["kind"], int(t["d"]), float(t["spacing"]), int(t["levels"]), float(t["beta"]), int(t["seed"]),
                    int(config["ambient"]))


def _generator(*key: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(np.random.default_rng([int(k) for k in key]).integers(1 << 62)))


@functools.lru_cache(maxsize=4)
def _test_set(kind: str, d: int, spacing: float, levels: int, beta: float, seed: int, ambient: int,
              n_test: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    p = _problem(kind, d, spacing, levels, beta, seed, ambient)
    return p.sample(_generator(seed, _STREAM_TEST, d, levels), n_test)


def test_set(config: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The fixed clean test set (x, u, f) of a task config (``n_test`` points; the same for every run of a problem)."""
    t = config["target"]
    return _test_set(t["kind"], int(t["d"]), float(t["spacing"]), int(t["levels"]), float(t["beta"]), int(t["seed"]),
                     int(config["ambient"]), int(config["n_test"]))


def _normalised_mse(model: torch.nn.Module, x: torch.Tensor, f: torch.Tensor, batch: int = 4096) -> float:
    with torch.no_grad():
        err = sum(float(((model(x[a:a + batch]) - f[a:a + batch]).double() ** 2).sum()) for a in range(0, len(x), batch))
    return err / len(x) / float(f.double().var())


def _adam(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    try:
        return torch.optim.Adam(model.parameters(), lr=lr, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(model.parameters(), lr=lr)


def online_run(config: dict[str, Any]) -> dict[str, Any]:
    """Train one network online (fresh noiseless samples every step); its normalised test MSE (a sweep task).

    ``config``: ``target`` (make_field arguments), ``ambient``, ``n_test``, ``seed``, ``model``
    (:class:`RegressorConfig` fields), ``schedule`` (:class:`OnlineSchedule` fields), ``sample_scale`` (1, or 2
    for the data check), optionally ``device`` (default cpu; samples are drawn on the CPU and moved). Returns ``nmse`` (trained), ``nmse_init`` (the same network untrained), ``n_params``,
    ``samples``, ``steps``, the training-loss trace (``trace``: [samples seen, mean batch MSE of the last stretch])
    and ``seconds``.
    """
    t0 = time.perf_counter()
    sched = OnlineSchedule(**config["schedule"])
    problem = problem_of(config)
    device = torch.device(config.get("device", "cpu"))
    x_test, _, f_test = (t.to(device) for t in test_set(config))
    seed = int(config["seed"])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = build_regressor(RegressorConfig(**config["model"])).to(device)
    n_params = count_parameters(model)
    model.eval()
    nmse_init = _normalised_mse(model, x_test, f_test)
    samples = sched.samples(n_params, float(config.get("sample_scale", 1.0)))
    small, large = sched.steps(samples)
    total = small + large
    gen = _generator(seed, _STREAM_TRAIN, problem.d, int(config["target"]["levels"]))
    opt = _adam(model, sched.lr)
    trace, running, seen, diverged = [], [], 0, False
    model.train()
    for step in range(total):
        batch = sched.batch if step < small else sched.batch_large
        x, _, y = problem.sample(gen, batch)
        loss = train_step(model, opt, x.to(device), y.to(device), sched.lr_at(step, total), sched.grad_clip)
        if loss is None:
            diverged = True
            break
        seen += batch
        running.append(loss.item())
        if len(running) >= max(1, total // 20) or step == total - 1:
            trace.append([seen, float(np.mean(running))])
            running = []
    model.eval()
    nmse = _normalised_mse(model, x_test, f_test) if not diverged else float("nan")
    return {"nmse": nmse, "nmse_init": nmse_init, "n_params": n_params, "samples": seen, "samples_planned": samples,
            "steps": total, "diverged": diverged, "trace": trace, "seconds": time.perf_counter() - t0,
            "threads": torch.get_num_threads()}


def _nearest(u: torch.Tensor, c: torch.Tensor, chunk: int = 4096) -> torch.Tensor:
    return torch.cat([torch.cdist(u[a:a + chunk], c).argmin(dim=1) for a in range(0, len(u), chunk)])


def oracle_errors(problem: SphereProblem, n_params: int, u_test: torch.Tensor, f_test: torch.Tensor, seed: int,
                  points_per_param: int = 8) -> dict[str, float]:
    """Normalised squared errors of the piecewise-constant (N cells) and piecewise-linear (N/(d+1) cells)
    least-squares approximants with N = ``n_params`` free parameters, on test points ``u_test`` (natural coordinates).

    Cells: the Voronoi cells of seeded uniform centres c on the sphere. Each piece is fitted by least squares to
    the target on its centre and ``points_per_param`` fresh points per free parameter (a constant: the cell mean; a
    linear piece: a + ⟨g, u − c⟩, its slope lightly ridge-regularised so that a cell with too few points for a plane
    keeps the centre's value); a test point takes the piece of its nearest centre.
    """
    n_params = check_int(n_params, "n_params", problem.d + 1)
    var = float(f_test.double().var())
    m = problem.d + 1
    out = {}
    for name, cells, width in (("constant", n_params, 1), ("linear", max(1, n_params // m), m + 1)):
        gen = _generator(seed, _STREAM_CENTRES, problem.d, cells, width)
        c = torch.randn(cells, m, generator=gen, dtype=torch.float64)
        c = c / c.norm(dim=1, keepdim=True)
        _, u_fit, _ = problem.sample(gen, points_per_param * cells * width)
        u_fit = torch.cat([c, u_fit.double()])  # every centre fits its own cell: no cell is left empty
        f_fit = problem.field(u_fit)
        idx = _nearest(u_fit, c)
        phi = torch.cat([torch.ones(len(u_fit), 1, dtype=torch.float64), u_fit - c[idx]], dim=1)[:, :width]
        gram = torch.zeros(cells, width, width, dtype=torch.float64).index_add_(0, idx, phi[:, :, None] * phi[:, None, :])
        rhs = torch.zeros(cells, width, dtype=torch.float64).index_add_(0, idx, phi * f_fit[:, None])
        ridge = 1e-12 * torch.eye(width, dtype=torch.float64)
        ridge[0, 0] = 0.0  # every cell holds its centre: the constant is always determined
        coef = torch.linalg.solve(gram + ridge, rhs)
        u = u_test.double()
        t_idx = _nearest(u, c)
        phi_t = torch.cat([torch.ones(len(u), 1, dtype=torch.float64), u - c[t_idx]], dim=1)[:, :width]
        pred = (phi_t * coef[t_idx]).sum(dim=1)
        out[name] = float(((pred - f_test.double()) ** 2).mean()) / var
    return out


def oracle_run(config: dict[str, Any]) -> dict[str, Any]:
    """:func:`oracle_errors` of a task config with ``n_params`` (a sweep task)."""
    t0 = time.perf_counter()
    problem = problem_of(config)
    _, u, f = test_set(config)
    errs = oracle_errors(problem, int(config["n_params"]), u, f, int(config.get("seed", 0)))
    return {"nmse_constant": errs["constant"], "nmse_linear": errs["linear"], "seconds": time.perf_counter() - t0}
