"""A data sweep small enough for a test (a few seconds): SOTU, 3 sizes of a 1×2×16 model, a tiny ID protocol."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def tiny_data_sweep(out: Path, *, protocol: str, train: Any, **kw: Any) -> dict[str, Any]:
    """``run_data_sweep`` on 12 SOTU documents at 400, 800 and 1,600 tokens, one worker, no bootstrap (set
    ``TTLAB_CACHE`` to a temporary folder first); ``kw`` adds or overrides its keyword arguments."""
    from ttlab.lm.experiments import run_data_sweep
    from ttlab.lm.presets import Execution, IDOptions, SweepData, model_config

    base: dict[str, Any] = dict(
        data=SweepData(corpus="builtin:sotu", max_docs=12, vocab_size=300), model=model_config((1, 2, 16), 16),
        sizes=[400, 800, 1600], protocol=protocol, bootstrap=0, execution=Execution(workers=1),
        id_options=IDOptions(windows_per_doc=2, tokens_per_doc=8, batch_size=50, k=5), train=train)
    return run_data_sweep(out, **{**base, **kw})
