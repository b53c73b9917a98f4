"""The vectorized checker gives analyze()'s verdict; `ntp check` uses it on large files."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.ntp.config import RandomSpec
from ttlab.ntp.cost import training_cost
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.examples import SVOP_SEQUENCES
from ttlab.ntp.fastcheck import quick_check
from ttlab.ntp.generate import generate_text
from ttlab.ntp.structure import analyze

COLLOC = "a => A\nb => B\nc => C\nq => Q\nA => a\nB => b\nC => c\nQ => q\n"
INVALID = [
    "a => b\nb => a\na c b => a\n",  # missing collocation
    "a => b\nb => a\na => a\n",  # ambiguous collocation
    "a => x\nb => x\nx => a\na b => a\n",  # unrealizable
    COLLOC + "a b q => A\nb c q => B\n",  # confused
    COLLOC + "a b q => A\na b q => B\n",  # cyclic (and confused)
    COLLOC + "a b b q => A\n",  # Assumption 3
    "S V O P\nS V O S\nP S V\n",  # sequence lines, invalid
]
VALID = [COLLOC + "a a b b q => A\n", "\n".join(SVOP_SEQUENCES) + "\n", COLLOC + "# only collocation\n",
         "x y\ny x\n", COLLOC + "a q => A\na q => A\nc b q => C\n"]


def _agree(text: str) -> None:
    ds = NTPDataset.from_text(text)
    st = analyze(ds)
    qc = quick_check(text)
    assert qc is not None
    assert qc.valid == st.valid, (text, st.violations[:2])
    assert qc.vocab == ds.vocab and qc.n_sentences == len(ds.sentences)
    assert qc.n_occurrences == sum(s.count for s in ds.sentences)
    assert qc.degenerate().keys() == st.degenerate().keys()
    if st.valid:
        cost = training_cost(ds)
        assert (qc.training_cost().width, qc.training_cost().slots) == (cost.width, cost.slots)
        orders = qc.orders()
        assert set(orders) == {q for q, o in st.orders.items() if o.edges}
        for q, cats in orders.items():
            ref = st.categories(q)
            assert sorted(cats["optimal"]) == sorted(ref.optimal)
            assert sorted(cats["non_optimal"]) == sorted(ref.non_optimal)
            assert cats["n_non_comparable"] == len(ref.non_comparable) and cats["confused"] == []


@pytest.mark.parametrize("text", INVALID + VALID)
def test_verdict_equals_analyze_on_hand_made_texts(text):
    _agree(text)


@pytest.mark.parametrize("seed", range(6))
def test_verdict_equals_analyze_on_random_and_corrupted_data(seed):
    rng = np.random.default_rng(seed)
    text = generate_text(RandomSpec(30, 120, 2, 7, seed), "dense" if seed % 2 else "large")
    _agree(text)
    lines = text.splitlines()
    for _ in range(8):  # random sentences over the vocabulary: most break an assumption
        toks = [f"t{int(i):02d}" for i in rng.integers(30, size=rng.integers(2, 6))]
        lines.append(" ".join(toks) + f" => t{int(rng.integers(30)):02d}")
        _agree("\n".join(lines) + "\n")


def test_declines_malformed_and_oversized_texts():
    assert quick_check("S V=>O\n") is None and quick_check("S => V => O\n") is None and quick_check("S\n") is None
    assert quick_check("# nothing\n") is None
    assert quick_check("a b c d e f\n", max_slots=10) is None and quick_check("a b c d e f\n", max_slots=15) is not None


def test_cli_check_uses_the_fast_path_on_large_files(run_cli, tmp_path, monkeypatch):
    import ttlab.cli.ntp as cli

    p = tmp_path / "d.txt"
    p.write_text(generate_text(RandomSpec(120, 300, 2, 8, 1), "large"))
    slow = run_cli("ntp", "check", p)
    monkeypatch.setattr(cli, "FAST_CHECK_CHARS", 0)
    called = []
    real = cli.check_view
    monkeypatch.setattr(cli, "check_view", lambda f, found: (called.append(type(found).__name__), real(f, found))[1])
    fast = run_cli("ntp", "check", p)
    assert fast.code == slow.code == 0 and called == ["QuickCheck"]
    assert fast.out.splitlines()[0] == slow.out.splitlines()[0]  # same counts and training batch
    assert "valid" in fast.out and "… and 80 more" in fast.out
    js = run_cli("ntp", "check", "--json", p).json()
    assert js["valid"] is True and len(js["vocab"]) == 120 and all("n_non_comparable" in o for o in js["orders"].values())
    bad = tmp_path / "bad.txt"
    bad.write_text(COLLOC + "a b b q => A\n")
    r = run_cli("ntp", "check", bad)  # the fast verdict is invalid: the full checker lists the violation
    assert r.code == 1 and "assumption3" in r.out
