"""The SQL console page through AppTest: a query's table, quick chart and downloads; a refusal is one sentence."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.compare.pipeline_runs import PipelineRuns, copy_store
from tests.markdown_text import shown

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "app_pages/sql_console.py"


def _console(isolated_store: Path, pipeline_runs: PipelineRuns) -> AppTest:
    copy_store(pipeline_runs, isolated_store)
    app = AppTest.from_file(APP, default_timeout=60).run()
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def test_a_query_over_a_typed_view_gives_a_table_a_chart_and_downloads(isolated_store: Path,
                                                                        pipeline_runs: PipelineRuns) -> None:
    app = _console(isolated_store, pipeline_runs)
    app.text_area(key="sql_query").input(
        "SELECT config.top_p AS top_p, grp, avg(value) AS mean FROM generation WHERE metric = 'vader_compound' "
        f"AND run_id = '{pipeline_runs.sweep}' AND config.top_p > 0.5 GROUP BY ALL ORDER BY ALL")
    app.button[0].click().run()  # the form's submit button
    assert not app.exception, app.exception
    table = app.dataframe[-1].value
    assert table.columns.tolist() == ["top_p", "grp", "mean"] and len(table) == 4
    assert [b.proto.label for b in app.get("download_button")] == ["CSV", "Parquet"]
    assert len(app.get("plotly_chart")) == 1
    assert any(shown(c.value).startswith("4 row(s) in") for c in app.main.caption)


def test_a_refused_query_is_one_sentence(isolated_store: Path, pipeline_runs: PipelineRuns) -> None:
    app = _console(isolated_store, pipeline_runs)
    target = isolated_store.parent / "out.csv"
    app.text_area(key="sql_query").input(f"COPY results TO '{target}'")
    app.button[0].click().run()
    assert app.error[0].value == "the console is read\\-only: COPY statements are refused, only SELECT runs"
    assert not target.exists() and len(app.error) == 1


def test_a_quoted_run_id_that_names_no_run_is_said_beside_the_empty_result(isolated_store: Path,
                                                                           pipeline_runs: PipelineRuns) -> None:
    """Issue 35 §6: docs/store.md's example with its `'RUN'` placeholder answered "0 row(s)" and nothing else."""
    app = _console(isolated_store, pipeline_runs)
    app.text_area(key="sql_query").input("SELECT grp, avg(value) FROM generation WHERE run_id = 'RUN' GROUP BY ALL")
    app.button[0].click().run()
    assert not app.exception, app.exception
    assert any(shown(c.value).startswith("0 row(s) in") for c in app.main.caption)
    (note,) = app.info
    assert shown(note.value).startswith("'RUN' matches no run id in this store, so no row has it (run ids look like '")
    assert shown(note.value).endswith("; the Run store page lists them).")
