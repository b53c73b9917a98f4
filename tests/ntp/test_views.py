"""The views of `ttlab ntp …` (ttlab.ntp.views): built from real small results, rendered, and showing their numbers."""

from __future__ import annotations

from tests.conftest import view_text
from ttlab.ntp.config import DatasetSource, RandomSpec, TrainConfig
from ttlab.ntp.fastcheck import FullCheck, QuickCheck, check_dataset_file
from ttlab.ntp.generate import generate_text
from ttlab.ntp.views import SHOW_VIOLATIONS, check_view, collocation_text, generalization_view, run_view, svop_view


def render(view: list) -> str:
    return view_text(view, cells=True)  # table rows as their cells' words


TRAIN = TrainConfig(stage1_steps=6, stage2_steps=7, init="zero", init_scale=0.01, schedule="two-stage",
                    optimizer="ngd", dtype="auto", impl="auto")


def test_check_view_of_a_quick_and_of_a_full_check(tmp_path):
    p = tmp_path / "d.txt"
    p.write_text(generate_text(RandomSpec(12, 30, 2, 5, 1), "dense"))
    quick = check_dataset_file(p, fast_check_chars=0)
    assert isinstance(quick, QuickCheck)
    text = render(check_view(p, quick))
    assert f"{quick.n_sentences:,} distinct sentences, |V| = {quick.vocab_size:,}" in text
    assert f"training batch {quick.training_cost().batch()}" in text
    assert f"{quick.n_orders:,} query-dependent orders" in text and "valid: Assumptions 1 and 3 hold." in text
    full = check_dataset_file(p)
    assert isinstance(full, FullCheck) and full.structure.valid
    text = render(check_view(p, full))
    assert f"{len(full.structure.dataset.sentences):,} distinct sentences" in text and "query-dependent orders" in text
    q, cats = next(iter(full.report["orders"].items()))
    assert " ".join(cats["optimal"]) in text and "valid" in text

    bad = tmp_path / "bad.txt"
    bad.write_text("a => b\nb => a\na => a\nb a => b\n")  # a has two next tokens: Assumption 1 fails
    full = check_dataset_file(bad)
    assert not full.structure.valid
    text = render(check_view(bad, full))
    assert f"invalid: {len(full.structure.violations):,} violation(s)" in text
    assert all(v.kind in text for v in full.structure.violations)


def test_collocation_text_shows_the_first_pairs_and_counts_the_rest():
    pairs = [(f"t{i}", f"t{i + 1}") for i in range(SHOW_VIOLATIONS + 7)]
    text = collocation_text(pairs)
    assert text.startswith("collocation: t0→t1, ") and f"t{SHOW_VIOLATIONS - 1}→t{SHOW_VIOLATIONS}" in text
    assert f"t{SHOW_VIOLATIONS}→" not in text and "… and 7 more" in text
    assert collocation_text(pairs[:2]) == "collocation: t0→t1, t1→t2"


def test_run_view_shows_the_stages_cost_and_norms():
    from ttlab.ntp.experiment import run_experiment

    summary = run_experiment(DatasetSource(vocab_size=6, n_sentences=20), None, TRAIN)
    public = {k: v for k, v in summary.items() if not k.startswith("_")}
    text = render(run_view(public, "OUT", 12.5))
    s1, s2 = public["stages"]["stage_1"], public["stages"]["stage_2"]
    assert "stage_1 6 " in text and "stage_2 7 " in text
    assert f"{s1['final_cosine']:.6f}" in text and f"{s2['final_norm']:.4f}" in text
    c = public["cost"]
    assert f"training batch {c['n_sentences']:,} sentences × {c['width']:,} distinct tokens = {c['slots']:,} slots" in text
    assert f"training {public['wall_time_s']:.1f} s" in text and "the whole command 12.5 s" in text
    assert f"‖W*_ov‖ = {public['wov_star_norm']:.4f}, ‖W*_kq‖ = {public['wkq_star_norm']:.4f}" in text
    assert "wrote OUT/metrics.csv, OUT/summary.json, OUT/dynamics.png" in text


def test_generalization_view_shows_the_cases_and_the_agreement():
    from ttlab.ntp.generalize import generalization_run

    report = generalization_run(DatasetSource(vocab_size=6, n_sentences=20), 30, 30, samples=50)
    text = render(generalization_view(report, "G"))
    for case, v in report["by_case"].items():
        pct = "—" if v["agreement"] is None else f"{100 * v['agreement']:.1f}%"
        assert f"{case} {v['n']} {pct}" in text
    assert f"min margin {report['wkq_star']['min_margin']:.12g}" in text
    assert f"overall agreement: {report['agreement']}; wrote G/generalization.json" in text


def test_svop_view_shows_the_walkthrough():
    from ttlab.ntp.walkthrough import svop_walkthrough

    w = svop_walkthrough(steps=200)
    text = render(svop_view(w))
    assert "sentences: " + ", ".join(w["sentences"]) in text
    assert f"stage-1 cosine {w['cosine_ov']:.6f}" in text and f"stage-2 cosine {w['cosine_kq']:.6f}" in text
    for sent, d in w["unseen"].items():
        assert f"{sent} → model {d['model']} (p = {d['prob']:.3f}), paper {d['expected']}" in text
