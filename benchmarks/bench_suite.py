"""Throughput of the model-suite evaluation loop against a plain logits + cross-entropy loop (run on demand).

Setting: a GPT-2-architecture model (Hugging Face ``GPT2LMHeadModel``, random weights: speed does not
depend on training) of 4 layers, 4 heads, width 256, saved as a model folder with a byte-level BPE
tokenizer (vocabulary 4,096) trained on the bundled State of the Union corpus, and loaded the way
``ttlab lm suite`` loads it. Text: word-aligned windows of ``--window-bytes`` bytes from the corpus's
test split (``ttlab.lm.suite_windows.select_windows``), every window within the context.

Ours: :func:`ttlab.lm.suite_scoring.score_windows` — tokenize every window, chunk, token-budgeted batches, one
forward pass per batch giving the logits (cross-entropy summed per token) *and* the last hidden state
at the sampled ID positions (forward hook on the final norm).

Reference, same process, same windows: the plain loop — tokenize each window, put the start token in
front, batches of the same number of tokens in window order, ``model(input_ids).logits`` and
``F.cross_entropy`` over the real positions. Both run once as warm-up, then ``--repeats`` interleaved
timed runs; min and median of each and their ratios are printed (target: ours ≤ 1.1 × reference).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--windows", type=int, default=24)
    ap.add_argument("--window-bytes", type=int, default=1600)
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    import transformers

    from ttlab.lm.corpus import load_corpus, split_corpus
    from ttlab.lm.suite_models import open_suite_model, resolve_model
    from ttlab.lm.suite_scoring import score_windows
    from ttlab.lm.suite_windows import SuiteConfig, select_windows
    from ttlab.lm.tokenizer import train_bpe

    with tempfile.TemporaryDirectory() as tmp:
        sp = split_corpus(load_corpus("builtin:sotu"), seed=0)
        tok = train_bpe(sp.texts("train"), vocab_size=4096)
        torch.manual_seed(0)
        hf_cfg = transformers.GPT2Config(vocab_size=tok.vocab_size, n_positions=args.context, n_embd=256, n_layer=4,
                                         n_head=4, bos_token_id=tok.eot_id, eos_token_id=tok.eot_id)
        folder = Path(tmp) / "gpt2-bench"
        transformers.GPT2LMHeadModel(hf_cfg).save_pretrained(folder)
        tok.to_hf().save_pretrained(folder)
        sm = open_suite_model(resolve_model(str(folder)))
        cfg = SuiteConfig(context=args.context, window="random", window_bytes=args.window_bytes, windows_per_doc=4,
                          batch_tokens=args.batch_tokens)
        windows = select_windows(list(sp.texts("test")), cfg)[: args.windows]
        model, start = sm.model, sm.start_token_id

        def ours() -> tuple[float, int]:
            r = score_windows(sm, windows, cfg)
            return r["nats"], r["tokens"]

        def reference() -> tuple[float, int]:
            total, n = 0.0, 0
            with torch.inference_mode():
                seqs = [[start, *sm.encode(w.text)] for w in windows]
                assert all(len(s) - 1 <= args.context for s in seqs), "a window exceeds the context"
                per = max(1, args.batch_tokens // max(len(s) - 1 for s in seqs))
                for b in range(0, len(seqs), per):
                    batch = seqs[b:b + per]
                    T = max(len(s) - 1 for s in batch)
                    idx = torch.zeros((len(batch), T), dtype=torch.long)
                    tgt = torch.full((len(batch), T), -100, dtype=torch.long)
                    for j, s in enumerate(batch):
                        idx[j, :len(s) - 1] = torch.as_tensor(s[:-1])
                        tgt[j, :len(s) - 1] = torch.as_tensor(s[1:])
                    logits = model(idx).logits
                    total += float(F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1),
                                                   ignore_index=-100, reduction="sum"))
                    n += int((tgt != -100).sum())
            return total, n

        n_ours, n_ref = ours(), reference()  # warm-up, and the two must agree
        times: dict[str, list[float]] = {"ours": [], "reference": []}
        for _ in range(args.repeats):
            for name, fn in (("ours", ours), ("reference", reference)):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)

    n_bytes = sum(w.n_bytes for w in windows)
    print(f"{len(windows)} windows, {n_bytes:,} bytes, {n_ours[1]:,} tokens; GPT-2 architecture 4L × 256, vocabulary "
          f"{tok.vocab_size}, {args.threads} threads, batches of ≤ {args.batch_tokens} tokens")
    print(f"total nats: ours {n_ours[0]:.3f}, reference {n_ref[0]:.3f} (relative difference "
          f"{abs(n_ours[0] - n_ref[0]) / n_ref[0]:.1e}); tokens {n_ours[1]} vs {n_ref[1]}")
    for name, ts in times.items():
        print(f"{name:>9}: min {min(ts):.3f} s, median {statistics.median(ts):.3f} s over {len(ts)} runs "
              f"({n_ours[1] / min(ts):,.0f} tokens/s at best)")
    print(f"ratio ours/reference: min {min(times['ours']) / min(times['reference']):.3f}, median "
          f"{statistics.median(times['ours']) / statistics.median(times['reference']):.3f}  (target ≤ 1.1)")


if __name__ == "__main__":
    main()
