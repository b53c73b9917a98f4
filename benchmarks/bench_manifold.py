"""Benchmark of the manifold-regression experiment (`ttlab scaling manifold`).

Two parts, both on this machine as it is (others' jobs disturb timings: minima and medians are reported):

1. steps — milliseconds per training step (batch 128, one thread, forward + backward + clip +
   fused AdamW) for every architecture at D = 16 and 128 and several sequence lengths and widths,
   min and median of the same number of steps per model, stepped in turn (benchmarks/_timing.py);
2. sweep — wall time of the ``--quick`` sweep (``ttlab scaling manifold --quick``, 2 workers) in
   a fresh process, with its fitted α̂_D next to 2β/(2β+d). The target is ≤ 5 minutes on 2 cores.

    .venv/bin/python benchmarks/bench_manifold.py                 # both parts
    .venv/bin/python benchmarks/bench_manifold.py --only steps    # step times only (~1 min)
    .venv/bin/python benchmarks/bench_manifold.py --quick         # step times of a few models only
    .venv/bin/python benchmarks/bench_manifold.py --out bench.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import interleave, load_note

ROOT = Path(__file__).resolve().parents[1]


def bench_steps(repeats: int = 15, warmup: int = 2, quick: bool = False) -> list[dict]:
    """Milliseconds per training step (min and median of ``repeats`` steps) per model. All models are built
    first and stepped in turn, one step each per round (benchmarks/_timing.py), so load from other
    processes spreads over all of them alike."""
    import torch

    from ttlab.scaling.manifold_regression import _adamw
    from ttlab.scaling.regressor_config import RegressorConfig
    from ttlab.scaling.regressors import build_regressor, count_parameters

    torch.set_num_threads(1)
    grid = [("mlp", D, 1, w, 3) for D in (16, 128) for w in (64, 256)]
    grid += [(arch, D, tok, w, 2) for arch in ("softmax", "relu") for D in (16, 128) for tok in (4, 8, 16)
             for w in (32, 64)]
    if quick:
        grid = [g for g in grid if g[1] == 16 and g[2] in (1, 8)]
    sides, info = {}, {}
    for arch, D, tokens, width, depth in grid:
        cfg = RegressorConfig(arch=arch, ambient=D, n_embd=width, n_layer=depth, n_head=4 if width % 4 == 0 else 1,
                              chunk=-(-D // tokens) if arch != "mlp" else 1)
        torch.manual_seed(0)
        model = build_regressor(cfg)
        opt = _adamw(model, 1e-3, 0.0)
        x, y = torch.randn(128, D), torch.randn(128)

        def step(model=model, opt=opt, x=x, y=y) -> None:
            loss = torch.mean((model(x) - y) ** 2)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

        name = f"{arch} D={D} tokens={tokens if arch != 'mlp' else '-'} width={width}"
        sides[name] = step
        info[name] = {"arch": arch, "D": D, "tokens": tokens if arch != "mlp" else None, "width": width,
                      "depth": depth, "params": count_parameters(model)}
    t = interleave(sides, repeats=repeats, warmup=warmup)
    rows = []
    for name, row in info.items():
        rows.append({**row, "ms_per_step_min": 1e3 * t[name].min, "ms_per_step_median": 1e3 * t[name].median})
        print(f"{row['arch']:8s} D={row['D']:4d} tokens={row['tokens'] or '-':>3} width={row['width']:4d} "
              f"params={row['params']:8d}  min {rows[-1]['ms_per_step_min']:7.2f} ms/step, "
              f"median {rows[-1]['ms_per_step_median']:7.2f} ms/step", flush=True)
    print(f"({t.repeats} interleaved steps per model after {t.warmup} warm-up steps each, batch 128, one thread)")
    return rows


def bench_quick_sweep() -> dict:
    """Wall time and fits of ``ttlab scaling manifold --quick`` in a fresh process (cold cache)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-c", "from ttlab.cli import main; main()", "scaling", "manifold", "--quick",
               "--out", tmp, "--json"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"quick sweep failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        payload = json.loads(proc.stdout)
    fits = [{"d": f["d"], "ambient": f["ambient"], "alpha_hat": f["alpha_hat"], "ci": f["ci"],
             "alpha_pred": f["alpha_pred"], "id_hat": f["id_hat"], "mse_at_n_ref": f["mse_at_n_ref"]}
            for f in payload["fits"]]
    out = {"wall_seconds": wall, "sweep_seconds": payload["wall_seconds"],
           "task_seconds": payload["sweep"]["task_seconds"], "estimated_wall_seconds":
           payload["cost_estimate"]["wall_seconds"], "fits": fits}
    print(f"quick sweep: {wall:.0f} s wall (target ≤ 300 s); estimate was {out['estimated_wall_seconds']:.0f} s")
    for f in fits:
        print(f"  d={f['d']} D={f['ambient']}: α̂_D = {f['alpha_hat']:.3f} [{f['ci'][0]:.3f}, {f['ci'][1]:.3f}] "
              f"vs 2β/(2β+d) = {f['alpha_pred']:.3f}; ID (MLE) = {f['id_hat']:.2f}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=("steps", "sweep"), help="run one part only")
    ap.add_argument("--out", type=Path, help="also write the numbers as JSON")
    ap.add_argument("--quick", action="store_true", help="step times of the D = 16 models with 1 or 8 tokens only")
    args = ap.parse_args()
    if args.quick:
        args.only = "steps"
    from ttlab.provenance import atomic_write_json, versions

    result: dict = {"versions": versions()}
    print(load_note(), flush=True)
    if args.only in (None, "steps"):
        result["steps"] = bench_steps(quick=args.quick)
    if args.only in (None, "sweep"):
        result["quick_sweep"] = bench_quick_sweep()
    if args.out:
        atomic_write_json(args.out, result)


if __name__ == "__main__":
    main()
