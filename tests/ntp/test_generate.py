"""The bounded-memory generator: same datasets as the benchmark's original code, realizable, bounded memory."""

from __future__ import annotations

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import RandomSpec
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.generate import DENSE_TABLE_BYTES, generate_dataset, generate_text, resolve_method, token_names
from ttlab.ntp.structure import analyze


def _reference_large(vocab: int, n_sentences: int, min_len: int, max_len: int, seed: int = 0) -> NTPDataset:
    """benchmarks/bench_ntp_scale.py::generate_large as it was before it moved into the library (frozen)."""
    rng = np.random.default_rng(seed)
    names = token_names(vocab)
    nxt = rng.integers(vocab, size=vocab)
    by_class = np.argsort(nxt, kind="stable")
    class_start = np.searchsorted(nxt[by_class], np.arange(vocab + 1))
    pairs = [((names[x],), names[nxt[x]]) for x in range(vocab)]
    queries = np.sort(rng.integers(vocab, size=n_sentences))
    uq, counts = np.unique(queries, return_counts=True)
    for q, need in zip(uq.tolist(), counts.tolist()):
        u = rng.random(vocab)
        role = np.where(u < 0.25, 1, np.where(u < 0.75, -1, 0)).astype(np.int8)
        role[q] = rng.choice([1, -1])
        if not (role == 1).any():
            role[(q + 1) % vocab] = 1
        opt_q = np.flatnonzero(role == 1)
        non_q = np.flatnonzero(role == -1)
        made = tries = 0
        while made < need and tries < 100 * need:
            tries += 1
            length = int(rng.integers(min_len, max_len + 1))
            if role[q] == 1:
                y = nxt[q]
            else:
                y = nxt[opt_q[rng.integers(opt_q.size)]]
                if y == nxt[q]:
                    continue
            members = by_class[class_start[y]:class_start[y + 1]]
            cand_opt = members[role[members] == 1]
            need_opt = 0 if role[q] == 1 else 1
            if cand_opt.size == 0 or length - 1 < need_opt:
                continue
            k_non = int(rng.integers(0, min(non_q.size, length - 1 - need_opt) + 1))
            non = non_q[rng.choice(non_q.size, size=k_non, replace=False)] if k_non else non_q[:0]
            non = non[(nxt[non] != y) & (non != q)]
            body = np.concatenate([non, cand_opt[rng.integers(cand_opt.size, size=length - 1 - non.size)]])
            rng.shuffle(body)
            pairs.append((tuple(names[t] for t in body) + (names[q],), names[y]))
            made += 1
    return NTPDataset.from_pairs(pairs)


def _key(ds: NTPDataset) -> tuple:
    return [(tuple(s.tokens), s.label, s.count) for s in ds.sentences], ds.vocab


@pytest.mark.parametrize("V,M,lo,hi,seed", [(40, 200, 2, 8, 0), (300, 1500, 2, 12, 1), (2000, 800, 2, 32, 2)])
def test_large_generator_matches_the_benchmark_construction_and_is_realizable(V, M, lo, hi, seed):
    ds = generate_dataset(V, M, lo, hi, seed, method="large")
    assert _key(ds) == _key(_reference_large(V, M, lo, hi, seed))
    st = analyze(ds)
    assert st.valid, st.violations[:3]
    multi = [s for s in ds.sentences if len(s.tokens) > 1]
    assert sum(s.count for s in multi) == M
    assert all(lo <= len(s.tokens) <= hi for s in multi)
    assert len(st.collocation) == V and "stage2" not in st.degenerate()


def test_large_generator_refuses_rather_than_making_fewer_sentences():
    # at |V| = 7 with seed 3 query 0's optimal tokens all share its continuation: the benchmark's code
    # silently returned fewer sentences than asked; the library says why
    ref = _reference_large(7, 60, 3, 5, 3)
    assert sum(s.count for s in ref.sentences if len(s.tokens) > 1) < 60
    with pytest.raises(TTLabInputError, match="could not generate .* query 0.*raise vocab_size") as info:
        generate_dataset(7, 60, 3, 5, 3, method="large")
    assert info.value.params == ("vocab_size",)


def test_large_text_parses_to_the_same_dataset():
    spec = RandomSpec(150, 400, 2, 10, seed=5)
    from_text = NTPDataset.from_text(generate_text(spec, "large"))
    assert _key(from_text) == _key(generate_dataset(150, 400, 2, 10, 5, method="large"))
    assert generate_text(spec, "large").startswith(spec.header() + "\n")


def test_auto_picks_large_only_when_the_role_table_is_big():
    edge = int(DENSE_TABLE_BYTES**0.5)
    assert resolve_method("auto", 20) == "dense" and resolve_method("auto", edge) == "dense"
    assert resolve_method("auto", edge + 1) == "large" and resolve_method("auto", 50_257) == "large"
    assert generate_dataset(20, 30, seed=1, method="auto").sentences == generate_dataset(20, 30, seed=1).sentences
    with pytest.raises(TTLabInputError, match="unknown generator"):
        resolve_method("sparse", 20)
    assert resolve_method("dense", 46_340) == "dense"
    with pytest.raises(TTLabInputError, match=r"2\.4 GiB .*method=large") as info:
        resolve_method("dense", 50_257)
    assert info.value.params == ("method",)


def test_large_generator_memory_does_not_grow_with_vocab_squared():
    import tracemalloc

    tracemalloc.start()
    generate_dataset(20_000, 50, 2, 4, seed=0, method="large")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 40 * 2**20  # a 20,000² role table alone would be 400 MB


@pytest.mark.parametrize("kw, fragment", [({"optimal_fraction": 0.0}, "fractions"),
                                          ({"optimal_fraction": 0.6, "non_optimal_fraction": 0.5}, "fractions"),
                                          ({"vocab_size": 1}, "vocab_size")])
def test_spec_rejects_bad_parameters(kw, fragment):
    for method in ("dense", "large"):
        with pytest.raises(TTLabInputError, match=fragment) as info:
            generate_text(RandomSpec(**kw), method)
        assert info.value.params == (("vocab_size",) if "vocab_size" in kw else ())


def test_cli_generate_large_then_check(run_cli, tmp_path):
    p = tmp_path / "big.txt"
    r = run_cli("ntp", "generate", "--vocab", "300", "--sentences", "200", "--max-len", "12", "--generator", "large",
                "--out", p)
    assert r.code == 0, r.err
    assert p.read_text() == generate_text(RandomSpec(300, 200, 2, 12, 0), "large")
    assert run_cli("ntp", "check", p).code == 0
    bad = run_cli("ntp", "generate", "--generator", "huge", "--out", tmp_path / "x.txt")
    assert bad.code == 2 and "unknown generator" in bad.err + bad.out
