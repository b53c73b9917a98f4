"""ttlab — the transformer theory lab.

Runnable, tested implementations of two theories of transformers:

* ``ttlab.ntp`` — next-token-prediction training dynamics of a one-layer transformer and their
  max-margin limits (Huang, Liang, Yang 2024);
* ``ttlab.intrinsic_dim`` — intrinsic-dimension estimators (scikit-learn API, fast exact kNN, the
  paper protocol) and ``ttlab.scaling`` — exponent theory, scaling-law fits, manifold regression
  (Havrilla, Liao 2024);
* ``ttlab.lm`` — GPT models on real text: corpora, tokenizer, trainer, token embeddings, scaling sweeps;
* ``ttlab.sweep`` — cached task runner for sweeps (local process pool or Ray);
* ``ttlab.reproduce`` — the main job: every experiment of both papers and a report with verdicts;
* ``ttlab.cli`` — the ``ttlab`` command, a thin layer over the above.
"""

__version__ = "0.1.0"
