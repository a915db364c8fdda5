"""The launcher `make run` uses: the default generator starts loading with the server, then Streamlit runs the app."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from ui import serve


def test_the_launcher_starts_the_warm_up_and_hands_its_options_to_streamlit_run(monkeypatch: pytest.MonkeyPatch
                                                                                  ) -> None:
    from streamlit.web import cli

    started, seen = threading.Event(), []
    monkeypatch.setenv("FAIRNESS_LAB_PREWARM", "1")
    monkeypatch.setattr(serve, "warm_up", started.set)
    monkeypatch.setattr(cli, "main", lambda: seen.append(list(sys.argv)))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    serve.main(["--server.port", "8599", "--server.headless", "true"])
    assert started.wait(10)
    assert seen == [["streamlit", "run", str(serve.APP), "--server.port", "8599", "--server.headless", "true"]]
    assert serve.APP.name == "app.py" and serve.APP.is_file()


def test_the_warm_up_is_off_where_the_app_pre_warm_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.web import cli

    monkeypatch.setenv("FAIRNESS_LAB_PREWARM", "0")
    monkeypatch.setattr(serve, "warm_up", lambda: pytest.fail("warmed up although FAIRNESS_LAB_PREWARM=0"))
    monkeypatch.setattr(cli, "main", lambda: None)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    serve.main([])
    assert serve.prewarm_enabled({}) and not serve.prewarm_enabled({"FAIRNESS_LAB_PREWARM": "0"})


def test_the_warm_up_loads_the_page_default_generator_then_takes_the_load_gauges_first_readings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import fairness_core.decoding as decoding
    from ui import jobs

    order = []

    class Loading:
        def join(self) -> None:  # the load holds the interpreter: it hands it over sooner meanwhile
            order.append(("loaded", sys.getswitchinterval()))

    def prewarm(model: str) -> Loading:
        order.append(model)
        return Loading()

    from ui import common, decoding_view

    store = object()
    monkeypatch.setattr(decoding, "prewarm", prewarm)
    monkeypatch.setattr(common, "store_for_server", lambda: store)
    monkeypatch.setattr(decoding_view, "sample_default_ahead",
                        lambda model, where: order.append(("default rows", model, where is store)) or 11)
    monkeypatch.setattr(jobs.LOAD, "slowdown", lambda: order.append("machine load") or 1.0)
    monkeypatch.setattr(jobs.SHARE_LOAD, "slowdown", lambda: order.append("core share") or 1.0)
    monkeypatch.delenv("FAIRNESS_LAB_WARM_UP_SWITCH_S", raising=False)
    before = sys.getswitchinterval()
    serve.warm_up()
    # the first visit's rows are sampled once the model is in (issue 45 §2), into the server's own store's plan; the
    # gauges read the machine after both, not while the model loads
    assert order == [serve.DEFAULT_GENERATOR, ("loaded", serve.DEFAULT_WARM_UP_SWITCH_S),
                     ("default rows", serve.DEFAULT_GENERATOR, True), "machine load", "core share"]
    assert before > serve.DEFAULT_WARM_UP_SWITCH_S and sys.getswitchinterval() == before  # restored after the load


def test_streamlit_is_imported_before_the_warm_up_starts_so_plotly_never_meets_a_half_imported_pandas() -> None:
    # Importing streamlit sets plotly's theme, and plotly uses numpy and pandas when it finds them in sys.modules: a
    # pandas the warm-up thread was still importing killed the server at start (3 of 10 launches). A fresh
    # interpreter, because this one imported streamlit long ago.
    probe = """
import sys, threading
from ui import serve
seen = []
def start(thread):
    seen.append((thread.name, "streamlit.web.cli" in sys.modules, "ui.decoding_view" in sys.modules,
                 "torch" in sys.modules))
    raise SystemExit(0)
threading.Thread.start = start
try:
    serve.main(["--server.headless", "true"])
finally:
    print(seen)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          cwd=serve.APP.parent, env={**os.environ, "FAIRNESS_LAB_PREWARM": "1"})
    # and the first paint's modules (pandas, altair, the pages' helpers) are in before the server listens, without
    # torch: they would otherwise compete with the first visitor's script (issue 45 §2); torch loads in the warm-up
    assert done.stdout.strip().splitlines()[-1] == "[('warm-up-at-start', True, True, False)]", done.stderr[-2000:]


def test_the_first_paint_imports_keep_streamlits_no_runtime_warning_out_of_the_servers_log(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import logging

    levels = []
    monkeypatch.setattr(importlib, "import_module",
                        lambda name: levels.append(logging.getLogger(serve.CACHE_CHECK_LOG).getEffectiveLevel()))
    before = logging.getLogger(serve.CACHE_CHECK_LOG).level
    serve.import_first_paint_modules()
    assert levels[1:] == [logging.ERROR] * len(serve.FIRST_PAINT_MODULES)  # after Streamlit set its own level
    assert logging.getLogger(serve.CACHE_CHECK_LOG).level == before


def test_a_served_app_starts_without_the_no_runtime_warning(tmp_path) -> None:
    """The launcher's imports in a fresh interpreter, as `make run` does them: no warning reaches stderr."""
    code = "from ui import serve; serve.import_first_paint_modules()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=serve.APP.parent, env=dict(os.environ, FAIRNESS_LAB_STORE=str(tmp_path / "s.duckdb")))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "No runtime found" not in done.stderr


def test_the_warm_up_switch_interval_is_read_from_the_environment_and_a_bad_value_is_said(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert serve.warm_up_switch_s({}) == serve.DEFAULT_WARM_UP_SWITCH_S
    assert serve.warm_up_switch_s({"FAIRNESS_LAB_WARM_UP_SWITCH_S": "0.005"}) == 0.005
    assert capsys.readouterr().err == ""
    for bad in ("fast", "0", "-1", "5"):
        assert serve.warm_up_switch_s({"FAIRNESS_LAB_WARM_UP_SWITCH_S": bad}) == serve.DEFAULT_WARM_UP_SWITCH_S
        assert f"FAIRNESS_LAB_WARM_UP_SWITCH_S='{bad}' is not a number of seconds" in capsys.readouterr().err
