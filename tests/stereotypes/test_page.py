"""The Stereotype benchmarks page through AppTest: the default view (licence, citation, the data's criticism, the
sample and its time estimate before anything runs), a run on a tiny model with its headline, test sentence and
per-pair drill-down, and the predictions source waiting for its upload."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.markdown_text import shown

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "stereotypes.py")


@pytest.fixture()
def page(isolated_store: Path) -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=120)


def test_the_default_view_says_what_runs_and_whose_data_it_is(page: AppTest) -> None:
    page.run()
    assert not page.exception, page.exception
    captions = " ".join(shown(c.value) for c in page.caption)
    assert "Nangia, Vania, Bhalerao & Bowman 2020" in captions
    assert "Creative Commons Attribution-ShareAlike 4.0" in captions and "Blodgett et al. 2021" in captions
    assert "a seeded sample of 100 pairs" in captions
    assert any("Estimated time" in shown(m.value) for m in [*page.caption, *page.markdown, *page.info])
    assert "Cost: 200 texts" in captions and "on one GPU" in captions and "estimates not measured here" in captions
    page.radio(key="st_benchmark").set_value("bbq").run()
    captions = " ".join(shown(c.value) for c in page.caption)
    assert "Creative Commons Attribution 4.0" in captions and "Parrish" in captions
    page.checkbox(key="st_whole_bbq").check().run()  # the whole set: its cost says hours here before it starts
    captions = " ".join(shown(c.value) for c in page.caption)
    assert "Cost: 175,476 texts" in captions and " h " in captions.split("Cost: 175,476 texts")[1].split("GPU")[0]


def test_a_run_shows_the_headline_the_test_and_a_diffed_pair(page: AppTest, tiny_gpt2_long: Path) -> None:
    page.run()
    page.selectbox(key="st_model").set_value("(other Hugging Face id or local path)").run()
    page.text_input(key="st_model_custom").set_value(str(tiny_gpt2_long)).run()
    page.number_input(key="st_limit_crows-pairs").set_value(6).run()
    page.number_input(key="st_resamples").set_value(100).run()
    assert not page.exception, page.exception
    page.button(key="st_run").click().run()
    from ui import jobs

    job = jobs.wait(page.session_state["stereotypes_job"], timeout_s=120)
    assert job.error is None, job.error
    page.run()
    assert not page.exception, page.exception
    texts = " ".join(shown(m.value) for m in page.markdown)
    assert "pct_stereotype" in texts and "over 6 pairs" in texts
    assert any("exact sign test" in shown(i.value) for i in page.info)
    assert ":orange-background[" in texts and "sent_more (log p" in texts and "sent_less (log p" in texts  # diffed
    table = page.dataframe[0].value
    assert next(iter(table["bias_type"])) == "overall" and int(table["n"].iloc[0]) == 6
    # the run as a pilot: the pairs a preference for the stereotyped sentence needs (issue 44)
    page.number_input(key="st_plan_effect").set_value(0.1)
    next(b for b in page.button if b.label == "Plan").click().run()
    assert not page.exception, page.exception
    from fairness_core.stereotypes.plan import pairs_needed

    answers = [shown(m.value) for m in page.markdown if "To detect a preference of 10.0 points" in shown(m.value)]
    assert len(answers) == 1 and f"plan about {pairs_needed(0.1, 0.8):,} CrowS-Pairs pairs" in answers[0], answers


def test_the_predictions_source_asks_for_an_upload_before_anything_runs(page: AppTest) -> None:
    page.run()
    page.radio(key="st_benchmark").set_value("stereoset").run()
    page.radio(key="st_source").set_value("predictions").run()
    assert not page.exception, page.exception
    assert any("Upload a predictions file" in shown(i.value) for i in page.info)
    assert page.session_state["st_source"] == "predictions"
