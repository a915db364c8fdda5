"""The Template adaptation page in a real browser: the VBCM calculator shows the worked example, and an
adaptation run goes through the background job to its results (the tiny random GPT-2 as the rewriting
model, so the run takes seconds on 2 busy cores; the page still states the offline model plainly)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def set_number(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    page.wait_for_timeout(700)


def test_vbcm_calculator_and_an_adaptation_run(streamlit_server: str, browser_page, artifact_dir: Path,
                                              tiny_gpt2: Path) -> None:
    page = browser_page
    page.set_default_timeout(120_000)
    page.goto(f"{streamlit_server}/template_adaptation")
    page.get_by_role("heading", name="Template adaptation").wait_for()
    page.get_by_role("tab", name="VBCM of a score file").click()  # the page opens on the study
    page.get_by_text("prints 0.997 for France").wait_for()
    page.locator("[data-testid='stDataFrame']").first.wait_for()
    page.wait_for_timeout(1500)
    page.screenshot(path=str(artifact_dir / "template-adaptation-vbcm.png"))

    page.get_by_role("tab", name="Adapt to a domain").click()
    page.get_by_text("Adapt the templates with a chat model, then compare").click()
    page.get_by_text("mostly copies the template back").wait_for()  # said before it starts
    picker = page.locator("[data-testid='stSelectbox']").filter(has_text="Rewriting chat model")
    picker.locator("input").click()
    page.keyboard.type("other Hugging Face")  # the selectbox filters its options as one types
    page.get_by_role("option", name="(other Hugging Face id or local path)").wait_for()
    page.keyboard.press("Enter")
    model_box = page.get_by_label("Model id or path")
    model_box.fill(str(tiny_gpt2))
    model_box.press("Enter")
    page.wait_for_timeout(700)
    prompt = page.get_by_label("Rewriting prompt (App. A.4, verbatim; keep {n} {examples} {sentence} {term})")
    prompt.fill("{n}{examples}Rewrite {sentence} keeping {term}.")  # the tiny model has 128 positions
    page.keyboard.press("Control+Enter")
    page.wait_for_timeout(700)
    for label, value in (("Templates used (seeded sample)", "2"), ("Corpus sentences searched (seeded sample)", "60"),
                         ("Max new tokens (paper: 102)", "6"), ("Domain examples (paper: 15)", "0"),
                         ("Bootstrap resamples", "200")):
        set_number(page, label, value)
    page.get_by_text("2 templates × 2 kind(s)").wait_for()
    page.get_by_role("button", name="Run adaptation").click()
    try:
        page.get_by_text("Rewrites: original, adapted and rejected").wait_for(timeout=300_000)
        page.get_by_text("Naturally occurring examples (Table 2)").wait_for()
    finally:
        page.screenshot(path=str(artifact_dir / "template-adaptation-run-end.png"))
    heading = page.get_by_text("Rewrites: original, adapted and rejected")
    heading.scroll_into_view_if_needed()
    page.wait_for_timeout(1500)
    page.screenshot(path=str(artifact_dir / "template-adaptation-run.png"))
    page.get_by_text("VBCM per set, with 95% bootstrap intervals").scroll_into_view_if_needed()
    page.locator(".js-plotly-plot").first.wait_for()
    page.wait_for_timeout(2500)
    page.screenshot(path=str(artifact_dir / "template-adaptation-vbcm-bars.png"))
    assert page.get_by_text("Rejection rate", exact=True).count() > 0  # the metric label, not a caption quoting it
    assert (artifact_dir / "template-adaptation-run.png").stat().st_size > 10_000
