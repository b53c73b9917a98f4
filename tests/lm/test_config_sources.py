"""One source per setting: the ID protocol from PAPER, presets that contain their configs, one CorpusSpec for
loading and preparing a corpus, and configs importable without torch (the CLI reads its defaults from them)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import pytest

from ttlab.errors import TTLabInputError

from .conftest import make_texts


def test_id_protocol_defaults_come_from_paper():
    from ttlab.intrinsic_dim.protocol import PAPER
    from ttlab.lm.embed import text_intrinsic_dimension
    from ttlab.lm.presets import IDOptions
    from ttlab.lm.suite_windows import SuiteConfig

    opts, suite = IDOptions(), SuiteConfig()
    assert (opts.k, opts.batch_size, opts.average) == (PAPER.k, PAPER.batch_size, PAPER.average) == (20, 4096, "mean")
    assert (suite.id_k, suite.id_batch_size, suite.id_average) == (PAPER.k, PAPER.batch_size, PAPER.average)
    defaults = text_intrinsic_dimension.__kwdefaults__
    assert (defaults["k"], defaults["batch_size"], defaults["average"]) == (PAPER.k, PAPER.batch_size, PAPER.average)


def test_presets_contain_their_configs_and_overrides_reach_them():
    from ttlab.lm.configs import TrainConfig
    from ttlab.lm.presets import DATA_SWEEP_PRESETS, MODEL_SWEEP_PRESETS, Execution, IDOptions, SweepData, sweep_kwargs

    for p in (*DATA_SWEEP_PRESETS.values(), *MODEL_SWEEP_PRESETS.values()):
        assert isinstance(p.train, TrainConfig) and isinstance(p.data, SweepData)
        assert isinstance(p.execution, Execution) and isinstance(p.id_options, IDOptions)
    quick = DATA_SWEEP_PRESETS["quick"]
    assert quick.max_iters == quick.train.max_iters == 1200 and quick.vocab_size == quick.data.vocab_size == 1024
    assert quick.workers == quick.execution.workers == 2
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        quick.nonsense  # noqa: B018
    changed = quick.with_overrides(max_iters=77, corpus="builtin:python", workers=1, seeds=(5,), lr=None)
    assert changed.train == TrainConfig(**{**quick.train.to_dict(), "max_iters": 77})
    assert changed.data.corpus == "builtin:python" and changed.execution.workers == 1 and changed.seeds == (5,)
    kw = sweep_kwargs("data", "quick", max_iters=77)
    assert kw["train"] is not quick.train and kw["train"].max_iters == 77 and kw["train"].lr == quick.train.lr
    for bad in ("max_tokens", "seed", "models"):  # set per run by the sweep, or the other kind's
        with pytest.raises(TTLabInputError, match=f"unknown data-sweep option.*{bad}"):
            sweep_kwargs("data", "quick", **{bad: 1})
    assert sweep_kwargs("model", "quick", max_tokens=5000)["max_tokens"] == 5000  # the model sweep's own field
    assert SweepData(cache_dir=__import__("pathlib").Path("/x")).cache_dir == "/x"


def test_corpus_spec_is_what_load_corpus_and_prepare_data_take(tmp_path):
    from ttlab.lm.corpus import CorpusSpec, load_corpus
    from ttlab.lm.data import prepare_data

    p = tmp_path / "c.txt"
    p.write_text("\n\n".join(make_texts(20)))
    spec = CorpusSpec(p, max_docs=15, val_frac=0.2, test_frac=0.2, split_seed=3)
    assert len(load_corpus(spec)) == 15 and load_corpus(spec).fingerprint() == load_corpus(p, max_docs=15).fingerprint()
    assert len(load_corpus(spec, max_docs=4)) == 4  # options change a spec's fields
    with pytest.raises(TypeError):
        load_corpus(p, nonsense=1)
    a = prepare_data(spec, vocab_size=300, cache_dir=tmp_path / "cache")
    b = prepare_data(str(p), vocab_size=300, cache_dir=tmp_path / "cache", max_docs=15, val_frac=0.2, test_frac=0.2,
                     split_seed=3)
    assert a.data.key == b.data.key and a.split.describe() == b.split.describe() == spec.split(a.corpus).describe()
    assert a.split.describe()["seed"] == 3 and a.corpus.describe()["n_docs"] == 15
    assert {f.name for f in fields(CorpusSpec)} >= {"source", "field_name", "max_docs", "val_frac", "test_frac", "split_seed"}


def test_configs_import_without_torch():
    code = ("import sys, ttlab.lm.configs, ttlab.lm.presets, ttlab.lm.corpus, ttlab.lm\n"
            "import ttlab.lm.suite, ttlab.lm.suite_windows\n"
            "assert 'torch' not in sys.modules, 'torch imported'\n"
            "from ttlab.lm import GPT, TrainConfig, load_run, train_on_corpus\n"
            "import ttlab.lm as lm\n"
            "assert lm.trainer.train is lm.train and 'torch' in sys.modules\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
