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
    "reproduce": lambda t: ["reproduce", "--part", "table1", "--out", t / "o"],
    "ntp check": lambda t: ["ntp", "check", t / "d.txt"],
    "ntp generate": lambda t: ["ntp", "generate", "--out", t / "g.txt"],
    "ntp run": lambda t: ["ntp", "run", "--out", t / "o", "--stage1-steps", "2", "--stage2-steps", "2"],
    "ntp generalize": lambda t: ["ntp", "generalize", "--out", t / "o", "--stage1-steps", "2", "--stage2-steps", "2"],
    "id estimate": lambda t: ["id", "estimate", t / "x.npy"],
    "id compare": lambda t: ["id", "compare", t / "x.npy", "--methods", "mle"],
    "id sample-manifold": lambda t: ["id", "sample-manifold", "sphere", "--d", "2", "--ambient", "5", "--n", "50",
                                     "--out", t / "s.npy"],
    "id embed": lambda t: ["id", "embed", "--model", t / "no-model", "--out", t / "e.npy"],
    "scaling predict": lambda t: ["scaling", "predict", "--id", "10"],
    "scaling convert": lambda t: ["scaling", "convert", "--alpha-n", "0.1"],
    "scaling table1": lambda t: ["scaling", "table1"],
    "scaling fit": lambda t: ["scaling", "fit", t / "fit.csv", "--x", "n", "--y", "loss", "--bootstrap", "20"],
    "scaling manifold": lambda t: ["scaling", "manifold", "--quick", "--out", t / "o", "--estimate-only"],
    "scaling model-size": lambda t: ["scaling", "model-size", "--quick", "--out", t / "o", "--estimate-only"],
    "lm suite": lambda t: ["lm", "suite", "--corpus", "builtin:sotu", "--model", t / "no-model", "--out", t / "o"],
    "lm data-sweep": lambda t: ["lm", "data-sweep", "--quick", "--out", t / "o"],
    "lm model-sweep": lambda t: ["lm", "model-sweep", "--quick", "--out", t / "o"],
    "lm id-ablations": lambda t: ["lm", "id-ablations", t / "no-run", "--out", t / "o"],
    "lm prepare": lambda t: ["lm", "prepare", "--corpus", "builtin:sotu", "--cache-dir", t / "cache"],
    "lm train": lambda t: ["lm", "train", "--corpus", "builtin:sotu", "--out", t / "o", "--cache-dir", t / "cache"],
    "lm sample": lambda t: ["lm", "sample", t / "no-run"],
    "lm corpus info": lambda t: ["lm", "corpus", "info", "--corpus", "builtin:sotu"],
}


def _kind(param) -> type | None:
    a = param.type_descriptor.annotation
    base = [t for t in (typing.get_args(a) or (a,)) if t is not type(None)]
    return base[0] if base and base[0] in (int, float) else None


def _cases():
    cases = [(command, max(p.opts, key=len), value) for command, p in cli_params()
             if p.param_type_name == "option" and _kind(p)
             for value in (("-1", "nan") if _kind(p) is float else ("-1",))]
    return [c for c in cases if c not in LEGITIMATE]


CASES = _cases()


def test_every_command_with_numeric_options_has_a_base_call():
    assert {c for c, _, _ in CASES} <= set(BASE)


class _Ran(Exception):
    pass


@pytest.mark.parametrize("command, flag, value", CASES, ids=[" ".join(c) for c in CASES])
def test_a_bad_numeric_option_is_refused_before_any_work(command, flag, value, tmp_path, run_cli):
    (tmp_path / "d.txt").write_text("a b => c\na => b\nb => c\nc => a\n", encoding="utf-8")
    np.save(tmp_path / "x.npy", np.random.default_rng(0).normal(size=(200, 3)))
    (tmp_path / "fit.csv").write_text("n,loss\n" + "".join(f"{n},{3 * n ** -0.1:.6g}\n" for n in (1e3, 1e4, 1e5, 1e6)))
    args = [str(a) for a in BASE[command](Path(tmp_path))]
    args = args[:args.index(flag) + 1] + [value] + args[args.index(flag) + 2:] if flag in args else [*args, flag, value]

    def ran(*_):
        raise _Ran(f"{command} {flag} {value} was not refused: it ran for 20 s")

    old = signal.signal(signal.SIGALRM, ran)
    signal.alarm(20)
    try:
        r = run_cli(*args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert r.code == 2, (r.code, r.err[-300:])
    assert "Traceback" not in r.err and "Traceback" not in r.out
