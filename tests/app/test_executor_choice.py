"""The sidebar's executor choice: local by default, Ray on request, kept in the session."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.markdown_text import shown

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_batch_jobs_run_locally_until_ray_is_chosen(isolated_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    app = AppTest.from_file(APP, default_timeout=60).run()
    assert not app.exception, app.exception
    choice = app.sidebar.radio(key="executor")
    assert choice.value == "local" and choice.options == ["This process (local)",
                                                          "Ray (cluster in RAY_ADDRESS, else a local Ray instance)"]
    choice.set_value("ray").run()
    assert not app.exception, app.exception
    assert app.session_state["executor"] == "ray"
    captions = " ".join(shown(c.value) for c in app.sidebar.caption)
    assert "Ray (a local Ray instance); it starts with the first job." in captions


def test_the_page_helper_gives_the_chosen_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    from ui import common

    monkeypatch.setattr(common.st, "session_state", {})
    assert common.get_executor().name == "local"
    monkeypatch.setattr(common.st, "session_state", {common.EXECUTOR_KEY: "ray"})
    assert common.get_executor().name == ("ray" if common.ray_installed() else "local")
