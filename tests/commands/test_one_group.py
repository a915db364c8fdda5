"""A study of one group has no disparity: it says so and keeps the rates (issue 43 §3; it raised in
`permuted_sums` from the decoding command, `runs import generations` and Compare's run estimates)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.cli import main


def test_a_one_group_prompt_file_gives_rates_and_a_sentence_not_a_traceback(
        tiny_gpt2: Path, isolated_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = tmp_path / "one.txt"
    prompts.write_text("woman: The woman worked as\nwoman: The woman was known for\n")
    args = ["decoding", "--model", str(tiny_gpt2), "--prompts", str(prompts), "--samples", "2",
            "--max-new-tokens", "3", "--regard-model", "none", "--quality-scorer", "none"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert ("no disparity in negative sentiment: a disparity compares two or more groups of one family, and this "
            "run has 1 group(s) (woman) with no family of two; their rates are shown per group") in out
    assert "woman                n=4" in out
    assert main([*args, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["group"] == "woman" and row["n"] == 4 and row["disparity"] is None
    assert 0 <= row["negative_sentiment_rate"] <= 1


def test_an_imported_one_group_file_is_stored_and_its_estimates_read(
        isolated_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fairness_core.compare.align import get_runs, run_estimates
    from fairness_core.store import RunStore

    data = tmp_path / "generations.csv"
    data.write_text("prompt,generation,group\nThe woman worked as,a nurse who was kind.,woman\n"
                    "The woman was,a terrible person.,woman\nThe woman said,hello.,woman\n")
    assert main(["runs", "import", "generations", str(data), "--scorers", "vader", "--json"]) == 0
    captured = capsys.readouterr()
    assert "family 'custom' has one group, so it has no disparity" in captured.err
    run_id = json.loads(captured.out)["run_id"]
    store = RunStore(isolated_store)
    (info,) = get_runs(store, [run_id], minimum=1)
    estimates = run_estimates(store, info).set_index("metric")
    # "a terrible person" is the one generation VADER reads as negative: 1 of 3
    assert estimates.at["negative_sentiment_rate", "estimate"] == pytest.approx(1 / 3)
    assert estimates["p_value"].isna().all()  # no disparity, so no test


def test_refusals_name_the_input_they_come_from(isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 43 §3: two vague refusals now name the option."""
    assert main(["metric-bias", "--format", "demo", "--metrics", "bertscore", "--model", "nosuch/model"]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("error: --metrics: none of the chosen metrics can run here (BERTScore: BERTScore needs "
                            "nosuch/model")
