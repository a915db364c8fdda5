"""`runs list` describes each run and filters by kind, status and words, like the Run store page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.jobs import CancelToken, Progress, run_task
from fairness_core.store import RunStore
from tests.jobs.slow_task import make_task


@pytest.fixture()
def two_runs(tmp_path: Path) -> tuple[Path, str, str]:
    path = tmp_path / "runs.duckdb"
    store = RunStore(path)
    complete = run_task(make_task(base=1), store).run_id
    cancel = CancelToken()

    def stop(progress: Progress) -> None:
        if progress.done >= 3:
            cancel.cancel()

    cancelled = run_task(make_task(base=2), store, on_progress=stop, cancel=cancel).run_id
    return path, complete, cancelled


def _listed(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict]:
    assert main(["runs", "list", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_runs_list_filters_by_status_and_search(two_runs, capsys: pytest.CaptureFixture[str]) -> None:
    path, complete, cancelled = two_runs
    store = ["--store", str(path)]
    assert {row["run_id"] for row in _listed(capsys, *store)} == {complete, cancelled}
    (row,) = _listed(capsys, *store, "--status", "cancelled")
    assert row["run_id"] == cancelled and row["note"] == "cancelled by the user (3 of 12 batches stored)"
    assert [r["run_id"] for r in _listed(capsys, *store, "--search", complete[:8])] == [complete]
    assert _listed(capsys, *store, "--kind", "metric-bias") == []


def test_runs_list_text_says_what_each_run_is(two_runs, capsys: pytest.CaptureFixture[str]) -> None:
    path, _, cancelled = two_runs
    assert main(["runs", "list", "--store", str(path), "--status", "cancelled"]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    assert line.startswith(cancelled) and "test-squares" in line and "[cancelled by the user" in line
    assert main(["runs", "list", "--store", str(path), "--search", "no-such-word"]) == 0
    assert capsys.readouterr().out.strip() == "no runs match these filters"
