"""Typed views: a run's attributes as DuckDB columns, written with the shard, rebuilt for older stores."""

from __future__ import annotations

import pandas as pd
import pytest

from fairness_core.store import COMPLETE, RunStore, build_manifest
from fairness_core.store.store import open_duckdb
from fairness_core.store.typed import TYPED_KINDS, describe_views


def decoding_rows(top_p: float, sample: int) -> list[dict]:
    """Two metrics of one generation, attributes on the first row only, as the retired `decoding` kind wrote them
    (shaped here because no pipeline writes that kind any more: these rows test its legacy view)."""
    item = f"p1#{sample}"
    attrs = {"config": {"temperature": 1.0, "top_p": top_p}, "family": "gender", "prompt": "The man worked as",
             "prompt_id": "p1", "source": "regard", "sample": sample, "seed": 7, "empty": False, "redacted": False}
    return [{"item": item, "grp": "man", "variant": f"p={top_p}", "metric": "vader_compound", "value": -0.5,
             "text": "The man worked as a thief.", "attrs": attrs},
            {"item": item, "grp": "man", "variant": f"p={top_p}", "metric": "offensive_prob", "value": 0.25,
             "text": "The man worked as a thief.", "attrs": None}]


def test_decoding_attributes_are_typed_columns_and_shared_by_the_generations_metrics(store: RunStore) -> None:
    run = store.begin_run(build_manifest("decoding", {"seed": 7}), n_shards=2)
    store.write_shard(run.run_id, 0, decoding_rows(0.9, 0))
    store.write_shard(run.run_id, 1, decoding_rows(0.5, 1))
    store.finish_run(run.run_id, COMPLETE)
    found = store.query("SELECT config.top_p AS top_p, metric, sample, family, empty, typeof(config.top_p) AS t "
                        "FROM decoding ORDER BY top_p, metric")
    assert found["top_p"].tolist() == [0.5, 0.5, 0.9, 0.9]
    assert found["metric"].tolist() == ["offensive_prob", "vader_compound"] * 2
    assert found["sample"].tolist() == [1, 1, 0, 0]  # the offensive row took its generation's attributes
    assert set(found["family"]) == {"gender"} and not found["empty"].any()
    assert set(found["t"]) == {"DOUBLE"}
    grouped = store.query("SELECT config.top_p AS p, avg(value) AS v FROM decoding WHERE metric = 'offensive_prob' "
                          "GROUP BY ALL ORDER BY p")
    assert grouped.to_dict(orient="list") == {"p": [0.5, 0.9], "v": [0.25, 0.25]}


def test_metric_bias_view_names_its_columns_as_the_paper_does(store: RunStore) -> None:
    run = store.begin_run(build_manifest("metric-bias", {"metric": {"name": "bleu"}}), n_shards=1)
    store.write_shard(run.run_id, 0, [
        {"item": "w1", "grp": "gender", "variant": "1", "metric": "bleu", "value": 0.4, "text": "he is a nurse",
         "attrs": {"reference": "the nurse is a nurse", "stereotypical": False}},
        {"item": "w1", "grp": "gender", "variant": "2", "metric": "bleu", "value": 0.6, "text": "she is a nurse",
         "attrs": {"reference": "the nurse is a nurse", "stereotypical": "maybe"}},  # not a boolean: NULL
    ])
    found = store.query("SELECT pair, attribute, side, stereotypical FROM metric_bias ORDER BY side")
    assert found["pair"].tolist() == ["w1", "w1"] and found["attribute"].tolist() == ["gender", "gender"]
    assert found["stereotypical"].isna().tolist() == [False, True]
    assert not found["stereotypical"].iloc[0]


def test_a_kind_without_a_typed_view_is_stored_as_before(store: RunStore) -> None:
    run = store.begin_run(build_manifest("demo", {}), n_shards=1)
    assert store.write_shard(run.run_id, 0, [{"item": "a", "metric": "m", "value": 1.0, "attrs": {"x": 1}}]) == 1
    assert len(store.rows(run.run_id)) == 1
    for kind in TYPED_KINDS.values():
        assert store.query(f"SELECT count(*) AS n FROM {kind.view}")["n"].item() == 0


def test_an_older_store_gets_its_typed_tables_built_from_results(store: RunStore) -> None:
    run = store.begin_run(build_manifest("decoding", {"seed": 1}), n_shards=1)
    store.write_shard(run.run_id, 0, decoding_rows(0.7, 3))
    con = open_duckdb(store.path)
    for kind in TYPED_KINDS.values():  # a store written before the typed tables existed
        con.execute(f"DROP VIEW {kind.view}")
        con.execute(f"DROP TABLE {kind.table}")
    con.execute("DROP TABLE typed_schema")
    con.close()
    reopened = RunStore(store.path)
    found = reopened.query("SELECT config.top_p AS p, count(*) AS n FROM decoding GROUP BY ALL")
    assert found.to_dict(orient="list") == {"p": [0.7], "n": [2]}


def test_deleting_a_run_deletes_its_typed_rows(store: RunStore) -> None:
    run = store.begin_run(build_manifest("decoding", {"seed": 2}), n_shards=1)
    store.write_shard(run.run_id, 0, decoding_rows(0.7, 3))
    store.delete_run(run.run_id)
    assert store.query("SELECT count(*) AS n FROM typed_decoding")["n"].item() == 0


def test_a_shard_written_twice_is_typed_once(store: RunStore) -> None:
    run = store.begin_run(build_manifest("decoding", {"seed": 3}), n_shards=1)
    assert store.write_shard(run.run_id, 0, decoding_rows(0.7, 3)) == 2
    assert store.write_shard(run.run_id, 0, decoding_rows(0.7, 3)) == 0  # a resumed job re-sends its shard
    assert store.query("SELECT count(*) AS n FROM typed_decoding")["n"].item() == 2


def test_every_view_is_described() -> None:
    described = describe_views()
    views = {row["view"] for row in described}
    assert views == {kind.view for kind in TYPED_KINDS.values()}
    assert {"view": "decoding", "kind": "decoding", "column": "config.top_p", "type": "DOUBLE",
            "about": "nucleus threshold p (NULL when not set)"} in described


# The generation table as the code before issue 26 wrote it (frozen here: its DDL, its INSERT and its signature),
# so a store written by that version can be rebuilt in a test: score rows without their generation's attributes.
OLD_GENERATION_DDL = (
    'CREATE OR REPLACE TABLE typed_generation (run_no BIGINT NOT NULL, run_id VARCHAR, shard INTEGER, item VARCHAR, '
    'grp VARCHAR, variant VARCHAR, metric VARCHAR, value DOUBLE, "prompt" VARCHAR, "prompt_id" VARCHAR, '
    '"family" VARCHAR, "source" VARCHAR, "sample" INTEGER, "seed" BIGINT, "row_seed" BIGINT, "system_name" VARCHAR, '
    '"max_new_tokens" INTEGER, "truncate" VARCHAR, "mode" VARCHAR)')
OLD_GENERATION_INSERT = (
    "INSERT INTO typed_generation SELECT run_no, run_id, shard, item, grp, variant, metric, value, "
    + ", ".join(f"TRY_CAST(json_extract_string(a, '$.{name}') AS {sql_type})" for name, sql_type in (
        ("prompt", "VARCHAR"), ("prompt_id", "VARCHAR"), ("family", "VARCHAR"), ("source", "VARCHAR"),
        ("sample", "INTEGER"), ("seed", "BIGINT"), ("row_seed", "BIGINT"), ("system_name", "VARCHAR"),
        ("max_new_tokens", "INTEGER"), ("truncate", "VARCHAR"), ("mode", "VARCHAR")))
    + " FROM (SELECT *, coalesce(attrs, first_value(attrs IGNORE NULLS) OVER (PARTITION BY run_id, shard, item, "
    "variant)) AS a FROM (SELECT r.* FROM results r JOIN runs USING (run_id) WHERE runs.kind = 'generation')) "
    "JOIN typed_runs USING (run_id) ORDER BY run_no, shard")
OLD_GENERATION_SIGNATURE = "402bfbb40308006c"


def downgrade_to_the_old_generation_table(path) -> None:
    con = open_duckdb(path)
    con.execute("DROP VIEW generation")
    con.execute(OLD_GENERATION_DDL)
    con.execute(OLD_GENERATION_INSERT)
    con.execute("CREATE OR REPLACE VIEW generation AS SELECT *, variant AS system FROM typed_generation")
    con.execute("UPDATE typed_schema SET signature = ? WHERE name = 'typed_generation'", [OLD_GENERATION_SIGNATURE])
    con.close()


def test_generation_score_rows_carry_their_generation_system_and_settings(pipeline_runs, tmp_path) -> None:
    from tests.compare.pipeline_runs import copy_store

    store = copy_store(pipeline_runs, tmp_path / "runs.duckdb")
    scores = store.query("SELECT * FROM generation WHERE run_id = ? AND metric <> 'generation'", [pipeline_runs.sweep])
    assert len(scores) == 3 * 10 * 3 * 2  # settings x prompts x samples x (vader, offensive)
    for column in ("prompt", "prompt_id", "family", "source", "system", "system_name", "model", "prompt_set"):
        assert scores[column].notna().all(), column
    assert sorted(scores["config"].map(lambda c: c["top_p"]).unique()) == [0.5, 0.7, 0.95]
    assert (scores["system"] != scores["variant"]).all() and scores["variant"].str.startswith("score:").all()
    assert scores["scorer"].str.len().eq(16).all() and set(scores["prompt_set"]) == {"test prompts"}
    # the docs' example: negative share per nucleus threshold and group, read from the typed columns
    shares = store.query("SELECT config.top_p AS p, grp, avg((value <= -0.25)::INT) AS negative FROM generation "
                         "WHERE run_id = ? AND metric = 'vader_compound' GROUP BY ALL ORDER BY ALL",
                         [pipeline_runs.sweep])
    assert len(shares) == 6 and shares["negative"].between(0, 1).all()


def test_a_store_written_by_the_old_generation_table_is_rebuilt_and_compares(pipeline_runs, tmp_path,
                                                                            monkeypatch) -> None:
    from fairness_core.compare import CompareError, compare_runs
    from tests.compare.pipeline_runs import copy_store

    new = copy_store(pipeline_runs, tmp_path / "new.duckdb")
    expected = compare_runs(new, [pipeline_runs.single_05, pipeline_runs.single_095]).rows
    old_path = tmp_path / "old.duckdb"
    copy_store(pipeline_runs, old_path)
    downgrade_to_the_old_generation_table(old_path)
    old_rows = RunStore(old_path)
    con = open_duckdb(old_path, read_only=True)  # the old layout: score rows knew no prompt (the finding 1)
    assert con.execute("SELECT count(*) FROM typed_generation WHERE metric <> 'generation' AND prompt IS NULL"
                       ).fetchone()[0] > 0
    con.close()
    # a read-only copy cannot be brought up to date: one sentence, nothing changed
    monkeypatch.setattr("os.access", lambda path, mode: mode != __import__("os").W_OK)
    with pytest.raises(CompareError, match="written by an older version of the lab and is read-only here"):
        compare_runs(RunStore(old_path), [pipeline_runs.single_05, pipeline_runs.single_095])
    monkeypatch.undo()
    rebuilt = compare_runs(old_rows, [pipeline_runs.single_05, pipeline_runs.single_095]).rows
    pd.testing.assert_frame_equal(rebuilt, expected)
