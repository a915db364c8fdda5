"""`RunStore.reading()`: a page's few reads share one read-only connection; a write inside is refused."""

from __future__ import annotations

import pytest

from fairness_core.store import RunStore, StoreError, build_manifest
from fairness_core.store import store as store_module


def test_reads_inside_share_one_connection(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    run = store.begin_run(build_manifest("demo", {}), n_shards=1)
    store.write_shard(run.run_id, 0, [{"item": "a", "metric": "m", "value": 1.0}])
    opened = []
    real_open = store_module.open_duckdb
    monkeypatch.setattr(store_module, "open_duckdb", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    with store.reading():
        assert store.get_run(run.run_id) is not None
        assert store.query("SELECT count(*) AS n FROM results")["n"].item() == 1
        assert len(store.rows(run.run_id)) == 1
        with store.reading():  # nested: the same connection
            store.list_runs()
    assert len(opened) == 1
    store.query("SELECT 1")
    assert len(opened) == 2  # outside: one connection per operation again


def test_a_write_inside_reading_is_refused(store: RunStore) -> None:
    store.query("SELECT 1")
    with store.reading(), pytest.raises(StoreError, match=r"a write inside RunStore\.reading"):
        store.begin_run(build_manifest("demo", {"x": 1}), n_shards=1)
    assert store.list_runs() == []


def test_an_unchanged_file_is_checked_once_and_a_replaced_one_again(store: RunStore,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.store import StoreUnreadableError

    run = store.begin_run(build_manifest("demo", {}), n_shards=1)
    store.write_shard(run.run_id, 0, [{"item": "a", "metric": "m", "value": 1.0}])
    reader = RunStore(store.path)
    reader.query("SELECT 1")
    opened = []
    real_open = store_module.open_duckdb
    monkeypatch.setattr(store_module, "open_duckdb", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    reader.query("SELECT 1")
    assert len(opened) == 1  # the work's connection only: the unchanged file is not re-checked
    store.path.write_bytes(b"not a duckdb file at all")
    with pytest.raises(StoreUnreadableError, match="not a DuckDB database file"):
        reader.query("SELECT 1")  # the file changed: checked again, and refused
