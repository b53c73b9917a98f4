"""`ttlab reproduce` — the main job: every experiment of both papers this machine allows, one report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.text import Text

from ttlab.cli.common import console_err, exit_on_interrupt, print_view
from ttlab.markup import safe
from ttlab.reproduce.registry import QUICK_BUDGET_MINUTES, STANDARD_BUDGET_MINUTES, PartContext


def _mode(quick: bool, standard: bool, full: bool) -> str:
    """The mode of the three exclusive flags (the default: quick)."""
    from ttlab.errors import TTLabInputError

    given = [flag for flag, on in (("--quick", quick), ("--standard", standard), ("--full", full)) if on]
    if len(given) > 1:
        raise TTLabInputError(f"{' and '.join(given)} exclude each other; give one of --quick, --standard, --full "
                              "(the default is --quick).")
    return "full" if full else "standard" if standard else "quick"


def _run_with_progress(out: Path, ctx: PartContext, names: list[str], rerun: bool) -> dict:
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
                prog.update(overall, description=f"[bold]parts[/] (running {safe(name)})")
                prog.reset(sub, total=None, description=f"  {safe(name)}", visible=True)
                return
            prog.advance(overall)
            prog.update(sub, visible=False)
            mark = {"ok": ("✓", "green"), "reused": ("↺", "cyan"), "failed": ("✗", "red"),
                    "interrupted": ("⏸", "yellow")}.get(status, ("?", ""))
            prog.console.print(Text.assemble(mark, f" {name}: {status}"), highlight=False)

        def progress(name: str, description: str, completed: float | None, total: float | None) -> None:
            prog.update(sub, description=f"  {safe(name)}: {safe(description)}", completed=completed or 0, total=total)

        results = run_reproduction(out, ctx, names, on_part, progress=progress, rerun=rerun)
        prog.update(overall, description="[bold]parts[/]")
    return results


def reproduce(
    quick: Annotated[bool, typer.Option(
        "--quick", help=f"Quick mode (the default; ≤ {QUICK_BUDGET_MINUTES} min on 2 cores).")] = False,
    standard: Annotated[bool, typer.Option(
        "--standard", help=f"Standard mode: paper B judged at this machine's scale (≤ {STANDARD_BUDGET_MINUTES} min on 2 "
                           "cores; prints its estimated cost per part first).")] = False,
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
    from ttlab.reproduce import PartContext, check_parts, estimate_cost
    from ttlab.reproduce.views import estimate_view, failures_view, files_view, parts_view, summary_view, warnings_view

    ctx = PartContext(mode=_mode(quick, standard, full), backend=backend, ray_address=ray_address, seed=seed)
    names = check_parts(part or None)
    if list_parts:
        return print_view(parts_view(out))
    check_out_dir(out, files=("results.json", "report.md", "report.html"))
    print_view(warnings_view(out, names, ctx.mode), err=True)
    print_view(estimate_view(estimate_cost(None if rerun else out, ctx, names), ctx.mode, out), err=True)
    with exit_on_interrupt("re-run the same command to resume (finished parts are reused; the interrupted part "
                           "runs again)"):
        results = _run_with_progress(out, ctx, names, rerun)
    print_view(summary_view(results, ctx.mode) + files_view(results))
    failures = failures_view(results)
    print_view(failures, err=True)
    if failures:  # a part failed or a report section could not be rendered
        raise typer.Exit(1)
