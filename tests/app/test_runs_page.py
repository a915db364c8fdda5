"""The run store page: what each run is, filters and search, one click (or link) opens a run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.jobs import CancelToken, Progress, run_task
from fairness_core.store import RunStore
from tests.jobs.slow_task import make_task
from tests.markdown_text import shown

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "app_pages/runs.py"


def _runs_page(run: str | None = None) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=60)
    if run:
        app.query_params["run"] = run
    app.run()
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def _cancelled_run(store: RunStore) -> str:
    cancel = CancelToken()

    def stop(progress: Progress) -> None:
        if progress.done >= 2:
            cancel.cancel()

    return run_task(make_task(base=99), store, on_progress=stop, cancel=cancel).run_id


def test_runs_page_describes_each_run_and_asks_for_a_click(isolated_store: Path) -> None:
    outcome = run_task(make_task(), RunStore(isolated_store))
    app = _runs_page()
    listing = app.dataframe[0].value
    assert listing["run_id"].tolist() == [outcome.run_id] and listing["status"].tolist() == ["complete"]
    assert listing["kind"].tolist() == ["test-squares"] and listing["batches"].tolist() == ["12/12"]
    assert "Click a run" in app.info[0].value


def test_a_run_opens_from_the_link_with_manifest_and_rows(isolated_store: Path) -> None:
    outcome = run_task(make_task(), RunStore(isolated_store))
    app = _runs_page(run=outcome.run_id)
    assert "test-squares" in app.code[0].value  # the manifest
    assert len(app.dataframe[2].value) == 60  # catalogue, description, rows


def test_search_and_status_filter_the_table(isolated_store: Path) -> None:
    store = RunStore(isolated_store)
    complete = run_task(make_task(), store).run_id
    cancelled = _cancelled_run(store)
    app = _runs_page()
    assert set(app.dataframe[0].value["run_id"]) == {complete, cancelled}
    app.text_input(key="runs_search").input("cancelled").run()
    assert app.dataframe[0].value["run_id"].tolist() == [cancelled]
    app.text_input(key="runs_search").input("").run()
    app.multiselect(key="runs_statuses").set_value(["complete"]).run()
    assert app.dataframe[0].value["run_id"].tolist() == [complete]
    assert not app.exception


def test_a_cancelled_run_says_cancelled_by_the_user(isolated_store: Path) -> None:
    cancelled = _cancelled_run(RunStore(isolated_store))
    app = _runs_page(run=cancelled)
    assert shown(app.warning[0].value) == "This run was cancelled by the user (2 of 12 batches stored)."
    assert not app.error and "Interrupt" not in app.warning[0].value


def test_a_crafted_run_id_is_shown_as_text_and_opens_safely(isolated_store: Path) -> None:
    store = RunStore(isolated_store)
    original = run_task(make_task(), store).run_id
    crafted = "../../[x](http://example.invalid)"
    raw = duckdb.connect(str(isolated_store))
    for table in ("runs", "shards", "results"):
        raw.execute(f"UPDATE {table} SET run_id = ? WHERE run_id = ?", [crafted, original])
    raw.close()
    app = _runs_page(run=crafted)
    assert app.dataframe[0].value["run_id"].tolist() == [crafted]
    run_caption = next(caption.value for caption in app.caption if caption.value.startswith("Run "))
    assert run_caption.startswith(f"Run `{crafted}`")  # an inline code span: literal text, never a link
    assert not list(isolated_store.parent.parent.glob("run-*"))


def test_an_unknown_run_in_the_link_says_so(isolated_store: Path) -> None:
    run_task(make_task(), RunStore(isolated_store))
    app = _runs_page(run="[evil](http://example.invalid)")
    assert app.warning[0].value.startswith("There is no run `[evil](http://example.invalid)` in this store")


def test_runs_page_with_an_empty_store_says_so(isolated_store: Path) -> None:
    app = _runs_page()
    assert "No runs stored yet" in app.info[0].value


SEARCHES = ["'; DROP TABLE runs; --", "%", "_", "\\", "(", "[x](http://example.invalid)", "a\x00b", "é 漢字 🙂",
            "s" * 200, "   ", "$(rm -rf /)", "<script>alert(1)</script>"]


def test_any_search_text_filters_without_an_error(isolated_store: Path) -> None:
    outcome = run_task(make_task(), RunStore(isolated_store))
    app = _runs_page()
    for text in SEARCHES:
        app.text_input(key="runs_search").input(text).run()
        assert not app.exception, (text, app.exception)
        assert not app.error, (text, [e.value for e in app.error])
        shown = app.dataframe[0].value["run_id"].tolist()
        assert shown == ([outcome.run_id] if not text.strip() else []), text
        assert app.title[0].value == "Run store" and app.caption  # the rest of the page is intact
    assert RunStore(isolated_store).get_run(outcome.run_id).status == "complete"  # nothing changed


CRAFTED_RUNS = ["", " ", "x" * 5000, "a\x00b", "../../etc/passwd", "'; DROP TABLE runs; --", "%00", "*",
                "<img src=x onerror=alert(1)>", "漢字"]


def test_any_run_in_the_link_shows_one_sentence_and_the_table(isolated_store: Path) -> None:
    outcome = run_task(make_task(), RunStore(isolated_store))
    for value in CRAFTED_RUNS:
        app = _runs_page(run=value)
        assert not app.exception, (value[:40], app.exception)
        assert app.dataframe[0].value["run_id"].tolist() == [outcome.run_id]  # the catalogue is intact
        if value.strip():
            (warning,) = app.warning
            assert warning.value.startswith("There is no run `") and "in this store" in warning.value
            assert len(warning.value) < 300  # a crafted id is cut, never pasted whole into the page
        else:
            assert "Click a run" in app.info[0].value
    assert RunStore(isolated_store).get_run(outcome.run_id).status == "complete"


def test_a_busy_store_gives_one_sentence_and_the_page_stays(isolated_store: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    run_task(make_task(), RunStore(isolated_store))
    monkeypatch.setenv("FAIRNESS_LAB_STORE_TIMEOUT", "0.5")  # instead of 60 s
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import duckdb, time
        con = duckdb.connect({str(isolated_store)!r})
        print("locked", flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        app = _runs_page()
    finally:
        holder.kill()
        holder.wait()
    (error,) = app.error
    shown = error.value.replace("\\", "")
    assert "is busy" in shown and "0.5 s" in shown and "nothing was changed" in shown, shown
    assert app.title[0].value == "Run store" and not app.dataframe


def test_runs_cancelled_before_storing_anything_are_hidden_unless_asked(isolated_store: Path) -> None:
    store = RunStore(isolated_store)
    kept = run_task(make_task(), store).run_id
    token = CancelToken()
    token.cancel()  # cancelled before its first batch: a slider stepped with auto-generate on leaves these
    empty = run_task(make_task(base=5), store, cancel=token)
    assert empty.status == "cancelled" and store.get_run(empty.run_id).n_rows == 0
    app = _runs_page()
    assert app.dataframe[0].value["run_id"].tolist() == [kept]
    app.checkbox(key="runs_show_empty").check().run()
    assert set(app.dataframe[0].value["run_id"]) == {kept, empty.run_id}


def test_the_table_leads_with_when_and_what_and_search_finds_a_configuration(isolated_store: Path,
                                                                             pipeline_runs) -> None:
    from tests.compare.pipeline_runs import copy_store

    copy_store(pipeline_runs, isolated_store)
    app = _runs_page()
    table = app.dataframe[0]
    assert list(table.proto.column_order)[:4] == ["run_id", "created", "kind", "what"]  # on screen, not off right
    assert "note" not in table.proto.column_order and len(table.proto.column_order) == 8  # fits 1280 px (issue 43)
    listing = table.value
    assert (listing["what"] != "").all()  # every kind says what it computed (adaptation NER and measures included)
    assert listing.set_index("run_id").loc[pipeline_runs.adaptation_ner, "what"] == \
        "person names found by spacy-en-core-web-sm"
    app.text_input(key="runs_search").input("metric-fairness-2022").run()
    found = app.dataframe[0].value
    assert found["run_id"].tolist() == [pipeline_runs.metric_bias["chrf-paper"]]
    assert found["what"].tolist() == ["metric chrf (config metric-fairness-2022)"]
