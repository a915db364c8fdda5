"""`compare`: stored runs side by side as JSON (estimates, differences, paired intervals, per-example rows)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.store import RunStore
from tests.compare.stored_runs import write_decoding_run


def test_compare_json_gives_aligned_rows_with_paired_intervals(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore(tmp_path / "runs.duckdb")
    a = write_decoding_run(store, "model-a", seed=1)
    b = write_decoding_run(store, "model-b", shift=0.1, seed=1)
    assert main(["compare", a, b, "--store", str(store.path), "--json", "--metric", "vader_compound",
                 "--examples", "3", "--filter", "grp=man"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [run["run_id"] for run in payload["runs"]] == [a, b]
    assert len(payload["rows"]) == 4  # 2 groups × 2 settings
    for row in payload["rows"]:
        assert row["paired"] is True and row["unit"] == "prompt"
        assert row["ci_low"] <= row["difference"] <= row["ci_high"]
        assert math.isclose(row["difference"], row["run_b"] - row["run_a"], rel_tol=1e-12)
        assert {"metric", "group", "setting", "run_a", "run_b"} <= set(row)
    assert len(payload["examples"]) == 3 and {e["grp"] for e in payload["examples"]} == {"man"}


def test_compare_refuses_an_unknown_run_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore(tmp_path / "runs.duckdb")
    a = write_decoding_run(store, "model-a", seed=1)
    assert main(["compare", a, "nope", "--store", str(store.path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"error: no run 'nope' in {store.path}\n"
    assert main(["compare", a, a, "--store", str(store.path), "--by", "colour"]) == 2
    assert "no field 'colour'" in capsys.readouterr().err


def test_report_writes_one_self_contained_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore(tmp_path / "runs.duckdb")
    a = write_decoding_run(store, "model-a", seed=1)
    out = tmp_path / "report.html"
    assert main(["report", a, "--store", str(store.path), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<script src" not in text and "<link" not in text  # nothing fetched: plotly.js is inside
    assert "plotly.js v" in text and "Plotly.newPlot" in text
    assert "default-src 'none'" in text  # and the page forbids itself any network request
    assert '"kind": "decoding"' in text and "Deviations from the paper" in text and "Data licence" in text
    assert "regard: written by the lab" in text  # the prompt set's licence
    assert "95% intervals" in text


def test_report_refuses_bad_input_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore(tmp_path / "runs.duckdb")
    a = write_decoding_run(store, "model-a", seed=1)
    assert main(["report", a, "nope", "--store", str(store.path), "--out", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err == f"error: no run 'nope' in {store.path}; nothing was written\n"
    assert main(["report", a, "--store", str(store.path), "--out", str(tmp_path / "r.pdf")]) == 2
    assert "ending in .html" in capsys.readouterr().err
    assert main(["report", a, "--store", str(store.path), "--out", str(tmp_path / "missing" / "r.html")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.duckdb"]
