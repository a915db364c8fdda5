"""The run catalogue says what each run computed, and finds runs by kind, status and words."""

from __future__ import annotations

from datetime import datetime

import pytest

from fairness_core.jobs import CancelToken, Progress, run_task
from fairness_core.store import CANCELLED, CANCELLED_BY_USER, COMPLETE, RunInfo, RunStore, build_manifest
from fairness_core.store.catalog import catalogue, describe_run, filter_catalogue, search_runs, status_note
from tests.jobs.slow_task import make_task

METRIC_BIAS_REQUEST = {
    "dataset": {"name": "winobias-type1", "hash": "a1b2c3d4e5f6a7b8c9d0", "n_pairs": 396, "attributes": ["gender"]},
    "metric": {"name": "bertscore", "model": {"source": "all-minilm-l6-v2", "task": "encoder"}, "layer": 6},
    "shard_pairs": 64,
}
DECODING_REQUEST = {
    "model": {"source": "smollm2-135m-instruct", "task": "causal-lm"},
    "prompts": {"name": "bold-sample", "hash": "ffeeddccbbaa99887766", "n": 110},
    "samples": 2,
    "seed": 13,
    "configs": [{"temperature": 1.0, "top_p": 0.9}, {"temperature": 0.7, "top_k": 40}],
}


def _info(kind: str, request: dict, status: str = COMPLETE, run_id: str = "0123456789abcdef",
          error: str | None = None, created: datetime | None = None) -> RunInfo:
    return RunInfo(run_id=run_id, kind=kind, manifest=build_manifest(kind, request), manifest_hash="h" * 64,
                   status=status, n_shards=4, shards_done=4 if status == COMPLETE else 1, n_rows=10,
                   created_at=created or datetime(2026, 11, 22, 8, 0), finished_at=None, versions={}, error=error)


def test_a_metric_bias_run_says_dataset_version_metric_and_model() -> None:
    row = describe_run(_info("metric-bias", METRIC_BIAS_REQUEST))
    assert (row["dataset"], row["version"], row["size"]) == ("winobias-type1", "a1b2c3d4e5f6", "396 pairs")
    assert row["what"] == "metric bertscore" and row["model"] == "all-minilm-l6-v2"
    assert row["seed"] == "" and row["note"] == "" and row["batches"] == "4/4"


def test_a_decoding_run_says_its_grid_prompts_model_and_seed() -> None:
    row = describe_run(_info("decoding", DECODING_REQUEST))
    assert (row["dataset"], row["version"]) == ("bold-sample", "ffeeddccbbaa")
    assert row["what"] == "grid of 2: T=1.0 p=0.9; T=0.7 k=40"
    assert (row["model"], row["seed"], row["size"]) == ("smollm2-135m-instruct", "13", "110 prompts, 2 sample(s) each")


def test_an_unknown_manifest_shape_gives_empty_fields_not_an_error() -> None:
    row = describe_run(_info("future-kind", {"something": [1, 2], "model": None}))
    assert row["kind"] == "future-kind" and row["dataset"] == row["what"] == row["model"] == ""


def test_cancelled_and_failed_runs_say_so_in_words() -> None:
    cancelled = _info("decoding", DECODING_REQUEST, status=CANCELLED, error="KeyboardInterrupt()")
    assert status_note(cancelled) == "cancelled by the user (1 of 4 batches stored)"
    failed = _info("decoding", DECODING_REQUEST, status="failed", error="ValueError('bad layer')")
    assert status_note(failed).startswith("failed: ValueError('bad layer')")


@pytest.fixture()
def table():
    return catalogue([
        _info("metric-bias", METRIC_BIAS_REQUEST, run_id="aaaa000000000001", created=datetime(2026, 11, 20)),
        _info("decoding", DECODING_REQUEST, status=CANCELLED, run_id="bbbb000000000002",
              created=datetime(2026, 11, 21)),
        _info("metric-bias", {**METRIC_BIAS_REQUEST, "metric": {"name": "bleu", "config": {}}},
              run_id="cccc000000000003", created=datetime(2026, 11, 22)),
    ])


def test_filters_by_kind_status_and_words(table) -> None:
    assert filter_catalogue(table)["run_id"].tolist() == ["cccc000000000003", "bbbb000000000002", "aaaa000000000001"]
    assert filter_catalogue(table, kinds=["decoding"])["run_id"].tolist() == ["bbbb000000000002"]
    assert filter_catalogue(table, statuses=["complete"])["kind"].tolist() == ["metric-bias", "metric-bias"]
    assert filter_catalogue(table, search="WinoBias BERTScore")["run_id"].tolist() == ["aaaa000000000001"]
    assert filter_catalogue(table, search="cancelled")["run_id"].tolist() == ["bbbb000000000002"]
    assert filter_catalogue(table, search="ffeeddcc")["kind"].tolist() == ["decoding"]  # a version hash
    assert filter_catalogue(table, search="smollm2 nothing-like-this").empty
    assert filter_catalogue(table, kinds=[]).empty


def test_search_words_are_data_not_sql(table) -> None:
    assert filter_catalogue(table, search="' OR 1=1 --").empty
    assert filter_catalogue(table, search="%").empty


def test_a_cancel_through_the_token_is_recorded_in_words(store: RunStore) -> None:
    cancel = CancelToken()

    def stop_after_two(progress: Progress) -> None:
        if progress.done >= 2:
            cancel.cancel()

    outcome = run_task(make_task(), store, on_progress=stop_after_two, cancel=cancel)
    assert outcome.status == CANCELLED and outcome.run.error == CANCELLED_BY_USER
    assert search_runs(store, statuses=[CANCELLED])["note"].tolist() == [
        "cancelled by the user (2 of 12 batches stored)"]


def test_ctrl_c_is_recorded_as_a_cancel_not_an_exception_repr(store: RunStore) -> None:
    def interrupt(progress: Progress) -> None:
        if progress.done >= 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_task(make_task(), store, on_progress=interrupt)
    (run,) = store.list_runs()
    assert run.status == CANCELLED and run.error == CANCELLED_BY_USER and "KeyboardInterrupt" not in run.error
