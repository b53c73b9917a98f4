"""`ttlab reproduce` — the main job."""

from __future__ import annotations

from pathlib import Path

import typer

from ttlab.cli._common import console, console_err


def reproduce(
    quick: bool = typer.Option(True, "--quick/--full", help="--quick (default, minutes on 2 cores) or --full."),
    out: Path = typer.Option(Path("runs/reproduce"), "--out", help="Output directory (report.md, results.json, figures)."),
    part: list[str] = typer.Option(None, "--part", help="Run only these parts (repeatable)."),
) -> None:
    """Reproduce the papers' experiments at this machine's scale and write a report.

    Finished parts are reused on re-run (resume); a failing part is reported and the exit code is 1.
    """
    from ttlab.errors import TTLabInputError
    from ttlab.reproduce import PARTS, run_reproduction

    unknown = [p for p in (part or []) if p not in PARTS]
    if unknown:
        raise TTLabInputError(f"unknown part(s) {', '.join(unknown)}; available: {', '.join(PARTS)}")

    def on_part(name: str, status: str) -> None:
        console_err.print(f"[bold]{name}[/]: {status}")

    results = run_reproduction(out, quick=quick, parts=part or None, on_part=on_part)
    failed = [n for n, p in results["parts"].items() if p["status"] != "ok"]
    for name, p in results["parts"].items():
        console.print(f"{name}: {p['status']} ({p['wall_time_s']:.1f} s)")
    console.print(f"wrote {out}/report.md and {out}/results.json")
    if failed:
        console_err.print(f"[red]failed parts:[/] {', '.join(failed)} (see {out}/report.md)")
        raise typer.Exit(1)
