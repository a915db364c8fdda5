"""The Judge audit page's default journey (issue 43 §6): the default audit (the Jigsaw judge on the built-in
templates, 43 templates × 50 terms), then the judge changed to the offensive-language scorer, then Compare of the two
runs, the report, the Plan panel beside `plan`, and a `check` that reads the page's run back from the store — each
asserting the page's headline numbers.

Marked slow: the two audits score 2 × 2,150 texts with the shipped classifiers (about 15 s of the file's ~20 s)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.cli import main
from fairness_core.store import RunStore
from tests.markdown_text import shown
from ui import jobs

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _audit(page: AppTest) -> tuple[str, str, float]:
    """Press the Run button, wait for the audit; (headline label, its value, the FPED shown in the caption)."""
    page.button(key="au_run").click().run()
    job = jobs.wait(page.session_state["audit_job"], timeout_s=300)
    assert job is not None and job.error is None, job and job.error
    page.run()
    assert not page.exception, page.exception
    fped = next(float(m.group(1)) for c in page.caption if (m := re.search(r"FPED ([0-9.]+) \[", shown(c.value))))
    return shown(page.metric[0].label), page.metric[0].value, fped


@pytest.fixture(scope="module")
def journey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    path = tmp_path_factory.mktemp("audit-journey") / "runs.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_LAB_STORE", str(path))
        page = AppTest.from_file(str(ROOT / "app_pages" / "judge_audit.py"), default_timeout=300)
        page.run()
        assert page.selectbox(key="au_name").value == "jigsaw-toxicity"
        first = _audit(page)
        shift = next(d.value for d in page.dataframe if "shift" in d.value.columns)
        terms = shift[shift["level"] == "term"].set_index("term")
        page.selectbox(key="au_name").set_value("offensive").run()
        second = _audit(page)
        page.selectbox(key="au_name").set_value("jigsaw-toxicity").run()  # back to the default judge
        back = [shown(m.label) for m in page.metric]
        runs = list(RunStore(path).query("SELECT run_id FROM runs ORDER BY created_at")["run_id"])
        yield {"path": path, "page": page, "runs": runs, "headlines": (first, second), "terms": terms,
               "back": back}


def test_the_default_audit_names_the_term_the_judge_moves_most(journey: dict) -> None:
    (label, value, fped), (other_label, _, _) = journey["headlines"]
    terms = journey["terms"]
    worst = terms["shift"].abs().idxmax()
    assert label == f"Largest shift: {worst} ({terms.at[worst, 'group']})"
    assert float(value) == pytest.approx(terms.at[worst, "shift"], abs=0.0005)
    assert float(value) > 0.2 and fped > 0
    assert other_label.startswith("Largest shift: ") and len(journey["runs"]) == 2


def test_back_on_the_default_judge_the_page_shows_its_audit_not_the_last_one(journey: dict) -> None:
    """The judge set back to Jigsaw showed the offensive scorer's audit below "judged by jigsaw-toxicity", and its
    Plan panel planned for that run (issue 43 §2's wrong-run class): the page shows the audit of the request on
    screen, which ran in this session."""
    (label, _, _), _ = journey["headlines"]
    assert journey["back"][:1] == [label]


def test_compare_of_two_judges_says_what_it_cannot_line_up(journey: dict) -> None:
    """Two judges score different columns: Compare says so in a sentence (on the page and the command line), and
    lists what differs, rather than an empty table."""
    first, second = journey["runs"]
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.query_params["runs"] = f"{first},{second}"
    app.run()
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    sentence = (f"run {first} (run {first}) and run {second} (run {second}) share no metric, so there is nothing to "
                "line up: the first has jigsaw_toxic, the second offensive_prob.")
    assert [shown(i.value) for i in app.info] == [sentence]
    assert main(["compare", first, second, "--store", str(journey["path"])]) == 0


def test_the_report_holds_both_audits(journey: dict, tmp_path: Path) -> None:
    first, second = journey["runs"]
    out = tmp_path / "report.html"
    assert main(["report", first, second, "--store", str(journey["path"]), "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert first in html and second in html and "jigsaw_toxic → offensive_prob" in html


def test_a_check_reads_the_pages_audit_and_judges_its_numbers(journey: dict, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The default audit as a release gate: the check's request is the page's (read back, nothing scored), its worst
    term and FPED are the page's."""
    spec = tmp_path / "gate.toml"
    spec.write_text("""
[check]
name = "judge audit journey"

[audit]
resamples = 1000

[[criteria]]
name = "every term's shift at most 0.5"
study = "audit"
measure = "shift"
upper_at_most = 0.5

[[criteria]]
name = "FPED at most 20"
study = "audit"
measure = "fped"
group = "overall"
value_at_most = 20
""", encoding="utf-8")
    status = main(["check", str(spec), "--store", str(journey["path"]), "--json"])
    result = json.loads(capsys.readouterr().out)
    # a check with no system of its own is titled by what it checks, not "None · top_p=0.9" (issue 43)
    assert result["system"].startswith("the judge audit of ") and "None" not in result["system"], result["system"]
    shifts, fped = result["criteria"]
    (label, _, page_fped), _ = journey["headlines"]
    terms = journey["terms"]
    worst = shifts["details"] and max(shifts["details"], key=lambda d: abs(d["value"]))
    assert worst["member"] == label.split(": ")[1].split(" (")[0]
    assert worst["value"] == pytest.approx(terms.at[worst["member"], "shift"], abs=5e-5)  # 4 digits shown
    assert fped["value"] == pytest.approx(page_fped, abs=0.0005) and fped["passed"] is True
    assert status == (0 if shifts["passed"] else 1)
    assert shifts["run_ids"] == [journey["runs"][0]]  # the page's run, read back
    assert len(RunStore(journey["path"]).query("SELECT run_id FROM runs WHERE kind = 'audit-scores'")) == 2


def test_plan_on_the_page_and_from_the_command_line_answer_alike(journey: dict,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    page, run = journey["page"], journey["runs"][0]
    next(b for b in page.button if b.label == "Plan").click().run()
    assert not page.exception, page.exception
    panel = next(e for e in page.expander if e.label.startswith("Plan: how many patterns"))
    assert not panel.error, [e.value for e in panel.error]
    answer = shown(panel.markdown[0].value).strip("*")
    assert re.fullmatch(r"To detect a term's shift of 0\.05 in jigsaw-toxicity:jigsaw_toxic \(the power averaged "
                        r"over the 50 terms\) with 80% power \(α = 0\.05\), plan about \d+ patterns .*", answer), answer
    assert main(["plan", run, "--effect", "0.05", "--store", str(journey["path"])]) == 0
    assert capsys.readouterr().out.strip() == answer
