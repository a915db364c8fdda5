"""Compare runs and the SQL console in a real browser: charts draw, examples list, a refusal is one sentence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import REPO_ROOT, serve_dashboard
from tests.compare.pipeline_runs import PipelineRuns, copy_store

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # Chromium: not in `make test-fast`


@pytest.fixture(scope="module")
def compare_app(tmp_path_factory: pytest.TempPathFactory,
                pipeline_runs: PipelineRuns) -> Iterator[tuple[str, PipelineRuns, Path]]:
    """The app over a store the pipelines wrote (decoding runs at two top-p values, a sweep, metric-bias, ...)."""
    tmp = tmp_path_factory.mktemp("compare-app")
    store = copy_store(pipeline_runs, tmp / "runs.duckdb")
    runs = pipeline_runs
    env = {"FAIRNESS_LAB_STORE_ROOT": str(tmp), "FAIRNESS_LAB_SERVED": "1", "FAIRNESS_LAB_PREWARM": "0"}
    with serve_dashboard(REPO_ROOT, store.path, tmp / "streamlit.log", env) as url:
        yield url, runs, tmp


def test_two_decoding_runs_open_with_the_disparity_difference(compare_app, browser_page, artifact_dir: Path) -> None:
    url, runs, _ = compare_app
    a, b = runs.single_05, runs.single_095
    page = browser_page
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{url}/compare?runs={a},{b}")
    page.get_by_text("Is one fairer? The disparity, compared").wait_for()
    # compared on the bias-corrected disparities, each side tested on its own (issue 33)
    page.get_by_text("the bias-corrected disparity in negative sentiment between gender groups").first.wait_for()
    page.get_by_text("Each alone, tested for no disparity: p = ").first.wait_for()
    charts = page.locator('[data-testid="stPlotlyChart"]')
    # plotly attaches its svg before it draws the traces: wait for what is asserted, never count at once
    charts.nth(0).locator("g.trace").first.wait_for(state="attached")  # the disparity chart comes first
    page.wait_for_timeout(1000)
    page.screenshot(path=str(artifact_dir / "compare-disparity.png"))
    charts.nth(2).locator("svg.main-svg").first.wait_for(state="attached")
    assert charts.count() == 3
    report = page.locator('[data-testid="stDownloadButton"]').filter(has_text="Download report")
    report.wait_for()
    page.get_by_text("Differences, second − first (95% intervals)").scroll_into_view_if_needed()
    page.screenshot(path=str(artifact_dir / "compare-differences.png"))
    page.get_by_text("Per example: the same item on both sides").scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    page.screenshot(path=str(artifact_dir / "compare-examples.png"))
    with page.expect_download() as download_info:
        report.click()
    download = download_info.value
    assert download.suggested_filename == f"report-{a}-and-1-more.html"
    text = Path(download.path()).read_text(encoding="utf-8")
    assert "plotly.js v" in text and f"Run {a}" in text and "The disparity, compared" in text


def test_a_sweep_against_a_live_move(compare_app, browser_page, artifact_dir: Path) -> None:
    url, runs, _ = compare_app
    page = browser_page
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{url}/compare?runs={runs.sweep},{runs.live}")
    page.get_by_text("Is one fairer? The disparity, compared").wait_for()
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.locator("path.point").nth(2).wait_for(state="attached")  # the live setting against each of the sweep's 3
    page.wait_for_timeout(1000)
    page.screenshot(path=str(artifact_dir / "compare-sweep-vs-live.png"))


def test_sql_console_runs_a_query_and_refuses_a_copy(compare_app, browser_page, artifact_dir: Path) -> None:
    url, runs, tmp = compare_app
    leak = tmp / "leak.csv"
    page = browser_page
    page.goto(f"{url}/sql_console")
    query = page.get_by_label("Query")
    query.wait_for()
    tables_before = page.locator('[data-testid="stDataFrame"]').count()  # the views expander's table
    query.fill("SELECT config.top_p AS top_p, grp, avg(value) AS mean_compound FROM generation "
               f"WHERE metric = 'vader_compound' AND run_id = '{runs.single_05}' GROUP BY ALL ORDER BY ALL")
    page.get_by_role("button", name="Run query").click()
    page.get_by_text("2 row(s) in").wait_for()
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.locator("g.trace").first.wait_for(state="attached")
    assert page.get_by_role("button", name="CSV", exact=True).is_visible()
    assert page.get_by_role("button", name="Parquet", exact=True).is_visible()
    page.screenshot(path=str(artifact_dir / "sql-console.png"), full_page=True)
    query.fill(f"COPY results TO '{leak}'")
    page.get_by_role("button", name="Run query").click()
    error = page.get_by_text("the console is read-only: COPY statements are refused, only SELECT runs")
    error.wait_for()
    # the earlier query's table and downloads go once the refused run ends (not left under the error)
    page.get_by_role("button", name="Parquet", exact=True).wait_for(state="detached")
    assert page.locator('[data-testid="stDataFrame"]').count() == tables_before
    assert not leak.exists()
    page.screenshot(path=str(artifact_dir / "sql-console-refused.png"), full_page=False)
