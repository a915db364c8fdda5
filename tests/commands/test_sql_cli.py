"""`sql`: one read-only SELECT over the store's views; everything else refused with one sentence and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.compare.sql import _open
from fairness_core.store import RunStore
from tests.compare.pipeline_runs import SAMPLES, PipelineRuns, copy_store


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory, pipeline_runs: PipelineRuns) -> RunStore:
    """One store the pipelines wrote, for the module: every test only reads it (and checks nothing was written)."""
    tmp_path: Path = tmp_path_factory.mktemp("console")
    store = copy_store(pipeline_runs, tmp_path / "runs.duckdb")
    (tmp_path / "secret.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    return store


def stored_rows(store: RunStore) -> int:
    """The rows the pipelines wrote (the shards' counts): a refused statement changes none of them."""
    return int(store.query("SELECT sum(n_rows) AS n FROM shards")["n"].item())


def test_sql_json_gives_columns_and_rows(stored: RunStore, pipeline_runs: PipelineRuns,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # a decoding sweep's score rows carry their setting: negative share per top_p and group, as docs/store.md shows
    assert main(["sql", f"SELECT config.top_p AS p, grp, count(*) AS n FROM generation WHERE run_id = "
                 f"'{pipeline_runs.sweep}' AND metric = 'vader_compound' GROUP BY ALL ORDER BY ALL", "--store",
                 str(stored.path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["columns"] == ["p", "grp", "n"]
    per_group = 5 * SAMPLES  # 2 templates + 3 prompts of its own per group, 3 samples each
    assert payload["rows"] == [[p, g, per_group] for p in (0.5, 0.7, 0.95) for g in ("man", "woman")]
    assert payload["truncated"] is False


def test_sql_row_limit_cuts_and_says_so(stored: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "SELECT item FROM results", "--limit", "5", "--store", str(stored.path), "--json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert len(payload["rows"]) == 5 and payload["truncated"] is True
    assert captured.err == "only the first 5 rows are shown (--limit)\n"


def test_sql_nan_is_null(stored: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "SELECT 'nan'::DOUBLE AS x, 'inf'::DOUBLE AS y", "--store", str(stored.path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == [[None, None]]



def test_a_quoted_run_id_that_names_no_run_gets_a_note(stored: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35 §6: `run_id = 'RUN'` (docs/store.md's old placeholder) answered an empty result and nothing else."""
    assert main(["sql", "SELECT count(*) AS n FROM results WHERE run_id IN ('RUN', 'x''y')", "--store",
                 str(stored.path), "--json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["rows"] == [[0]]
    (note,) = payload["notes"]
    assert note.startswith("'RUN', \"x'y\" match no run id in this store, so no row has them (run ids look like '")
    assert captured.err == f"note: {note}\n"

REFUSED = [
    ("INSERT INTO runs SELECT * FROM runs", "INSERT statements are refused"),
    ("DELETE FROM results", "DELETE statements are refused"),
    ("UPDATE runs SET status = 'x'", "UPDATE statements are refused"),
    ("CREATE TABLE x AS SELECT 1", "CREATE statements are refused"),
    ("DROP TABLE results", "DROP statements are refused"),
    ("ATTACH '{dir}/other.duckdb' AS other", "ATTACH statements are refused"),
    ("COPY results TO '{dir}/out.csv'", "COPY statements are refused"),
    ("INSTALL httpfs", "INSTALL statements are refused"),
    ("LOAD httpfs", "LOAD statements are refused"),
    ("SET enable_external_access = true", "SET statements are refused"),
    ("PRAGMA database_list", "PRAGMA statements are refused"),
    ("EXPORT DATABASE '{dir}/dump'", "EXPORT statements are refused"),
    ("SELECT * FROM read_csv('{dir}/secret.csv')", "table function read_csv() is refused"),
    ("SELECT * FROM read_csv_auto('{dir}/secret.csv')", "table function read_csv_auto() is refused"),
    ("SELECT * FROM read_parquet('{dir}/x.parquet')", "table function read_parquet() is refused"),
    ("SELECT * FROM read_json('{dir}/x.json')", "table function read_json() is refused"),
    ("SELECT * FROM read_text('{dir}/secret.csv')", "table function read_text() is refused"),
    ("SELECT * FROM read_blob('{dir}/secret.csv')", "table function read_blob() is refused"),
    ("SELECT * FROM glob('{dir}/*')", "table function glob() is refused"),
    ("SELECT * FROM '{dir}/secret.csv'", "is not one of the console's views"),
    ("SELECT * FROM results WHERE text IN (SELECT content FROM read_text('{dir}/secret.csv'))",
     "table function read_text() is refused"),
    ("SELECT * FROM information_schema.tables", "information_schema.tables is refused"),
    ("SELECT * FROM duckdb_settings()", "table function duckdb_settings() is refused"),
    ("SELECT * FROM typed_decoding", "'typed_decoding' is not one of the console's views"),
    ("SELECT 1; SELECT 2", "one statement at a time; this text has 2"),
    ("SELEC 1", "the query does not parse"),
    ("SELECT no_such_column FROM results", "the query failed: Binder Error"),
]


@pytest.mark.parametrize(("query", "phrase"), REFUSED, ids=[q for q, _ in REFUSED])
def test_sql_refuses_with_one_sentence_and_exit_2(stored: RunStore, capsys: pytest.CaptureFixture[str],
                                                  query: str, phrase: str) -> None:
    before = sorted(p.name for p in stored.path.parent.iterdir())
    assert main(["sql", query.format(dir=stored.path.parent), "--store", str(stored.path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("error: ") and phrase in line, line
    assert sorted(p.name for p in stored.path.parent.iterdir()) == before  # nothing written beside the store
    assert RunStore(stored.path).query("SELECT count(*) AS n FROM results")["n"].item() == stored_rows(stored)


def test_a_long_query_is_interrupted_by_the_timeout(stored: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "SELECT sum(i) FROM range(100000000000) t(i)", "--timeout", "0.5",
                 "--store", str(stored.path)]) == 2
    assert capsys.readouterr().err == ("error: the query ran longer than 0.5 s and was stopped; narrow it (a WHERE "
                                       "on run_id, fewer joins)\n")


def test_the_connection_itself_cannot_read_files_or_load_extensions(stored: RunStore) -> None:
    """The last wall, without the statement check: the console's connection has external access off."""
    import duckdb

    con = _open(stored)
    try:
        with pytest.raises(duckdb.Error, match=r"disabled|Permission"):
            con.execute(f"SELECT * FROM read_csv('{stored.path.parent}/secret.csv')").fetchall()
        with pytest.raises(duckdb.Error):
            con.execute("SET enable_external_access = true")
        with pytest.raises(duckdb.Error):
            con.execute("INSTALL httpfs")
        with pytest.raises(duckdb.Error):
            con.execute("CREATE TABLE x AS SELECT 1")  # read-only
    finally:
        con.close()
