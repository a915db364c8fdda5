"""The Plan panel (`ui.plan_view`): nothing is simulated until *Plan* is pressed; then the answer in one sentence
with its power curve, or the planner's refusal as one error. A synthetic pilot (about 1 s per plan)."""

from __future__ import annotations

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
    assert app.get("arrow_vega_lite_chart") or app.get("vega_lite_chart")  # the power curve
    app.number_input(key="t_effect").set_value(0.0)
    app.button[0].click().run()
    assert [e.value.replace("\\", "") for e in app.error] == [
        "the effect must be a positive number (got 0.0): the size of the difference the study should be able to "
        "detect, e.g. 0.05"]
