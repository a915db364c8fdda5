"""The Template adaptation page in a real browser: the VBCM calculator shows the worked example, and an
adaptation run (SmolLM2, one template, a small corpus sample) runs as a background job to its results."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_vbcm_calculator_and_a_small_adaptation_run(streamlit_server: str, browser_page, artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(120_000)
    page.goto(f"{streamlit_server}/template_adaptation")
    page.get_by_role("heading", name="Template adaptation").wait_for()
    page.get_by_text("prints 0.997 for France").wait_for()
    page.screenshot(path=str(artifact_dir / "template-adaptation-vbcm.png"))

    page.get_by_role("tab", name="Adapt to a domain").click()
    page.get_by_text("Offline, the rewriting model is SmolLM2-135M-Instruct").wait_for()
    # Keep it small for 2 CPU cores: one template, 60 corpus sentences, few tokens.
    for label, value in (("Templates used (seeded sample)", "1"), ("Corpus sentences searched (seeded sample)", "60"),
                         ("Max new tokens (paper: 102)", "12"), ("Domain examples (paper: 15)", "2")):
        box = page.get_by_label(label)
        box.fill(value)
        box.press("Enter")
        page.wait_for_timeout(800)
    page.get_by_text("1 templates × 2 kind(s)").wait_for()
    page.get_by_role("button", name="Run adaptation").click()
    page.get_by_text("Adaptation:").first.wait_for()  # the background job's progress bar
    page.get_by_text("Rewrites: original, adapted and rejected").wait_for(timeout=420_000)
    page.get_by_text("Naturally occurring examples (Table 2)").wait_for()
    heading = page.get_by_text("Rewrites: original, adapted and rejected")
    heading.scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    page.screenshot(path=str(artifact_dir / "template-adaptation-run.png"), full_page=False)
    page.get_by_text("Do adapted templates agree better").scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    page.screenshot(path=str(artifact_dir / "template-adaptation-compare.png"), full_page=False)
    assert (artifact_dir / "template-adaptation-run.png").stat().st_size > 10_000
