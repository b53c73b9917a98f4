"""Bounded memory and time for long sequence lines, the byte-order mark, degenerate data, step counts
and interrupted runs (ttlab issue 15)."""

from __future__ import annotations

import csv
import json
import tracemalloc
from collections import Counter, defaultdict

import numpy as np
import pytest
import torch

from tests.ntp.test_model import literal_loss
from ttlab.errors import TTLabInputError
from ttlab.ntp import experiment
from ttlab.ntp.config import TrainConfig
from ttlab.ntp.cost import require_trainable, training_cost
from ttlab.ntp.dataset import NTPDataset, TokenSeq
from ttlab.ntp.limits import MAX_STEPS
from ttlab.ntp.model import NTPTransformer
from ttlab.ntp.reading import require_readable
from ttlab.ntp.structure import analyze
from ttlab.ntp.train import train
from ttlab.outputs import LOCK_NAME


def cycle_text(n_tokens: int) -> str:
    """One valid sequence line S V O P S V O P … plus the collocations of V, O and P."""
    return " ".join(["S", "V", "O", "P"] * (n_tokens // 4)) + "\nV O\nO P\nP S\n"


# ------------------------------------------------------------------ BOM
def test_utf8_bom_is_not_part_of_the_first_token(tmp_path):
    p = tmp_path / "bom.txt"
    p.write_bytes("S V O P\nV O P\nO P P\nP S V\n".encode("utf-8-sig"))
    assert p.read_bytes().startswith(b"\xef\xbb\xbf")
    ds = NTPDataset.from_file(p)
    assert ds.vocab == ["S", "V", "O", "P"]
    assert analyze(ds).valid
    assert NTPDataset.from_text("\ufeffa => b\nb => a\n").vocab == ["a", "b"]


# ------------------------------------------------------------------ prefix views
def test_token_seq_behaves_like_the_tuple_it_stands_for():
    base = ("a", "b", "c", "d")
    v = TokenSeq(base, 3)
    assert len(v) == 3 and list(v) == ["a", "b", "c"] and v[-1] == "c" and v[1:] == ("b", "c") and v[::-1] == ("c", "b", "a")
    assert v == ("a", "b", "c") and ("a", "b", "c") == v and v != ("a", "b") and v != base
    assert hash(v) == hash(("a", "b", "c")) and ("a", "b", "c") in {v}
    with pytest.raises(IndexError):
        v[3]


def test_sequence_line_sentences_share_one_tuple():
    ds = NTPDataset.from_text(cycle_text(400))
    line1 = [s for s in ds.sentences if 1 in s.lines]
    assert len(line1) == 399
    assert len({id(s.tokens.base) for s in line1}) == 1  # no per-sentence copy
    assert [len(s.tokens) for s in line1] == list(range(1, 400))


def test_long_line_check_is_linear_in_memory():
    """A 3,000-token line holds ~4.5 M token slots as sentences; the checker must not materialise them."""
    L = 3000
    text = cycle_text(L)
    tracemalloc.start()
    try:
        ds = NTPDataset.from_text(text)
        st = analyze(ds)
        report = st.report()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report["valid"] and len(ds.sentences) == L + 2
    # one 8-byte pointer per token slot would already be L²/2 × 8 = 36 MB; measured ~0.6 kB per token
    assert peak < 1500 * L, f"peak {peak / 1e6:.1f} MB for a {L}-token line"
    # the training batch is (L − 1) × (distinct tokens), not (L − 1) × L
    cost = training_cost(ds)
    assert cost.width == 4 and cost.slots == (L + 2) * 4


def test_long_natural_line_with_a_violation_per_sentence_stays_linear():
    rng = np.random.default_rng(0)
    L = 3000
    words = [f"w{i}" for i in rng.zipf(1.3, size=L) % 500]
    tracemalloc.start()
    try:
        st = analyze(NTPDataset.from_text(" ".join(words)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    kinds = Counter(v.kind for v in st.violations)
    assert kinds["missing_collocation"] == len(set(words[:-1])) - 1  # all but the first token lack one
    assert peak < 4000 * L
    # long sentences are abbreviated in messages, and the listed tokens are capped
    longest = max((v for v in st.violations if v.kind == "unrealizable_sentence"), key=lambda v: len(v.message))
    assert "tokens)" in longest.message and len(longest.message) < 600 and len(longest.tokens) <= 50


def _reference(ds: NTPDataset):
    """The checker written plainly, one sentence at a time (quadratic, for small data only)."""
    colloc = {}
    for s in ds.sentences:
        if len(s.tokens) == 1:
            colloc.setdefault(s.tokens[0], s.label)
    edges = defaultdict(set)
    found = Counter()
    missing = defaultdict(set)
    for s in ds.sentences:
        for t in s.tokens:
            if t not in colloc:
                missing[t].update(s.lines)
        if len(s.tokens) == 1:
            continue
        known = [t for t in s.tokens if t in colloc]
        opt = {t for t in known if colloc[t] == s.label}
        non = {t for t in known if colloc[t] != s.label}
        if not opt:
            found[("unrealizable_sentence", s.query, tuple(s.lines))] += 1
            continue
        for hi in opt:
            for lo in non:
                edges[(s.query, hi, lo)].update(s.lines)
        c = Counter(s.tokens)
        n_opt = sum(c[t] for t in opt)
        for lo in non:
            if c[lo] > n_opt:
                found[("assumption3", s.query, (lo,), tuple(s.lines))] += 1
    for t, ls in missing.items():
        found[("missing_collocation", t, tuple(sorted(ls)))] += 1
    return colloc, dict(edges), found


@pytest.mark.parametrize("seed", range(6))
def test_incremental_checker_matches_the_plain_definition(seed):
    rng = np.random.default_rng(seed)
    vocab = list("abcdefg")
    lines = []
    for _ in range(12):
        if rng.random() < 0.4:
            lines.append(f"{rng.choice(vocab)} => {rng.choice(vocab)}")
        elif rng.random() < 0.5 and lines:
            # share a prefix with an earlier sequence line, so merged sentences span several lines
            prev = [ln for ln in lines if "=>" not in ln] or ["a b"]
            head = prev[int(rng.integers(len(prev)))].split()[: int(rng.integers(1, 4))]
            lines.append(" ".join(head + list(rng.choice(vocab, size=int(rng.integers(1, 8))))))
        else:
            lines.append(" ".join(rng.choice(vocab, size=int(rng.integers(2, 10)))))
    text = "\n".join(lines) + "\n"
    ds = NTPDataset.from_text(text)
    st = analyze(ds)
    colloc, edges, found = _reference(ds)
    assert st.collocation == colloc
    got_edges = {(q, hi, lo): ls for q, o in st.orders.items() for (hi, lo), ls in o.edges.items()}
    assert got_edges == edges
    got = Counter()
    for v in st.violations:
        if v.kind == "unrealizable_sentence":
            got[(v.kind, v.query, tuple(v.lines))] += 1
        elif v.kind == "assumption3":
            got[(v.kind, v.query, tuple(v.tokens), tuple(v.lines))] += 1
        elif v.kind == "missing_collocation":
            got[(v.kind, v.tokens[0], tuple(v.lines))] += 1
    assert got == found, text


def test_distinct_token_batch_equals_the_literal_model_on_sequence_lines():
    text = "a b a a c b q\na b c c q b\nq a a b\n" + "".join(f"{t} => {u}\n" for t, u in zip("abcq", "bcqa"))
    ds = NTPDataset.from_text(text)
    model = NTPTransformer(ds, dtype="float64")
    assert model.tokens.shape[1] == 4 < ds.max_len  # distinct tokens, not positions
    g = torch.Generator().manual_seed(1)
    W_ov = torch.randn(ds.vocab_size, ds.vocab_size, dtype=torch.float64, generator=g)
    W_kq = torch.randn(ds.vocab_size, ds.vocab_size, dtype=torch.float64, generator=g)
    assert model.loss_and_grad(W_ov, W_kq).loss == pytest.approx(float(literal_loss(model, W_ov, W_kq)), rel=1e-12)
    W_kq.requires_grad_(True)
    literal_loss(model, W_ov, W_kq).backward()
    torch.testing.assert_close(model.loss_and_grad(W_ov, W_kq.detach()).grad_kq, W_kq.grad, rtol=1e-10, atol=1e-12)
    # prediction batches unseen sentences the same way
    assert model.predict(W_ov, W_kq.detach(), [("a", "a", "q"), ("b",)]) == model.predict(
        W_ov, W_kq.detach(), [("a", "q", "a", "q")[:1] + ("a", "q"), ("b",)]
    )


def test_unseen_sentences_of_a_long_line_dataset_are_capped():
    from ttlab.ntp.generalize import MAX_UNSEEN_LEN, unseen_sentences

    st = analyze(NTPDataset.from_text(cycle_text(2000)))
    sents = unseen_sentences(st, n_samples=40, seed=0)
    assert sents and max(len(s) for s in sents) <= MAX_UNSEEN_LEN < st.dataset.max_len


# ------------------------------------------------------------------ limits
def test_reading_refuses_above_the_limit_before_building_anything():
    text = "x y\n" + "a " * 1_600_000 + "\n"  # 1.6M tokens: ~4.8 GB to check at 3 kB per token
    with pytest.raises(TTLabInputError) as exc:
        NTPDataset.from_text(text, source="big.txt")
    msg = str(exc.value)
    assert "big.txt" in msg and "line 2 with 1,600,000 tokens" in msg and "memory_limit_gib" in msg and "GiB" in msg
    assert exc.value.params == ("memory_limit_gib",)
    assert require_readable(cycle_text(400), "ok") == 400 + 6


def test_the_cli_default_memory_limit_is_the_library_default():
    from ttlab.cli import ntp as cli_ntp
    from ttlab.ntp import limits

    assert cli_ntp.DEFAULT_MEMORY_LIMIT_GIB == limits.DEFAULT_MEMORY_LIMIT_GIB == 4.0


def test_a_valid_text_over_the_worst_case_budget_is_read_after_the_vectorized_check():
    valid = cycle_text(400)  # 406 tokens: 1.2 MB at the worst case, 0.24 MB when valid
    invalid = valid + "S O\n"  # S already has the collocation V (from the sequence line): two labels
    limit = 406 * 1500 / 2**30  # between the valid-file and the worst-case budgets
    assert require_readable(valid, "valid.txt", limit) == 406
    with pytest.raises(TTLabInputError, match="invalid.txt: 408 tokens would take up to"):
        require_readable(invalid, "invalid.txt", limit)
    with pytest.raises(TTLabInputError, match="valid.txt: 406 tokens"):  # under the valid budget too: refused
        require_readable(valid, "valid.txt", 406 * 500 / 2**30)


def test_training_refuses_above_the_limit_and_names_the_line():
    ds = NTPDataset.from_text("# header\n" + " ".join(f"t{i}" for i in range(3000)) + "\n")
    cost = training_cost(ds, steps=10)
    assert cost.width == 2999 and cost.line == 2 and cost.line_sentences == 2999
    with pytest.raises(TTLabInputError) as exc:
        require_trainable(cost, "wide.txt", memory_limit_gib=0.1)
    msg = str(exc.value)
    assert "wide.txt" in msg and "line 2 (2,999 sentences" in msg and "split line 2" in msg
    assert "memory_limit_gib=2" in msg and exc.value.params == ("memory_limit_gib",)  # 2,999² slots × 128 B ≈ 1.07 GiB
    require_trainable(cost, "wide.txt", memory_limit_gib=2.0)


def test_cli_refuses_a_wide_line_with_exit_2(run_cli, tmp_path):
    p = tmp_path / "wide.txt"
    p.write_text(" ".join(f"t{i}" for i in range(3000)) + "\n")
    res = run_cli("ntp", "check", p, "--memory-limit", "0.001")
    assert res.code == 2 and "line 1 with 3,000 tokens" in " ".join(res.err.split()) and "Traceback" not in res.err


def test_check_states_the_cost_of_a_20000_token_line(run_cli, tmp_path):
    p = tmp_path / "cycle.txt"
    p.write_text(cycle_text(20_000))
    res = run_cli("ntp", "check", p)
    assert res.code == 0, res.err
    assert "20,002 sentences × 4 distinct tokens = 80,008 slots" in " ".join(res.out.split())
    out = run_cli("ntp", "check", p, "--json").json()
    assert out["training_cost"]["slots"] == 80_008 and out["valid"]


# ------------------------------------------------------------------ degenerate data
@pytest.fixture
def write(tmp_path):
    def _w(name: str, text: str):
        p = tmp_path / name
        p.write_text(text)
        return p

    return _w


def _strict_json(path):
    def no(c):
        raise AssertionError(f"{path} holds {c}")

    return json.loads(path.read_text(), parse_constant=no)


def test_two_token_file_refused_then_stage1_only_on_request(run_cli, write, tmp_path):
    p = write("ab.txt", "a b\n")
    chk = run_cli("ntp", "check", p, "--json")
    assert chk.code == 0 and "no sentence has two or more tokens" in chk.json()["degenerate"]["stage2"]
    res = run_cli("ntp", "run", "--data", p, "--out", tmp_path / "o1", "--quiet")
    err = " ".join(res.err.split())
    assert res.code == 2 and "stage 2 has nothing to learn" in err and "stage2_steps=0" in err
    assert "(command-line options: --schedule, --stage2-steps)" in err
    assert not (tmp_path / "o1").exists()
    res = run_cli("ntp", "run", "--data", p, "--out", tmp_path / "o2", "--quiet", "--stage1-steps", "30",
                  "--stage2-steps", "0")
    assert res.code == 0, res.err
    with open(tmp_path / "o2" / "metrics.csv") as f:
        stages = [r["stage"] for r in csv.DictReader(f)]
    assert stages == ["1"] * 31
    summary = _strict_json(tmp_path / "o2" / "summary.json")
    assert set(summary["stages"]) == {"stage_1"} and summary["wkq_star"] is None
    assert summary["stages"]["stage_1"]["final_cosine"] == pytest.approx(1.0)
    assert "stage 2 skipped" in " ".join(res.out.split())
    assert "training batch 1 sentences × 1 distinct tokens = 1 slots" in " ".join(res.out.split())


@pytest.mark.parametrize("text, extra, fragment", [
    ("a a\n", (), "single token ('a')"),
    ("a => b\nb => a\na a => b\n", (), "holds both an optimal token"),
    ("a b\n", ("--schedule", "joint", "--stage2-steps", "0"), "stage 2 has nothing to learn"),
])
def test_degenerate_data_is_refused(run_cli, write, tmp_path, text, extra, fragment):
    res = run_cli("ntp", "run", "--data", write("d.txt", text), "--out", tmp_path / "o", "--quiet", *extra)
    assert res.code == 2 and fragment in " ".join(res.err.split()) and "Traceback" not in res.err


def test_generalize_refuses_data_without_orders(run_cli, write, tmp_path):
    res = run_cli("ntp", "generalize", "--data", write("ab.txt", "a b\n"), "--out", tmp_path / "g")
    assert res.code == 2 and "nothing to generalize" in " ".join(res.err.split())


# ------------------------------------------------------------------ step counts and time
def test_absurd_step_counts_are_refused_before_any_work(run_cli, tmp_path):
    res = run_cli("ntp", "run", "--out", tmp_path / "o", "--stage1-steps", "1000000000000")
    err = " ".join(res.err.split())
    assert res.code == 2 and f"{MAX_STEPS:,}-step limit" in err and "stage1_steps 1,000,000,000,000" in err
    assert "(command-line option: --stage1-steps)" in err
    assert not (tmp_path / "o").exists()


def test_time_is_estimated_announced_and_bounded(run_cli, tmp_path, monkeypatch):
    args = ("ntp", "run", "--vocab", "6", "--sentences", "20", "--quiet", "--stage1-steps", "40", "--stage2-steps", "40")
    res = run_cli(*args, "--out", tmp_path / "o1", "--max-hours", "1e-9")
    assert res.code == 2 and "would take ~" in res.err and "--max-hours" in " ".join(res.err.split())
    monkeypatch.setattr(experiment, "ANNOUNCE_SECONDS", 0.0)
    res = run_cli(*args, "--out", tmp_path / "o2")
    assert res.code == 0 and "estimated time ~" in res.err and "in all" in res.err
    summary = json.loads((tmp_path / "o2" / "summary.json").read_text())
    # the extrapolation is a positive time of the same order as the run (loose: the machine is shared)
    assert 0 < summary["estimated_time_s"] < 100 * summary["wall_time_s"] + 1


# ------------------------------------------------------------------ interrupts
@pytest.mark.parametrize("impl", ["dense", "structured"])
def test_train_keeps_the_steps_done_when_interrupted_only_when_asked(impl):
    ds = NTPDataset.from_text(cycle_text(40))

    def progress(stage, t, total):
        if stage == "stage 2" and t == 5:
            raise KeyboardInterrupt

    cfg = TrainConfig(stage1_steps=10, stage2_steps=50, impl=impl)
    with pytest.raises(KeyboardInterrupt):  # an interrupted run is never a result by default (issue 23)
        train(ds, cfg, progress=progress)
    res = train(ds, cfg, progress=progress, keep_interrupted=True)
    assert res.interrupted == "stage 2, step 5"
    assert list(res.metrics["stage"]) == ["1"] * 11 + ["2"] * 6
    assert all(len(v) == 17 for v in res.metrics.values())


@pytest.mark.parametrize("impl", ["dense", "structured"])
def test_interrupted_run_writes_its_metrics_and_exits_130(run_cli, write, tmp_path, monkeypatch, impl):
    from ttlab.ntp.structured import StructuredProblem

    monkeypatch.setattr(experiment, "estimate_seconds", lambda model, config: 0.0)
    calls = {"n": 0}
    cls, name = (NTPTransformer, "collocation_loss_and_grad") if impl == "dense" else (StructuredProblem, "stage1_loss_grad")
    real = getattr(cls, name)

    def interrupt_at_k(self, W_ov):
        calls["n"] += 1
        if calls["n"] > 7:  # stage-1 steps t = 0 … 6 are recorded, then Ctrl-C
            raise KeyboardInterrupt
        return real(self, W_ov)

    monkeypatch.setattr(cls, name, interrupt_at_k)
    out = tmp_path / "o"
    res = run_cli("ntp", "run", "--data", write("c.txt", cycle_text(40)), "--out", out, "--quiet", "--impl", impl)
    assert res.code == 130
    err = " ".join(res.err.split())
    assert "interrupted — at stage 1, step 6" in err and "7 steps recorded" in err
    with open(out / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == list(range(7))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] == "stage 1, step 6" and set(summary["stages"]) == {"stage_1"}
    leftovers = [p.name for p in out.glob(".*") if p.name != LOCK_NAME]  # the held folder keeps its lock file
    assert not list(out.glob("*.tmp*")) and not leftovers  # atomic writes leave no partial files
