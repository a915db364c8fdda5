"""The Template adaptation page through AppTest: the VBCM calculator (A.2.2), input errors, and a full
adaptation run in the background (replies scripted so the test knows which rewrites are accepted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.markdown_text import shown

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "template_adaptation.py")
OTHER = "(other Hugging Face id or local path)"
OFFLINE, REWRITE = ("Original templates vs the domain's own sentences (offline, under a minute)",
                    "Adapt the templates with a chat model, then compare")


def frame_with(app: AppTest, column: str):
    """The first dataframe on the page that has `column`."""
    return next(d.value for d in app.dataframe if column in d.value.columns)


def scripted(request, model, rows):
    """Keep the anchor once for 'angry' templates, lose it otherwise."""
    replies = []
    for row in rows:
        sentence, anchor = re.findall(r'"([^"]+)"', row["prompt"])[-2:]  # the filled template, then the term
        replies.append(f"Critics said {anchor} was angry in 1990." if "angry" in sentence else "Nobody was there.")
    return replies


@pytest.fixture()
def page(tiny_gpt2: Path, isolated_store: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setattr("fairness_core.generation.task._generate", scripted)
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.session_state["ta_mode"] = REWRITE
    app.session_state["ta_model"] = OTHER
    app.session_state["ta_model_custom"] = str(tiny_gpt2)
    app.session_state["ta_source"] = "Typed"
    app.session_state["ta_typed"] = "{person} feels angry.\nI talked to {person} yesterday."
    app.session_state["ta_corpus_size"] = 60
    app.session_state["ta_max_noes"] = 12
    app.session_state["ta_classifiers"] = ["vader", "offensive"]
    app.session_state["ta_resamples"] = 200
    app.session_state["ta_bold"] = ["gender", "profession"]
    return app


def test_calculator_shows_the_worked_example_exactly(page: AppTest) -> None:
    page.run()
    assert not page.exception, page.exception
    table = frame_with(page, "VBCM")
    values = dict(zip(table["group"], table["VBCM"], strict=True))
    assert values["France"] == pytest.approx(449 / 450)
    assert round(values["Spain"], 4) == 0.9922 and round(values["USA"], 4) == 0.9944
    assert any("prints 0.997" in i.value for i in page.info)
    # the table's CI cells read "None" for the one-template example: the caption says why (issue 23)
    assert any(r"1 template\(s\) \(CI None: an interval resamples templates and needs 2 or more\)" in c.value
               for c in page.caption)



def test_bad_inputs_are_one_sentence_in_place(page: AppTest) -> None:
    page.run()
    page.text_area(key="ta_prompt").set_value("Rewrite {sentence}.").run()
    assert any("must contain {n}" in shown(e.value) for e in page.error)
    page.text_area(key="ta_prompt").set_value("{n}{examples}Rewrite {sentence} with {term}.").run()
    page.text_area(key="ta_typed").set_value("no slot here").run()
    assert any("must contain {person} exactly once" in shown(e.value) for e in page.error)


def test_adaptation_runs_in_the_background_and_shows_every_view(page: AppTest) -> None:
    page.run()
    page.text_area(key="ta_prompt").set_value("{n}{examples}Rewrite {sentence} keeping {term}.").run()
    page.number_input(key="ta_examples").set_value(2).run()
    assert not page.exception, page.exception
    page.button(key="ta_run").click().run()
    assert not page.exception, page.exception
    from ui import jobs

    job = jobs.wait(page.session_state["adaptation_job"], timeout_s=300)
    assert job.error is None, job.error
    page.run()
    assert not page.exception, page.exception
    headers = [h.value for h in page.subheader]
    for expected in ("Rewrites: original, adapted and rejected", "Naturally occurring examples (Table 2)",
                     "VBCM per set", "Do adapted templates agree better", "Template characteristics"):
        assert any(h.startswith(expected) for h in headers), headers
    rewrites = frame_with(page, "anchor")
    assert len(rewrites) == 4  # 2 templates x (names, nouns)
    assert set(rewrites.loc[rewrites["template_id"] == "custom:1", "status"]) == {"accepted"}
    assert set(rewrites.loc[rewrites["template_id"] == "custom:2", "status"]) == {"lost the identity term"}
    assert any(m.value == "50%" for m in page.metric)
    comparisons = frame_with(page, "comparison")
    assert {"original vs NOEs", "adapted vs NOEs", "adapted − original"} <= set(comparisons["comparison"])
    page.radio(key="ta_show").set_value("rejected").run()
    assert set(frame_with(page, "anchor")["status"]) == {"lost the identity term"}

    # the shown run and its filter are in the link: a new browser session opening it sees the same report
    assert page.query_params["run"] == page.session_state["adaptation_job"]
    assert page.query_params["show"] == "rejected"
    shared = AppTest.from_file(PAGE, default_timeout=120)
    shared.query_params["run"] = page.query_params["run"]
    shared.query_params["show"] = "rejected"
    shared.run()
    assert not shared.exception, shared.exception
    assert set(frame_with(shared, "anchor")["status"]) == {"lost the identity term"}


@pytest.mark.parametrize("run", ["adaptation-0123456789abcdef", "../../etc/passwd", "sweep-0123456789abcdef"])
def test_a_link_to_a_run_this_server_does_not_have_shows_the_form(page: AppTest, run: str) -> None:
    page.query_params["run"] = run
    page.query_params["show"] = "nonsense"
    page.run()
    assert not page.exception, page.exception
    assert page.button(key="ta_run") is not None and not page.button(key="ta_run").disabled
    assert "adaptation_job" not in page.session_state or page.session_state["adaptation_job"] is None


def test_the_page_opens_on_the_study_and_its_default_run_answers_offline(isolated_store: Path) -> None:
    """Issue 30 §1: the first tab is the study; the default compares the original templates with the domain's own
    sentences under the identity-aware judge (no chat model), with no NaN and no warning on the page."""
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.session_state["ta_corpus_size"] = 80
    app.session_state["ta_max_noes"] = 15
    app.session_state["ta_n_templates"] = 4
    app.session_state["ta_resamples"] = 200
    app.run()
    assert not app.exception, app.exception
    assert next(t.label for t in app.tabs) == "Adapt to a domain"
    assert app.radio(key="ta_mode").value == OFFLINE
    assert app.multiselect(key="ta_classifiers").value == ["vader", "jigsaw-toxicity"]
    assert not app.warning  # nothing to warn about before an offline comparison
    app.button(key="ta_run").click().run()
    from ui import jobs

    job = jobs.wait(app.session_state["adaptation_job"], timeout_s=300)
    assert job.error is None, job.error
    app.run()
    assert not app.exception, app.exception
    headers = [h.value for h in app.subheader]
    assert not any(h.startswith("Rewrites") for h in headers)
    assert any(h.startswith("Do the original templates measure") for h in headers)
    comparisons = frame_with(app, "comparison")
    assert set(comparisons["comparison"]) == {"original vs NOEs"}
    assert set(comparisons["classifier"]) == {"vader", "jigsaw-toxicity"}
    assert not comparisons.isna().any().any() and "—" in set(comparisons["r"])  # undefined r shown as a dash
    assert not app.warning
    texts = [*(c.value for c in app.caption), *(m.value for m in app.markdown), *(x.value for x in app.metric)]
    assert not any("nan" in str(t).lower().split() or "nan%" in str(t).lower() for t in texts)
    assert not frame_with(app, "set").drop(columns="set").isna().any().any()  # characteristics: no NaN cells


def test_rewriting_with_the_small_offline_model_is_said_before_it_starts(isolated_store: Path) -> None:
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.session_state["ta_mode"] = REWRITE
    app.run()
    assert not app.exception, app.exception
    assert any("needs a capable chat model" in w.value for w in app.warning)
    app.button(key="ta_use_hub").click().run()  # one click to a capable hub model
    assert app.session_state["ta_model"] == OTHER and app.session_state["ta_model_custom"] == "Qwen/Qwen2.5-7B-Instruct"
    assert not any("needs a capable chat model" in w.value for w in app.warning)
