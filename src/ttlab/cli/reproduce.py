"""`ttlab reproduce` — the main job: every experiment of both papers this machine allows, one report.

Imports: typer, ttlab.cli._common; inside the command rich, ttlab.reproduce, ttlab.outputs,
ttlab.sweep and ttlab.errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ttlab.cli._common import console, console_err, exit_on_interrupt, print_causes

if TYPE_CHECKING:
    from ttlab.reproduce import PartContext


def _dur(seconds: float) -> str:
    if seconds >= 5400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def _selected_parts(part: list[str] | None, quick: bool, full: bool, backend: str,
                    ray_address: str | None, standard: bool = False) -> tuple[str, list[str]]:
    """The mode (from the three exclusive flags) and the part names to run, checked by the library."""
    from ttlab.errors import TTLabInputError
    from ttlab.reproduce import check_run

    given = [flag for flag, on in (("--quick", quick), ("--standard", standard), ("--full", full)) if on]
    if len(given) > 1:
        raise TTLabInputError(f"{' and '.join(given)} exclude each other; give one of --quick, --standard, --full "
                              "(the default is --quick).")
    mode = "full" if full else "standard" if standard else "quick"
    return mode, check_run(mode, part or None, backend, ray_address)


def _print_parts(out: Path) -> None:
    """``--list``: every part with its estimated cost (the static figures; a run prints its live estimate first)
    and the state of its record in ``out``."""
    from rich.table import Table

    from ttlab.reproduce import PARTS, load_part_record, part_names, part_record_problem

    t = Table(title="ttlab reproduce parts", show_lines=False)
    t.add_column("part", no_wrap=True)
    for col in ("paper", "what", "≈ quick", "≈ standard", "≈ full", f"in {out}"):
        t.add_column(col)
    for name in part_names():
        p = PARTS[name]
        rec = load_part_record(out, name)
        state = "—" if rec is None else f"{rec.get('status')} ({rec.get('mode')})"
        if part_record_problem(out, name):
            state = "corrupt record (will re-run)"
        std = p.estimate[0] if p.estimate_standard is None else p.estimate_standard
        t.add_row(name, p.paper, p.title, _dur(p.estimate[0]), _dur(std), _dur(p.estimate[1]), state)
    console.print(t)


def _announce(out: Path, names: list[str], ctx: "PartContext", mode: str, rerun: bool) -> None:
    """Warn about corrupt records and print the estimated cost of what will run."""
    from ttlab.reproduce import estimate_cost, part_record_problem

    for name in names:
        problem = part_record_problem(out, name)
        if problem:
            console_err.print(f"[yellow]warning:[/] {problem}; the part {name} runs again and its new record "
                              "replaces the file.", highlight=False, soft_wrap=True)
    if mode in ("full", "standard"):
        console_err.print(f"[bold]Estimating the cost of --{mode}[/] (measuring step times)…", highlight=False)
    est = estimate_cost(None if rerun else out, ctx, names)
    todo = [r for r in est["parts"] if not r["cached"]]
    lines = ", ".join(f"{r['part']} ≈ {_dur(r['seconds'])}" for r in todo) or "nothing to run"
    reused = len(est["parts"]) - len(todo)
    console_err.print(
        f"[bold]ttlab reproduce --{mode}[/]: {len(names)} part(s), estimated cost ≈ {_dur(est['total_seconds'])} "
        f"on this machine ({lines})" + (f"; {reused} finished part(s) in {out} will be reused" if reused else ""),
        highlight=False)


def _run_with_progress(out: Path, mode: str, names: list[str], backend: str, ray_address: str | None,
                       seed: int, rerun: bool) -> dict:
    """Run the parts under a progress display (one bar for the parts, one for the running part)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from ttlab.reproduce import run_reproduction

    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console_err, transient=False) as prog:
        overall = prog.add_task("parts", total=len(names))
        sub = prog.add_task("", total=None, visible=False)

        def on_part(name: str, status: str) -> None:
            if status == "running":
                prog.update(overall, description=f"[bold]parts[/] (running {name})")
                prog.reset(sub, total=None, description=f"  {name}", visible=True)
                return
            prog.advance(overall)
            prog.update(sub, visible=False)
            mark = {"ok": "[green]✓[/]", "reused": "[cyan]↺[/]", "failed": "[red]✗[/]", "interrupted": "[yellow]⏸[/]"}.get(status, "?")
            prog.console.print(f"{mark} {name}: {status}", highlight=False)

        def progress(name: str, description: str, completed: float | None, total: float | None) -> None:
            prog.update(sub, description=f"  {name}: {description}", completed=completed or 0, total=total)

        results = run_reproduction(out, mode=mode, parts=names, on_part=on_part, backend=backend,
                                   ray_address=ray_address, seed=seed, progress=progress, rerun=rerun)
        prog.update(overall, description="[bold]parts[/]")
    return results


def _print_summary(results: dict, mode: str) -> None:
    """The table of parts with their status, wall time and claim counts per verdict."""
    from rich.table import Table

    from ttlab.reproduce import VERDICTS, part_names
    from ttlab.reproduce.verdicts import count_by_kind, headline

    t = Table(title=f"ttlab reproduce --{mode}: parts", show_lines=False)
    for col in ("part", "paper", "status", "wall time", "claims (holds / partly / not / inconclusive)"):
        t.add_column(col)
    for name in part_names():
        rec = results["parts"].get(name)
        if rec is None:
            continue
        claims = rec.get("result", {}).get("claims", []) if rec["status"] == "ok" else []
        counts = [sum(c["verdict"] == v for c in claims) for v in VERDICTS]
        wall = rec.get("wall_time_s") or 0.0
        t.add_row(name, rec.get("paper", "?"), rec["status"] + (" (reused)" if rec.get("reused") else ""),
                  f"{wall:.1f} s", " / ".join(map(str, counts)) if rec["status"] == "ok" else "—")
    console.print(t)
    console.print(headline(count_by_kind(results.get("claims", []))), highlight=False, soft_wrap=True)


def _report_files_and_failures(results: dict) -> None:
    """Name the written files and each failed part's error; exit 1 when a part failed or a report section
    could not be rendered."""
    files = results["files"]
    console.print(f"wrote {files['report_html']}, {files['report_md']} and {files['results']}", highlight=False,
                  soft_wrap=True)
    failed = results["summary"]["failed"]
    render_errors = results.get("render_errors") or {}
    if failed:
        console_err.print(f"[red]failed parts:[/] {', '.join(failed)} (tracebacks in {files['report_md']}; re-run the "
                          "same command to retry them — finished parts are reused)", highlight=False,
                          soft_wrap=True)
        print_causes((name, results["parts"][name].get("error", "unknown error")) for name in failed)
    if render_errors:
        console_err.print(f"[red]report sections that could not be rendered:[/] {', '.join(render_errors)}",
                          highlight=False)
    if failed or render_errors:
        raise typer.Exit(1)


def reproduce(
    quick: Annotated[bool, typer.Option("--quick", help="Quick mode (the default; ≤ 15 min on 2 cores).")] = False,
    standard: Annotated[bool, typer.Option(
        "--standard", help="Standard mode: paper B judged at this machine's scale (≤ 60 min on 2 cores; prints its "
                           "estimated cost per part first).")] = False,
    full: Annotated[bool, typer.Option("--full", help="Full mode (prints its estimated cost first).")] = False,
    out: Annotated[Path, typer.Option(
        "--out", help="Output directory: report.html, report.md, results.json, parts/, figures.")] = Path("runs/reproduce"),
    backend: Annotated[str, typer.Option("--backend", help="Sweep backend for sweep-style parts: local | ray.")] = "local",
    ray_address: Annotated[Optional[str], typer.Option(
        "--ray-address", help="Address of a running Ray cluster (with --backend ray).")] = None,
    part: Annotated[Optional[list[str]], typer.Option(
        "--part", help="Run only these parts (repeatable); see --list.")] = None,
    list_parts: Annotated[bool, typer.Option("--list", help="List the parts with their estimated cost and stop.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Base seed of every part.")] = 0,
    rerun: Annotated[bool, typer.Option("--rerun", help="Re-run the selected parts even if finished results exist.")] = False,
) -> None:
    """Reproduce both papers' experiments at this machine's scale and write DIR/report.html, report.md, results.json.

    A part that finished is reused on re-run (resume); a part that fails is reported in the report and
    the exit code (1) without losing the others.
    """
    from ttlab.outputs import check_out_dir
    from ttlab.reproduce import PartContext

    mode, names = _selected_parts(part, quick, full, backend, ray_address, standard)
    if list_parts:
        _print_parts(out)
        return
    check_out_dir(out, files=("results.json", "report.md", "report.html"))
    ctx = PartContext(mode=mode, backend=backend, ray_address=ray_address, seed=seed)
    _announce(out, names, ctx, mode, rerun)
    with exit_on_interrupt("re-run the same command to resume (finished parts are reused; the interrupted part "
                           "runs again)"):
        results = _run_with_progress(out, mode, names, backend, ray_address, seed, rerun)
    _print_summary(results, mode)
    _report_files_and_failures(results)
