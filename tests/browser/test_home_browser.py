"""The home page in a real browser, served by `streamlit run`."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_home_page_renders_in_chromium(streamlit_server: str, browser_page, artifact_dir: Path) -> None:
    browser_page.goto(streamlit_server)
    # The first paint shows only the sidebar while the script runs: wait for real content.
    browser_page.get_by_role("heading", name="NLG Fairness Lab").wait_for()
    browser_page.get_by_text("Models on this machine").wait_for()
    browser_page.get_by_text("Available here:").wait_for()
    sidebar = browser_page.locator("[data-testid='stSidebar']")
    assert "SmolLM2" in sidebar.inner_text()
    browser_page.locator("[data-testid='stDataFrame'] canvas").first.wait_for()
    browser_page.wait_for_timeout(500)  # the grid paints its canvas a moment after it is attached
    browser_page.screenshot(path=str(artifact_dir / "home.png"), full_page=True)
    assert (artifact_dir / "home.png").stat().st_size > 10_000
