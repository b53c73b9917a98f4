"""The report opens with each paper's bottom line and a table of contents (ttlab.reproduce.report_bottom_line,
report_document.contents): rendered from the committed standard results and from a quick-mode results set, with
every count checked against counts computed here from the results themselves."""

from __future__ import annotations

import copy
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ttlab.reproduce import PARTS, PartContext, part_names, run_reproduction
from ttlab.reproduce.parts.common_lm_id import gemma_unavailable
from ttlab.reproduce.registry import PAPERS
from ttlab.reproduce.report_document import build_sections
from ttlab.reproduce.report_html import render_html
from ttlab.reproduce.report_markdown import render_markdown
from ttlab.reproduce.verdicts import make_claim, missing_claim, mode_that_judges

STANDARD_DIR = Path(__file__).resolve().parents[2] / "docs" / "results" / "standard"
VERDICT_ORDER = ("holds", "partly", "not reproduced", "inconclusive")


class _Page(HTMLParser):
    """Every element id, and the link targets inside the contents (``nav``)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.toc_links: list[str] = []
        self._in_nav = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "nav":
            self._in_nav += 1
        if tag == "a" and self._in_nav and a.get("href", "").startswith("#"):
            self.toc_links.append(a["href"][1:])

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav":
            self._in_nav -= 1


def _page(text: str) -> _Page:
    p = _Page()
    p.feed(text)
    p.close()
    return p


def _plain(fragment: str) -> str:
    """An HTML fragment as text, its ``<code>`` written back as backticks (as the Markdown report has them)."""
    fragment = re.sub(r"</?code>", "`", fragment)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def _standard() -> dict:
    if not (STANDARD_DIR / "results.json").is_file():
        pytest.skip("docs/results/standard/results.json is not in this checkout")
    return json.loads((STANDARD_DIR / "results.json").read_text())


def _render(results: dict, out: Path) -> tuple[str, str]:
    sections = build_sections(copy.deepcopy(results))
    return (render_markdown(copy.deepcopy(results), out, sections),
            render_html(copy.deepcopy(results), out, sections))


def _expected_counts(results: dict, paper: str) -> str:
    """The bottom line's counts, computed here: the paper's claims (by their part's paper), grouped into statements by
    the stored ``results["statements"]``; paper statements by verdict (those with no judged case apart), then paper
    cases by verdict (claims not judged at this scale apart)."""
    paper_of = {n: r.get("paper") for n, r in results["parts"].items()}
    claims = {c["id"]: c for c in results["claims"] if paper_of.get(c["part"]) == paper}
    stmts = [s for s in results["statements"] if s["cases"] and s["cases"][0]["id"] in claims]
    assert sum(len(s["cases"]) for s in stmts) == len(claims)  # the statements cover exactly the paper's claims
    s_counts = {v: 0 for v in VERDICT_ORDER}
    for s in stmts:
        if s["kind"] == "paper" and not s["not_at_scale"]:
            s_counts[s["verdict"]] += 1
    c_counts = {v: 0 for v in VERDICT_ORDER}
    for c in claims.values():
        if c["kind"] == "paper" and c["rule_id"] != "not_at_this_scale":
            c_counts[c["verdict"]] += 1

    def text(n: dict) -> str:
        return (f"{n['holds']} hold, {n['partly']} partly, {n['not reproduced']} not reproduced, "
                f"{n['inconclusive']} inconclusive")

    return (f"Paper statements ({sum(s_counts.values())}): {text(s_counts)} — judged in {sum(c_counts.values())} "
            f"cases (each corpus, dimension, network or suite a case): {text(c_counts)}.")


def _held(results: dict, paper: str) -> set[str]:
    paper_of = {n: r.get("paper") for n, r in results["parts"].items()}
    ids = {c["id"] for c in results["claims"] if paper_of.get(c["part"]) == paper}
    return {s["id"] for s in results["statements"] if s["cases"][0]["id"] in ids and s["kind"] == "paper"
            and s["verdict"] == "holds"}


def _bottom_lines(doc: str) -> dict[str, str]:
    """Each paper's bottom line as text (HTML or Markdown), from its anchor to the next paper's (the last one: to the
    contents)."""
    marks = [doc.index(f'id="bottom-line-{p}"') for p in PAPERS] + [doc.index('id="contents"')]
    if doc.lstrip().startswith("<!DOCTYPE html>"):
        return {p: _plain(doc[marks[i]:marks[i + 1]]) for i, p in enumerate(PAPERS)}
    # Markdown: only the explicit anchors are tags (a code span may hold "<...>" text)
    return {p: " ".join(re.sub(r'<a id="[^"]*"></a>', " ", doc[marks[i]:marks[i + 1]]).split())
            for i, p in enumerate(PAPERS)}


# ---------------------------------------------------------------------------------------------------- contents


def test_contents_links_every_part_section_to_an_anchor_that_exists():
    results = _standard()
    md, page = _render(results, STANDARD_DIR)
    doc = _page(page)
    assert len(doc.ids) == len(set(doc.ids)), "duplicate ids"
    assert doc.toc_links, "no contents"
    missing = [t for t in doc.toc_links if t not in doc.ids]
    assert missing == [], missing
    for name in results["parts"]:
        assert f"part-{name}" in doc.toc_links, name
        assert f'<section id="part-{name}">' in page
    for anchor in ("bottom-line", "bottom-line-A", "bottom-line-B", "run", "summary", "paper-A", "paper-B",
                   "reproducibility"):
        assert anchor in doc.toc_links and anchor in doc.ids, anchor
    # Markdown: the same entries, each target an explicit anchor
    toc = md[md.index("## Contents"):md.index('<a id="run">')]
    targets = re.findall(r"\]\(#([^)]+)\)", toc)
    assert targets == doc.toc_links
    for t in targets:
        assert md.count(f'<a id="{t}"></a>') == 1, t
    for name in results["parts"]:
        title = results["parts"][name]["title"].replace("[", "\\[").replace("]", "\\]")
        assert f"  - [{title}](#part-{name})" in toc, name


def test_bottom_lines_come_first_with_counts_computed_from_the_results():
    results = _standard()
    md, page = _render(results, STANDARD_DIR)
    first_part = page.index('<section id="part-')
    for doc in (page, md):
        a, b = doc.index('id="bottom-line-A"'), doc.index('id="bottom-line-B"')
        assert doc.index("ttlab reproduction report") < a < b < doc.index('id="contents"') < doc.index('id="run"')
        assert b < doc.index("Summary of verdicts")
    assert page.index('id="bottom-line-B"') < first_part
    stmt = {s["id"]: s for s in results["statements"]}
    apart = [c for c in results["claims"] if c["rule_id"] == "not_at_this_scale"]
    for doc in (page, md):
        lines = _bottom_lines(doc)
        for paper in PAPERS:
            text = lines[paper]
            assert _expected_counts(results, paper) in text, paper
            held = text[text.index("What held:"):text.index("Partly:")]
            assert set(re.findall(r"`([^`]+)`", held)) == _held(results, paper), paper
            assert "What `standard` mode cannot judge" in text
        # paper A: the part standard mode does not run says which mode does
        assert "part `ntp_scale` judged nothing in `standard` mode" in lines["A"] and "--full" in lines["A"]
        # paper B: where its central claim is judged — part, mode and the statement's verdict from the results
        central = lines["B"][lines["B"].index("Central claim"):]
        for sid, part in (("lm_data_scaling.id_prediction", "lm_data_scaling"),
                          ("manifold_regression.rate", "manifold_regression")):
            assert (f"`{sid}` in part `{part}`, in this `standard` run: {stmt[sid]['verdict']} "
                    f"({stmt[sid]['n_cases']} case(s):") in central
        # the claims not judged at this scale, with the command their records give
        assert apart and f"{len(apart)} case(s) are not judged at this scale" in lines["B"]
        assert all(f"`{c['id']}`" in lines["B"] for c in apart)
        assert f"`{apart[0]['measured']['command']}`" in lines["B"]


def test_a_paper_without_a_part_in_the_run_says_so():
    results = _standard()
    keep = {n for n, r in results["parts"].items() if r["paper"] == "B"}
    results["parts"] = {n: r for n, r in results["parts"].items() if n in keep}
    results["claims"] = [c for c in results["claims"] if c["part"] in keep]
    results["not_run"] = [n for n in part_names() if n not in keep]
    md, page = _render(results, STANDARD_DIR)
    for doc in (page, md):
        text = _bottom_lines(doc)["A"]
        assert "No part of paper A is in this report: this `standard` run ran none of its parts" in text
        assert all(f"`{n}`" in text for n in part_names() if PARTS[n].paper == "A")
        assert _expected_counts(results, "B") in _bottom_lines(doc)["B"]
    assert 'href="#paper-A"' not in page and 'href="#not-run"' in page and "](#not-run)" in md


# ---------------------------------------------------------------------------------------------------- quick mode


@pytest.fixture
def quick_run(tmp_path):
    """A quick-mode run written by ``run_reproduction`` from part records: the committed standard records (the same
    code versions and seed) without what only ``--standard`` measures — Gemma's IDs (quick mode does not measure
    them), the second corpus and the layer profile's third seed — every claim judged again by the current parts."""
    results = _standard()
    why = gemma_unavailable(PartContext(mode="quick"))
    (tmp_path / "parts").mkdir()
    written = set()
    for name, rec in results["parts"].items():
        if rec.get("version") != PARTS[name].version:  # a part changed since the committed run: it would run again
            continue
        written.add(name)
        rec = {**{k: v for k, v in rec.items() if k != "reused"}, "mode": "quick"}
        r = rec["result"]
        if name == "lm_data_scaling":
            r.update(gemma={"status": why}, more_corpora=[])
        if name == "lm_id_ablations":
            r.update(gemma_layers={"status": why}, gemma_length={"status": why},
                     per_layer_seeds=r["per_layer_seeds"][:2])
        if "skipped" in r:
            r["skipped"] = r["skipped"].replace("standard mode", "quick mode")
        (tmp_path / "parts" / f"{name}.json").write_text(json.dumps(rec))
    res = run_reproduction(tmp_path, PartContext(mode="quick"), parts=[])
    assert set(res["parts"]) == written and all(r["reused"] for r in res["parts"].values())
    return tmp_path, res


def test_quick_mode_says_which_mode_judges_paper_b_language_model_claims(quick_run):
    out, res = quick_run
    md, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    by_id = {c["id"]: c for c in res["claims"]}
    assert mode_that_judges(by_id["lm_data_scaling.id_prediction"]) == "standard"
    needing = [c for c in res["claims"] if c["part"].startswith("lm_") and mode_that_judges(c) == "standard"]
    assert {"lm_data_scaling.id_prediction", "lm_id_ablations.layer_peak",
            "lm_id_ablations.sequence_length"} <= {c["id"] for c in needing}
    for doc in (page, md):
        lines = _bottom_lines(doc)
        text = lines["B"]
        assert (f"{len(needing)} case(s) that this run could not judge name `--standard` as the mode that judges "
                "them") in text
        assert all(f"`{c['id']}`" in text for c in needing)
        central = text[text.index("Central claim"):]
        assert "`lm_data_scaling.id_prediction` in part `lm_data_scaling`, in this `quick` run: inconclusive" in central
        assert ("`quick` mode cannot judge 1 of its case(s) (`lm_data_scaling.id_prediction`): their records name "
                "`--standard` as the mode that judges them") in central
        assert "`manifold_regression.rate` in part `manifold_regression`, in this `quick` run" in central
        for paper in PAPERS:
            assert _expected_counts(res, paper) in lines[paper]
        assert "part `ntp_scale` judged nothing in `quick` mode" in lines["A"] and "--full" in lines["A"]
        assert doc.index('id="bottom-line-B"') < doc.index('id="part-ntp_figure2"')


def test_a_claim_names_the_mode_that_judges_it_only_when_told():
    c = missing_claim("x.m", "Gone", "not measured in quick mode", kind="paper", needs_mode="standard")
    assert c["needs_mode"] == "standard" and mode_that_judges(c) == "standard"
    plain = missing_claim("x.m", "Gone", "not run", kind="paper")
    assert "needs_mode" not in plain and mode_that_judges(plain) is None
    with pytest.raises(ValueError, match="needs_mode must be one of"):
        make_claim("x.y", "x", "at_least", {"value": 1.0}, {"holds": 0.5}, kind="paper", needs_mode="--standard")
