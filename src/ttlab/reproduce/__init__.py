"""The main job: reproduce both papers' experiments at this machine's scale and write a report.

:func:`run_reproduction` runs every registered *part* (or a chosen few) and writes into the output
directory ``DIR``:

* ``DIR/report.html`` — self-contained (inline CSS, figures embedded as base64), readable offline;
* ``DIR/report.md`` — the same content for diffs (figures by relative path);
* ``DIR/results.json`` — every number, the configuration, seeds, versions, the wall time, status and
  (for failed parts) the error and traceback of every part, and all claims with their verdicts;
* ``DIR/parts/<name>.json`` — one record per part, written atomically as soon as the part ends.

Resume: a part whose record exists with status ``ok`` and the same mode, seed and part version is
reused, not re-run. Failure isolation: a part that raises is recorded as failed (error and
traceback) and the others still run; the report shows the failure where the part's section would
be, and ``ttlab reproduce`` exits with code 1. Interrupts: a part stopped by Ctrl-C (KeyboardInterrupt) is
recorded with status ``interrupted`` — never ``ok``, never reused — the reports are rewritten and the
interrupt propagates (``ttlab reproduce`` exits with 130; the same command resumes).

Adding a part (one module + one import)
---------------------------------------
Write a module ``parts/my_part.py`` named as the part (what several parts share goes to a ``parts/common_*.py``
module) and import it in ``parts/__init__.py``, whose import order is the order of the parts::

    from ttlab.reproduce.registry import PartContext, PerMode, register_part
    from ttlab.reproduce.report_blocks import Claims, Figure, Paragraph, Table
    from ttlab.reproduce.verdicts import make_claim

    def claims(r: dict) -> list[dict]:                         # result dict -> judged claim records
        return [make_claim("my_part.accuracy", "The paper's claim", "at_least",
                           {"value": r["x"]}, {"holds": 0.9, "partly": 0.5},
                           kind="paper", cite="Figure 1",      # paper | check | ablation
                           quantity="accuracy", summary=f"accuracy {r['x']:.3f}")]

    def render(r: dict) -> list:                               # result dict -> report blocks
        return [Paragraph(f"Trained {r['n_runs']} models ..."),
                Figure(r["figure"], "Test loss against data size"),
                Table(["size", "loss"], [[p["n"], p["loss"]] for p in r["points"]]),
                Claims(r["claims"])]

    STEPS = PerMode(quick=1000, standard=4000, full=20000, tiny=10)  # sizes by mode, every mode (tiny = tests)

    @register_part("my_part", paper="B", title="What it reproduces", render=render,
                   claims=claims, estimate=(120, 3600), estimate_standard=480)  # seconds: --quick, --full, --standard
    def my_part(out: Path, ctx: PartContext) -> dict:
        steps = ctx.pick(STEPS)                                 # the one way a part reads its mode
        d = out / "my_part"                                     # write files under DIR/<name>/
        ...                                                     # use ctx.seed, ctx.backend, ctx.ray_address
        ctx.step("training", i, total)                          # sub-step progress (never print)
        return {"n_runs": ..., "x": ..., "figure": "my_part/fig.png"}   # figure paths relative to DIR

The returned dict must be JSON-able and hold every number the claims need. ``claims`` judges them
with the rules of :mod:`ttlab.reproduce.verdicts` (holds | partly | not reproduced | inconclusive,
each with its reason); it runs when the part ends and again whenever the report is written, so a
changed rule applies to cached results. A ``paper`` claim should hold only when a trivial control
measured in the same run (uniform attention, an untrained model, chance) fails it — store the control
beside the value (e.g. ``measured["controls"]`` with a ``control_margin`` threshold) — and a claim of a
theorem may store the theorem's preconditions computed for the run in ``measured["conditions"]``
(``{"met": bool, ...}``); the report marks verdicts near a threshold and claims judged outside their
conditions. Bump ``version=`` when a part's output changes so that
cached records of older code are re-run. A part may be long; it should be resumable itself (e.g.
through :func:`ttlab.sweep.run_sweep`'s per-task cache under ``DIR/<name>``) so that an interrupted ``--full`` run loses little.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ttlab.errors import TTLabInputError
from ttlab.outputs import hold_out_dir
from ttlab.provenance import (
    atomic_write_json,
    atomic_write_many,
    load_average,
    read_json,
    source_commit,
    to_json,
    versions,
)
from ttlab.reproduce.registry import (
    MODES,
    PAPERS,
    PARTS,
    QUICK_BUDGET_MINUTES,
    STANDARD_BUDGET_MINUTES,
    Part,
    PartContext,
    PerMode,
    check_claims,
    load_part_record,
    part_names,
    register_part,
)
from ttlab.reproduce.statements import count_statements, group_statements
from ttlab.reproduce.verdict_base import PAPER_CLAIM, VERDICTS
from ttlab.reproduce.verdicts import count_by_kind, make_claim, missing_claim, rejudge

__all__ = [
    "MODES",
    "PAPERS",
    "PARTS",
    "QUICK_BUDGET_MINUTES",
    "SCHEMA",
    "STANDARD_BUDGET_MINUTES",
    "VERDICTS",
    "Part",
    "PartContext",
    "PerMode",
    "make_claim",
    "check_parts",
    "estimate_cost",
    "load_part_record",
    "part_record_problem",
    "part_names",
    "register_part",
    "run_reproduction",
    "write_reports",
]

SCHEMA = "ttlab.reproduce/2"
INTERRUPTED = "interrupted"
"""Status of a part stopped by Ctrl-C: stored so the report says so, never reused (only ``ok`` is)."""

# the parts register themselves on import (ttlab.reproduce.parts imports them in their registration order)
import ttlab.reproduce.parts  # noqa: E402,F401


def part_record_problem(out_dir: str | Path, name: str) -> str | None:
    """Why ``DIR/parts/<name>.json`` exists but cannot be used (None when missing or valid).

    A damaged record (truncated, empty, not a JSON object) is not reused: the part runs again and
    its new record replaces the damaged file when it ends; the file is never deleted before that."""
    path = Path(out_dir) / "parts" / f"{name}.json"
    if not path.is_file():
        return None
    try:
        rec = read_json(path)
    except UnicodeDecodeError as exc:
        return f"{path} is corrupt (not UTF-8 text: {exc.reason})"
    except ValueError as exc:
        size = path.stat().st_size
        return f"{path} is corrupt ({'empty file, 0 bytes' if size == 0 else f'{size:,} bytes; invalid JSON: {exc}'})"
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror})"
    if not isinstance(rec, dict) or "status" not in rec:
        return f"{path} is corrupt (not a part record: no 'status')"
    return None


def _reusable(rec: dict | None, part: Part, ctx: PartContext) -> bool:
    return (rec is not None and rec.get("status") == "ok" and rec.get("mode") == ctx.mode
            and rec.get("seed", 0) == ctx.seed and rec.get("version", 1) == part.version and "result" in rec)


def _check_names(names: list[str]) -> None:
    unknown = [n for n in names if n not in PARTS]
    if unknown:
        raise TTLabInputError(f"unknown part(s) {', '.join(unknown)}; available: {', '.join(part_names())}",
                              params=("parts",))


def check_parts(parts: list[str] | None = None) -> list[str]:
    """The names of the parts a run would run: every part when ``parts`` is None, else ``parts`` with duplicates
    dropped; an unknown name is a :class:`TTLabInputError` naming ``parts``. (The run's other settings are checked
    by :class:`PartContext`.) :func:`run_reproduction` and the CLI both call this."""
    names = part_names() if parts is None else list(dict.fromkeys(parts))
    _check_names(names)
    return names


def estimate_cost(out_dir: str | Path | None, ctx: PartContext, parts: list[str] | None = None) -> dict:
    """Estimated wall time per part for ``ctx``'s mode; parts already finished in ``out_dir`` cost 0."""
    names = part_names() if parts is None else list(parts)
    _check_names(names)
    rows = []
    for name in names:
        part = PARTS[name]
        cached = out_dir is not None and _reusable(load_part_record(out_dir, name), part, ctx)
        rows.append({"part": name, "paper": part.paper, "title": part.title, "cached": cached,
                     "seconds": 0.0 if cached else part.estimated_seconds(ctx, None if out_dir is None else Path(out_dir))})
    return {"mode": ctx.mode, "parts": rows, "total_seconds": sum(r["seconds"] for r in rows)}


def run_reproduction(
    out_dir: str | Path,
    ctx: PartContext | None = None,
    parts: list[str] | None = None,
    on_part: Callable[[str, str], None] | None = None,
    *,
    progress: Callable[[str, str, float | None, float | None], None] | None = None,
    rerun: bool = False,
) -> dict:
    """Run every part (or ``parts``) in ``ctx``'s mode (``quick`` | ``standard`` | ``full`` | ``tiny``; default
    ``PartContext()``: quick, local backend, seed 0), reusing finished ones; write results.json, report.md and
    report.html.

    ``on_part(name, status)`` is called with ``running``, ``reused``, ``ok``, ``failed`` or ``interrupted`` (then
    KeyboardInterrupt propagates); ``progress(name, description, completed, total)`` receives the parts' sub-steps.
    ``rerun=True`` ignores cached records of the selected parts. Parts not selected but finished earlier in
    ``out_dir`` (same mode and seed) are kept in the report. Returns the dict written to ``results.json``.
    """
    ctx = PartContext() if ctx is None else replace(ctx, progress=None)
    names = check_parts(parts)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise TTLabInputError(f"out_dir {out} exists and is not a directory", params=("out_dir",))
    with hold_out_dir(out, param="out_dir"):  # a second process on the same folder is refused at once
        _check_part_paths(out, names)
        return _run_held(out, ctx, names, on_part, progress, rerun)


def _check_part_paths(out: Path, names: list[str]) -> None:
    """Before any part runs: every record a part will write (``parts/<name>.json``) may be replaced, and no part folder
    is a link out of ``out`` — a planted link is refused now, not after a long part ran."""
    from ttlab.outputs import replace_problem

    for name in names:
        for path in (out / "parts" / f"{name}.json", out / name):  # the part's record and its folder
            why = replace_problem(path)
            if why:
                raise TTLabInputError(f"out_dir {out}: {path.relative_to(out)} {why}", params=("out_dir",))


def _run_held(out: Path, ctx: PartContext, names: list[str], on_part: Callable[[str, str], None] | None,
              progress: Callable[[str, str, float | None, float | None], None] | None, rerun: bool) -> dict:
    """:func:`run_reproduction`'s work, in the folder it holds."""
    t_start = time.perf_counter()
    stamp = versions(extra=("scikit-learn", "rich", "typer"))
    results: dict = {
        "schema": SCHEMA,
        "mode": ctx.mode,
        "config": {"mode": ctx.mode, "backend": ctx.backend, "ray_address": ctx.ray_address, "seed": ctx.seed,
                   "workers": ctx.workers, "parts_selected": names, "out": str(out)},
        "versions": stamp,
        "started_at": _now(),
        "run": {"source": source_commit(), "cpus": os.cpu_count(), "load_avg_start": load_average(),
                "load_avg_at_part_ends": {}},
        "parts": {},
    }
    # earlier finished parts that were not selected stay in the report
    for name in part_names():
        rec = None if name in names else load_part_record(out, name)
        if rec is not None and _reusable(rec, PARTS[name], ctx):
            results["parts"][name] = {**rec, "reused": True}
    for name in names:
        cached = load_part_record(out, name)
        if not rerun and _reusable(cached, PARTS[name], ctx):
            results["parts"][name] = {**cached, "reused": True}
            if on_part:
                on_part(name, "reused")
            _write_all(results, out, t_start)
            continue
        if on_part:
            on_part(name, "running")
        part_ctx = replace(ctx, progress=_part_progress(progress, name))
        rec, interrupt = _run_part(PARTS[name], out, part_ctx, stamp)
        _record_part(results, out, t_start, out / "parts" / f"{name}.json", rec, on_part)
        if interrupt is not None:  # Ctrl-C or SIGTERM (Terminated): the same exception stops the run
            raise interrupt
    _write_all(results, out, t_start)
    return results


def _part_progress(progress: Callable[[str, str, float | None, float | None], None] | None,
                   name: str) -> Callable[[str, float | None, float | None], None]:
    """A part's sub-step hook: ``progress`` with the part's name in front (a no-op without ``progress``)."""

    def hook(description: str, completed: float | None, total: float | None) -> None:
        if progress is not None:
            progress(name, description, completed, total)

    return hook


def _run_part(part: Part, out: Path, ctx: PartContext, stamp: dict) -> tuple[dict, KeyboardInterrupt | None]:
    """Run one part and return its record — ``ok`` with the result and its judged claims, ``failed`` with the error
    and traceback, or ``interrupted`` (Ctrl-C or SIGTERM: never a result) — and the interrupt, if one stopped it."""
    interrupt = None
    rec: dict = {"part": part.name, "paper": part.paper, "title": part.title, "version": part.version, "mode": ctx.mode,
                 "seed": ctx.seed, "backend": ctx.backend, "started_at": _now()}
    t0 = time.perf_counter()
    try:
        data = part.fn(out, ctx)
        if part.claims is not None:
            data["claims"] = part.claims(data)
        check_claims(data)
        data = json.loads(_to_json(data))  # what the cache will hold (numpy → plain numbers)
        rec.update(status="ok", result=data)
    except Exception as exc:  # a failing part is reported, the others still run
        rec.update(status="failed", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    except KeyboardInterrupt as exc:  # recorded as interrupted (not reused); the caller stops the run
        interrupt = exc
        rec.update(status=INTERRUPTED, error="interrupted (Ctrl-C) before the part finished; re-run the same "
                   "command to run it again")
    rec.update(wall_time_s=time.perf_counter() - t0, finished_at=_now(), versions=stamp)
    return rec, interrupt


def _record_part(results: dict, out: Path, t_start: float, path: Path, rec: dict,
                 on_part: Callable[[str, str], None] | None) -> None:
    """Store a part's record (atomically), tell ``on_part`` and rewrite the reports. A write that fails (a full disk)
    carries the cause of a part that had failed as a note, so that the console shows both."""
    try:
        atomic_write_json(path, rec)
        results["parts"][rec["part"]] = {**rec, "reused": False}
        results["run"]["load_avg_at_part_ends"][rec["part"]] = load_average()
        if on_part:
            on_part(rec["part"], rec["status"])
        _write_all(results, out, t_start)
    except OSError as exc:
        if rec["status"] == "failed":
            exc.add_note(f"part {rec['part']} had failed before this write: {rec['error']}")
        raise


def _to_json(obj: object) -> str:
    from ttlab.provenance import to_json

    return to_json(obj, indent=None)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _judged_claims(name: str, result: dict) -> list[dict]:
    """The part's claims judged now from its stored numbers (current rules and thresholds)."""
    part = PARTS.get(name)
    try:
        if part is not None and part.claims is not None:
            claims = part.claims(result)
        else:
            claims = [rejudge(c) for c in result.get("claims", [])]
        check_claims({"claims": claims})
        return claims
    except Exception as exc:  # noqa: BLE001 - an old record must not break the report
        return [missing_claim(f"{name}.stored_numbers", f"The claims of part {name}",
                              f"they could not be judged from the stored numbers ({type(exc).__name__}: {exc}); "
                              f"re-run the part with `--part {name} --rerun`", kind="check")]


def _collect_claims(results: dict) -> list[dict]:
    for name, rec in results["parts"].items():
        if rec.get("status") == "ok" and isinstance(rec.get("result"), dict):
            rec["result"]["claims"] = _judged_claims(name, rec["result"])
    out = []
    for name in part_names() + [n for n in results["parts"] if n not in PARTS]:
        rec = results["parts"].get(name)
        if rec and rec["status"] == "ok":
            out += [{"part": name, "paper": rec.get("paper"), **c} for c in rec["result"].get("claims", [])]
    return out


def _write_all(results: dict, out: Path, t_start: float) -> None:
    results["claims"] = _collect_claims(results)
    results["statements"] = group_statements(results["claims"])
    parts = results["parts"]
    results["summary"] = {
        "n_parts": len(parts),
        "n_ok": sum(p["status"] == "ok" for p in parts.values()),
        "n_failed": sum(p["status"] != "ok" for p in parts.values()),
        "failed": [n for n, p in parts.items() if p["status"] != "ok"],
        "verdicts": count_by_kind(results["claims"])[PAPER_CLAIM],
        "verdicts_by_kind": count_by_kind(results["claims"]),
        "statement_verdicts_by_kind": count_statements(results["statements"]),
        "part_wall_time_s": {n: p.get("wall_time_s") for n, p in parts.items()},
    }
    results["not_run"] = [n for n in part_names() if n not in parts]
    results["generated_at"] = _now()
    results["wall_time_s"] = time.perf_counter() - t_start
    results["run"]["load_avg_end"] = load_average()
    write_reports(results, out)


def write_reports(results: dict, out_dir: str | Path) -> dict:
    """Write ``results`` to ``results.json`` and render it to ``report.md`` and ``report.html`` in ``out_dir``, the
    three in one step (:func:`ttlab.provenance.atomic_write_many`: a full disk leaves the old three, never a report
    that disagrees with results.json); sets and returns ``results["files"]``, their paths."""
    from ttlab.reproduce.report_document import build_sections
    from ttlab.reproduce.report_html import render_html
    from ttlab.reproduce.report_markdown import render_markdown

    out = Path(out_dir)
    results["files"] = {"report_html": str(out / "report.html"), "report_md": str(out / "report.md"),
                        "results": str(out / "results.json")}
    sections = build_sections(results)
    md, html = render_markdown(results, out, sections), render_html(results, out, sections)
    atomic_write_many({out / "results.json": (to_json(results) + "\n").encode(), out / "report.md": md.encode(),
                       out / "report.html": html.encode()})
    return results["files"]
