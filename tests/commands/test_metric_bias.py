"""The `metric-bias` command: the documented JSON contract, caching, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.store import RunStore

FIXTURE = Path(__file__).parents[1] / "data" / "fixtures" / "gender.tsv"


def run_json(capsys: pytest.CaptureFixture, *args: str) -> dict:
    assert main(["metric-bias", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_released_format_prints_the_documented_shape(isolated_store: Path, capsys: pytest.CaptureFixture) -> None:
    result = run_json(capsys, "--data", str(FIXTURE), "--format", "metric-fairness",
                      "--metrics", "bleu,rouge1,meteor,nist,chrf", "--config", "metric-fairness-2022")
    assert list(result) == ["gender"]
    assert sorted(result["gender"]) == ["bleu", "chrf", "meteor", "nist", "rouge1"]
    for entry in result["gender"].values():
        assert set(entry) == {"bias", "ci_low", "ci_high", "n_pairs"} and entry["n_pairs"] == 3
        assert entry["ci_low"] <= entry["bias"] <= entry["ci_high"]
    runs = RunStore(isolated_store).list_runs(kind="metric-bias")
    assert len(runs) == 5 and all(r.is_complete for r in runs)


def test_a_repeated_call_is_served_from_the_store(isolated_store: Path, capsys: pytest.CaptureFixture) -> None:
    args = ("--format", "demo", "--metrics", "chrf")
    first = run_json(capsys, *args)
    second = run_json(capsys, *args)
    assert first == second
    capsys.readouterr()
    main(["metric-bias", *args])
    assert "from the store" in capsys.readouterr().err


def test_pairs_table_with_several_attributes(tmp_path: Path, isolated_store: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    table = tmp_path / "mine.csv"
    table.write_text("candidate1,candidate2,reference,attribute\n"
                     "she is a nurse,he is a nurse,the nurse is a nurse,gender\n"
                     "old men run,young men run,men run,age\n")
    result = run_json(capsys, "--data", str(table), "--format", "pairs", "--metrics", "bleu")
    assert sorted(result) == ["age", "gender"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"candidate\treference\nshe\tref\n", "bad.tsv, line 2: odd number of data rows"),
        (b"candidate\treference\nsame\tref\nsame\tref\n", "bad.tsv, lines 2-3: the two candidates are identical"),
        (b"candidate\treference\n\xff\xfe\tref\nhe\tref\n", "bad.tsv, line 2: not UTF-8"),
    ],
)
def test_bad_files_exit_2_with_file_and_row_and_store_nothing(tmp_path: Path, isolated_store: Path,
                                                              capsys: pytest.CaptureFixture, content: bytes,
                                                              message: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_bytes(content)
    assert main(["metric-bias", "--data", str(path), "--format", "metric-fairness", "--json"]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""
    assert RunStore(isolated_store).list_runs() == []


def test_unknown_metric_and_unavailable_model_are_one_line_errors(isolated_store: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    assert main(["metric-bias", "--format", "demo", "--metrics", "bleu,ter", "--json"]) == 2
    assert "unknown metric(s) ter" in capsys.readouterr().err
    assert main(["metric-bias", "--format", "demo", "--metrics", "bleurt", "--json"]) == 2
    assert "unavailable here" in capsys.readouterr().err
    assert RunStore(isolated_store).list_runs() == []


def test_builtin_sources_take_keywords_in_data() -> None:
    from fairness_core.cli import UserFacingError
    from fairness_core.commands.metric_bias import load_dataset

    assert load_dataset("winobias", []).name == "winobias-type1-dev"
    assert len(load_dataset("winobias", ["type2-test"])) == 396
    assert load_dataset("crows-pairs", ["age", "religion"]).attributes == ["age", "religion"]
    assert load_dataset("demo", []).name == "demo-gender"
    with pytest.raises(UserFacingError, match="unknown WinoBias subset"):
        load_dataset("winobias", ["type3"])
    with pytest.raises(UserFacingError, match="unknown CrowS-Pairs attribute"):
        load_dataset("crows-pairs", ["height"])
    with pytest.raises(UserFacingError, match="needs --data"):
        load_dataset("pairs", [])
