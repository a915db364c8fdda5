"""Everything a server keeps across sessions has a size bound: Streamlit caches, the job registry, per-session
records; a classroom leaves no per-session residue behind."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from fairness_core.jobs.queue import LIVE, WorkerPool
from ui import jobs

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py"))]


def _cache_decorators(path: Path) -> list[tuple[str, ast.Call]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(target, ast.Attribute) and target.attr in ("cache_data", "cache_resource"):
                    found.append((f"{path.name}:{node.name}", decorator))
    return found


def test_every_streamlit_cache_in_the_app_has_a_size_bound() -> None:
    decorators = [item for path in SOURCES for item in _cache_decorators(path)]
    assert len(decorators) >= 10  # the scan sees the app's caches
    unbounded = [name for name, call in decorators
                 if not isinstance(call, ast.Call) or "max_entries" not in {k.arg for k in call.keywords}]
    assert unbounded == []


def test_the_registry_keeps_a_bounded_number_of_finished_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jobs, "_POOL", WorkerPool(2, on_drop=jobs._dropped))
    monkeypatch.setattr(jobs, "_REGISTRY", {})
    for index in range(jobs.KEEP_FINISHED + 20):  # thirty students, a few moves each
        key = jobs.key_for("live", {"move": index})
        jobs.start(key, lambda on_progress, cancel: "rows", lane=LIVE, session=f"student-{index % 30}")
        jobs.wait(key, 60)
    assert len(jobs._REGISTRY) <= jobs.KEEP_FINISHED + 1


def test_the_queue_holds_one_live_request_per_session_however_often_it_moves() -> None:
    pool = WorkerPool(1)
    busy, release = threading.Event(), threading.Event()
    pool.submit("teacher", "live-busy", LIVE, lambda: (busy.set(), release.wait(60)))
    assert busy.wait(10)
    for move in range(200):
        for student in range(30):
            pool.submit(f"student-{student}", f"live-{student}-{move}", LIVE, lambda: None)
    assert len(pool.queue) == 30
    release.set()


def test_a_sessions_record_of_shown_jobs_is_bounded() -> None:
    from streamlit.testing.v1 import AppTest

    def page() -> None:
        from ui import jobs

        for index in range(200):
            jobs._shown(add=f"sweep-{index}")
        import streamlit as st

        st.markdown(str(len(st.session_state["_background_jobs_shown_done"])))

    app = AppTest.from_function(page).run()
    assert not app.exception
    assert app.markdown[0].value == str(jobs.KEEP_SHOWN)
