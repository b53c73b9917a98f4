"""`ttlab reproduce --standard`: its design pinned (sizes, seeds, layers, position groups), the mode's plumbing, the
cap continuation of the data sweep and Kaplan's data-rich criterion for the text model sweep."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from ttlab.errors import TTLabInputError
from ttlab.reproduce.registry import MODES, PARTS, PartContext


def _decades(sizes) -> float:
    return math.log10(max(sizes) / min(sizes))


@pytest.mark.parametrize("preset", ["quick", "standard"])
def test_data_sweep_design_is_pinned(preset):
    """Both presets: ≥ 5 sizes over ≥ 1.5 decades, ≥ 2 seeds, runs stopped by early stopping or convergence (min_delta);
    standard: the converged protocol on a ≥ 4-layer model, a capped run re-trained with the cap doubled (quick: listed
    as capped, its claims inconclusive)."""
    from ttlab.lm.presets import DATA_SWEEP_PRESETS

    p = DATA_SWEEP_PRESETS[preset]
    assert len(set(p.sizes)) >= 5 and _decades(p.sizes) >= 1.5
    assert len(p.seeds) >= 2 and p.patience is not None and p.min_delta > 0
    assert p.cap_doublings == {"quick": 0, "standard": 2}[preset]
    assert p.protocol in ("converged", "early-stop")
    if preset == "standard":
        assert p.protocol == "converged" and p.model[0] >= 4 and p.lrs is None  # one learning rate, stated
        kw = __import__("ttlab.lm.presets", fromlist=["sweep_kwargs"]).sweep_kwargs("data", "standard")
        assert kw["model"].n_layer >= 4 and kw["cap_doublings"] == 2 and kw["train"].max_iters == 4000
        assert kw["train"].min_delta == 0.005 and kw["seeds"] == [0, 1]


def test_standard_corpora_and_position_groups_give_enough_batches():
    """Standard: SOTU and the shipped code corpus; the profiles' position groups have equal length and each holds
    ≥ 4 ID batches of the paper's 4,096 vectors on both corpora's test splits."""
    from ttlab.lm.corpus import load_corpus, split_corpus
    from ttlab.lm.presets import DATA_SWEEP_PRESETS, STANDARD_CORPORA, IDOptions
    from ttlab.reproduce.parts.lm_data_scaling import data_corpora
    from ttlab.reproduce.parts.lm_id_ablations import (
        MIN_BATCHES,
        MIN_LAYERS,
        POSITION_GROUPS,
        PROFILE_WINDOWS,
        position_edges,
    )

    assert STANDARD_CORPORA == ("builtin:sotu", "builtin:python")
    assert data_corpora(PartContext(mode="standard")) == STANDARD_CORPORA
    assert data_corpora(PartContext(mode="quick")) == ("builtin:sotu",)
    block = DATA_SWEEP_PRESETS["standard"].block_size
    edges = position_edges(block)
    widths = {b - a for a, b in zip(edges, edges[1:])}
    assert edges[0] == 0 and edges[-1] == block and len(edges) == POSITION_GROUPS + 1 and widths == {block // POSITION_GROUPS}
    assert position_edges(10, 4) == [0, 2, 5, 7, 10]
    with pytest.raises(ValueError, match="cannot hold"):
        position_edges(3, 4)
    opts = IDOptions()
    for spec in STANDARD_CORPORA:
        n_test = split_corpus(load_corpus(spec), 0.1, 0.1, 0).n_docs("test")
        per_group = n_test * PROFILE_WINDOWS * min(opts.tokens_per_doc, block // POSITION_GROUPS)
        assert per_group // opts.batch_size >= MIN_BATCHES, (spec, n_test, per_group)
    assert DATA_SWEEP_PRESETS["standard"].model[0] >= MIN_LAYERS


def test_standard_manifold_sweep_has_no_data_limited_width_sweep():
    """α_N is tested by the model_scaling part (online, noiseless: docs/model_scaling.md); the manifold sweep's
    fixed-n width sweep measured the data axis and is gone from the standard tier."""
    from ttlab.reproduce.parts import manifold_regression, model_scaling
    from ttlab.scaling.manifold_config import quick_config, standard_config
    from ttlab.scaling.model_scaling_config import quick_model_config

    c = standard_config()
    assert set(c.ds) == {1, 2} and c.betas == (1.0,) and "noisy" in c.regimes and c.seeds >= 2
    assert c.model_widths == () and quick_config().model_widths == ()
    assert manifold_regression.config(PartContext(mode="standard")).model_widths == ()
    # the standard tier runs model_scaling at its quick size (its transformers need ≈ 4 core-hours to decide)
    assert model_scaling.config(PartContext(mode="standard")) == quick_model_config()
    assert PARTS["model_scaling"].estimate_standard is None


def test_mode_plumbing_pick_and_estimates(monkeypatch):
    assert MODES == ("quick", "standard", "full", "tiny")
    ctx = PartContext(mode="standard")
    from ttlab.reproduce import PerMode

    assert ctx.pick(PerMode(quick=1, standard=3, full=2, tiny=4)) == 3
    with pytest.raises(TypeError):  # every mode is written out: no silent fallback
        PerMode(quick=1, full=2, tiny=4)  # type: ignore[call-arg]
    # a part with a standard estimate uses it; one without falls back to its quick estimate
    abl, table1 = PARTS["lm_id_ablations"], PARTS["table1"]
    from ttlab.reproduce.parts import common_lm_id, lm_id_ablations

    monkeypatch.setattr(lm_id_ablations, "gemma_unavailable", lambda ctx: "not installed")
    assert abl.estimated_seconds(ctx) == abl.estimate_standard != abl.estimate[0]
    # Gemma's layer and sequence-length profiles add their cost in standard and full mode, when they are measured
    monkeypatch.setattr(lm_id_ablations, "gemma_unavailable", lambda ctx: None)
    assert abl.estimated_seconds(ctx) == (abl.estimate_standard + common_lm_id.GEMMA_PROFILE_SECONDS
                                          + common_lm_id.GEMMA_LENGTH_SECONDS)
    assert table1.estimate_standard is None and table1.estimated_seconds(ctx) == table1.estimate[0]
    from ttlab.reproduce.parts.lm_data_scaling import STANDARD_DATA_SECONDS

    assert PARTS["lm_data_scaling"].estimated_seconds(ctx) == STANDARD_DATA_SECONDS
    assert PARTS["lm_data_scaling"].estimated_seconds(PartContext(mode="quick")) < STANDARD_DATA_SECONDS


def test_cli_standard_flag(tmp_path, run_cli):
    r = run_cli("reproduce", "--standard", "--full", "--out", str(tmp_path / "o"))
    assert r.code == 2 and "--standard and --full exclude each other" in r.err
    r = run_cli("reproduce", "--standard", "--part", "table1", "--out", str(tmp_path / "o"))
    assert r.code == 0 and "Estimating the cost of --standard" in r.err
    assert "ttlab reproduce --standard" in r.err and "estimated cost" in r.err and "table1 ≈" in r.err
    import json

    assert json.loads((tmp_path / "o" / "results.json").read_text())["mode"] == "standard"


def test_kaplan_criterion_decides_whether_text_alpha_n_is_judged():
    """Kaplan et al.'s D ≥ 5×10³·N^0.74: 2.5×10⁷ tokens at N = 10⁵; a text model sweep short of it makes the α_N
    claims inconclusive with the numbers, a data-rich one is judged."""
    from ttlab.reproduce.parts.common_lm_sweep import kaplan_regime, kaplan_why
    from ttlab.reproduce.parts.lm_model_scaling import claims as model_scaling_claims
    from ttlab.reproduce.parts.lm_suite_scaling import claims as suite_claims
    from ttlab.scaling.theory import kaplan_data_need

    assert kaplan_data_need(1e5) == pytest.approx(5e3 * 10 ** 3.7) == pytest.approx(2.506e7, rel=1e-3)
    assert kaplan_data_need(4e5) == pytest.approx(6.93e7, rel=1e-2)
    with pytest.raises(TTLabInputError, match="positive number"):
        kaplan_data_need(0)
    runs = [{"selected": True, "params_non_embedding": n, "train_tokens": 1_000_000} for n in (25_000, 100_000)]
    k = kaplan_regime(runs + [{"selected": False, "params_non_embedding": 10**9, "train_tokens": 1}])
    assert k["n_params"] == 100_000 and not k["data_rich"] and k["tokens_needed"] == pytest.approx(2.506e7, rel=1e-3)
    why = kaplan_why(k)
    assert "2.51e+07" in why and "1e+06" in why and "25× short" in why and "model_scaling.rate_" in why
    rich = kaplan_regime([{**runs[1], "train_tokens": 3 * 10**7}])
    assert rich["data_rich"] and kaplan_why(rich) is None
    ids = [{"name": f"m{i}", "intrinsic_dim": d, "intrinsic_dim_std": 0.2, "n_vectors": 16384, "batch_size": 4096,
            "params_non_embedding": 1000 * (i + 1), "intrinsic_dim_harmonic": d, "alpha_n_pred": 2 / d}
           for i, d in enumerate([4.0, 4.5, 5.0])]
    r = {"kind": "model_sweep", "alpha_hat": 0.9, "alpha_hat_ci": [0.8, 1.0], "alpha_pred": 0.4, "intrinsic_dim": 5.0,
         "r2_log": 0.99, "points": [{"params_non_embedding": n, "loss": 2 * n ** -0.3} for n in (1e4, 1e5, 1e6)],
         "id_by_model": ids, "runs": [{"selected": True, "stop_reason": "early_stop"}] * 3,
         "id_untrained": ids, "kaplan": rich}
    assert [c["verdict"] for c in model_scaling_claims(r)[:2]] == ["holds", "holds"]
    r["kaplan"] = k
    short = model_scaling_claims(r)[:2]
    assert [c["verdict"] for c in short] == ["inconclusive", "inconclusive"] and all("Kaplan" in c["reason"] for c in short)
    suite = {"fit_loss": {"alpha_hat": 0.9, "alpha_hat_ci": [0.8, 1.0], "r2_log": 0.99, "n_points": 3}, "alpha_pred": 0.4,
             "intrinsic_dim": 5.0, "models": ids, "reference": "m2", "kaplan": k}
    assert [c["verdict"] for c in suite_claims(suite)[:2]] == ["inconclusive", "inconclusive"]
    suite["kaplan"] = rich
    assert suite_claims(suite)[0]["verdict"] == "holds"


def test_capped_runs_are_continued_and_the_point_chosen_by_validation(tmp_path, monkeypatch):
    """A run that stops at its step cap is continued from its checkpoint at its final learning rate (up to
    cap_doublings times, each to twice the cap); of the capped run and its continuation the lower validation loss
    is kept with both sets of numbers; a run stopped early is not continued; one still capped stays capped."""
    from ttlab.lm.configs import TrainConfig
    from ttlab.lm.experiments import run_data_sweep
    from ttlab.lm.presets import Execution, IDOptions, SweepData, model_config
    from ttlab.scaling.analysis import step_capped

    monkeypatch.setenv("TTLAB_CACHE", str(tmp_path / "cache"))
    kw = dict(data=SweepData(corpus="builtin:sotu", max_docs=24, vocab_size=300), model=model_config((1, 2, 16), 16),
              sizes=[400, 1500, 5000], protocol="early-stop", execution=Execution(workers=1), bootstrap=0,
              id_options=IDOptions(windows_per_doc=2, tokens_per_doc=8, batch_size=100, k=5))
    train = TrainConfig(batch_size=4, max_iters=6, warmup_iters=1, eval_interval=3, eval_iters=2, patience=50,
                        test_max_tokens=1000, lr=3e-3)
    res = run_data_sweep(tmp_path / "a", train=train, cap_doublings=1, **kw)
    runs = res["runs"]
    assert len(runs) == 3 and len(res["superseded_runs"]) == 3
    for r in runs:
        cap, cont = r["capped_point"], r["continued_point"]
        assert cap["iters"] == 6 and cap["stop_reason"] == "max_iters" and cont["iters"] == 12
        assert cont["name"] == f"{cap['name']}_cont12" and r["continuation_stop_reason"] == "max_iters"
        chosen = "continued" if cont["best_val_loss"] < cap["best_val_loss"] else "capped"
        assert r["point_chosen"] == chosen and r["name"] == (cont if chosen == "continued" else cap)["name"]
        assert r["best_val_loss"] == min(cap["best_val_loss"], cont["best_val_loss"]) and step_capped(r)
    assert {r["name"] for r in res["superseded_runs"]} == {
        (r["capped_point"] if r["point_chosen"] == "continued" else r["continued_point"])["name"] for r in runs}
    assert all(s["superseded_by"] == r["name"] for s, r in zip(res["superseded_runs"], runs))
    assert res["config"]["cap_doublings"] == 1
    # a run stopped by early stopping (here: min_delta so large that no evaluation counts as an improvement) is
    # fitted as it is: nothing is continued
    early = run_data_sweep(tmp_path / "b", train=replace(train, patience=1, min_delta=10.0), cap_doublings=2, **kw)
    assert all(r["status"] == "ok" and r["stop_reason"] == "early_stop" for r in early["runs"]), early["runs"]
    assert early["superseded_runs"] == [] and not any("capped_point" in r for r in early["runs"])
    with pytest.raises(TTLabInputError, match="cap_doublings must be an integer >= 0"):
        run_data_sweep(tmp_path / "c", train=train, cap_doublings=-1, **kw)


def test_step_capped_reads_the_search_pass_of_a_converged_run():
    """The converged protocol's retrain always ends at its own max_iters; whether it converged is its search pass's."""
    from ttlab.scaling.analysis import step_capped

    assert step_capped({"stop_reason": "max_iters"}) and not step_capped({"stop_reason": "early_stop"})
    assert not step_capped({"stop_reason": "max_iters", "schedule_search": {"stop_reason": "early_stop"}})
    assert step_capped({"stop_reason": "max_iters", "schedule_search": {"stop_reason": "max_iters"}})
    assert not step_capped({})


def test_source_commit_and_load_are_recorded(tmp_path):
    """The report states the commit a run came from and the load it ran under (issue: committed standard results)."""
    import subprocess

    from ttlab.provenance import load_average, source_commit
    from ttlab.reproduce.report_document import run_conditions

    outside = source_commit(tmp_path)
    assert outside["commit"] is None and "is not in a git checkout" in outside["why"]
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    (repo / "f.txt").write_text("a")
    subprocess.run(git + ["add", "f.txt"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "x"], check=True)
    sha = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert source_commit(repo) == {"commit": sha, "dirty": False}
    (repo / "f.txt").write_text("b")
    assert source_commit(repo) == {"commit": sha, "dirty": True}
    (repo / "new.txt").write_text("untracked files do not count")
    subprocess.run(git + ["checkout", "-q", "f.txt"], check=True)
    assert source_commit(repo)["dirty"] is False
    la = load_average()
    assert la is None or (len(la) == 3 and all(x >= 0 for x in la))
    res = {"wall_time_s": 3001.4, "run": {"source": {"commit": "0123456789abcdef", "dirty": True}, "cpus": 2,
                                          "load_avg_start": [0.5, 0.4, 0.3],
                                          "load_avg_at_part_ends": {"a": [1.9, 1, 1], "b": [2.25, 1, 1], "c": None},
                                          "load_avg_end": [2.0, 1.5, 1.0]}}
    assert run_conditions(res) == ("Run from commit `0123456789ab` with uncommitted changes on 2 CPU(s); this invocation "
                                   "took 3001 s wall; load average (1 min): 0.50 at the start, 1.90–2.25 at the ends "
                                   "of the 2 part(s) run, 2.00 at the end.")
    res["run"] = {"source": {"commit": None, "why": "no git"}, "cpus": None, "load_avg_start": None,
                  "load_avg_at_part_ends": {}, "load_avg_end": None}
    assert run_conditions(res) == ("Run from no commit recorded (no git) on ? CPU(s); this invocation took 3001 s "
                                   "wall; load average (1 min): not available.")


def test_results_record_the_run_conditions(tmp_path):
    from ttlab.reproduce import run_reproduction

    res = run_reproduction(tmp_path / "o", PartContext(mode="standard"), parts=["table1"])
    run = res["run"]
    assert set(run) == {"source", "cpus", "load_avg_start", "load_avg_at_part_ends", "load_avg_end"}
    assert list(run["load_avg_at_part_ends"]) == ["table1"] and "commit" in run["source"]
    assert "Run from " in (tmp_path / "o" / "report.md").read_text()


def test_every_mode_has_the_continued_stage2_cap():
    """Regression: ntp_figure2 looked its cap up by mode name and failed in standard mode."""
    from ttlab.reproduce.parts.ntp_figure2 import long_stage2_cap

    caps = {m: long_stage2_cap(PartContext(mode=m)) for m in MODES}
    assert caps == {"quick": 200_000, "standard": 200_000, "full": 400_000, "tiny": 200}


def test_the_budgets_are_one_constant_each_quoted_by_help_registry_and_docs():
    """--help, the registry's mode text and docs/reproduce.md quote QUICK_BUDGET_MINUTES and STANDARD_BUDGET_MINUTES."""
    import re
    from pathlib import Path

    import typer

    import ttlab.cli as cli
    from ttlab.reproduce import QUICK_BUDGET_MINUTES, STANDARD_BUDGET_MINUTES

    opts = {p.name: p.help for p in typer.main.get_command(cli.app).commands["reproduce"].params}
    assert f"≤ {QUICK_BUDGET_MINUTES} min" in opts["quick"]
    assert f"≤ {STANDARD_BUDGET_MINUTES} min" in opts["standard"]
    doc = (Path(__file__).resolve().parents[2] / "docs" / "reproduce.md").read_text(encoding="utf-8")
    quoted = {int(m) for m in re.findall(r"--quick --out runs/demo .*?≤ (\d+) min", doc)}
    quoted_std = {int(m) for m in re.findall(r"--standard --out runs/standard .*?≤ (\d+) min", doc)}
    assert quoted == {QUICK_BUDGET_MINUTES} and quoted_std == {STANDARD_BUDGET_MINUTES}
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert f"≤ {STANDARD_BUDGET_MINUTES} min" in readme
