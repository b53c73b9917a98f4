"""Views of paper A's results: the tables and lines `ttlab ntp …` prints, built from what the library returns.

Each ``*_view`` function returns a list of rich renderables (:class:`rich.table.Table`, :class:`rich.text.Text`);
nothing here prints or holds a console (the CLI prints a view with ``ttlab.cli.common.print_view``):

* :func:`check_view`: `ntp check`'s report of a :class:`~ttlab.ntp.fastcheck.QuickCheck` or
  :class:`~ttlab.ntp.fastcheck.FullCheck` (at most :data:`SHOW_VIOLATIONS` violations and orders);
* :func:`run_view`: the summary of `ntp run` (:func:`ttlab.ntp.experiment.run_experiment`);
* :func:`generalization_view`: the report of `ntp generalize` (:func:`ttlab.ntp.generalize.generalization_run`);
* :func:`svop_view`: the walkthrough of `ntp example svop` (:func:`ttlab.ntp.walkthrough.svop_walkthrough`).

No numpy or torch at import time (the CLI imports this module when it starts).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import RenderableType
from rich.table import Table

from ttlab.markup import markup, plain

__all__ = ["SHOW_SENTENCES", "SHOW_VIOLATIONS", "check_view", "collocation_text", "generalization_view", "run_view", "svop_view"]

#: violations (and orders) listed by `ntp check` in text mode (all of them with --json)
SHOW_VIOLATIONS = 40


def collocation_text(pairs: list[tuple[str, str]]) -> str:
    """``collocation: a→b, …`` for the first :data:`SHOW_VIOLATIONS` pairs (token, next token), then how many more."""
    shown = ", ".join(f"{k}→{v}" for k, v in pairs[:SHOW_VIOLATIONS])
    more = len(pairs) - SHOW_VIOLATIONS
    return "collocation: " + shown + (f" … and {more:,} more (--json lists them)" if more > 0 else "")


def _degenerate_lines(degenerate: dict[str, str]) -> list[RenderableType]:
    """A note per stage with nothing to learn."""
    return [markup("[yellow]note[/]: {} has nothing to learn: {}", stage.replace("stage", "stage "), why)
            for stage, why in degenerate.items()]


def check_view(file: str | Path, found: Any) -> list[RenderableType]:
    """`ntp check`'s report of ``file``: ``found`` is what :func:`ttlab.ntp.fastcheck.check_dataset_file` returned (a
    valid file's :class:`~ttlab.ntp.fastcheck.QuickCheck`, or a :class:`~ttlab.ntp.fastcheck.FullCheck` with the
    orders' table and the violations)."""
    from ttlab.ntp.fastcheck import QuickCheck

    if isinstance(found, QuickCheck):
        return _quick_check_view(file, found)
    return _full_check_view(file, found)


def _quick_check_view(file: str | Path, qc: Any) -> list[RenderableType]:
    """The report of a :class:`ttlab.ntp.fastcheck.QuickCheck` of a valid file."""
    cost = qc.training_cost()
    return [markup("[bold]{}[/]: {:,} distinct sentences, |V| = {:,}; training batch {}", file, qc.n_sentences,
                   qc.vocab_size, cost.batch()),
            plain(collocation_text(qc.collocation_pairs())),
            plain(f"{qc.n_orders:,} query-dependent orders (--json lists them)"),
            markup("[green]valid[/]: Assumptions 1 and 3 hold."),
            *_degenerate_lines(qc.degenerate())]


def _full_check_view(file: str | Path, full: Any) -> list[RenderableType]:
    """The report of a :class:`ttlab.ntp.fastcheck.FullCheck`: counts, orders, verdict and violations."""
    structure, report, cost = full
    ds = structure.dataset
    out: list[RenderableType] = [
        markup("[bold]{}[/]: {:,} distinct sentences, |V| = {:,}; training batch {}", file, len(ds.sentences),
               ds.vocab_size, cost.batch()),
        plain(collocation_text(list(structure.collocation.items())))]
    table = Table("query", "optimal", "non-optimal", "non-comparable", "confused", title="query-dependent orders")
    for q, cats in report["orders"].items():
        table.add_row(plain(q), plain(" ".join(cats["optimal"])), plain(" ".join(cats["non_optimal"])),
                      plain(" ".join(cats["non_comparable"])) if "non_comparable" in cats
                      else f"({cats['n_non_comparable']:,} tokens)", plain(" ".join(cats["confused"])))
    if len(report["orders"]) <= SHOW_VIOLATIONS:
        out.append(table)
    else:
        out.append(plain(f"{len(report['orders']):,} query-dependent orders (--json lists them)"))
    if structure.valid:
        out.append(markup("[green]valid[/]: Assumptions 1 and 3 hold."))
    else:
        out.append(markup("[red]invalid[/]: {:,} violation(s)", len(structure.violations)))
        out += [markup("  [red]{}[/] {}", v.kind, v.message)
                for v in structure.violations[:SHOW_VIOLATIONS]]
        more = len(structure.violations) - SHOW_VIOLATIONS
        if more > 0:
            kinds = Counter(v.kind for v in structure.violations)
            out.append(plain(f"  … and {more:,} more ({', '.join(f'{n:,} {k}' for k, n in kinds.items())} "
                             "in all); --json lists every one"))
    return out + _degenerate_lines(report["degenerate"])


def run_view(summary: dict, out: str | Path, took_s: float) -> list[RenderableType]:
    """The summary of `ntp run` (``summary``: :func:`ttlab.ntp.experiment.run_experiment`'s, without its private
    ``_`` keys): the stages' table, the batch, the times (``took_s``: the whole command), ‖W*‖ and what was written
    to ``out``."""
    from ttlab.ntp.diagnostics import format_loss
    from ttlab.ntp.maxmargin import certificate_text

    view: list[RenderableType] = []
    table = Table("stage", "steps", "final loss", "final cosine", "final norm", "1−cos fit C (log t/t)",
                  "loss rate", "norm bounds hold", title="training dynamics")
    table.columns[2].min_width = 10  # tiny losses print in full scientific notation (e.g. 8.138e-23)
    if "stage_2_skipped" in summary:
        view.append(plain(f"stage 2 skipped: {summary['stage_2_skipped']}"))
    for name, s in summary["stages"].items():
        fit = s["direction_fit"].get("log_t_over_t", {})
        table.add_row(plain(name), f"{s['steps']:d}", format_loss(s["final_loss"], s.get("final_log_loss")), f"{s['final_cosine']:.6f}",
                      f"{s['final_norm']:.4f}", f"{fit.get('C', float('nan')):.3g}",
                      f"{s['loss_fit']['rate']:.3g}", f"{100 * s['norm_bounds']['fraction']:.0f}%")
    view.append(table)
    c, tm = summary["cost"], summary["time"]
    view.append(plain(f"training batch {c['n_sentences']:,} sentences × {c['width']:,} distinct tokens = "
                      f"{c['slots']:,} slots (estimated {c['estimated_bytes'] / 2**30:.2f} GiB)"))
    view.append(plain(f"time: training {summary['wall_time_s']:.1f} s (estimated {tm['estimated_training_s']:.1f} s); "
                      f"the whole command {took_s:.1f} s (estimated {tm['estimated_total_s']:.1f} s)"))
    kq = "—" if summary["wkq_star_norm"] is None else f"{summary['wkq_star_norm']:.4f}"
    view.append(plain(f"‖W*_ov‖ = {summary['wov_star_norm']:.4f}, ‖W*_kq‖ = {kq}"))
    if summary.get("wkq_star"):
        view.append(plain(certificate_text("W*_kq", summary["wkq_star"])))
    if "generalization" in summary:
        g = summary["generalization"]
        view.append(plain(f"generalization: agreement {g['agreement']} on {g['n_with_prediction']} unseen sentences"))
    view.append(plain(f"wrote {out}/metrics.csv, {out}/summary.json, {out}/dynamics.png"))
    return view


#: `ntp generalize --sentences-file` lists this many sentences in text mode (--json and generalization.json: all)
SHOW_SENTENCES = 50


def _given_table(cases: list[dict]) -> list[RenderableType]:
    """The given sentences, one row each (at most :data:`SHOW_SENTENCES`): line, context (marked when it is a training
    sentence), the file's next token, the theory's prediction and case, the model's top token with its probability and whether they agree."""
    from ttlab.ntp.dataset import shorten

    table = Table("line", "context", "file's next", "theory", "case", "model (p)", "agrees",
                  title="given sentences: the model against Theorem 3")
    for c in cases[:SHOW_SENTENCES]:
        case = c["case"] if c["theory_prediction"] is not None else f"none: {c['reason']}"
        table.add_row(f"{c['line']:d}" if c["line"] else "—", plain(shorten(c["sentence"].split()) + (" (trained on)" if c["seen"] else "")),
                      plain(c["label"]),
                      plain(c["theory_prediction"] or "—"), plain(case),
                      plain(f"{c['model_prediction']} ({c['model_probability']:.3f})"),
                      markup("[green]✓[/]") if c["agree"] else plain("—") if c["agree"] is None else markup("[red]✗[/]"))
    view: list[RenderableType] = [table]
    more = len(cases) - SHOW_SENTENCES
    if more > 0:
        view.append(plain(f"… and {more:,} more sentences (--json and generalization.json list them all)"))
    return view


def generalization_view(report: dict, out: str | Path) -> list[RenderableType]:
    """The report of `ntp generalize` (:func:`ttlab.ntp.generalize.generalization_run`'s): the given sentences one by
    one (when a file was given), agreement with Theorem 3 by case, W*_kq's certificate, the overall agreement and the
    files written to ``out``."""
    from ttlab.ntp.maxmargin import certificate_text

    given = report.get("sentences", {}).get("source") == "given"
    view: list[RenderableType] = _given_table(report["cases"]) if given else []
    table = Table("case", "sentences", "agreement with theory",
                  title="Theorem 3 on the given sentences" if given else "Theorem 3 on unseen sentences")
    for case, v in report["by_case"].items():
        table.add_row(plain(case), f"{v['n']:d}", "—" if v["agreement"] is None else f"{100 * v['agreement']:.1f}%")
    view += [table, plain(certificate_text("W*_kq", report["wkq_star"]))]
    if given:
        view.append(plain(f"the model's top token is the file's next token for {100 * report['label_agreement']:.1f}% "
                          f"of the {report['n_sentences']:,} sentences"))
    figure = f", {out}/generalization.png" if "figure" in report else ""
    return view + [plain(f"overall agreement: {report['agreement']}; wrote {out}/generalization.json{figure}")]


def svop_view(walkthrough: dict) -> list[RenderableType]:
    """The paper's Examples 1–2 walked through (``walkthrough``: :func:`ttlab.ntp.walkthrough.svop_walkthrough`'s):
    sentences, collocation, orders, W*_kq's columns, the trained cosines and losses, and the unseen sentences with
    the model's and the paper's predictions (✓ when they agree)."""
    from ttlab.ntp.diagnostics import format_loss
    from ttlab.ntp.examples import SVOP_SEQUENCES

    w = walkthrough
    view: list[RenderableType] = [
        markup("[bold]Example 1[/]: training sequences {}", ", ".join(s.replace(" ", "") for s in SVOP_SEQUENCES)),
        plain("sentences: " + ", ".join(w["sentences"])),
        plain("collocation: " + ", ".join(f"n({k}) = {v}" for k, v in w["collocation"].items()))]
    view += [plain(f"  order under query {q}: {rel}") for q, rel in w["orders"].items()]
    view.append(plain(f"W*_kq column values (Proposition 2): {w['wkq_star_columns']}"))
    view.append(plain(
        f"trained: stage-1 cosine {w['cosine_ov']:.6f} (loss L0 {format_loss(w['loss_ov'], w['log_loss_ov'])}), "
        f"stage-2 cosine {w['cosine_kq']:.6f} (loss L {format_loss(w['loss_kq'], w['log_loss_kq'])})"))
    view.append(markup("[bold]Example 2[/]: unseen sentences"))
    for sent, d in w["unseen"].items():
        line = ("  {} → model {} (p = {:.3f}), paper {} [green]✓[/]" if d["model"] == d["expected"]
                else "  {} → model {} (p = {:.3f}), paper {} [red]✗[/]")
        view.append(markup(line, sent, d["model"], d["prob"], d["expected"]))
    return view
