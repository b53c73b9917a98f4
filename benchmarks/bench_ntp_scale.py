"""Paper A at large vocabularies: the structured two-stage NGD (ttlab.ntp.structured) against the dense path.

Run on demand: `python benchmarks/bench_ntp_scale.py [--case v500] [--case gpt2]`.

Cases, each in a fresh subprocess so its peak memory is its own:
  v500  |V| = 500, 5,000 sentences of length ≤ 16 (bench_ntp's "large" data). Stage-1 and stage-2 steps of
        the structured path are timed against the dense path's steps (NTPTransformer's analytic gradient +
        the same NGD update) and, for stage 2, a plain autograd loop (the literal loss, autograd, NGD),
        all in float64 from the same W_ov and W_kq = 0, interleaved step by step with the same warm-up and
        number of timed steps (benchmarks/_timing.py); min and median ratios. Targets: structured stage-2
        step ≤ 0.2× dense and ≤ 0.3× autograd. The iterates of the three loops must agree (printed).
  gpt2  |V| = 50,257, 200,000 sentences of length 2…32 from the bounded-memory generator below, the full
        900 + 900-step structured run (target ≤ 10 min and ≤ 4 GiB peak RSS on 2 cores). No dense
        reference exists at this size (W_ov alone would be 20 GB in float64).

Imports: ttlab's public modules and benchmarks/_timing only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from _timing import interleave, load_note

CASES = {
    "v500": dict(vocab=500, sentences=5000, max_len=16, steps=900),
    "gpt2": dict(vocab=50_257, sentences=200_000, max_len=32, steps=900, target_s=600.0, target_gib=4.0),
}


def _rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def run_v500(ref_steps: int, warmup: int, threads: int) -> dict:
    import torch

    from ttlab.ntp.config import TrainConfig
    from ttlab.ntp.generate import generate_dataset
    from ttlab.ntp.model import NTPTransformer
    from ttlab.ntp.structured import SparseKQ, StructuredOV, StructuredProblem
    from ttlab.ntp.train import train

    torch.set_num_threads(threads)  # every side of the timing runs with the same thread count
    c = CASES["v500"]
    ds = generate_dataset(c["vocab"], c["sentences"], 2, c["max_len"], seed=0)
    V = ds.vocab_size
    step_threads: set[int] = set()  # intra-op threads seen by the training steps (the structured path uses one)
    t0 = time.perf_counter()
    res = train(ds, TrainConfig(stage1_steps=c["steps"], stage2_steps=c["steps"], impl="structured"),
                progress=lambda stage, t, total: step_threads.add(torch.get_num_threads()))
    full_s = time.perf_counter() - t0
    prob = StructuredProblem(ds)
    model = NTPTransformer(ds, dtype="float64", structure=prob.structure)
    eta0, eta = 0.2 / V**0.5, 0.05 / V**0.5

    # ---- stage 1: one NGD step on W_ov from the same point (the structured run's W_ov after 10 steps)
    ov0 = train(ds, TrainConfig(stage1_steps=10, stage2_steps=0, impl="structured")).structured.W_ov
    ov = StructuredOV(V, ov0.tokens, ov0.classes, ov0.label_val.clone(), ov0.other_val.clone())
    W1 = ov0.dense()
    mult = torch.tensor([1.0, V - 1.0], dtype=torch.float64)

    def s1_struct() -> None:
        ce, _ = prob.stage1_loss_grad(ov)
        g = ce.grad / ce.grad.abs().max()
        n = float(((g**2) * mult).sum().sqrt())
        ov.label_val -= eta0 * g[:, 0] / n
        ov.other_val -= eta0 * g[:, 1] / n

    def s1_dense() -> None:
        lg = model.collocation_loss_and_grad(W1)
        g = lg.grad_ov / lg.grad_ov.abs().max()
        W1.sub_(eta0 * g / g.norm())

    t1 = interleave({"structured": s1_struct, "dense": s1_dense}, repeats=ref_steps, warmup=warmup)
    agree1 = float((ov.dense() - W1).abs().max() / W1.abs().max())

    # ---- stage 2: NGD steps on W_kq from 0 with the final W_ov
    W_ov = res.structured.W_ov.dense()
    a_tok = prob.position_gain(res.structured.W_ov)
    kq = SparseKQ(V, prob.pair_token, prob.pair_query, torch.zeros(len(prob.pair_keys), dtype=torch.float64))
    W_dense = torch.zeros((V, V), dtype=torch.float64)
    W_ref = torch.zeros((V, V), dtype=torch.float64, requires_grad=True)

    def s2_struct() -> None:
        _, grad, _ = prob.stage2_loss_grad(a_tok, kq)
        kq.values -= eta * grad / grad.norm()

    def s2_dense() -> None:
        lg = model.loss_and_grad(W_ov, W_dense, wrt=("kq",))
        W_dense.sub_(eta * lg.grad_kq / lg.grad_kq.norm())

    def s2_autograd() -> None:
        loss = model.loss(W_ov, W_ref)
        (g,) = torch.autograd.grad(loss, W_ref)
        with torch.no_grad():
            W_ref.sub_(eta * g / g.norm())

    t2 = interleave({"structured": s2_struct, "dense": s2_dense, "autograd": s2_autograd}, repeats=ref_steps,
                    warmup=warmup)
    kqd = kq.dense()
    return {
        "case": "v500", "vocab": V, "distinct_sentences": len(ds.sentences), "max_len": ds.max_len,
        "full_run_s": full_s, "step_threads": sorted(step_threads),
        "stage1": {k: v.to_dict() for k, v in t1.sides.items()},
        "stage1_ratio": t1.ratio("structured", "dense").to_dict(),
        "stage1_agreement": agree1,
        "stage2": {k: v.to_dict() for k, v in t2.sides.items()},
        "stage2_ratio_dense": t2.ratio("structured", "dense").to_dict(),
        "stage2_ratio_autograd": t2.ratio("structured", "autograd").to_dict(),
        "stage2_agreement_dense": float((kqd - W_dense).abs().max() / W_dense.abs().max()),
        "stage2_agreement_autograd": float((kqd - W_ref.detach()).abs().max() / W_ref.detach().abs().max()),
        "timed_steps": t2.repeats, "warmup_steps": t2.warmup, "peak_rss_gib": _rss_gib(),
    }


def run_gpt2(sentences: int, steps: int) -> dict:
    import torch

    from ttlab.ntp.config import TrainConfig
    from ttlab.ntp.structured import StructuredProblem, train_structured

    torch.set_num_threads(2)
    c = CASES["gpt2"]
    phases: dict[str, tuple[float, float]] = {}

    def timed(name, fn):
        w, p = time.perf_counter(), time.process_time()
        out = fn()
        phases[name] = (time.perf_counter() - w, time.process_time() - p)
        return out

    ds = timed("generate", lambda: generate_large(c["vocab"], sentences, 2, c["max_len"], seed=0))
    prob = timed("prepare", lambda: StructuredProblem(ds))
    # one run; its progress callback marks where W* ends (stage-1 step 0) and where stage 2 starts
    marks: dict[str, tuple[float, float]] = {}
    step_threads: set[int] = set()

    def progress(stage: str, t: int, total: int) -> None:
        if t == 0:
            marks.setdefault(stage, (time.perf_counter(), time.process_time()))
        step_threads.add(torch.get_num_threads())

    start = (time.perf_counter(), time.process_time())
    res = timed("train", lambda: train_structured(ds, TrainConfig(stage1_steps=steps, stage2_steps=steps),
                                                  progress=progress, problem=prob))
    end = (start[0] + phases["train"][0], start[1] + phases["train"][1])
    s1, s2 = marks["stage 1"], marks.get("stage 2", end)
    phases["max_margin"] = (s1[0] - start[0], s1[1] - start[1])  # W*_ov, W*_kq (+ the first stage-1 step)
    phases["stage1"] = (s2[0] - s1[0], s2[1] - s1[1])
    phases["stage2"] = (end[0] - s2[0], end[1] - s2[1])  # + the limit loss
    del phases["train"]
    r1, r2 = res.rows("1"), res.rows("2")
    step_w = (phases["stage1"][0] + phases["stage2"][0]) / (2 * steps)
    step_c = (phases["stage1"][1] + phases["stage2"][1]) / (2 * steps)
    fixed_w = sum(phases[k][0] for k in ("generate", "prepare", "max_margin"))
    fixed_c = sum(phases[k][1] for k in ("generate", "prepare", "max_margin"))
    return {
        "case": "gpt2", "vocab": ds.vocab_size, "distinct_sentences": len(ds.sentences), "max_len": ds.max_len,
        "sentences_asked": sentences, "steps": steps, "tokens": prob.n_tokens, "distinct_tokens": prob.n_entries,
        "kq_pairs": len(prob.pair_keys), "kq_constraints": res.wkq_star.n_constraints, "wkq_method": res.wkq_star.method,
        "phases": {k: {"wall_s": w, "cpu_s": cp} for k, (w, cp) in phases.items()},
        "step_wall_s": step_w, "step_cpu_s": step_c, "step_threads": sorted(step_threads),
        "stage1_step_cpu_s": phases["stage1"][1] / steps, "stage2_step_cpu_s": phases["stage2"][1] / steps,
        "total_wall_s": sum(v[0] for v in phases.values()), "total_cpu_s": sum(v[1] for v in phases.values()),
        "projected_900_wall_s": fixed_w + 1800 * step_w, "projected_900_cpu_s": fixed_c + 1800 * step_c,
        "target_s": c["target_s"], "peak_rss_gib": _rss_gib(), "target_gib": c["target_gib"],
        "final_cosine_ov": float(r1["cosine"][-1]), "final_cosine_kq": float(r2["cosine"][-1]),
        "final_loss": float(r2["loss"][-1]), "limit_loss": res.limit_loss,
        "final_min_optimal_attention": float(r2["min_optimal_attention"][-1]),
    }


def generate_large(vocab: int, n_sentences: int, min_len: int, max_len: int, seed: int = 0):
    """Random realizable dataset in O(|V| + tokens) memory: ttlab.ntp.generate's bounded-memory generator."""
    from ttlab.ntp.generate import generate_dataset

    return generate_dataset(vocab, n_sentences, min_len, max_len, seed, method="large")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=list(CASES), action="append")
    ap.add_argument("--ref-steps", type=int, default=20, help="timed steps per side (default 20)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps per side first (default 3)")
    ap.add_argument("--threads", type=int, default=1,
                    help="intra-op threads for every side of the v500 timings (default 1: the machine is shared)")
    ap.add_argument("--gpt2-sentences", type=int, default=CASES["gpt2"]["sentences"],
                    help="sentences of the gpt2 case (default 200,000; fewer for a quick measurement)")
    ap.add_argument("--gpt2-steps", type=int, default=CASES["gpt2"]["steps"],
                    help="steps per stage of the gpt2 case (default 900; the 900 + 900 time is projected from these)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    cases = a.case or ["v500"]
    if a.child:
        r = run_v500(a.ref_steps, a.warmup, a.threads) if cases[0] == "v500" else run_gpt2(a.gpt2_sentences, a.gpt2_steps)
        print(json.dumps(r))
        return
    print(load_note())
    print(f"uptime: {os.popen('uptime').read().strip()}")
    for name in cases:
        out = subprocess.run([sys.executable, __file__, "--child", "--case", name, "--ref-steps", str(a.ref_steps),
                              "--warmup", str(a.warmup), "--threads", str(a.threads), "--gpt2-sentences",
                              str(a.gpt2_sentences), "--gpt2-steps", str(a.gpt2_steps)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if name == "v500":
            s1, s2 = r["stage1"], r["stage2"]
            ms = lambda d: f"{1e3 * d['min_s']:.2f} / {1e3 * d['median_s']:.2f} ms"  # noqa: E731
            rd, ra, r1 = r["stage2_ratio_dense"], r["stage2_ratio_autograd"], r["stage1_ratio"]
            print(f"[v500] |V|={r['vocab']} sentences={r['distinct_sentences']} L≤{r['max_len']}, float64, "
                  f"{r['threads']} threads; min / median of {r['timed_steps']} interleaved steps, {r['warmup_steps']} "
                  f"warm-up each; full structured 900 + 900 run {r['full_run_s']:.2f} s, peak RSS {r['peak_rss_gib']:.2f} GiB")
            print(f"    stage 1: structured {ms(s1['structured'])}, dense {ms(s1['dense'])} → structured/dense = "
                  f"{r1['ratio_of_min']:.4f} (min), {r1['ratio_of_median']:.4f} (median); W_ov agree to {r['stage1_agreement']:.1e}")
            print(f"    stage 2: structured {ms(s2['structured'])}, dense {ms(s2['dense'])}, autograd {ms(s2['autograd'])}")
            print(f"    stage 2 structured/dense = {rd['ratio_of_min']:.3f} (min), {rd['ratio_of_median']:.3f} (median) "
                  f"[target ≤ 0.2: {'OK' if rd['ratio_of_min'] <= 0.2 else 'MISSED'}]; structured/autograd = "
                  f"{ra['ratio_of_min']:.3f} (min), {ra['ratio_of_median']:.3f} (median) "
                  f"[target ≤ 0.3: {'OK' if ra['ratio_of_min'] <= 0.3 else 'MISSED'}]")
            print(f"    W_kq iterates agree: vs dense {r['stage2_agreement_dense']:.1e}, vs autograd "
                  f"{r['stage2_agreement_autograd']:.1e} (relative max difference)")
        else:
            ph = r["phases"]
            proj = r["projected_900_wall_s"]
            print(f"[gpt2] |V|={r['vocab']} sentences={r['distinct_sentences']} ({r['tokens']:,} tokens) L≤{r['max_len']} "
                  f"pairs={r['kq_pairs']:,} constraints={r['kq_constraints']:,} ({r['wkq_method']}), 2 threads (steps: "
                  f"{'/'.join(map(str, r['step_threads']))} intra-op); "
                  + ", ".join(f"{k} {v['wall_s']:.1f} s wall / {v['cpu_s']:.1f} s CPU" for k, v in ph.items()))
            print(f"    {r['steps']} + {r['steps']} steps: {1e3 * r['step_wall_s']:.0f} ms wall, {1e3 * r['step_cpu_s']:.0f} ms CPU "
                  f"per step (stage 1 {1e3 * r['stage1_step_cpu_s']:.1f} ms, stage 2 {1e3 * r['stage2_step_cpu_s']:.0f} ms CPU); "
                  f"this run {r['total_wall_s']:.0f} s wall / {r['total_cpu_s']:.0f} s CPU; peak RSS {r['peak_rss_gib']:.2f} GiB (target ≤ {r['target_gib']} GiB: "
                  f"{'OK' if r['peak_rss_gib'] <= r['target_gib'] else 'OVER'})")
            label = "measured" if r["steps"] == 900 and r["sentences_asked"] == CASES["gpt2"]["sentences"] else "projected"
            print(f"    900 + 900 steps at these sentences ({label} from the per-step time): {proj:.0f} s wall, "
                  f"{r['projected_900_cpu_s']:.0f} s CPU (target ≤ {r['target_s']:.0f} s: "
                  f"{'OK' if proj <= r['target_s'] else 'MISSED'})")
            print(f"    final cos(W_ov, W*_ov) = {r['final_cosine_ov']:.6f}, cos(W_kq, W*_kq) = {r['final_cosine_kq']:.4f}, "
                  f"loss {r['final_loss']:.4g} (limit {r['limit_loss']:.4g}), min optimal attention "
                  f"{r['final_min_optimal_attention']:.3f}")
        print(f"uptime: {os.popen('uptime').read().strip()}")


if __name__ == "__main__":
    main()
