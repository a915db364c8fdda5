"""`compare` and `report` on runs the pipelines wrote: the JSON shape (disparity rows first, unit counts per side),
the text lines, a report for every page's runs; bad input is one sentence and exit 2."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from fairness_core.cli import main
from tests.compare.pipeline_runs import PipelineRuns, copy_store


@pytest.fixture()
def runs(pipeline_runs: PipelineRuns, tmp_path: Path) -> tuple[PipelineRuns, str]:
    return pipeline_runs, str(copy_store(pipeline_runs, tmp_path / "runs.duckdb").path)


def test_compare_json_keeps_its_shape_and_leads_with_the_disparity(runs, capsys: pytest.CaptureFixture[str]) -> None:
    pipeline, store = runs
    assert main(["compare", pipeline.single_05, pipeline.single_095, "--store", store, "--json", "--examples", "3",
                 "--filter", "group=man"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [run["run_id"] for run in payload["runs"]] == [pipeline.single_05, pipeline.single_095]
    disparity = payload["rows"][0]
    assert disparity["metric"] == "negative_sentiment_disparity" and "disparity" in disparity["metric"]
    assert {"run_a", "run_b", "difference", "ci_low", "ci_high", "paired", "unit", "n_units_a",
            "n_units_b"} <= set(disparity)
    assert disparity["paired"] is True and disparity["unit"] == "prompt"
    assert disparity["n_units_a"] == disparity["n_units_b"] == 8
    for row in payload["rows"]:
        assert row["ci_low"] <= row["difference"] <= row["ci_high"]
        assert math.isclose(row["difference_plug_in"], row["run_b"] - row["run_a"], abs_tol=1e-12)
        if row["metric"].endswith("_disparity"):  # compared on the bias-corrected disparities (issue 33)
            assert math.isclose(row["difference"], row["run_b_corrected"] - row["run_a_corrected"], abs_tol=1e-12)
            assert 0 < row["run_a_p_value"] <= 1 and 0 < row["run_b_p_value"] <= 1
        else:
            assert math.isclose(row["difference"], row["run_b"] - row["run_a"], abs_tol=1e-12)
    assert payload["contrasts"][0]["differs"] == "top_p 0.5 → 0.95"
    assert len(payload["examples"]) == 3 and {e["group"] for e in payload["examples"]} == {"man"}


def test_one_sweep_compares_its_settings_from_the_command_line(runs, capsys: pytest.CaptureFixture[str]) -> None:
    pipeline, store = runs
    assert main(["compare", pipeline.sweep, "--store", store, "--metric", "negative_sentiment_disparity"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(f"top_p=0.7 (run {pipeline.sweep}) against {pipeline.gpt2.name} · top_p=0.5 (run "
                             f"{pipeline.sweep}): top_p 0.5 → 0.7; both: prompts test prompts version "
                             f"{lines[0].split('version ')[1].split(',')[0]}, size 10 prompts, 3 sample(s) each, "
                             f"seed 1, max new tokens 5, model {pipeline.gpt2.name}")
    shown = [line for line in lines if line.startswith("negative_sentiment_disparity")]
    assert len(shown) == 2 and all("(paired by 8 prompts)" in line for line in shown)


def test_compare_refuses_an_unknown_run_in_one_line(runs, capsys: pytest.CaptureFixture[str]) -> None:
    pipeline, store = runs
    assert main(["compare", pipeline.single_05, "nope", "--store", store, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"error: no run 'nope' in {store}\n"
    assert main(["compare", pipeline.single_05, pipeline.single_095, "--store", store, "--by", "colour"]) == 2
    assert "no field 'colour'" in capsys.readouterr().err
    assert main(["compare", pipeline.single_05, pipeline.single_05, "--store", store]) == 2
    assert "a run is named twice" in capsys.readouterr().err


@pytest.mark.parametrize("which", ["decoding sweep", "decoding pair", "live move", "metric-bias page",
                                   "CAIRO", "template adaptation", "DATScore"])
def test_a_report_is_written_for_every_pages_runs(runs, tmp_path: Path, which: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    pipeline, store = runs
    ids = {"decoding sweep": [pipeline.sweep], "decoding pair": [pipeline.single_05, pipeline.single_095],
           "live move": [pipeline.live], "metric-bias page": list(pipeline.metric_bias.values()),
           "CAIRO": [pipeline.cairo], "template adaptation": [pipeline.adaptation_ner, *pipeline.adaptation],
           "DATScore": [pipeline.datscore_translations, pipeline.datscore[0]]}[which]
    out = tmp_path / "report.html"
    assert main(["report", *ids, "--store", store, "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<script src" not in text and "<link" not in text  # nothing fetched: plotly.js is inside
    assert "plotly.js v" in text and "default-src 'none'" in text
    body = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.sub(r"<script>.*?</script>", "", text, flags=re.S)))
    assert "Deviations from the paper" in body and "Data licence" in body and "95% intervals" in body
    deviations = body.split("Deviations from the paper")[1].split("Data licence")[0]
    assert "**" not in deviations and "\\n" not in deviations and "`" not in deviations  # text for people
    assert "nothing to line up" not in body and "no rows" not in body
    if which in ("decoding sweep", "decoding pair", "CAIRO"):
        assert "The disparity, compared" in body and "paired by" in body
    if which == "metric-bias page":
        assert "chrf (config metric-fairness-2022) against bleu (config default)" in body


def test_report_refuses_bad_input_and_writes_nothing(runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pipeline, store = runs
    assert main(["report", pipeline.sweep, "nope", "--store", store, "--out", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err == f"error: no run 'nope' in {store}; nothing was written\n"
    assert main(["report", pipeline.sweep, "--store", store, "--out", str(tmp_path / "r.pdf")]) == 2
    assert "ending in .html" in capsys.readouterr().err
    assert main(["report", pipeline.sweep, "--store", store, "--out", str(tmp_path / "missing" / "r.html")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".html") == []
