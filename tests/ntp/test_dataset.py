"""Dataset format, collocation/orders and the assumption checker."""

from __future__ import annotations

import pytest

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import RandomSpec
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.examples import svop
from ttlab.ntp.generate import generate_dataset, generate_text
from ttlab.ntp.structure import VIOLATION_KINDS, analyze

COLLOC = "a => A\nb => B\nc => C\nq => Q\nA => a\nB => b\nC => c\nQ => q\n"


def kinds(text: str) -> list[str]:
    return [v.kind for v in analyze(NTPDataset.from_text(text)).violations]


def only(text: str, kind: str):
    vs = [v for v in analyze(NTPDataset.from_text(text)).violations if v.kind == kind]
    assert vs, f"expected a {kind} violation"
    return vs


# ------------------------------------------------------------------ Example 1 of the paper
def test_svop_sentences_collocation_and_orders_match_the_paper():
    ds = svop()
    assert [str(s) for s in ds.sentences] == [
        "S => V", "S V => O", "S V O => P", "V => O", "V O => P", "O => P", "O P => P", "P => S", "P S => V",
    ]
    st = analyze(ds)
    assert st.valid
    assert st.collocation == {"S": "V", "V": "O", "O": "P", "P": "S"}
    edges = {q: sorted(o.edges) for q, o in st.orders.items()}
    assert edges == {"S": [("S", "P")], "O": [("O", "S"), ("O", "V")], "V": [("V", "S")], "P": [("O", "P")]}
    cats = st.categories("P")
    assert (cats.optimal, cats.non_optimal, cats.non_comparable, cats.confused) == (["O"], ["P"], ["S", "V"], [])
    # every sentence occurs once: uniform weights
    assert ds.weights() == pytest.approx([1 / 9] * 9)


def test_explicit_lines_comments_blank_lines_and_weights():
    text = "# a comment\n\nx => y  # trailing comment\nx => y\ny => x\n   \nx y => x\n"
    ds = NTPDataset.from_text(text)
    assert [(s.tokens, s.label, s.count, s.lines) for s in ds.sentences] == [
        (("x",), "y", 2, (3, 4)), (("y",), "x", 1, (5,)), (("x", "y"), "x", 1, (7,)),
    ]
    assert ds.weights() == pytest.approx([0.5, 0.25, 0.25])
    again = NTPDataset.from_text(ds.to_text())
    assert [(s.tokens, s.label, s.count) for s in again.sentences] == [(s.tokens, s.label, s.count) for s in ds.sentences]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "no training sentences"),
        ("# only a comment\n\n   \n", "no training sentences"),
        ("S V O P\nX\n", "line 2: a sequence line needs at least two tokens"),
        ("S V => O P\n", "exactly one next token"),
        ("=> O\n", "nothing before"),
        ("S V => \n", "exactly one next token after .=>., got 0"),
        ("S V=>O\n", "must stand alone"),
        ("S => V => O\n", "more than one"),
    ],
)
def test_malformed_text_is_rejected_with_line_numbers(text, fragment):
    with pytest.raises(TTLabInputError, match=fragment):
        NTPDataset.from_text(text)


def test_file_errors(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("S V O\nS \xe9 V\n".encode("latin-1"))
    with pytest.raises(TTLabInputError, match=r"not valid UTF-8 .*line 2"):
        NTPDataset.from_file(bad)
    with pytest.raises(TTLabInputError, match="does not exist"):
        NTPDataset.from_file(tmp_path / "missing.txt")
    with pytest.raises(TTLabInputError, match="is a directory"):
        NTPDataset.from_file(tmp_path)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(TTLabInputError, match="no training sentences"):
        NTPDataset.from_file(empty)


# ------------------------------------------------------------------ every violation kind
def test_missing_collocation_names_token_and_lines():
    (v,) = only("a => b\nb => a\na c b => a\n", "missing_collocation")
    assert v.tokens == ["c"] and v.lines == [3]


def test_ambiguous_collocation():
    (v,) = only("a => b\nb => a\na => a\n", "ambiguous_collocation")
    assert v.tokens[0] == "a" and set(v.tokens[1:]) == {"b", "a"} and v.lines == [1, 3]


def test_unrealizable_sentence():
    (v,) = only("a => x\nb => x\nx => a\na b => a\n", "unrealizable_sentence")
    assert v.query == "b" and v.lines == [4] and "no token in it has collocation 'a'" in v.message


def test_confused_token():
    text = COLLOC + "a b q => A\nb c q => B\n"
    (v,) = only(text, "confused_token")
    assert v.query == "q" and v.tokens == ["b"] and v.lines == [9, 10]
    assert "cyclic_order" not in kinds(text)


def test_cyclic_order():
    text = COLLOC + "a b q => A\na b q => B\n"
    (v,) = only(text, "cyclic_order")
    assert v.query == "q" and sorted(v.tokens) == ["a", "b"] and v.lines == [9, 10]
    # a cycle always comes with confused tokens
    assert sorted(x.tokens[0] for x in only(text, "confused_token")) == ["a", "b"]


def test_assumption3_count_violation():
    (v,) = only(COLLOC + "a b b q => A\n", "assumption3")
    assert v.query == "q" and v.tokens == ["b"] and v.lines == [9] and "occurs 2 times" in v.message
    assert kinds(COLLOC + "a a b b q => A\n") == []


def test_violation_kinds_are_all_exercised():
    assert set(VIOLATION_KINDS) == {
        "missing_collocation", "ambiguous_collocation", "unrealizable_sentence", "confused_token", "cyclic_order", "assumption3",
    }


# ------------------------------------------------------------------ generator
@pytest.mark.parametrize("V,M,lo,hi,seed", [(2, 10, 2, 3, 0), (5, 40, 2, 4, 1), (20, 100, 2, 6, 2), (60, 300, 3, 12, 3), (200, 1000, 2, 16, 4)])
def test_generator_always_passes_the_checker(V, M, lo, hi, seed):
    ds = generate_dataset(V, M, lo, hi, seed)
    st = analyze(ds)
    assert st.valid, st.violations[:3]
    multi = [s for s in ds.sentences if len(s.tokens) > 1]
    assert sum(s.count for s in multi) == M
    assert all(lo <= len(s.tokens) <= hi for s in multi)
    assert len(st.collocation) == V


def test_generator_is_seeded():
    for method in ("dense", "large"):
        assert generate_text(RandomSpec(20, 50, seed=7), method) == generate_text(RandomSpec(20, 50, seed=7), method)
        assert generate_text(RandomSpec(20, 50, seed=7), method) != generate_text(RandomSpec(20, 50, seed=8), method)


@pytest.mark.parametrize("kw, fragment, params", [
    ({"vocab_size": 1}, "vocab_size", ("vocab_size",)), ({"min_len": 1}, "min_len", ("min_len",)),
    ({"min_len": 5, "max_len": 3}, "max_len", ("max_len", "min_len")), ({"n_sentences": -1}, "n_sentences", ("n_sentences",)),
])
def test_generator_rejects_bad_parameters(kw, fragment, params):
    with pytest.raises(TTLabInputError, match=fragment) as info:
        generate_text(RandomSpec(**kw))
    assert info.value.params == params


def test_kq_triples_of_svop():
    st = analyze(svop())
    idx = st.dataset.index
    named = {(st.dataset.vocab[q], st.dataset.vocab[o], st.dataset.vocab[u]) for q, o, u in st.kq_triples()}
    assert named == {("S", "S", "P"), ("V", "V", "S"), ("O", "O", "S"), ("O", "O", "V"), ("P", "O", "P")}
    assert list(st.next_token_array()) == [idx["V"], idx["O"], idx["P"], idx["S"]]
