"""The run store page lists stored runs and shows a run's manifest and rows."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from fairness_core.jobs import run_task
from fairness_core.store import RunStore
from tests.jobs.slow_task import make_task

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_runs_page_shows_a_stored_run(isolated_store: Path) -> None:
    outcome = run_task(make_task(), RunStore(isolated_store))
    app = AppTest.from_file(APP, default_timeout=60).run()
    app.switch_page("app_pages/runs.py").run()
    assert not app.exception, app.exception
    listing = app.dataframe[0].value
    assert listing["run"].tolist() == [outcome.run_id] and listing["status"].tolist() == ["complete"]
    assert "test-squares" in app.code[0].value  # the manifest
    assert len(app.dataframe[1].value) == 60


def test_runs_page_with_an_empty_store_says_so(isolated_store: Path) -> None:
    app = AppTest.from_file(APP, default_timeout=60).run()
    app.switch_page("app_pages/runs.py").run()
    assert not app.exception
    assert "No runs stored yet" in app.info[0].value
