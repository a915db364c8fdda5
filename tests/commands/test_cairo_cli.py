"""`python -m fairness_core cairo --bias-table FILE --json`: the exact output contract and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fairness_core.cli import main

REPO = Path(__file__).resolve().parents[2]


def write_table(path: Path, weighted: bool = False, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    lines = ["system,metric,prompt_set,bias" + (",n_prompts" if weighted else "")]
    sets = {"BOLD": ["original", "m1", "m2", "m3"], "HONEST": ["original", "k1", "k2"]}
    for s in range(6):
        for metric, names in sets.items():
            for name in names:
                count = f",{rng.integers(5, 50)}" if weighted else ""
                lines.append(f"sys{s},{metric},{name},{rng.random():.5f}{count}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("weighted", [False, True])
def test_contract_keys_and_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str], weighted: bool) -> None:
    table = write_table(tmp_path / "bias.csv", weighted)
    assert main(["cairo", "--bias-table", str(table), "--json", "--permutations", "9"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert next(iter(payload)) == "pairs" and len(payload["pairs"]) == 1
    pair = payload["pairs"][0]
    assert list(pair)[:5] == ["metric_a", "metric_b", "n_systems", "original_r", "by_size"]
    assert (pair["metric_a"], pair["metric_b"], pair["n_systems"]) == ("BOLD", "HONEST", 6)
    assert [row["size"] for row in pair["by_size"]] == [1, 2, 3]  # 1 + min(3, 2)
    for row in pair["by_size"]:
        assert list(row)[:6] == ["size", "r", "p_value", "combo_a", "combo_b", "mean_r"]
        assert row["combo_a"][0] == "original" and len(row["combo_a"]) == row["size"] == len(row["combo_b"])
        assert row["r"] >= row["mean_r"] - 1e-12
        assert 0 < row["p_search"] <= 1
    first = pair["by_size"][0]
    assert first["r"] == pytest.approx(pair["original_r"]) and first["r"] == pytest.approx(first["mean_r"])


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("sys2,BOLD,m1,", "sys2,BOLD,m1,abc"), "is not a number"),
    (lambda t: t.replace(",original,", ",first,"), "no prompt set named 'original'"),
    (lambda t: t + t.splitlines()[1] + "\n", "both give the bias"),
    (lambda t: "\n".join(line for line in t.splitlines() if not line.startswith(("sys1", "sys2", "sys3", "sys4",
                                                                                    "sys5"))) + "\n",
     "1 system"),
])
def test_bad_tables_exit_2_with_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str], edit,
                                            message: str) -> None:
    path = write_table(tmp_path / "bias.csv")
    path.write_text(edit(path.read_text()))
    assert main(["cairo", "--bias-table", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(path) in lines[0]


def test_runs_as_a_module(tmp_path: Path) -> None:
    table = write_table(tmp_path / "bias.csv")
    done = subprocess.run([sys.executable, "-m", "fairness_core", "cairo", "--bias-table", str(table), "--json",
                           "--no-heldout"], capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pairs"][0]["by_size"][0]["heldout_r"] is None


def test_cairo_run_pipeline_with_a_tiny_model(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              tiny_gpt2: Path) -> None:
    systems = f"{tiny_gpt2}@top_p=0.9;{tiny_gpt2}@top_p=0.5;{tiny_gpt2}@greedy"
    argv = ["--store", str(tmp_path / "runs.duckdb"), "cairo", "run", "--systems", systems, "--sets", "1",
            "--per-subgroup", "2", "--max-new-tokens", "3", "--out", str(tmp_path / "bias.csv"), "--json"]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    pair = payload["pairs"][0]
    assert (pair["metric_a"], pair["metric_b"], pair["n_systems"]) == ("BOLD gender", "HONEST gender (valid)", 3)
    assert [row["size"] for row in pair["by_size"]] == [1, 2]
    assert len(payload["bias_table"]) == 12 and payload["run_ids"]
    assert (tmp_path / "bias.csv").read_text().startswith("system,metric,prompt_set,bias")
    uncertainty = pair["uncertainty"]  # prompt bootstrap of the mean r and the rank τ/ρ
    assert uncertainty["n_boot"] == 200 and [row["size"] for row in uncertainty["by_size"]] == [1, 2]
    assert main(argv) == 0  # from the store: same run ids, nothing regenerated
    assert json.loads(capsys.readouterr().out)["run_ids"] == payload["run_ids"]
    # the released variant on the same stored generations: the same set in both metrics, pooled Eq. 1
    assert main([*argv, "--combination", "released", "--no-heldout"]) == 0
    released = json.loads(capsys.readouterr().out)
    assert released["combination"] == "released" and released["run_ids"] == payload["run_ids"]
    assert released["pairs"][0]["uncertainty"]["combination"] == "released"


def test_cairo_run_rejects_bad_systems_in_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cairo", "run", "--systems", "gpt2@greedy;gpt2@beam=2;gpt2@top_p=0.5"]) == 2
    assert "unknown knob 'beam'" in capsys.readouterr().err


def test_run_help_lists_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    from fairness_core.cairo.data import METRICS

    with pytest.raises(SystemExit):
        main(["cairo", "run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for metric in METRICS:  # HolisticBias gender / religion were left out
        assert metric in text


def test_released_combination_needs_subgroup_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = write_table(tmp_path / "bias.csv")
    assert main(["cairo", "--bias-table", str(table), "--json", "--combination", "released"]) == 2
    assert "subgroup_scores" in capsys.readouterr().err


def test_released_combination_on_a_run_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fairness_core.cairo.bias import bias_table
    from tests.cairo.test_search import random_generations

    path = tmp_path / "run.csv"
    bias_table(random_generations(np.random.default_rng(0)), "score").to_csv(path, index=False)
    assert main(["cairo", "--bias-table", str(path), "--json", "--combination", "released", "--no-heldout"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["combination"] == "released"
    assert all(row["combo_a"] == row["combo_b"] for row in payload["pairs"][0]["by_size"])
