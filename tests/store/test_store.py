"""The DuckDB run store: round trip, cache look-up by manifest, export, concurrent access."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from fairness_core.store import COMPLETE, RunStore, build_manifest, canonical_json, manifest_hash, signature


def test_manifest_hash_ignores_key_order_and_float_noise() -> None:
    a = build_manifest("demo", {"b": 0.1 + 0.2, "a": [1, 2], "model": {"dtype": "fp32"}})
    b = build_manifest("demo", {"model": {"dtype": "fp32"}, "a": [1, 2], "b": 0.3})
    assert canonical_json(a) == canonical_json(b)
    assert manifest_hash(a) == manifest_hash(b)
    assert manifest_hash(a) != manifest_hash(build_manifest("demo", {"b": 0.31, "a": [1, 2]}))
    assert signature(a).startswith("kind:demo|hash:")


def test_manifest_rejects_values_that_cannot_be_reproduced() -> None:
    with pytest.raises(ValueError, match="finite"):
        build_manifest("demo", {"x": float("nan")})
    with pytest.raises(TypeError, match="JSON-like"):
        build_manifest("demo", {"x": object()})


def test_round_trip_of_rows_and_manifest(store: RunStore) -> None:
    manifest = build_manifest("demo", {"dataset": "abc", "seed": 1})
    run = store.begin_run(manifest, n_shards=2)
    store.write_shard(run.run_id, 0, [{"item": "p1", "grp": "gender", "variant": "1", "metric": "bleu",
                                       "value": 0.5, "text": "she is a nurse", "attrs": {"ref": "a nurse"}}])
    store.write_shard(run.run_id, 1, pd.DataFrame({"item": ["p2"], "metric": ["bleu"], "value": [0.25]}))
    store.finish_run(run.run_id, COMPLETE)

    found = store.find_complete(build_manifest("demo", {"seed": 1, "dataset": "abc"}))
    assert found is not None and found.run_id == run.run_id and found.n_rows == 2
    assert found.manifest == manifest and "duckdb" in found.versions
    rows = store.rows(run.run_id)
    assert rows["item"].tolist() == ["p1", "p2"]
    assert rows["attrs"].tolist() == [{"ref": "a nurse"}, {}]
    by_sql = store.query("SELECT metric, avg(value) AS mean FROM results WHERE run_id = ? GROUP BY metric",
                         [run.run_id])
    assert by_sql["mean"].tolist() == [0.375]


def test_rewriting_a_finished_shard_adds_nothing(store: RunStore) -> None:
    run = store.begin_run(build_manifest("demo", {}), n_shards=1)
    assert store.write_shard(run.run_id, 0, [{"item": "a", "value": 1.0}]) == 1
    assert store.write_shard(run.run_id, 0, [{"item": "a", "value": 1.0}]) == 0
    assert len(store.rows(run.run_id)) == 1


def test_bad_rows_are_rejected_and_nothing_is_written(store: RunStore) -> None:
    run = store.begin_run(build_manifest("demo", {}), n_shards=1)
    with pytest.raises(ValueError, match="unknown fields"):
        store.write_shard(run.run_id, 0, [{"item": "a", "value": 1.0, "colour": "red"}])
    with pytest.raises(ValueError):
        store.write_shard(run.run_id, 0, [{"item": "a", "value": "not a number"}])
    assert store.completed_shards(run.run_id) == set() and store.rows(run.run_id).empty


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_export_carries_rows_and_manifest(store: RunStore, tmp_path: Path, fmt: str) -> None:
    manifest = build_manifest("demo", {"seed": 3})
    run = store.begin_run(manifest, n_shards=1)
    store.write_shard(run.run_id, 0, [{"item": "x", "metric": "m", "value": 2.0, "attrs": {"k": 1}}])
    store.finish_run(run.run_id, COMPLETE)
    out = store.export(run.run_id, tmp_path / f"run.{fmt}")
    if fmt == "json":
        document = json.loads(out.read_text())
        assert document["manifest"] == manifest and document["rows"][0]["value"] == 2.0
        return
    frame = pd.read_csv(out) if fmt == "csv" else pd.read_parquet(out)
    assert frame["value"].tolist() == [2.0] and json.loads(frame["attrs"][0]) == {"k": 1}
    sidecar = json.loads((tmp_path / f"run.{fmt}.manifest.json").read_text())
    assert sidecar["manifest_hash"] == manifest_hash(manifest)


def test_a_reader_waits_for_another_process_holding_the_write_lock(tmp_path: Path) -> None:
    """DuckDB locks the file per process; the store retries instead of crashing."""
    path = tmp_path / "locked.duckdb"
    store = RunStore(path, lock_timeout_s=20)
    store.list_runs()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import duckdb, sys, time
        con = duckdb.connect({str(path)!r})
        print("locked", flush=True)
        time.sleep(1.5)
        con.close()
    """)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    assert store.list_runs() == []  # blocks ~1.5 s, then succeeds
    holder.wait(timeout=10)


def test_a_lock_held_too_long_gives_a_clear_message(tmp_path: Path) -> None:
    from fairness_core.store import StoreBusyError

    path = tmp_path / "busy.duckdb"
    RunStore(path).list_runs()
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb,time; c=duckdb.connect({str(path)!r}); "
                               "print('locked', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreBusyError, match=r"busy\.duckdb"):
            RunStore(path, lock_timeout_s=0.5).list_runs()
    finally:
        holder.kill()
