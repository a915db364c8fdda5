"""Compare runs and the SQL console in a real browser: charts draw, examples list, a refusal is one sentence."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairness_core.store import RunStore
from tests.browser.conftest import REPO_ROOT, _free_port, _wait_healthy
from tests.compare.stored_runs import write_decoding_run


@pytest.fixture(scope="module")
def compare_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str], Path]]:
    tmp = tmp_path_factory.mktemp("compare-app")
    store = RunStore(tmp / "runs.duckdb")
    runs = [write_decoding_run(store, "model-a", seed=1), write_decoding_run(store, "model-b", shift=0.15, seed=1)]
    port = _free_port()
    env = dict(os.environ, FAIRNESS_LAB_STORE=str(store.path), FAIRNESS_LAB_STORE_ROOT=str(tmp),
               FAIRNESS_LAB_SERVED="1", FAIRNESS_LAB_PREWARM="0", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    with open(tmp / "streamlit.log", "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
        yield url, runs, tmp
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def test_compare_page_draws_estimates_and_differences(compare_app, browser_page, artifact_dir: Path) -> None:
    url, (a, b), _ = compare_app
    page = browser_page
    page.goto(f"{url}/compare?runs={a},{b}")
    page.get_by_text("12 of 12 aligned cells; 100% paired (by prompt).").wait_for()
    charts = page.locator('[data-testid="stPlotlyChart"]')
    charts.nth(1).locator("svg.main-svg").first.wait_for(state="attached")
    assert charts.count() == 2
    for index in range(2):
        assert charts.nth(index).locator("g.trace").count() >= 1
    report = page.locator('[data-testid="stDownloadButton"]').filter(has_text="Download report")
    report.wait_for()
    page.get_by_text("Estimates by run (95% intervals)").scroll_into_view_if_needed()
    page.screenshot(path=str(artifact_dir / "compare-page.png"))
    page.get_by_text("Differences, other − first (95% intervals)").scroll_into_view_if_needed()
    page.screenshot(path=str(artifact_dir / "compare-differences.png"))
    page.get_by_text("Per example: the same item in both runs").scroll_into_view_if_needed()
    page.get_by_text("The woman worked as").first.wait_for(state="attached")  # grid cells sit under a canvas
    page.wait_for_timeout(1000)
    page.screenshot(path=str(artifact_dir / "compare-examples.png"))
    with page.expect_download() as download_info:
        report.click()
    download = download_info.value
    assert download.suggested_filename == f"report-{a}-and-1-more.html"
    text = Path(download.path()).read_text(encoding="utf-8")
    assert "plotly.js v" in text and f"Run {a}" in text


def test_sql_console_runs_a_query_and_refuses_a_copy(compare_app, browser_page, artifact_dir: Path) -> None:
    url, _, tmp = compare_app
    leak = tmp / "leak.csv"
    page = browser_page
    page.goto(f"{url}/sql_console")
    query = page.get_by_label("Query")
    query.wait_for()
    tables_before = page.locator('[data-testid="stDataFrame"]').count()  # the views expander's table
    query.fill("SELECT config.top_p AS top_p, grp, avg(value) AS mean_compound FROM decoding "
               "WHERE metric = 'vader_compound' GROUP BY ALL ORDER BY ALL")
    page.get_by_role("button", name="Run query").click()
    page.get_by_text("4 row(s) in").wait_for()
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.locator("svg.main-svg").first.wait_for(state="attached")
    assert chart.locator("g.trace").count() >= 1
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
