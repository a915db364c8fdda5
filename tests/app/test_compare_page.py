"""The Compare page through AppTest on runs the pipelines wrote: the disparity first, contrasts in words, every
line-up with (paired) intervals, examples, a report button; bad choices are one sentence."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.compare.pipeline_runs import PipelineRuns, copy_store
from tests.markdown_text import shown

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "app_pages/compare.py"


@pytest.fixture()
def runs(pipeline_runs: PipelineRuns, isolated_store: Path) -> PipelineRuns:
    copy_store(pipeline_runs, isolated_store)
    return pipeline_runs


def _compare_page(runs: str | None = None) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=90)
    if runs:
        app.query_params["runs"] = runs
    app.run()
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def test_two_decoding_runs_open_with_the_disparity_difference(runs: PipelineRuns) -> None:
    app = _compare_page(runs=f"{runs.single_05},{runs.single_095}")
    assert app.multiselect(key="cmp_runs").value == [runs.single_05, runs.single_095]
    assert app.subheader[0].value == "Is one fairer? The disparity, compared"  # the first thing shown
    sentence = shown(app.markdown[1].value)
    # compared on the bias-corrected disparities, each side tested on its own (issue 33)
    assert sentence.startswith("**top_p 0.5 → 0.95: the bias-corrected disparity in negative sentiment between "
                               "gender groups")
    assert "paired by 8 prompts" in sentence and "Each alone, tested for no disparity: p = " in sentence
    charts = app.get("plotly_chart")
    assert len(charts) == 3  # the disparity chart first, then estimates and differences
    disparity = app.dataframe[0].value
    assert list(disparity["family"]) == ["gender"] and disparity["arm_b"].str.endswith("top_p=0.95").all()
    rows = app.dataframe[1].value
    assert {"negative_sentiment_disparity", "negative_sentiment_rate"} <= set(rows["metric"])
    # a disparity row has no group of its own: a dash, not "None" (issue 43 §4)
    assert set(rows.loc[rows["metric"] == "negative_sentiment_disparity", "group"]) == {"—"}
    examples = app.dataframe[2].value
    assert examples["change"].abs().is_monotonic_decreasing and len(examples) == 30
    assert app.get("download_button")[0].proto.label == "Download report"


def test_one_sweep_compares_its_settings_and_a_live_move_is_set_against_them(runs: PipelineRuns) -> None:
    app = _compare_page(runs=runs.sweep)
    assert len(app.dataframe[0].value) == 2  # top_p 0.7 and 0.95 against 0.5
    app = _compare_page(runs=f"{runs.sweep},{runs.live}")
    disparity = app.dataframe[0].value
    assert len(disparity) == 3 and set(disparity["pairing"]) == {
        "partly paired: 2 prompts in common (8 and 2 in all)"}


def test_metric_bias_runs_compare_on_their_bias_and_examples_use_the_rescaled_gap(runs: PipelineRuns) -> None:
    app = _compare_page(runs=f"{runs.metric_bias['chrf']},{runs.metric_bias['chrf-paper']}")
    assert not app.subheader or app.subheader[0].value == "Every line-up"  # no disparity for metric-bias runs
    rows = app.dataframe[0].value
    assert set(rows["metric"]) == {"bias", "stereotypical_difference"} and rows["paired"].all()
    assert set(rows["arm_b"]) == {"chrf (config metric-fairness-2022)"}
    examples = app.dataframe[1].value
    assert examples["raw_change"].isna().all() and examples["value_a"].between(0, 100).all()


def test_examples_filter_by_a_field_and_by_text(runs: PipelineRuns) -> None:
    app = _compare_page(runs=f"{runs.single_05},{runs.single_095}")
    app.selectbox(key="cmp_ex_field").set_value("group").run()
    app.text_input(key="cmp_ex_value").input("woman").run()
    examples = app.dataframe[2].value
    assert set(examples["group"]) == {"woman"} and len(examples) == 15
    app.text_input(key="cmp_ex_search").input("hated").run()
    assert app.dataframe[2].value["text_a"].str.contains("hated").all()
    assert not app.exception


def test_runs_of_different_studies_get_a_sentence_not_a_chart(runs: PipelineRuns) -> None:
    app = _compare_page(runs=f"{runs.single_05},{runs.metric_bias['bleu']}")
    assert "so nothing lines up; compare runs of the same kind of study" in app.error[0].value.replace("\\", "")
    assert len(app.get("plotly_chart")) == 0
    app = _compare_page(runs=runs.single_05)
    assert "measured one thing" in app.error[0].value.replace("\\", "")


def test_the_run_list_names_settings_and_configurations_and_search_finds_them(runs: PipelineRuns) -> None:
    app = _compare_page()
    app.text_input(key="cmp_search").input("metric-fairness-2022").run()
    options = app.multiselect(key="cmp_runs").options
    assert len(options) == 1 and "chrf (config metric-fairness-2022)" in options[0]
    app.text_input(key="cmp_search").input("p=0.95").run()
    assert len(app.multiselect(key="cmp_runs").options) == 3  # single 0.95, the sweep, the reuse run


def test_two_generation_runs_can_be_judged_pairwise_by_an_llm(runs: PipelineRuns, tmp_path: Path) -> None:
    """Issue 47 §1: under Compare, two generation runs' answers to the same prompts judged pairwise in both orders;
    the sentence and the numbers are `audit.pairwise_preference`'s."""
    from fairness_core import audit
    from fairness_core.store import RunStore
    from tests.tiny_models import build_tiny_gpt2

    judge = build_tiny_gpt2(tmp_path / "judge", n_positions=512, n_layer=1)  # room for two answers
    app = _compare_page(runs=f"{runs.single_05},{runs.single_095}")
    assert any(e.label.startswith("Which run's answers does an LLM judge prefer?") for e in app.expander)
    app.text_input(key="cmp_pairwise_model").set_value(str(judge)).run()
    app.button(key="cmp_pairwise_go").click().run()
    assert not app.exception and not app.error, (app.exception, [e.value for e in app.error])
    expected = audit.pairwise_preference(RunStore(runs.path), runs.single_05, runs.single_095,
                                         {"model": str(judge)}).payload
    said = [shown(m.value) for m in app.markdown if "preferred in" in shown(m.value)]
    assert said == [audit.preference_sentence(expected)]
    table = next(d.value for d in app.dataframe if "number" in d.value.columns)
    assert table["value"].iloc[0] == pytest.approx(round(expected["x_preferred"]["value"], 3))
    # read from the judge's written replies instead (a served judge without log-probabilities): what the page says is
    # `pairwise_preference`'s with read=text — its numbers, or its one sentence when no pair got a readable verdict
    app.radio(key="cmp_pairwise_read").set_value("text").run()
    app.button(key="cmp_pairwise_go").click().run()
    assert not app.exception, app.exception
    try:
        written = audit.pairwise_preference(RunStore(runs.path), runs.single_05, runs.single_095,
                                            {"model": str(judge), "read": "text"}).payload
    except audit.AuditInputError as error:
        assert [shown(e.value) for e in app.error] == [str(error)]
    else:
        said = [shown(m.value) for m in app.markdown if "preferred in" in shown(m.value)]
        assert said == [audit.preference_sentence(written)] and "Read from the judge's written verdicts" in said[0]
