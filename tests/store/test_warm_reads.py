"""Warm reads: the app's reads share one process-wide connection that is given back before a write here and when
idle, so a CLI writer in another process gets in; results are those of a fresh connection."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from fairness_core.store import RunStore, build_manifest, close_warm_reads, warm_reads_open
from fairness_core.store import store as store_module
from fairness_core.store.catalog import store_catalogue

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def written(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "runs.duckdb")
    run = store.begin_run(build_manifest("demo", {"n": 1}), n_shards=1)
    store.write_shard(run.run_id, 0, [{"item": f"i{k}", "grp": "g", "metric": "m", "value": k / 3} for k in range(5)])
    yield store
    close_warm_reads(store.path)


def test_warm_reads_share_one_connection_and_agree_with_fresh_ones(written: RunStore,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cold = written.query("SELECT item, value FROM results ORDER BY item")
    cold_runs = [info.run_id for info in written.list_runs()]
    opened = []
    real_open = store_module.open_duckdb
    monkeypatch.setattr(store_module, "open_duckdb", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    warm = RunStore(written.path, warm=True)
    first = warm.query("SELECT item, value FROM results ORDER BY item")
    again = warm.query("SELECT item, value FROM results ORDER BY item")
    runs = warm.list_runs()
    assert warm_reads_open(written.path)
    pd.testing.assert_frame_equal(first, cold)
    pd.testing.assert_frame_equal(again, cold)
    assert [info.run_id for info in runs] == cold_runs
    assert len(opened) == 2  # the store's check, then the warm connection: three reads, one connection


def test_a_write_in_the_same_process_after_warm_reads_works_and_is_seen(written: RunStore) -> None:
    warm = RunStore(written.path, warm=True)
    assert warm.query("SELECT count(*) AS n FROM results")["n"].item() == 5
    assert warm_reads_open(written.path)
    run = written.begin_run(build_manifest("demo", {"n": 2}), n_shards=1)  # closes the warm connection first
    written.write_shard(run.run_id, 0, [{"item": "x", "metric": "m", "value": 1.0}])
    assert warm.query("SELECT count(*) AS n FROM results")["n"].item() == 6


def test_a_writer_in_another_process_gets_in_once_the_warm_connection_is_given_back(written: RunStore) -> None:
    warm = RunStore(written.path, warm=True)
    assert warm.query("SELECT count(*) AS n FROM results")["n"].item() == 5
    assert warm_reads_open(written.path)
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from fairness_core.store import RunStore, build_manifest
        store = RunStore({str(written.path)!r}, lock_timeout_s=60)
        run = store.begin_run(build_manifest("demo", {{"n": 3}}), n_shards=1)
        store.write_shard(run.run_id, 0, [{{"item": "y", "metric": "m", "value": 2.0}}])
        print("written", flush=True)
    """)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    close_warm_reads(written.path)  # what the idle timer does after WARM_IDLE_S without a read
    out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0 and out.strip() == "written", err
    assert warm.query("SELECT count(*) AS n FROM results")["n"].item() == 6  # reopened: sees the other write


def test_the_idle_timer_gives_the_connection_back(written: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "WARM_IDLE_S", 0.05)
    warm = RunStore(written.path, warm=True)
    warm.query("SELECT 1")
    reader = store_module._warm_readers[store_module._warm_key(written.path)]
    assert reader.timer is not None
    reader.timer.join(timeout=30)  # the timer thread runs once WARM_IDLE_S passed without a read
    assert not warm_reads_open(written.path)


def test_the_sql_catalogue_equals_the_described_run_list(written: RunStore) -> None:
    from fairness_core.store import CANCELLED, catalogue

    other = written.begin_run(build_manifest("decoding", {"model": {"source": "m"}, "seed": 4, "samples": 2,
                                                          "prompts": {"name": "p", "hash": "abc", "n": 3},
                                                          "configs": [{"top_p": 0.9, "temperature": 1.0}]}), 3)
    written.write_shard(other.run_id, 1, [{"item": "a", "metric": "m", "value": 0.5}])
    written.finish_run(other.run_id, CANCELLED, "cancelled by the user")
    written.begin_run(build_manifest("metric-bias", {"dataset": {"name": "w", "hash": "h", "n_pairs": 4}}), 2)
    expected = catalogue(written.list_runs())
    for store in (written, RunStore(written.path, warm=True)):
        pd.testing.assert_frame_equal(store_catalogue(store), expected)
    assert set(expected["status"]) == {"cancelled", "running"}  # the demo run was never finished; this process owns it
