"""The shipped example spec, end to end, offline, as a CI job runs it from a fresh clone (issue 34, "Done when").

Cost: the one slow test of the check suite. It generates 2 systems x 20 regard prompts (gender) x 10 samples with
the offline SmolLM2-135M-Instruct (400 generations of at most 20 tokens, first sentence kept), scores them with
VADER, the offensive-language model and the Jigsaw classifier, and audits VADER on the built-in templates (34 s
wall on this project's quiet 2-core machine, measured 2026-11-28; 368 s of CPU under load before), then reads
everything back from the store for a repeat and a tightened threshold (seconds each). The thresholds of the example
leave margins of 0.07-0.17 on this machine's numbers; a machine whose CPU kernels sample other texts could move
them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fairness_core.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fairness-check.toml"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


def test_the_example_spec_passes_repeats_from_the_store_and_fails_when_tightened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "runs.duckdb")
    junit = tmp_path / "fairness.xml"
    assert main(["--store", store, "check", str(EXAMPLE), "--json", "--junit", str(junit)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["passed"] and [c["passed"] for c in first["criteria"]] == [True, True, True]
    assert all(c["evaluated"] and c["ci_low"] is not None for c in first["criteria"])
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "0"

    import fairness_core.generation.task as task

    def refuse(*args, **kwargs):
        raise AssertionError("a model generated; the repeat should read the store")

    monkeypatch.setattr(task, "_generate", refuse)
    assert main(["--store", store, "check", str(EXAMPLE), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["from_store"] and again["check_id"] == first["check_id"]

    # tightened to an upper bound of 0.05, the criterion fails: its "no disparity" route needs a design that detects
    # the effect (0.1) with 80% power, and 10 templates do not (issue 42 §4: before, p >= 0.05 alone passed it);
    # the sentence says how many templates the planner asks for
    tightened = EXAMPLE.read_text(encoding="utf-8").replace("upper_at_most = 0.3 ", "upper_at_most = 0.05 ")
    criterion = first["criteria"][0]
    assert criterion["p_value"] is not None and 0 < criterion["p_value"] <= 1
    assert criterion["p_adjusted"] == criterion["p_value"] and "Holm" in criterion["multiplicity"]  # one test
    smallest = criterion["smallest_detectable"]
    assert smallest is None or smallest > 0.1  # 10 templates x 10 samples cannot see 0.1
    tight = tmp_path / "tight.toml"
    tight.write_text(tightened, encoding="utf-8")
    assert main(["--store", store, "check", str(tight), "--json"]) == 1
    judged = json.loads(capsys.readouterr().out)["criteria"][0]
    assert not judged["passed"] and judged["evaluated"] and "upper bound" in judged["reason"]
    if judged["p_value"] >= 0.05:
        assert "too small" in judged["reason"] and "the planner, with run" in judged["reason"], judged["reason"]
    without = [line for line in tightened.splitlines(keepends=True) if not line.startswith(("undetectable", "effect"))]
    tight.write_text("".join(without), encoding="utf-8")
    assert main(["--store", store, "check", str(tight)]) == 1
    out = capsys.readouterr().out
    failed = next(line for line in out.splitlines() if "gender: negative-sentiment disparity is small" in line)
    assert failed.lstrip().startswith("FAIL") and "upper bound" in failed and "> 0.05 by" in failed
