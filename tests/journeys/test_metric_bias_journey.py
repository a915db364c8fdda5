"""The Metric bias page's default journey (issue 43 §6): the default view (the demo set, five n-gram metrics and
BERTScore-MiniLM) as the page computes it, then the paper's n-gram settings (`metric-fairness-2022`) — the one
setting changed — then Compare of the two chrF runs on the page and from the command line, the report, the Plan
panel and `plan`, and a `check` that reads the page's runs back from the store. Each step asserts the number the page
showed, so a round cannot change a bias in one place and not the others.

Marked slow: the default view loads the shipped MiniLM encoder (about 15 s of CPU, the whole file about 25 s)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.cli import main
from fairness_core.store import RunStore
from tests.markdown_text import shown
from ui import jobs

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "app_pages" / "metric_bias.py")
pytestmark = pytest.mark.slow


def settle(app: AppTest) -> AppTest:
    """Run the script, wait for the metric-bias job it started, and run it again to show the result."""
    app.run()
    for job in jobs.running("metric-bias"):
        jobs.wait(job.key, timeout_s=600)
    return app.run()


def cells(app: AppTest) -> pd.DataFrame:
    """The page's bias table: attribute × metric, each cell "bias [ci_low, ci_high]"."""
    return next(d.value for d in app.dataframe
                if d.value.columns.name == "metric" and d.value.index.name == "attribute")


def bias_of(cell: str) -> float:
    return float(cell.split()[0])


@pytest.fixture(scope="module")
def journey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The default view, then the paper's n-gram settings and Run: two sets of runs in a fresh store."""
    path = tmp_path_factory.mktemp("mb-journey") / "runs.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_LAB_STORE", str(path))
        page = settle(AppTest.from_file(PAGE, default_timeout=300))
        assert not page.exception, page.exception
        default = cells(page)
        captions = [shown(c.value) for c in page.caption]
        page.selectbox(key="mb_config").set_value("metric-fairness-2022").run()
        page.button(key="mb_run_button").click()
        settle(page)
        assert not page.exception, page.exception
        paper = cells(page)
        stored = RunStore(path).query(
            "SELECT run_id, json_extract_string(manifest, '$.request.metric.name') AS metric, "
            "coalesce(json_extract_string(manifest, '$.request.metric.options.config'), 'default') AS config "
            "FROM runs WHERE kind = 'metric-bias'")
        runs = {(r.metric, r.config): r.run_id for r in stored.itertuples()}
        yield {"path": path, "page": page, "default": default, "paper": paper, "captions": captions, "runs": runs}


def test_the_default_view_shows_every_metric_on_all_128_pairs(journey: dict) -> None:
    default, paper = journey["default"], journey["paper"]
    assert list(default.index) == ["gender"]
    assert set(default.columns) == {"bleu", "rouge1", "meteor", "nist", "chrf", "bertscore"}
    assert ("Bias [95% interval over pairs], min-max (0-100, paper). Every cell used all its pairs (128 per "
            "attribute); no score was non-finite." in journey["captions"])
    # the paper's headline on the demo set: the encoder-based metric is far more biased than the n-gram ones
    assert bias_of(default.at["gender", "bertscore"]) > 5 * bias_of(default.at["gender", "chrf"]) > 0
    # six runs of the default view, five more under the paper's n-gram settings (BERTScore has none: read back)
    assert len(journey["runs"]) == 11 and ("chrf", "metric-fairness-2022") in journey["runs"]
    assert paper.at["gender", "bertscore"] == default.at["gender", "bertscore"]
    assert paper.at["gender", "chrf"] != default.at["gender", "chrf"]


def _compared(journey: dict) -> pd.DataFrame:
    from fairness_core.compare import compare_runs

    runs = journey["runs"]
    found = compare_runs(RunStore(journey["path"]), [runs[("chrf", "default")], runs[("chrf", "metric-fairness-2022")]])
    return found.rows.set_index("metric")


def test_compare_page_shows_the_two_chrf_runs_with_the_pages_numbers(journey: dict) -> None:
    runs = journey["runs"]
    first, second = runs[("chrf", "default")], runs[("chrf", "metric-fairness-2022")]
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.query_params["runs"] = f"{first},{second}"
    app.run()
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    sentences = [shown(m.value) for m in app.markdown]
    assert ("chrf (config metric-fairness-2022) against chrf (config default): config default → metric-fairness-2022 "
            "— both: data demo-gender version ") in " ".join(sentences)
    assert ("2 of 2 aligned line-ups shown: 2 paired (the same pairs on both sides), 0 partly paired"
            in " ".join(shown(c.value) for c in app.caption))
    table = next(d.value for d in app.dataframe if "difference" in d.value.columns).set_index("metric")
    expected = _compared(journey)
    for metric in ("bias", "stereotypical_difference"):
        assert table.at[metric, "pairing"] == "paired by 128 pairs"
        for column in ("run_a", "run_b", "difference"):
            # display_numbers keeps 4 significant digits
            assert float(table.at[metric, column]) == pytest.approx(expected.at[metric, column], rel=1e-3)
    # and the two biases are the ones the metric-bias page showed (2 decimals there)
    assert f"{expected.at['bias', 'run_a']:.2f}" == journey["default"].at["gender", "chrf"].split()[0]
    assert f"{expected.at['bias', 'run_b']:.2f}" == journey["paper"].at["gender", "chrf"].split()[0]


def test_compare_and_report_from_the_command_line(journey: dict, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    runs, store = journey["runs"], str(journey["path"])
    first, second = runs[("chrf", "default")], runs[("chrf", "metric-fairness-2022")]
    expected = _compared(journey)
    assert main(["compare", first, second, "--store", store]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("bias  gender")]
    assert len(lines) == 1 and lines[0].endswith("(paired by 128 pairs)")
    assert f"{expected.at['bias', 'run_a']:.4g} -> " in lines[0]
    assert main(["compare", first, second, "--store", store, "--json"]) == 0
    rows = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    for column in ("run_a", "run_b", "difference", "ci_low", "ci_high"):
        assert rows["bias"][column] == pytest.approx(expected.at["bias", column], abs=1e-6)
    out = tmp_path / "report.html"
    assert main(["report", first, second, "--store", store, "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "config default → metric-fairness-2022" in html
    assert f"{expected.at['bias', 'run_a']:.4g}" in html and f"{expected.at['bias', 'run_b']:.4g}" in html


def test_a_check_reads_the_pages_runs_and_judges_the_bias_the_page_showed(
        journey: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The page's default request as a release gate: BERTScore's and chrF's bias on the demo set, read back from
    the store (the check must find the runs the page made, not score the pairs again)."""
    spec = tmp_path / "gate.toml"
    spec.write_text("""
[check]
name = "metric bias journey"

[metric_bias]
data = "demo"
metrics = ["bertscore", "chrf"]
resamples = 1000

[[criteria]]
name = "chrf bias at most 10"
study = "metric-bias"
measure = "bias"
metric = "chrf"
upper_at_most = 10

[[criteria]]
name = "bertscore bias at most 10"
study = "metric-bias"
measure = "bias"
metric = "bertscore"
group = "gender"
upper_at_most = 10
""", encoding="utf-8")
    assert main(["check", str(spec), "--store", str(journey["path"]), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    chrf, bertscore = result["criteria"]
    default, runs = journey["default"], journey["runs"]
    assert chrf["passed"] is True and bertscore["passed"] is False
    assert f"{chrf['value']:.2f}" == default.at["gender", "chrf"].split()[0]
    assert f"{bertscore['value']:.2f}" == default.at["gender", "bertscore"].split()[0]
    assert chrf["value"] == pytest.approx(_compared(journey).at["bias", "run_a"], abs=1e-6)
    assert re.match(r"bias of bertscore on gender \d+\.\d+ \[", bertscore["reason"]), bertscore["reason"]
    assert set(chrf["run_ids"]) == {runs[("bertscore", "default")], runs[("chrf", "default")]}


def test_plan_on_the_page_and_from_the_command_line_answer_alike(journey: dict,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The Plan panel's first metric is one the planner can answer for (not BLEU, constant 0 on the demo pairs,
    issue 43 §2), and pressing Plan gives the number `plan` gives for that run."""
    page = journey["page"]
    metric = page.selectbox(key="mb_plan_Metric").value
    assert metric == "chrF", metric
    next(b for b in page.button if b.label == "Plan").click().run()  # the panel's form, as it opened
    assert not page.exception, page.exception
    panel = next(e for e in page.expander if e.label == "Plan: how many pairs would a question need?")
    assert not panel.error, [e.value for e in panel.error]
    answer = shown(panel.markdown[0].value).strip("*")
    run = journey["runs"][("chrf", "metric-fairness-2022")]  # the page shows the paper's settings last
    assert re.fullmatch(r"To detect a stereotypical difference of 2 points \(Eq\. 1's 0-100 scale\) in chrf \(config "
                        r"metric-fairness-2022\) on gender with 80% power \(α = 0\.05\), plan about [\d,]+ pairs "
                        r"per attribute \(this pilot has 128; .*\)\.", answer), answer
    assert f"How: simulation from pilot run {run}:" in " ".join(shown(c.value) for c in panel.caption)
    effect = page.number_input(key="mb_plan_effect").value
    assert main(["plan", run, "--effect", str(effect), "--store", str(journey["path"])]) == 0
    assert capsys.readouterr().out.strip() == answer
