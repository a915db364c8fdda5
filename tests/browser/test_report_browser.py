"""The report opens offline: with every network request blocked, each chart div draws its plot (an SVG)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_core.cli import main
from tests.compare.pipeline_runs import PipelineRuns, copy_store

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # Chromium: not in `make test-fast`


def test_the_report_draws_its_charts_with_the_network_blocked(tmp_path: Path, browser_page, artifact_dir: Path,
                                                              pipeline_runs: PipelineRuns) -> None:
    store = copy_store(pipeline_runs, tmp_path / "runs.duckdb")
    a, b = pipeline_runs.single_05, pipeline_runs.single_095  # two decoding runs at two top-p values
    out = tmp_path / "report.html"
    assert main(["report", a, b, "--store", str(store.path), "--out", str(out)]) == 0
    page = browser_page
    requested: list[str] = []
    errors: list[str] = []

    def block(route) -> None:
        requested.append(route.request.url)
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    page.context.route("**/*", block)
    page.context.set_offline(True)
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(out.as_uri())
    charts = page.locator("div.chart")
    assert charts.count() == 4  # the disparity, every line-up, then one estimates chart per run
    for index in range(charts.count()):
        charts.nth(index).locator("g.trace").first.wait_for(state="attached", timeout=30_000)  # drew a trace
    assert [url for url in requested if not url.startswith("file://")] == []
    assert errors == []
    body = page.locator("body").inner_text()
    assert "paired interval" in page.content() and "Deviations from the paper" in body
    assert "Data licence" in body and '"kind": "generation"' in body and "Examples that changed most" in body
    assert "The disparity, compared" in body and "**" not in body.split("Deviations from the paper")[1]
    page.screenshot(path=str(artifact_dir / "report_offline.png"), full_page=False)
