"""Embedding extraction + paper-protocol ID for 1,000 documents with a 4-layer model (run on demand).

Setting (the issue's target: ≤ 2 minutes end to end on 2 cores): a 4-layer, 4-head, 128-wide GPT with
a 1,024-token context (the paper's window) and a BPE vocabulary of 2,048 trained on the bundled State of
the Union corpus; the corpus is cut into 1,000 documents of equal length (~2,600 tokens each). The
pipeline — ``ttlab.lm.embed.embed_corpus`` (tokenize each document, one random 1,024-token window,
32 sampled positions, final layer after ln_f) followed by ``text_intrinsic_dimension`` (shuffled
batches of 4,096, MLE with K = 20) — is timed end to end.

Reference, measured in the same run on the same windows: the bare minimum any implementation must
do — tokenize the documents, one forward pass per window through the model's blocks (batched the same
way), gather the 32 sampled rows, and run scikit-learn's exact kNN + the MLE formula per batch. The
ratio ours/reference shows the overhead of ttlab's streaming, sampling and bookkeeping.
Weights are random: speed does not depend on training.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    from ttlab.lm import GPT, GPTConfig, load_corpus, prepare_data
    from ttlab.lm.corpus import Corpus
    from ttlab.lm.embed import EmbedConfig, EmbeddingModel, embed_corpus, text_intrinsic_dimension

    with tempfile.TemporaryDirectory() as tmp:
        prep = prepare_data("builtin:sotu", vocab_size=2048, cache_dir=Path(tmp) / "cache")
        text = "\n\n".join(load_corpus("builtin:sotu").texts())
        step = len(text) // args.docs
        docs = [text[i * step:(i + 1) * step] for i in range(args.docs)]
        corpus_path = Path(tmp) / "chunks.jsonl"
        import json

        corpus_path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs))
        torch.manual_seed(0)
        cfg = GPTConfig(vocab_size=prep.tokenizer.vocab_size, block_size=args.context, n_layer=4, n_head=4, n_embd=128)
        gpt = GPT(cfg).eval()
        model = EmbeddingModel(name="bench-4L", n_layer=4, width=128, max_context=args.context,
                               encode=prep.tokenizer.encode, hidden_states=gpt.hidden_states)
        ecfg = EmbedConfig(tokens_per_doc=32, context=args.context, window="random", split="train", seed=0)

        t0 = time.perf_counter()
        emb = embed_corpus(model, str(corpus_path), ecfg, val_frac=0.0, test_frac=0.0)
        t_embed = time.perf_counter() - t0
        est = text_intrinsic_dimension(emb, -1, batch_size=4096, k=20)
        t_ours = time.perf_counter() - t0

        # reference: same windows, bare forward + gather, sklearn kNN + MLE
        from sklearn.neighbors import NearestNeighbors

        from ttlab.lm.corpus import split_corpus
        from ttlab.lm.embed import sample_windows

        t0 = time.perf_counter()
        sp = split_corpus(load_corpus(str(corpus_path)), val_frac=0.0, test_frac=0.0, seed=0)
        toks = [np.asarray(prep.tokenizer.encode(t)) for t in sp.texts("train")]
        rows = []
        with torch.no_grad():
            for b in range(0, len(toks), ecfg.batch_docs):
                chunk = []
                for i in range(b, min(b + ecfg.batch_docs, len(toks))):
                    [(s, n, pos, _)] = sample_windows(len(toks[i]), ecfg, args.context, np.random.default_rng([0, i]))
                    chunk.append((toks[i][s:s + n], pos))
                T = max(len(w) for w, _ in chunk)
                idx = torch.zeros((len(chunk), T), dtype=torch.long)
                for j, (w, _) in enumerate(chunk):
                    idx[j, :len(w)] = torch.as_tensor(w)
                h = gpt.hidden_states(idx)[-1]
                for j, (_, pos) in enumerate(chunk):
                    rows.append(h[j, pos].numpy())
        X = np.concatenate(rows)
        t_ref_embed = time.perf_counter() - t0
        rng = np.random.default_rng(0)
        X = X[rng.permutation(len(X))]
        dims = []
        bs = min(4096, len(X))
        for s in range(0, len(X) - bs + 1, bs):
            B = X[s:s + bs].astype(np.float64)
            dist, _ = NearestNeighbors(n_neighbors=21).fit(B).kneighbors(B)
            r = dist[:, 1:]
            dims.append(np.mean((20 - 1) / np.log(r[:, -1:] / r[:, :-1]).sum(axis=1)))
        t_ref = time.perf_counter() - t0

    print(f"documents {emb.meta['n_docs']}, vectors {emb.meta['n_vectors']} × 128, window tokens {emb.meta['window_tokens']:,}")
    print(f"ours:      embed {t_embed:6.1f} s, embed + ID {t_ours:6.1f} s  (ID {est['intrinsic_dim']:.3f}, "
          f"{len(est['batch_dims'])} batches)  target ≤ 120 s")
    print(f"reference: embed {t_ref_embed:6.1f} s, embed + ID {t_ref:6.1f} s  (ID {np.mean(dims):.3f})")
    print(f"ratio ours/reference: {t_ours / t_ref:.2f}")


if __name__ == "__main__":
    main()
