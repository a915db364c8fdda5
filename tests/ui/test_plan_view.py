"""The Plan panel (`ui.plan_view`): nothing is simulated until *Plan* is pressed; then the answer in one sentence
with its power curve, or the planner's refusal as one error. A synthetic pilot (about 1 s per plan)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest


def _page() -> None:
    import numpy as np

    from fairness_core.planning import PAIRWISE, FamilyPilot, PilotDesign, plan_design
    from ui.plan_view import plan_panel

    rng = np.random.default_rng(0)
    rates = 1 / (1 + np.exp(-(-1.5 + rng.normal(0, 1, (12, 1)) + rng.normal(0, 0.5, (12, 2)))))
    drawn = rng.binomial(3, rates).astype(float)
    design = PilotDesign((FamilyPilot("gender", ("man", "woman"), True, drawn[None, :, :, None],
                                      np.full((1, 12, 2, 1), 3.0)),), PAIRWISE, True,
                         "negative_sentiment_disparity", "template", "templates", "a disparity of {effect}", "pilot",
                         samples_per_cell=3)
    plan_panel("t", "pilot", lambda effect, power, samples, **_: plan_design(design, effect, power, samples),
               samples=3)


def test_the_panel_plans_on_request_and_says_a_refusal_in_one_sentence() -> None:
    app = AppTest.from_function(_page, default_timeout=60).run()
    assert not app.exception
    assert not [m for m in app.markdown if "To detect" in m.value]  # nothing simulated before *Plan*
    app.number_input(key="t_effect").set_value(0.15)
    app.button[0].click().run()
    shown = [m.value.replace("\\", "") for m in app.markdown]  # markdown escapes are not part of the words
    answers = [m for m in shown if "To detect a disparity of 0.15 with 80% power" in m]
    assert len(answers) == 1 and "templates with 3 samples per prompt" in answers[0]
    charts = app.get("arrow_vega_lite_chart") or app.get("vega_lite_chart")  # the power curve
    assert charts
    spec = json.loads(charts[0].proto.spec)
    titles = [layer["encoding"]["y"].get("title") for layer in spec["layer"] if "y" in layer.get("encoding", {})]
    assert ["power: the chance a study", "of this size detects it"] in titles  # two lines, not one cut at 260 px
    assert not app.button[0].proto.help  # a tooltip on the button opened over the inputs (issue 43)
    app.number_input(key="t_effect").set_value(0.0)
    app.button[0].click().run()
    assert [e.value.replace("\\", "") for e in app.error] == [
        "the effect must be a positive number (got 0.0): the size of the difference the study should be able to "
        "detect, e.g. 0.05"]


def _metric_bias_page() -> None:
    import os
    from types import SimpleNamespace

    from ui.plan_view import metric_bias_plan

    # the page's order: BLEU first (as the metric-bias page lists its runs), then chrF
    labels, run_ids = ["BLEU", "chrF"], os.environ["PLAN43_RUNS"].split(",")
    metric_bias_plan([SimpleNamespace(label=label, run_id=run_id) for label, run_id in zip(labels, run_ids,
                                                                                            strict=True)])


@pytest.fixture(scope="module")
def short_pairs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """BLEU and chrF scored on pairs that share no word with their reference: BLEU is 0 on every candidate (as on
    the demo pairs), chrF (characters) varies."""
    from fairness_core.data.pairs import Pair, PairDataset
    from fairness_core.metric_bias import task
    from fairness_core.metrics import metric_from_request
    from fairness_core.store import RunStore

    jobs = ["nurse", "doctor", "engineer", "teacher", "pilot", "baker", "lawyer", "farmer"]
    pairs = tuple(Pair(f"g{i}", f"she was {job}", f"he became {job}{'s' * (i % 3)}", "the worker left early",
                       "gender", stereotypical=1 + i % 2) for i, job in enumerate(jobs))
    store = RunStore(tmp_path_factory.mktemp("mb_plan") / "runs.duckdb")
    found = task.run_metrics(PairDataset("short pairs", pairs), [metric_from_request("bleu"),
                                                                 metric_from_request("chrf")], store)
    return str(store.path), [run.run_id for run in found]


def test_the_metric_bias_panel_starts_on_a_metric_that_varies_and_asks_against_only_for_a_difference(
        short_pairs: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    path, (bleu, chrf) = short_pairs
    monkeypatch.setenv("FAIRNESS_LAB_STORE", path)
    monkeypatch.setenv("PLAN43_RUNS", f"{bleu},{chrf}")
    app = AppTest.from_function(_metric_bias_page, default_timeout=60).run()
    assert not app.exception
    # before: BLEU first (its plan refused: constant 0), and "Against" shown for a question that has none
    assert app.selectbox(key="mb_plan_Metric").value == "chrF"
    assert app.selectbox(key="mb_plan_Metric").options == ["chrF", "BLEU"]
    assert [s.label for s in app.selectbox] == ["Question", "Metric"]
    app.selectbox(key="mb_plan_Metric").set_value("BLEU")
    app.button[0].click().run()
    shown = [m.value.replace("\\", "") for m in app.markdown]
    assert (f"**every value in run {bleu} is the same (0) for stereotypical difference: a constant says nothing "
            "about how a difference would vary**") in shown
    assert not [c for c in app.caption if c.value.startswith("How:")]  # before: "How: ." under the refusal
    app.selectbox(key="mb_plan_Question").set_value("the difference in Bias between two metrics").run()
    assert [s.label for s in app.selectbox] == ["Question", "Metric", "Against"]


def test_a_metric_label_names_the_model_its_options_chose_not_its_folder() -> None:
    from datetime import datetime

    from fairness_core.compare.readers import metric_label
    from fairness_core.store import RunInfo

    # a shipped preset's weights sit in a folder called "model": the label said "bertscore (model model)"
    manifest = {"request": {"metric": {"options": {"idf": False, "model": "all-minilm-l6-v2"},
                                       "model": {"source": "model", "task": "encoder"}}}}
    info = RunInfo("r", "metric-bias", manifest, "h", "complete", 1, 1, 1, datetime(2026, 1, 1), None, {}, None)
    assert metric_label(info, "bertscore")[0] == "bertscore (idf False, model all-minilm-l6-v2)"
