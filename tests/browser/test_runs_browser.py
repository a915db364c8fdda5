"""The run store in a real browser, served as for others (`FAIRNESS_LAB_SERVED=1`).

The store holds real runs (metric bias on the demo set, a decoding sweep of a tiny random GPT-2, a run the
user cancelled) and one crafted run whose id is a path and a markdown link. A visitor searches, opens runs
with one click, cannot choose another store file, and the crafted id neither becomes a link nor a path.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from fairness_core.cli import main
from fairness_core.jobs import CancelToken, Progress, run_task
from fairness_core.store import RunStore
from tests.browser.conftest import REPO_ROOT, serve_dashboard
from tests.jobs.slow_task import make_task

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # Chromium: not in `make test-fast`

CRAFTED = "../../[x](http://example.invalid)"


def _fill_store(store: Path, tiny_gpt2: Path, tmp: Path) -> None:
    assert main(["--store", str(store), "metric-bias", "--format", "demo", "--metrics", "bleu,rouge1",
                 "--resamples", "50"]) == 0
    prompts = tmp / "prompts.txt"
    prompts.write_text("women: The woman worked as\nmen: The man worked as\n")
    assert main(["--store", str(store), "decoding", "--model", str(tiny_gpt2), "--prompts", str(prompts),
                 "--grid", "top_p=0.5,0.9", "--max-new-tokens", "5", "--regard-model", "none",
                 "--quality-scorer", "none"]) == 0
    cancel = CancelToken()

    def stop(progress: Progress) -> None:
        if progress.done >= 4:
            cancel.cancel()

    run_task(make_task(base=3), RunStore(store), on_progress=stop, cancel=cancel)
    original = run_task(make_task(base=4), RunStore(store)).run_id
    raw = duckdb.connect(str(store))
    for table in ("runs", "shards", "results"):
        raw.execute(f"UPDATE {table} SET run_id = ? WHERE run_id = ?", [CRAFTED, original])
    raw.close()


@pytest.fixture(scope="module")
def served_store_app(tmp_path_factory: pytest.TempPathFactory, tiny_gpt2: Path) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("served")
    root = tmp / "root"
    root.mkdir()
    store = root / "runs.duckdb"
    _fill_store(store, tiny_gpt2, tmp)
    log_path = tmp / "streamlit.log"
    with serve_dashboard(REPO_ROOT, store, log_path, {"FAIRNESS_LAB_STORE_ROOT": str(root),
                                                      "FAIRNESS_LAB_SERVED": "1"}) as url:
        yield url, tmp
    assert "inotify" not in log_path.read_text()  # the file watcher is off for served use


def _click_first_row(page, expect: str) -> None:
    """Click the selection cell of the table's first row (the grid is drawn on a canvas) until `expect` shows.

    A click that lands while the grid is still being redrawn after a search is lost, so it is retried.
    """
    for _ in range(6):
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.wait_for()
        page.wait_for_timeout(1000)
        box = grid.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)
        try:
            page.get_by_text(expect).first.wait_for(timeout=15_000)
            return
        except Exception:  # playwright's TimeoutError: click again
            continue
    page.get_by_text(expect).first.wait_for()


def test_a_visitor_searches_the_run_store_and_opens_runs_with_one_click(served_store_app, browser_page,
                                                                       artifact_dir: Path) -> None:
    url, _ = served_store_app
    page = browser_page
    page.goto(f"{url}/runs")
    page.get_by_text("of 5 runs. Click a row to open it.").wait_for()
    assert page.get_by_text("5 of 5 runs").is_visible()
    # served: the store is shown, not chosen
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_text("visitors cannot change it").is_visible()
    assert sidebar.get_by_label("DuckDB file").count() == 0
    page.screenshot(path=str(artifact_dir / "runs-store-all.png"), full_page=True)

    search = page.get_by_role("textbox", name="Search runs")
    search.fill("demo metric-bias")
    search.press("Enter")
    page.get_by_text("2 of 5 runs").wait_for()
    _click_first_row(page, "Opened run")
    page.get_by_text("First 256 of 256 rows").wait_for()
    assert "run=" in page.url
    page.screenshot(path=str(artifact_dir / "runs-store-search-open.png"), full_page=True)

    search.fill("cancelled")
    search.press("Enter")
    page.get_by_text("1 of 5 runs").wait_for()
    _click_first_row(page, "This run was cancelled by the user (4 of 12 batches stored).")
    warning = page.get_by_text("This run was cancelled by the user (4 of 12 batches stored).")
    warning.wait_for()
    warning.scroll_into_view_if_needed()
    assert page.get_by_text("KeyboardInterrupt").count() == 0
    page.screenshot(path=str(artifact_dir / "runs-store-cancelled.png"), full_page=True)


def test_a_crafted_run_id_is_text_and_its_export_name_is_safe(served_store_app, browser_page) -> None:
    url, tmp = served_store_app
    page = browser_page
    page.goto(f"{url}/runs?run={urllib.parse.quote(CRAFTED, safe='')}")
    page.get_by_text("Opened run").wait_for()
    assert page.locator('a[href*="example.invalid"]').count() == 0
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export CSV").click()
    name = download_info.value.suggested_filename
    assert re.fullmatch(r"run-[A-Za-z0-9_-]+\.csv", name), name
    assert "x" in name and "http" in name  # the readable part of the id survives, the path does not
    assert not list(tmp.glob("*.csv")) and not list(tmp.parent.glob("run-*"))
