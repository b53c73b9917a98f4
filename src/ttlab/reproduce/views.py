"""What ``ttlab reproduce`` prints, built from what the library returns: the table of parts (``--list``), the warnings
and the cost estimate before a run, the summary table after it, the written files and the failures. Each view is a
list of rich renderables (tables and :class:`rich.text.Text` lines); views never print and hold no console.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from ttlab.markup import markup, plain
from ttlab.reproduce import PARTS, VERDICTS, load_part_record, part_names, part_record_problem
from ttlab.reproduce.statements import statement_headline

__all__ = ["claims_view", "duration", "estimate_view", "failures_view", "files_view", "parts_view", "summary_view",
           "warnings_view"]

VERDICT_STYLES = {"holds": "green", "partly": "yellow", "not reproduced": "red", "inconclusive": "magenta"}
"""How each verdict is coloured on the console."""
CAUSES_SHOWN = 5
"""At most this many failed parts have their error printed (then how many more)."""


def duration(seconds: float) -> str:
    """A wall time for people: seconds below 90 s, minutes below 90 min, else hours (``"5.0 min"``)."""
    if seconds >= 5400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def parts_view(out: Path) -> list[RenderableType]:
    """``--list``: every part with its estimated cost (the static figures; a run prints its live estimate first)
    and the state of its record in ``out``."""
    t = Table(title="ttlab reproduce parts", show_lines=False)
    t.add_column("part", no_wrap=True)
    for col in ("paper", "what", "≈ quick", "≈ standard", "≈ full"):
        t.add_column(col)
    t.add_column(plain(f"in {out}"))
    for name in part_names():
        p = PARTS[name]
        rec = load_part_record(out, name)
        state = "—" if rec is None else f"{rec.get('status')} ({rec.get('mode')})"
        if part_record_problem(out, name):
            state = "corrupt record (will re-run)"
        std = p.static_estimates.standard
        t.add_row(plain(name), plain(p.paper), plain(p.title), duration(p.estimate[0]), duration(std),
                  duration(p.estimate[1]), plain(state))
    return [t]


def warnings_view(out: Path, names: list[str], mode: str) -> list[RenderableType]:
    """Before a run: a warning per part whose record in ``out`` is corrupt (it runs again), and, in the modes whose
    estimate measures step times (``full``, ``standard``), the line that says so."""
    view: list[RenderableType] = [
        markup("[yellow]warning:[/] {}; the part {} runs again and its new record replaces the file.", problem, name)
        for name in names if (problem := part_record_problem(out, name))]
    if mode in ("full", "standard"):
        view.append(markup("[bold]Estimating the cost of --{}[/] (measuring step times)…", mode))
    return view


def estimate_view(est: dict, mode: str, out: Path) -> list[RenderableType]:
    """The estimated cost of a run (``est``: :func:`ttlab.reproduce.estimate_cost`), part by part, and how many
    finished parts in ``out`` are reused."""
    todo = [r for r in est["parts"] if not r["cached"]]
    lines = ", ".join(f"{r['part']} ≈ {duration(r['seconds'])}" for r in todo) or "nothing to run"
    reused = len(est["parts"]) - len(todo)
    return [markup("[bold]ttlab reproduce --{}[/]: {} part(s), estimated cost ≈ {} on this machine ({}){}", mode,
                   len(est["parts"]), duration(est["total_seconds"]), lines,
                   f"; {reused} finished part(s) in {out} will be reused" if reused else "")]


def summary_view(results: dict, mode: str) -> list[RenderableType]:
    """The table of parts with their status, wall time and claim counts per verdict, and the verdicts' headline."""
    t = Table(title=plain(f"ttlab reproduce --{mode}: parts"), show_lines=False)
    for col in ("part", "paper", "status", "wall time", "claims (holds / partly / not / inconclusive)"):
        t.add_column(col)
    for name in part_names():
        rec = results["parts"].get(name)
        if rec is None:
            continue
        claims = rec.get("result", {}).get("claims", []) if rec["status"] == "ok" else []
        counts = [sum(c["verdict"] == v for c in claims) for v in VERDICTS]
        wall = rec.get("wall_time_s") or 0.0
        t.add_row(plain(name), plain(rec.get("paper", "?")), plain(rec["status"] + (" (reused)" if rec.get("reused") else "")),
                  f"{wall:.1f} s", plain(" / ".join(map(str, counts))) if rec["status"] == "ok" else "—")
    claims = results.get("claims", [])
    return [t, Text(statement_headline(claims))]


def claims_view(claims: list[dict], title: str) -> list[RenderableType]:
    """``title``, then one line per judged claim — its verdict, statement, measured summary and the rule's reason —
    as the report gives them (what a command prints so that its console drops no caveat the report enforces)."""
    view: list[RenderableType] = [plain(title)]
    for c in claims:
        view.append(Text.assemble("  ", (c["verdict"], VERDICT_STYLES.get(c["verdict"], "")), f": {c['statement']}"))
        view += [plain(f"    {text}") for text in (c.get("summary"), c.get("reason")) if text]
    return view


def files_view(results: dict) -> list[RenderableType]:
    """The files a run wrote."""
    files = results["files"]
    return [Text(f"wrote {files['report_html']}, {files['report_md']} and {files['results']}")]


def failures_view(results: dict) -> list[RenderableType]:
    """The failed parts with their errors (at most :data:`CAUSES_SHOWN`) and the report sections that could not be
    rendered; empty when the run has neither (the CLI then exits 0)."""
    failed, files = results["summary"]["failed"], results["files"]
    render_errors = results.get("render_errors") or {}
    view: list[RenderableType] = []
    if failed:
        view.append(markup("[red]failed parts:[/] {} (tracebacks in {}; re-run the same command to retry them — "
                           "finished parts are reused)", ", ".join(failed), files["report_md"]))
        view += [Text(f"  {name}: {results['parts'][name].get('error', 'unknown error')}")
                 for name in failed[:CAUSES_SHOWN]]
        if len(failed) > CAUSES_SHOWN:
            view.append(Text(f"  … and {len(failed) - CAUSES_SHOWN} more"))
    if render_errors:
        view.append(markup("[red]report sections that could not be rendered:[/] {}", ", ".join(render_errors)))
    return view
