"""No command ends in a traceback on a numeric option (issue 33): every integer option of every command given -1, and
every float option given -1 and NaN, is refused with exit 2 and one line naming the flag, before any work — the sweep
reads the options from the command line's own definition, so a new option is covered as it is added."""

from __future__ import annotations

import signal
import typing
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import cli_params

LEGITIMATE = {  # (command, flag, value) where the value means something
    ("id embed", "--layer", "-1"),  # the last layer, as in Python
}
BASE = {  # the cheapest valid call of each command (tmp: the test's folder, fixtures made below)
    "reproduce": lambda t, cache: ["reproduce", "--part", "table1", "--out", t / "o"],
    "ntp check": lambda t, cache: ["ntp", "check", t / "d.txt"],
    "ntp generate": lambda t, cache: ["ntp", "generate", "--out", t / "g.txt"],
    "ntp run": lambda t, cache: ["ntp", "run", "--out", t / "o", "--stage1-steps", "2", "--stage2-steps", "2"],
    "ntp generalize": lambda t, cache: ["ntp", "generalize", "--out", t / "o", "--stage1-steps", "2", "--stage2-steps", "2"],
    "id estimate": lambda t, cache: ["id", "estimate", t / "x.npy"],
    "id compare": lambda t, cache: ["id", "compare", t / "x.npy", "--methods", "mle"],
    "id scale": lambda t, cache: ["id", "scale", t / "x.npy"],
    "id sample-manifold": lambda t, cache: ["id", "sample-manifold", "sphere", "--d", "2", "--ambient", "5", "--n", "50",
                                     "--out", t / "s.npy"],
    "id embed": lambda t, cache: ["id", "embed", "--model", t / "no-model", "--out", t / "e.npy"],
    "scaling predict": lambda t, cache: ["scaling", "predict", "--id", "10"],
    "scaling convert": lambda t, cache: ["scaling", "convert", "--alpha-n", "0.1"],
    "scaling table1": lambda t, cache: ["scaling", "table1"],
    "scaling fit": lambda t, cache: ["scaling", "fit", t / "fit.csv", "--x", "n", "--y", "loss", "--bootstrap", "20"],
    "scaling frontier": lambda t, cache: ["scaling", "frontier", t / "runs.csv", "--bootstrap", "8"],
    "scaling isoflop": lambda t, cache: ["scaling", "isoflop", t / "iso.csv", "--bootstrap", "5"],
    "scaling manifold": lambda t, cache: ["scaling", "manifold", "--quick", "--out", t / "o", "--estimate-only"],
    "scaling model-size": lambda t, cache: ["scaling", "model-size", "--quick", "--out", t / "o", "--estimate-only"],
    "lm suite": lambda t, cache: ["lm", "suite", "--corpus", "builtin:sotu", "--model", t / "no-model", "--out", t / "o"],
    "lm data-sweep": lambda t, cache: ["lm", "data-sweep", "--quick", "--out", t / "o"],
    "lm model-sweep": lambda t, cache: ["lm", "model-sweep", "--quick", "--out", t / "o"],
    "lm id-ablations": lambda t, cache: ["lm", "id-ablations", t / "no-run", "--out", t / "o"],
    "lm prepare": lambda t, cache: ["lm", "prepare", "--corpus", "builtin:sotu", "--cache-dir", cache],
    "lm train": lambda t, cache: ["lm", "train", "--corpus", "builtin:sotu", "--out", t / "o", "--cache-dir", cache,
                           "--max-iters", "2", "--eval-iters", "1"],
    "lm sample": lambda t, cache: ["lm", "sample", t / "no-run"],
    "lm corpus info": lambda t, cache: ["lm", "corpus", "info", "--corpus", "builtin:sotu"],
}


def _kind(param) -> type | None:
    a = param.type_descriptor.annotation
    base = [t for t in (typing.get_args(a) or (a,)) if t is not type(None)]
    return base[0] if base and base[0] in (int, float) else None


def _cases(values_int, values_float):
    cases = [(command, max(p.opts, key=len), value) for command, p in cli_params()
             if p.param_type_name == "option" and _kind(p)
             for value in (values_float if _kind(p) is float else values_int)]
    return [c for c in cases if c not in LEGITIMATE]


CASES = _cases(("-1",), ("-1", "nan"))
EDGE_CASES = _cases(("0", "1e18"), ("0", "1e18"))


def test_every_command_with_numeric_options_has_a_base_call():
    assert {c for c, _, _ in CASES} <= set(BASE)


class _Ran(Exception):
    pass


def _run(command: str, flag: str, value: str, tmp_path: Path, cache: Path, run_cli):
    """The base call of ``command`` with ``flag value``, on fixtures written in ``tmp_path``; stopped after 20 s."""
    (tmp_path / "d.txt").write_text("a b => c\na => b\nb => c\nc => a\n", encoding="utf-8")
    np.save(tmp_path / "x.npy", np.random.default_rng(0).normal(size=(200, 3)))
    (tmp_path / "fit.csv").write_text("n,loss\n" + "".join(f"{n},{3 * n ** -0.1:.6g}\n" for n in (1e3, 1e4, 1e5, 1e6)))
    (tmp_path / "runs.csv").write_text("N,D,loss\n" + "".join(  # a Chinchilla grid of runs
        f"{n:g},{d:g},{1.7 + 400 * n ** -0.34 + 400 * d ** -0.28:.6g}\n" for n in (1e7, 1e8, 1e9) for d in (1e9, 1e10, 1e11)))
    (tmp_path / "iso.csv").write_text("N,C,loss\n" + "".join(  # three IsoFLOP profiles with a minimum each
        f"{n:g},{c:g},{2 + (np.log(n) - np.log(c) / 2) ** 2 / 50:.6g}\n" for c in (1e16, 1e18, 1e20)
        for n in np.geomspace(1e6, 1e11, 11)))
    args = [str(a) for a in BASE[command](Path(tmp_path), cache)]
    args = args[:args.index(flag) + 1] + [value] + args[args.index(flag) + 2:] if flag in args else [*args, flag, value]

    def ran(*_):
        raise _Ran(f"{command} {flag} {value} was not refused: it ran for 20 s")

    old = signal.signal(signal.SIGALRM, ran)
    signal.alarm(20)
    try:
        return run_cli(*args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("command, flag, value", CASES, ids=[" ".join(c) for c in CASES])
def test_a_bad_numeric_option_is_refused_before_any_work(command, flag, value, tmp_path, run_cli):
    r = _run(command, flag, value, tmp_path, tmp_path / "cache", run_cli)
    assert r.code == 2, (r.code, r.err[-300:])
    assert "Traceback" not in r.err and "Traceback" not in r.out


@pytest.fixture(scope="module")
def token_cache(tmp_path_factory) -> Path:
    """One tokenizer and token cache for the edge sweep's corpus commands (a new split still builds its own)."""
    return tmp_path_factory.mktemp("token_cache")


class _Started(Exception):
    pass


WORK = {  # where a command's long work starts, after every check of its settings: stubbed in the edge sweep
    # the training loops (the data, memory and time checks still run)
    "lm train": (("ttlab.lm.train_corpus", "train"), ("ttlab.lm.train_corpus", "train_converged")),
    "lm data-sweep": (("ttlab.sweep", "run_sweep"),),  # the sweep's runs
    "lm model-sweep": (("ttlab.sweep", "run_sweep"),),
}


@pytest.mark.parametrize("command, flag, value", EDGE_CASES, ids=[" ".join(c) for c in EDGE_CASES])
def test_an_edge_numeric_option_ends_cleanly(command, flag, value, tmp_path, run_cli, monkeypatch, token_cache):
    """0 and 1e18 on every numeric option: a clear refusal (exit 2), or a run that ends cleanly — or, for the long
    commands of :data:`WORK`, one that reaches its work with every check passed (the work itself is their own tests')."""
    import importlib

    if command in WORK:
        def started(*args, **kwargs):
            raise _Started

        for module, name in WORK[command]:
            monkeypatch.setattr(importlib.import_module(module), name, started)
    try:
        r = _run(command, flag, value, tmp_path, token_cache, run_cli)
    except _Started:
        return
    assert r.code in (0, 1, 2), (r.code, r.err[-300:])
    assert "Traceback" not in r.err and "Traceback" not in r.out
