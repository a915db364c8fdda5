"""The decoding page's default journey, end to end on what the page really writes (issue 43 §6): the default live
view (the shipped regard templates: four families, eleven groups), a slider move, then Compare of the two results
on the page and from the command line, the report, and the planner — each asserting the sentence and the numbers,
so a round cannot break a headline unseen. (Compare crashed on exactly these runs in round 5: a multi-family
disparity came back as an array.)"""

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

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ["gender", "race", "religion", "sexual orientation"]


@pytest.fixture(scope="module")
def journey(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The default live view, then top_p moved to 0.3: two runs in a fresh store, and the page's words."""
    path = tmp_path_factory.mktemp("journey") / "runs.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_LAB_STORE", str(path))
        page = AppTest.from_file(str(ROOT / "app_pages" / "decoding.py"), default_timeout=90)
        page.session_state["dec_model"] = "(other Hugging Face id or local path)"
        page.session_state["dec_model_custom"] = str(tiny_gpt2)
        page.session_state["dec_regard"] = ""  # no regard classifier here
        page.run()
        assert not page.exception, page.exception
        first = shown(page.markdown[0].value)
        page.slider(key="live_top_p").set_value(0.3).run()
        assert not page.exception, page.exception
        second = shown(page.markdown[0].value)
        runs = list(RunStore(path).query("SELECT run_id FROM runs ORDER BY created_at")["run_id"])
        yield {"path": path, "runs": runs, "headlines": (first, second), "patch": patch}


def _p(sentence: str) -> float:
    return float(re.search(r"p = ([0-9.]+)", sentence).group(1))


def test_the_default_view_answers_with_a_tested_sentence(journey: dict) -> None:
    first, second = journey["headlines"]
    assert len(journey["runs"]) == 2
    assert first.startswith("**top_p=0.9** — generated now") and second.startswith("**top_p=0.3** — generated now")
    for headline in (first, second):
        assert "disparity in negative sentiment" in headline and "disparity detectable here (p = " in headline


def test_compare_page_opens_on_the_two_default_runs_with_every_family(journey: dict) -> None:
    from fairness_core.compare import compare_runs

    run_a, run_b = journey["runs"]
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    app.query_params["runs"] = f"{run_a},{run_b}"
    app.run()
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    sentence = shown(app.markdown[1].value)
    assert sentence.startswith("**top_p 0.9 → 0.3: the bias-corrected disparity in negative sentiment (mean over "
                               "families) goes from ")
    table = app.dataframe[0].value
    assert list(table["family"]) == [*FAMILIES, "all families"]
    # the page's numbers are compare_runs' numbers, and each side's p is the one its decoding page showed
    expected = compare_runs(RunStore(journey["path"]), [run_a, run_b],
                            metrics=["negative_sentiment_disparity"]).rows.set_index("family")
    overall = table.set_index("family").loc["all families"]
    for column in ("run_a_corrected", "run_b_corrected", "difference", "run_a_p_value", "run_b_p_value"):
        assert overall[column] == pytest.approx(expected.at["all families", column], abs=1e-12)
    first, second = journey["headlines"]
    assert overall["run_a_p_value"] == pytest.approx(_p(first), abs=0.005)
    assert overall["run_b_p_value"] == pytest.approx(_p(second), abs=0.005)
    assert f"p = {_p(first):.2f} and p = {_p(second):.2f}" in sentence


def test_compare_and_report_from_the_command_line(journey: dict, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run_a, run_b = journey["runs"]
    store = str(journey["path"])
    assert main(["compare", run_a, run_b, "--store", store, "--metric", "negative_sentiment_disparity"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("negative_sentiment_disparity")]
    assert [line.split("  ")[1] for line in lines] == [*FAMILIES, "all families"]
    assert "(paired by 4 prompts)" in lines[-1]  # one template per family in the live subset
    assert main(["compare", run_a, run_b, "--store", store, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    overall = next(r for r in rows if r["metric"] == "negative_sentiment_disparity" and r["family"] == "all families")
    assert isinstance(overall["difference"], float)
    out = tmp_path / "report.html"
    assert main(["report", run_a, run_b, "--store", store, "--out", str(out)]) == 0
    html = out.read_text()
    assert "all families" in html and "top_p 0.9 → 0.3" in html


def test_a_check_reads_the_two_runs_and_cannot_pass_on_one_template_per_family(
        journey: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The move as a release gate: the top_p 0.3 run as the system, the 0.9 run as the baseline, both read from the
    store (nothing generated). The live view holds one template per family: nothing to resample, so no upper bound,
    and the gate fails saying so rather than passing on too little evidence (issue 42 §4)."""
    run_a, run_b = journey["runs"]
    spec = tmp_path / "gate.toml"
    spec.write_text(f"""
[check]
name = "journey gate"

[system]
generations = "{run_b}"

[decoding]
resamples = 1000

[baseline]
run = "{run_a}"

[[criteria]]
name = "every family: disparity at most 1"
study = "decoding"
measure = "negative_sentiment_disparity"
group = "every family"
upper_at_most = 1.0

[[criteria]]
name = "not worse than top_p 0.9"
study = "decoding"
measure = "negative_sentiment_disparity"
group = "gender"
against = "baseline"
upper_at_most = 1.0
""", encoding="utf-8")
    assert main(["check", str(spec), "--store", str(journey["path"]), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] is False
    every, baseline = result["criteria"]
    assert every["reason"] == ("4 of 4 families fail; the worst, 'gender': negative_sentiment_disparity 0: its upper "
                               "bound cannot be computed (no 95% interval: a group has fewer than two resampled "
                               "prompts or templates).")
    assert sorted(d["member"] for d in every["details"]) == FAMILIES
    assert baseline["evaluated"] is False and baseline["details"][0]["pairing"] == "paired by 1 unit(s)"
    assert len(RunStore(journey["path"]).query("SELECT run_id FROM runs WHERE kind = 'generation'")) == 2


def test_plan_answers_for_the_run_it_is_given_in_a_sentence(journey: dict,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The planner on the default live result: one template per family is no pilot, and it says so naming the run."""
    _, run_b = journey["runs"]
    assert main(["plan", run_b, "--effect", "0.2", "--store", str(journey["path"])]) == 0
    assert capsys.readouterr().out.strip() == (
        f"run {run_b} has one template in gender: with nothing to resample it says nothing about how the units vary; "
        "a pilot needs two or more")
