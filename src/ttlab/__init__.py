"""ttlab — the transformer theory lab.

Runnable, tested implementations of two theories of transformers:

* ``ttlab.ntp`` — next-token-prediction training dynamics of a one-layer transformer and their
  max-margin limits (Huang, Liang, Yang 2024);
* ``ttlab.intrinsic_dim`` — intrinsic-dimension estimators (scikit-learn API, fast exact kNN, the
  paper protocol) and ``ttlab.scaling`` — exponent theory, scaling-law fits, manifold regression
  (Havrilla, Liao 2024);
* ``ttlab.lm`` — GPT models on real text: corpora, tokenizer, trainer, token embeddings, pretrained
  models, the data- and model-scaling experiments (``ttlab.lm.experiments``) and suite evaluation;
* ``ttlab.sweep`` — cached task runner for sweeps (local process pool or Ray);
* ``ttlab.reproduce`` — the main job: every experiment of both papers and a report with verdicts;
* ``ttlab.cli`` — the ``ttlab`` command, a thin layer over the above.

Shared modules: ``ttlab.errors`` (:class:`~ttlab.errors.TTLabInputError`), ``ttlab.configs``
(dict round trip of config dataclasses), ``ttlab.provenance`` (versions, atomic writers),
``ttlab.outputs`` (checks of output paths), ``ttlab.validation`` (parameter checks and scikit-learn-style
declarative constraints), ``ttlab.markup`` (console text that shows names as they are: escaped rich markup).

What may import what (enforced by ``tests/test_layers.py``, with no import cycle and no private name imported
across modules): the shared modules import nothing of ttlab but each other; ``ntp`` and
``sweep`` import only the shared modules; ``intrinsic_dim`` → ``scaling`` → ``lm`` (each may import
those before it, plus ``sweep``; ``intrinsic_dim.compare`` reads ``scaling.theory`` lazily);
``reproduce`` may import every library package; ``cli`` imports the library, and the library never
imports ``cli`` (``python -m ttlab.lm`` is the one entry point that does). Importing ``ttlab``
itself imports nothing.

The researcher's one call, loaded on first use: ``ttlab.predict_exponents(texts, model, tokenizer)`` (your texts and
causal LM → the intrinsic dimension with its spread → paper B's α_D and α_N with the estimator band;
:func:`ttlab.lm.text_exponents.predict_exponents`).
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["predict_exponents"]


def __getattr__(name: str) -> Any:
    """``predict_exponents`` from :mod:`ttlab.lm.text_exponents` (imported on first use: ``import ttlab`` stays light)."""
    if name == "predict_exponents":
        from ttlab.lm.text_exponents import predict_exponents

        return predict_exponents
    import importlib

    try:  # a subpackage not imported yet (``ttlab.scaling``)
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
