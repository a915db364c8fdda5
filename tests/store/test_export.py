"""Exports are all-or-nothing: a write that fails half-way leaves no file behind."""

from __future__ import annotations

import errno
from pathlib import Path

import pandas as pd
import pytest

from fairness_core.jobs import run_task
from fairness_core.store import RunStore
from fairness_core.store.export import ExportError, export_run
from tests.jobs.slow_task import make_task


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_full_disk_leaves_no_partial_export(store: RunStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              fmt: str) -> None:
    run_id = run_task(make_task(), store).run_id
    folder = tmp_path / "out"
    folder.mkdir()

    def disk_full(self: pd.DataFrame, path: Path, **_: object) -> None:
        Path(path).write_text("half a file")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, f"to_{fmt}", disk_full)
    with pytest.raises(ExportError, match="No space left on device; nothing was written"):
        export_run(store, run_id, folder / f"run.{fmt}")
    assert list(folder.iterdir()) == []


def test_a_sidecar_name_taken_by_a_folder_is_refused_before_anything_is_written(store: RunStore,
                                                                                 tmp_path: Path) -> None:
    run_id = run_task(make_task(), store).run_id
    (tmp_path / "run.csv.manifest.json").mkdir()  # the sidecar's name is taken by a folder
    with pytest.raises(ExportError, match="it is a folder"):
        export_run(store, run_id, tmp_path / "run.csv")
    assert not (tmp_path / "run.csv").exists()
