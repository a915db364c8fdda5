"""The sidebar's store path: bad values get one sentence in place, the page stays; served apps offer no choice."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.jobs import run_task
from fairness_core.store import RunStore
from tests.jobs.slow_task import make_task

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_store: Path) -> Path:
    folder = tmp_path / "store-root"
    folder.mkdir()
    (folder / "runs.csv").write_text("item,value\na,1\n")
    (folder / "fake.duckdb").write_text("item,value\na,1\n")
    monkeypatch.setenv("FAIRNESS_LAB_STORE_ROOT", str(folder))
    return folder


BAD_VALUES = [
    ("a folder", lambda root: str(root), "is a folder"),
    ("a folder outside the root", lambda root: "/tmp", "is outside the store folder"),
    ("a CSV", lambda root: str(root / "runs.csv"), "must end in .duckdb"),
    ("a CSV named .duckdb", lambda root: str(root / "fake.duckdb"), "not a DuckDB database file"),
    ("/proc/version", lambda root: "/proc/version", "is outside the store folder"),
    ("a 300-character name", lambda root: "n" * 300 + ".duckdb", "at most 255"),
    ("an md: address", lambda root: "md:x", "is an address, not a file path"),
]


@pytest.mark.parametrize(("label", "value", "phrase"), BAD_VALUES, ids=[case[0] for case in BAD_VALUES])
def test_a_bad_store_path_gets_one_sentence_and_the_page_stays(root: Path, isolated_store: Path, label: str,
                                                              value, phrase: str) -> None:
    app = AppTest.from_file(APP, default_timeout=60).run()
    app.text_input(key="store_path").input(value(root)).run()
    assert not app.exception, app.exception
    (error,) = app.sidebar.error
    shown = error.value.replace("\\", "").replace("\u200b", "")  # escaped: the typed text is shown literally
    assert phrase in shown and f"Using the configured store {isolated_store} instead" in shown
    assert app.title[0].value == "NLG Fairness Lab" and len(app.dataframe) == 1  # the home page is intact
    assert sorted(p.name for p in root.iterdir()) == ["fake.duckdb", "runs.csv"]  # nothing created


def test_a_bad_store_path_keeps_the_run_store_page_working(root: Path, isolated_store: Path) -> None:
    outcome = run_task(make_task(), RunStore(isolated_store))
    app = AppTest.from_file(APP, default_timeout=60).run()
    app.text_input(key="store_path").input("/proc/version").run()
    app.switch_page("app_pages/runs.py").run()
    assert not app.exception, app.exception
    assert app.sidebar.error and app.dataframe[0].value["run_id"].tolist() == [outcome.run_id]


def test_a_store_inside_the_root_can_be_chosen(root: Path) -> None:
    app = AppTest.from_file(APP, default_timeout=60).run()
    app.text_input(key="store_path").input("experiments.duckdb").run()
    assert not app.exception and not app.sidebar.error
    assert "empty (created on the first run)" in [c.value for c in app.sidebar.caption]
    assert not (root / "experiments.duckdb").exists()  # choosing a store creates nothing until a run


def test_a_served_app_offers_no_store_choice(root: Path, isolated_store: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRNESS_LAB_SERVED", "1")
    app = AppTest.from_file(APP, default_timeout=60).run()
    assert not app.exception
    assert not [widget for widget in app.text_input if widget.key == "store_path"]
    assert any("visitors cannot change it" in c.value for c in app.sidebar.caption)
