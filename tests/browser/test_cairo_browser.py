"""The CAIRO page in a real browser on the shipped offline run: the correlation-vs-size chart and its warning."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_shipped_run_shows_correlation_by_size(streamlit_server: str, browser_page, artifact_dir: Path) -> None:
    from fairness_core.cairo.summary import load_demo

    if load_demo() is None:
        pytest.fail("data/cairo/demo_bias_table.csv (the shipped offline run) is missing")
    page = browser_page
    page.set_default_timeout(120_000)
    page.goto(f"{streamlit_server}/cairo")
    page.get_by_role("heading", name="CAIRO explorer").wait_for()
    page.get_by_role("heading", name="3 · Combination search").wait_for()
    page.get_by_text("weak evidence", exact=False).first.wait_for()
    chart = page.locator("[data-testid='stVegaLiteChart']").first
    chart.wait_for()
    chart.scroll_into_view_if_needed()
    page.wait_for_timeout(1500)
    assert "Pearson r: original → best CAIRO" in page.locator("[data-testid='stMetric']").first.inner_text()
    page.get_by_text("systems. Original prompts alone", exact=False).first.wait_for()
    page.screenshot(path=str(artifact_dir / "cairo-correlation.png"))
    assert (artifact_dir / "cairo-correlation.png").stat().st_size > 10_000
    page.get_by_role("heading", name="Systems before and after CAIRO (Figs. 8, 10–11)").scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    page.screenshot(path=str(artifact_dir / "cairo-systems.png"))
