"""The views of ``ttlab reproduce`` (ttlab.reproduce.views), built from a real run of fake parts and rendered."""

from __future__ import annotations

import json

from tests.conftest import view_text as render
from tests.reproduce.test_reproduce import fakes, registry  # noqa: F401  (fixtures)
from ttlab.reproduce import PartContext, estimate_cost, run_reproduction
from ttlab.reproduce.views import (
    duration,
    estimate_view,
    failures_view,
    files_view,
    parts_view,
    summary_view,
    warnings_view,
)


def test_duration():
    assert [duration(s) for s in (42, 300, 9000)] == ["42 s", "5.0 min", "2.5 h"]


def test_summary_files_and_failures_views(tmp_path, fakes):  # noqa: F811
    res = run_reproduction(tmp_path, PartContext(mode="tiny"))
    text = render(summary_view(res, "tiny"))
    assert "ttlab reproduce --tiny: parts" in text
    wall = res["parts"]["fake_ok"]["wall_time_s"]
    assert f"fake_ok │ A │ ok │ {wall:.1f} s │ 1 / 0 / 0 / 0" in text  # the claim counts per verdict
    assert "fake_b │ B │ ok" in text and "0 / 0 / 1 / 0" in text and "fake_fail │ B │ failed" in text
    assert "Paper statements (1): 1 hold" in text
    assert render(files_view(res)) == f"wrote {res['files']['report_html']}, {res['files']['report_md']} and " \
                                      f"{res['files']['results']}"
    text = render(failures_view(res))
    assert "failed parts: fake_fail (tracebacks in" in text and "fake_fail: RuntimeError: boom 42" in text
    ok = run_reproduction(tmp_path, PartContext(mode="tiny"), parts=["fake_ok", "fake_b"])
    assert failures_view(ok) == []
    assert "(reused)" in render(summary_view(ok, "tiny"))


def test_failures_view_shows_five_causes_then_counts_the_rest():
    failed = [f"p{i}" for i in range(7)]
    res = {"summary": {"failed": failed}, "files": {"report_md": "r.md"}, "render_errors": {"p0": "x"},
           "parts": {n: {"error": f"error {n}"} for n in failed}}
    text = render(failures_view(res))
    assert "p4: error p4" in text and "p5: error" not in text and "… and 2 more" in text
    assert text.endswith("report sections that could not be rendered: p0")


def test_parts_warnings_and_estimate_views(tmp_path, fakes):  # noqa: F811
    text = render(parts_view(tmp_path))
    assert "fake_ok │ A │ Fake part A │ 3 s │ 3 s │ 5.0 min │ —" in text
    run_reproduction(tmp_path, PartContext(mode="tiny"), parts=["fake_ok"])
    (tmp_path / "parts" / "fake_b.json").write_text("{not json")
    text = render(parts_view(tmp_path))
    assert "ok (tiny)" in text and "corrupt record (will re-run)" in text
    text = render(warnings_view(tmp_path, ["fake_ok", "fake_b"], "full"))
    assert "warning:" in text and "fake_b.json is corrupt" in text and "the part fake_b runs again" in text
    assert "fake_ok runs again" not in text and "Estimating the cost of --full" in text
    assert warnings_view(tmp_path, ["fake_ok"], "quick") == []
    est = estimate_cost(tmp_path, PartContext(mode="tiny"), ["fake_ok", "fake_b"])
    text = render(estimate_view(est, "tiny", tmp_path))
    assert "ttlab reproduce --tiny: 2 part(s), estimated cost ≈ 1 s on this machine (fake_b ≈ 1 s)" in text
    assert "; 1 finished part(s) in" in text
    assert json.loads((tmp_path / "parts" / "fake_ok.json").read_text())["status"] == "ok"
