"""The Metric bias page in a real browser: the default view computes in the background, the main table
switches normalisation, the choice survives a reload through the URL, and the gap table filters."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fairness_core.metrics.registry import metric_names  # the picker offers every registered metric

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(1500)]


def test_normalisation_in_the_url_survives_a_reload_and_the_gap_table_filters(
        streamlit_server: str, browser_page, artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(600_000)  # the first open computes the demo set (n-gram + BERTScore-MiniLM)
    page.goto(f"{streamlit_server}/metric_bias")
    page.get_by_role("heading", name="Metric bias").wait_for()
    page.get_by_text(re.compile(r"Estimated time: about")).wait_for()
    page.get_by_role("tab", name="Bias table").wait_for()  # results: the background job finished
    page.get_by_text(f"6 of {len(metric_names())} metrics selected").wait_for()

    # switch the main table to z-score: the URL records it, and a reload keeps it
    page.get_by_text("z-score (standard deviations)", exact=True).first.click()
    page.get_by_text(re.compile(r"Bias \[95% interval over [^\]]+\], z-score")).wait_for()
    page.wait_for_url(re.compile(r"norm=zscore"))
    page.reload()
    page.get_by_role("tab", name="Bias table").wait_for()
    page.get_by_text(re.compile(r"Bias \[95% interval over [^\]]+\], z-score")).wait_for()
    assert "norm=zscore" in page.url
    panel = page.get_by_role("tabpanel", name="Bias table")
    panel.locator("[data-testid='stPlotlyChart']").first.wait_for()
    panel.locator("[data-testid='stDataFrame']").first.wait_for()
    page.wait_for_timeout(2000)  # let Plotly finish drawing before the screenshot
    page.screenshot(path=str(artifact_dir / "metric_bias_zscore.png"), full_page=True)
    assert (artifact_dir / "metric_bias_zscore.png").stat().st_size > 10_000

    page.get_by_role("tab", name="Per-example gaps").click()
    panel = page.get_by_role("tabpanel", name="Per-example gaps")
    metric_filter = panel.get_by_label("Metric", exact=True).first  # the Plan panel has a "Metric" picker too
    # replace the default BERTScore filter with chrF
    panel.get_by_role("button", name=re.compile("Remove bertscore|Delete", re.I)).first.click()
    metric_filter.click()
    page.get_by_role("option", name="chrf", exact=True).click()
    page.keyboard.press("Escape")

    # the caption names the filtered metric once the rerun has finished
    caption = panel.get_by_text(re.compile(r"\d+ pairs for chrf, largest gap first"))
    caption.wait_for()
    assert int(caption.inner_text().split()[0]) > 0
    grid = panel.locator("[data-testid='stDataFrame']").first
    assert grid.is_visible()
    page.screenshot(path=str(artifact_dir / "metric_bias_gaps.png"), full_page=True)
    assert (artifact_dir / "metric_bias_gaps.png").stat().st_size > 10_000

    # issue 30: the largest-gap pair whole, the words that differ marked (a cell cut them off)
    lines = panel.locator("[data-testid='stMarkdownContainer']")
    first = lines.filter(has_text="Candidate 1:").last
    second = lines.filter(has_text="Candidate 2:").last
    first.wait_for()
    marked = [line.locator("strong").all_inner_texts() for line in (first, second)]
    assert all(len(words) >= 2 for words in marked), marked  # the label and at least one marked word
    assert {words[1] for words in marked if len(words) > 1} <= {"he", "she", "his", "her", "him", "He", "She",
                                                                 "His", "Her", "Him"}
    first.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifact_dir / "metric_bias_gap_pair.png"))
