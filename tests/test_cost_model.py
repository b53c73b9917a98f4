"""Cost checked before the work, step sizes that can learn, and bounded memory (ttlab issue 23, items 5–6 and
the memory crashes): `ntp run` estimates the whole command, `ntp generate`, `scaling fit --bootstrap`,
`scaling manifold` and `lm train` refuse what they cannot finish, `ntp check` and ESS stay bounded."""

from __future__ import annotations

import json
import math
import tracemalloc

import numpy as np
import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp import cost, experiment
from ttlab.ntp.config import FIGURE2_NORM_RATIOS, RandomSpec, TrainConfig
from ttlab.ntp.cost import generation_bytes
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.generate import generate_dataset, generate_text
from ttlab.ntp.maxmargin import max_margin_kq, max_margin_ov
from ttlab.ntp.structure import analyze
from ttlab.ntp.structured import StructuredProblem


# ------------------------------------------------------------------ ntp run: the time estimate
def test_structured_steps_are_timed_on_the_thread_count_training_uses(monkeypatch):
    """Timed on two threads, the estimate read 8× the training's wall time at |V| = 5,000."""
    ds = generate_dataset(60, 80, 2, 6, seed=1)
    prob = StructuredProblem(ds, analyze(ds))
    seen: list[int] = []
    for name in ("stage1_loss_grad", "stage2_loss_grad"):
        real = getattr(prob, name)
        monkeypatch.setattr(prob, name, lambda *a, _real=real: (seen.append(torch.get_num_threads()), _real(*a))[1])
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert cost.estimate_seconds(prob, TrainConfig(stage1_steps=5, stage2_steps=5), budget_s=0.01) > 0
        assert torch.get_num_threads() == 2  # restored
    finally:
        torch.set_num_threads(before)
    assert seen and set(seen) == {1}


def test_run_estimates_the_whole_command_before_training(run_cli, tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "ANNOUNCE_SECONDS", 0.0)
    res = run_cli("ntp", "run", "--vocab", "12", "--sentences", "30", "--quiet", "--stage1-steps", "30",
                  "--stage2-steps", "30", "--out", tmp_path / "o")
    assert res.code == 0, res.err
    err = " ".join(res.err.split())
    assert "estimated time ~" in err and "in all" in err and "so far" in err and "of training" in err
    out = " ".join(res.out.split())
    assert "the whole command" in out and "estimated" in out
    t = json.loads((tmp_path / "o" / "summary.json").read_text())["time"]
    assert t["estimated_total_s"] == pytest.approx(t["before_training_s"] + t["estimated_training_s"]
                                                   + cost.WRITE_SECONDS)
    assert t["before_training_s"] > 0 and t["estimated_training_s"] > 0


def test_the_max_hours_check_counts_the_writing_too(run_cli, tmp_path):
    res = run_cli("ntp", "run", "--vocab", "6", "--sentences", "20", "--quiet", "--stage1-steps", "2",
                  "--stage2-steps", "2", "--out", tmp_path / "o", "--max-hours", str(cost.WRITE_SECONDS / 3600 / 2))
    assert res.code == 2 and "--max-hours" in " ".join(res.err.split())
    assert not (tmp_path / "o" / "summary.json").exists()


# ------------------------------------------------------------------ step sizes
def test_figure2_ratios_are_those_of_the_paper_setting():
    ds = generate_dataset(20, 100, 2, 6, seed=0)  # `ttlab ntp run`'s defaults
    st = analyze(ds)
    ov = max_margin_ov(st.next_token_array(), None).norm
    kq = max_margin_kq(st.kq_triples(), 20, None).norm
    assert TrainConfig().norm_ratios(20, ov, kq) == pytest.approx(FIGURE2_NORM_RATIOS, abs=5e-5)
    # the rule reproduces the paper's step sizes on the paper's data
    c = TrainConfig(stage1_steps=900, stage2_steps=900).figure2_scaled(ov, kq)
    assert c.eta0 == pytest.approx(0.2 / math.sqrt(20), rel=1e-4) and c.eta == pytest.approx(0.05 / math.sqrt(20), rel=1e-4)


def test_figure2_rule_gives_the_ntp_scale_step_sizes_and_keeps_given_ones():
    c = TrainConfig().figure2_scaled(224.1785, 342.5)  # ‖W*‖ of ntp_scale's dataset at |V| = 50,257
    assert round(c.eta0, 2) == 2.30 and round(c.eta, 2) == 0.78
    assert TrainConfig(eta0=0.5).figure2_scaled(224.1785, 342.5).eta0 == 0.5


def _run(ds, tmp_path, name, steps=60, **kw):
    msgs: list[str] = []
    cfg = TrainConfig(stage1_steps=steps, stage2_steps=steps)
    s = experiment.run_dynamics(ds, cfg, tmp_path / name, announce=msgs.append, **kw)
    return s, msgs


def test_defaults_at_large_vocabulary_warn_and_figure2_learns(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "ANNOUNCE_SECONDS", 1e9)  # only warnings reach `announce`
    ds = generate_dataset(400, 300, 2, 6, seed=0)
    paper, msgs = _run(ds, tmp_path, "paper")
    assert "step_size_warning" in paper and any(m.startswith("warning:") for m in msgs)
    w = " ".join(paper["step_size_warning"].split())
    assert "--eta0" in w and "--eta " in w and "--step-sizes figure2" in w and "log|V|" in w
    fig, msgs = _run(ds, tmp_path, "fig", step_sizes="figure2")
    assert "step_size_warning" not in fig and not msgs
    assert fig["config"]["eta0"] == pytest.approx(FIGURE2_NORM_RATIOS[0] * fig["wov_star_norm"] / 60)
    assert fig["config"]["eta"] == pytest.approx(FIGURE2_NORM_RATIOS[1] * fig["wkq_star_norm"] / 60)
    # the printed values are the ones figure2 uses
    assert f"--eta0 {fig['config']['eta0']:.4g}" in w
    logv = math.log(400)
    assert paper["stages"]["stage_1"]["final_loss"] > 0.95 * logv  # nothing learned, as the warning says
    assert fig["stages"]["stage_1"]["final_loss"] < 0.5 * logv


def test_paper_setting_is_unchanged_and_silent(tmp_path):
    ds = generate_dataset(20, 100, 2, 6, seed=0)
    s, msgs = _run(ds, tmp_path, "p", steps=900)  # Figure 2: the paper's 900 steps
    assert "step_size_warning" not in s and not any(m.startswith("warning") for m in msgs)
    assert s["config"]["eta0"] == 0.2 / math.sqrt(20) and s["config"]["eta"] == 0.05 / math.sqrt(20)


def test_figure2_step_sizes_need_the_structured_path(run_cli, tmp_path):
    res = run_cli("ntp", "run", "--vocab", "8", "--sentences", "20", "--quiet", "--impl", "dense",
                  "--step-sizes", "figure2", "--out", tmp_path / "o")
    assert res.code == 2 and "structured path" in " ".join(res.err.split())
    res = run_cli("ntp", "run", "--vocab", "8", "--sentences", "20", "--quiet", "--optimizer", "gd",
                  "--step-sizes", "figure2", "--out", tmp_path / "o1")
    assert res.code == 2 and "normalized GD" in " ".join(res.err.split())
    res = run_cli("ntp", "run", "--vocab", "8", "--sentences", "20", "--quiet", "--step-sizes", "big",
                  "--out", tmp_path / "o2")
    err = " ".join(res.err.split())
    assert res.code == 2 and "step_sizes must be one of" in err and "(command-line option: --step-sizes)" in err


# ------------------------------------------------------------------ ntp check: bounded report
def _invalid_text(vocab: int, sentences: int) -> str:
    text = generate_text(RandomSpec(vocab, sentences, 2, 6, 0), "dense")
    return text + "t001 t002 => t003\nt001 => t004\n"  # a second collocation: invalid, so the full checker runs


def test_report_counts_non_comparable_tokens_above_the_cap():
    st = analyze(NTPDataset.from_text(_invalid_text(120, 200)))
    assert not st.valid and len(st.orders) > 10
    full, short = st.report(), st.report(max_listed=0)
    assert full["violations"] == short["violations"]
    for q, cats in full["orders"].items():
        s = short["orders"][q]
        assert "non_comparable" not in s and s["n_non_comparable"] == len(cats["non_comparable"])
        assert (s["optimal"], s["non_optimal"], s["confused"]) == (cats["optimal"], cats["non_optimal"], cats["confused"])


def test_check_json_stays_small_on_a_large_invalid_file(run_cli, tmp_path, monkeypatch):
    from ttlab.ntp import structure

    monkeypatch.setattr(structure, "MAX_NON_COMPARABLE_LISTED", 1000)
    f = tmp_path / "d.txt"
    f.write_text(_invalid_text(120, 200))
    res = run_cli("ntp", "check", f, "--json")
    assert res.code == 1
    orders = json.loads(res.out)["orders"]
    assert orders and all("n_non_comparable" in c and "non_comparable" not in c for c in orders.values())
    res = run_cli("ntp", "check", f)  # text mode prints the count too
    assert res.code == 1 and "invalid" in res.out


# ------------------------------------------------------------------ ntp generate: refused before drawing
@pytest.mark.parametrize("opt", ["--vocab", "--sentences", "--max-len"])
def test_generate_refuses_what_does_not_fit(run_cli, tmp_path, opt):
    res = run_cli("ntp", "generate", opt, "1000000000", "--out", tmp_path / "g.txt")
    err = " ".join(res.err.split())
    assert res.code == 2 and "would take ~" in err and "--memory-limit" in err and "Lower " in err
    assert not (tmp_path / "g.txt").exists()
    res = run_cli("ntp", "run", opt, "1000000000", "--out", tmp_path / "r")
    assert res.code == 2 and "to generate and read" in " ".join(res.err.split())


@pytest.mark.parametrize("spec,method", [(RandomSpec(300, 3000, 2, 16, 0), "dense"),
                                         (RandomSpec(20000, 500, 2, 6, 0), "large")])
def test_generation_estimate_bounds_the_measured_peak(spec, method):
    tracemalloc.start()
    try:
        generate_text(spec, method)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    est = generation_bytes(spec, method)
    assert peak <= est <= 6 * peak


# ------------------------------------------------------------------ scaling fit --bootstrap
def test_bootstrap_is_chunked_without_changing_the_replicates(monkeypatch):
    from ttlab.scaling import fit

    x = np.array([1e3, 3e3, 1e4, 3e4, 1e5, 3e5])
    y = 5.0 * x**-0.3 * np.exp(np.random.default_rng(1).normal(0, 0.02, x.size))
    one = fit.fit_power_law(x, y, bootstrap=500, seed=3).bootstrap_samples
    monkeypatch.setattr(fit, "BOOTSTRAP_CHUNK", 7)  # one replicate (6 points) per chunk
    chunked = fit.fit_power_law(x, y, bootstrap=500, seed=3).bootstrap_samples
    np.testing.assert_array_equal(one, chunked)


def test_fit_refuses_an_absurd_bootstrap(run_cli, tmp_path):
    from ttlab.scaling.fit_checks import MAX_BOOTSTRAP

    csv = tmp_path / "runs.csv"
    csv.write_text("n,loss\n" + "".join(f"{n},{3 * n ** -0.3}\n" for n in (100, 300, 1000, 3000, 10000)))
    res = run_cli("scaling", "fit", csv, "--x", "n", "--y", "loss", "--bootstrap", "1000000000")
    err = " ".join(res.err.split())
    assert res.code == 2 and f"{MAX_BOOTSTRAP:,}-replicate limit" in err and "GiB" in err


def test_bootstrap_timing_leaves_out_the_first_fit_s_one_time_costs(run_cli, tmp_path, monkeypatch):
    """The first fit pays one-time costs (scipy's optimisers are imported there, not when the command line starts):
    timed as if replicates, a bootstrap of half an hour looked like 1 s, neither refused by --max-hours nor announced."""
    import importlib
    import time

    fit_csv = importlib.import_module("ttlab.scaling.fit_csv")
    calls = []

    def fit_scaling_law(*args, bootstrap, **kwargs):
        time.sleep(0.0 if calls else 0.5)  # the first fit's one-time costs
        calls.append(bootstrap)
        if bootstrap > fit_csv.TIMING_REPLICATES:
            raise AssertionError("the bootstrap ran: its timing missed")
        time.sleep(0.002 * bootstrap)  # 2 ms a replicate: 10^6 of them ≈ 33 min

    monkeypatch.setattr(fit_csv, "fit_scaling_law", fit_scaling_law)
    csv = tmp_path / "runs.csv"
    csv.write_text("n,loss\n" + "".join(f"{n},{3 * n ** -0.3}\n" for n in (100, 300, 1000, 3000, 10000)))
    res = run_cli("scaling", "fit", csv, "--x", "n", "--y", "loss", "--bootstrap", "1000000", "--max-hours", "0.1")
    assert res.code == 2 and "bootstrap replicates would take" in " ".join(res.err.split())


# ------------------------------------------------------------------ ESS in bounded blocks
def test_ess_blocks_are_bounded_and_give_the_same_values(monkeypatch):
    from ttlab.intrinsic_dim import ess

    X = np.random.default_rng(0).normal(size=(700, 2))

    def fit_peak():
        tracemalloc.start()
        try:
            e = ess.ESS(k=40).fit(X)
            return e.pointwise_dimension_, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    monkeypatch.setattr(ess, "_ESS_BLOCK_BYTES", 2**62)
    ref, unbounded = fit_peak()
    monkeypatch.setattr(ess, "_ESS_BLOCK_BYTES", 2**20)
    got, bounded = fit_peak()
    np.testing.assert_array_equal(ref, got)
    assert bounded < unbounded / 4


# ------------------------------------------------------------------ scaling manifold and lm train
def test_manifold_sweep_refuses_above_max_hours(run_cli, tmp_path):
    res = run_cli("scaling", "manifold", "--quick", "--out", tmp_path / "m", "--max-hours", "1e-6", "--workers", "1")
    err = " ".join(res.err.split())
    assert res.code == 2 and "over max_hours 1e-06" in err and "raise max_hours to 1" in err
    assert "(command-line options: --max-hours, --quick, --workers)" in err
    assert not (tmp_path / "m" / "results.json").exists()


def test_lm_train_refuses_an_endless_run_before_training(run_cli, tmp_path):
    from tests.lm.conftest import make_texts
    from tests.lm.test_cli import TINY

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(make_texts(30))))
    res = run_cli("lm", "train", "--corpus", corpus, "--out", tmp_path / "run", "--cache-dir", tmp_path / "cache",
                  "--vocab-size", "300", "--max-iters", "1000000000000", *TINY)
    err = " ".join(res.err.split())
    assert res.code == 2 and "max_iters=1,000,000,000,000 would take ~" in err
    assert "(command-line options: --max-iters, --max-hours, --model, --batch-size)" in err
    assert not (tmp_path / "run" / "ckpt.pt").exists()


def test_lm_time_estimate_is_positive_and_grows_with_steps():
    from ttlab.lm.configs import GPTConfig
    from ttlab.lm.configs import TrainConfig as LMConfig
    from ttlab.lm.trainer import estimate_seconds

    m = GPTConfig.from_preset("nano", n_layer=1, n_head=2, n_embd=32, block_size=16, vocab_size=300)
    a = estimate_seconds(m, LMConfig(max_iters=100, batch_size=4, threads=1), budget_s=0.05)
    b = estimate_seconds(m, LMConfig(max_iters=10_000, batch_size=4, threads=1), budget_s=0.05)
    assert 0 < a < b and b / a > 20
    with pytest.raises(TTLabInputError):
        LMConfig(max_iters=0)
