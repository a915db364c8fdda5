"""The DATScore page in a real browser: score the synthetic set with a tiny M2M-100, see both views."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(1500)]  # model load on 2 shared cores


def test_scoring_shows_the_segment_and_corpus_views(streamlit_server: str, browser_page, artifact_dir: Path,
                                                    tiny_m2m100: Path) -> None:
    page = browser_page
    page.set_default_timeout(600_000)  # 2 shared CPU cores
    page.goto(f"{streamlit_server}/datscore")
    page.get_by_role("heading", name="DATScore demo").wait_for()
    page.locator("[data-testid='stSelectbox']").filter(has_text="Backbone").click()
    page.get_by_role("option", name="another hub id or local directory").click()
    model_input = page.get_by_label("Model id or path")
    model_input.fill(str(tiny_m2m100))
    model_input.press("Enter")
    page.get_by_text("Work: 144 scored directions").wait_for()
    score_button = page.get_by_role("button", name="Score", exact=True)
    score_button.wait_for()  # rendered once the rerun with the new model path has finished
    page.wait_for_timeout(1000)
    score_button.click()
    try:
        page.get_by_text("DATScore of this segment (Eq. 2 sum)").wait_for()
    except Exception:
        page.screenshot(path=str(artifact_dir / "datscore-failure.png"), full_page=True)
        raise
    page.get_by_text("Trans1:").first.wait_for()
    page.wait_for_timeout(2000)  # plotly charts draw after the elements appear
    # Streamlit scrolls inside its main container: bring each view into the viewport before the screenshot
    page.get_by_text("Trans1:").first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifact_dir / "datscore-segment.png"))
    page.get_by_text("Token view of a direction into the hypothesis").scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifact_dir / "datscore-tokens.png"))
    page.get_by_role("tab", name="The corpus").click()
    page.get_by_role("heading", name="Direction weights (Eq. 3)").wait_for()
    heading = page.get_by_text("Meta-evaluation: Kendall τ-like (Eq. 5) — synthetic")
    heading.wait_for()
    page.wait_for_timeout(1500)
    page.get_by_role("heading", name="Direction weights (Eq. 3)").scroll_into_view_if_needed()
    page.screenshot(path=str(artifact_dir / "datscore-corpus.png"))
    heading.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifact_dir / "datscore-metaeval.png"))
    assert (artifact_dir / "datscore-corpus.png").stat().st_size > 10_000
