"""Paper-A speed and memory benchmarks (run on demand: `python benchmarks/bench_ntp.py`).

Cases, each in a fresh subprocess so its peak memory is its own:
  fig2   |V| = 20, the paper's Figure-2 setting, 900 + 900 NGD steps           (target ≤ 3 s after import)
  large  |V| = 500, 5,000 sentences of length ≤ 16, 900 + 900 steps            (target ≤ 60 s, ≤ 2 GiB)
Each case also times stage-2 steps of ours (analytic gradient) against a plain autograd reference loop
(loss via the literal batched forward, gradient by autograd, same NGD update), interleaved step by step
with the same warm-up and number of timed steps (benchmarks/_timing.py), and prints ours/reference of
the minima and of the medians. Both start from W_kq = 0, so their iterates must agree (printed).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from _timing import interleave, load_note

CASES = {
    "fig2": dict(vocab=20, sentences=100, max_len=6, steps=900, target_s=3.0, target_gib=None),
    "large": dict(vocab=500, sentences=5000, max_len=16, steps=900, target_s=60.0, target_gib=2.0),
}


def run_case(name: str, dtype: str, ref_steps: int, warmup: int) -> dict:
    import torch

    from ttlab.ntp.config import TrainConfig
    from ttlab.ntp.generate import generate_dataset
    from ttlab.ntp.model import NTPTransformer
    from ttlab.ntp.train import logit_spread_bound, train
    from ttlab.ntp.train import threads_for as _threads_for

    torch.set_num_threads(2)
    c = CASES[name]
    ds = generate_dataset(c["vocab"], c["sentences"], 2, c["max_len"], seed=0)
    t0 = time.perf_counter()
    c0 = time.process_time()
    cfg = TrainConfig(stage1_steps=c["steps"], stage2_steps=c["steps"], dtype=dtype)
    model = NTPTransformer(ds, dtype=dtype, max_logit_spread=logit_spread_bound(cfg, ds.vocab_size))
    res = train(ds, cfg, model=model)
    ours = time.perf_counter() - t0
    ours_cpu = time.process_time() - c0
    # reference: autograd through the model's plain loss, NGD on W_kq (stage 2 only); ours: the analytic
    # gradient of train(). Interleaved step by step, same warm-up and number of timed steps on both sides.
    W_ov = res.W_ov.clone()
    eta = 0.05 / c["vocab"] ** 0.5
    W_ref = torch.zeros_like(res.W_kq, requires_grad=True)
    W_ours = torch.zeros_like(res.W_kq)

    def ref_step() -> None:
        loss = model.loss(W_ov, W_ref)
        (g,) = torch.autograd.grad(loss, W_ref)
        with torch.no_grad():
            W_ref.sub_(eta * g / g.norm())

    def ours_step() -> None:
        lg = model.loss_and_grad(W_ov, W_ours, wrt=("kq",))
        W_ours.sub_(eta * lg.grad_kq / lg.grad_kq.norm())

    with _threads_for(model):  # the same thread rule as train()
        threads = torch.get_num_threads()
        t = interleave({"ours": ours_step, "reference": ref_step}, repeats=ref_steps, warmup=warmup)
    same = float((W_ours - W_ref.detach()).abs().max() / W_ours.abs().max())
    r = t.ratio("ours", "reference")
    rows = res.rows("2")
    return {
        "case": name,
        "dtype": model.dtype_name,
        "vocab": c["vocab"],
        "distinct_sentences": len(ds.sentences),
        "kq_constraints": res.wkq_star.n_constraints,
        "total_s": ours,
        "total_cpu_s": ours_cpu,
        "target_s": c["target_s"],
        "threads": threads,
        "stage2_ms_per_step": 1e3 * t["ours"].min,
        "stage2_ms_per_step_median": 1e3 * t["ours"].median,
        "autograd_reference_ms_per_step": 1e3 * t["reference"].min,
        "autograd_reference_ms_per_step_median": 1e3 * t["reference"].median,
        "ratio_ours_over_reference": r.of_min,
        "ratio_ours_over_reference_median": r.of_median,
        "timed_steps": t.repeats,
        "warmup_steps": t.warmup,
        "max_relative_difference_of_iterates": same,
        "final_cosine_kq": float(rows["cosine"][-1]),
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "target_gib": c["target_gib"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=list(CASES), action="append")
    ap.add_argument("--dtype", default="auto", choices=["auto", "float64", "float32"])
    ap.add_argument("--ref-steps", type=int, default=50, help="timed stage-2 steps per side (default 50)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed stage-2 steps per side first (default 5)")
    ap.add_argument("--quick", action="store_true", help="the fig2 case only")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    cases = a.case or (["fig2"] if a.quick else list(CASES))
    if not a.child:
        print(load_note())
    if a.child:
        print(json.dumps(run_case(cases[0], a.dtype, a.ref_steps, a.warmup)))
        return
    for name in cases:
        out = subprocess.run([sys.executable, __file__, "--child", "--case", name, "--dtype", a.dtype,
                              "--ref-steps", str(a.ref_steps), "--warmup", str(a.warmup)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        verdict_t = "OK" if r["total_s"] <= r["target_s"] else "SLOW"
        mem = f", peak RSS {r['peak_rss_gib']:.2f} GiB" + (
            f" (target ≤ {r['target_gib']} GiB: {'OK' if r['peak_rss_gib'] <= r['target_gib'] else 'OVER'})" if r["target_gib"] else "")
        print(f"[{name}] |V|={r['vocab']} sentences={r['distinct_sentences']} constraints={r['kq_constraints']} dtype={r['dtype']}: "
              f"1,800 steps + max-margin in {r['total_s']:.2f} s wall, {r['total_cpu_s']:.2f} s CPU (target ≤ {r['target_s']} s: {verdict_t}; "
              f"ratio to target {r['total_s'] / r['target_s']:.2f}){mem}")
        print(f"    stage-2 step (min / median of {r['timed_steps']} interleaved steps, {r['warmup_steps']} warm-up each, "
              f"{r['threads']} threads): ours {r['stage2_ms_per_step']:.2f} / {r['stage2_ms_per_step_median']:.2f} ms vs "
              f"autograd reference {r['autograd_reference_ms_per_step']:.2f} / {r['autograd_reference_ms_per_step_median']:.2f} ms "
              f"→ ours/reference = {r['ratio_ours_over_reference']:.2f} (min), {r['ratio_ours_over_reference_median']:.2f} (median); "
              f"iterates agree to {r['max_relative_difference_of_iterates']:.1e}; "
              f"final cos(W_kq, W*_kq) = {r['final_cosine_kq']:.5f}")


if __name__ == "__main__":
    main()
