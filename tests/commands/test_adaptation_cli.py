"""The CLI contracts of `vbcm`, `templates import` and `adapt` (Template adaptation page)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from fairness_core.cli import main
from tests.adaptation.test_templates import write_eec, write_iptts
from tests.adaptation.test_vbcm import table_1, write_scores


def test_cli_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_scores(tmp_path / "scores.csv", table_1(), bom=True, crlf=True)
    assert main(["vbcm", "--scores", str(path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"background", "vbcm", "n_templates"}
    assert payload["n_templates"] == 1
    assert payload["background"] == pytest.approx(179 / 900)
    assert payload["vbcm"]["France"] == pytest.approx(449 / 450)
    assert list(payload["vbcm"]) == ["Spain", "USA", "France"]


def test_cli_background_is_the_mean_of_per_template_backgrounds(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rows = [("A", "X", "a1", 0.2), ("A", "X", "a2", 0.4), ("A", "Y", "a3", 0.9),
            ("B", "X", "b1", 0.5), ("B", "Y", "b2", 0.1), ("B", "Y", "b3", 0.1), ("B", "Y", "b4", 0.4)]
    path = write_scores(tmp_path / "s.csv", pd.DataFrame(rows, columns=["template_id", "group", "term", "score"]))
    assert main(["vbcm", "--scores", str(path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n_templates"] == 2
    # β_A = (0.3 + 0.9)/2, β_B = (0.5 + 0.2)/2: the average across groups (Sec. 3.1).
    assert payload["background"] == pytest.approx(0.475)
    assert payload["vbcm"] == pytest.approx({"X": 0.775, "Y": 0.775})
    # The stated option weights each group by its number of terms (β_A = 1.5/3, β_B = 1.1/4).
    assert main(["vbcm", "--scores", str(path), "--background", "all-sentences", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["background"] == pytest.approx(0.3875)
    assert payload["vbcm"] == pytest.approx({"X": 0.7875, "Y": 0.7625})


def test_cli_bad_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.csv"
    path.write_text("template_id,group,term\nA,X,x\n")
    assert main(["vbcm", "--scores", str(path), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(path) in err and "'score'" in err


def test_cli_templates_import_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_eec(tmp_path / "eec.csv")
    assert main(["templates", "import", "--format", "eec", str(path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"n_rows", "n_templates", "groups"}
    assert payload["n_rows"] == 8640 and payload["n_templates"] == 144
    assert main(["templates", "import", "--format", "iptts", str(write_iptts(tmp_path / "m.csv")), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["groups"]["identity"]["lesbian"] == 2
    assert "note:" in captured.err


def test_cli_templates_import_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_iptts(tmp_path / "m.csv", header="Text,Label")
    assert main(["templates", "import", "--format", "iptts", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ") and captured.err.count("\n") == 1


def test_adapt_cli_runs_the_pipeline_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch, tiny_gpt2: Path) -> None:
    from tests.app_pages.test_template_adaptation_page import scripted

    monkeypatch.setattr("fairness_core.generation.task._generate", scripted)
    templates = tmp_path / "templates.txt"
    templates.write_text("{person} feels angry.\nI talked to {person} yesterday.\n", encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Serena Williams is an American tennis player.\nThe bridge opened in 1932.\n"
                      "Albert Einstein developed relativity.\nA metalsmith works with metals.\n", encoding="utf-8")
    store = tmp_path / "runs.duckdb"
    argv = ["--store", str(store), "adapt", "--templates", str(templates), "--corpus", str(corpus),
            "--attributes", "nationality", "--model", str(tiny_gpt2), "--examples", "1", "--max-new-tokens", "6",
            "--classifiers", "offensive", "--resamples", "100", "--json"]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "complete"
    assert payload["rewrites"]["counts"]["accepted"] == 1 and payload["rewrites"]["n_rewrites"] == 2
    assert payload["noes"]["n_used"] == 2
    nationality = payload["comparisons"]["offensive"]["nationality"]
    assert set(nationality) == {"original vs NOEs", "original (accepted templates) vs NOEs", "adapted vs NOEs",
                                "adapted vs original", "adapted − original"}
    # issue 30: adapted and original are compared on the same (accepted) templates
    assert nationality["adapted − original"]["n_templates"] == nationality["adapted vs NOEs"]["n_templates"] == 1
    assert isinstance(nationality["adapted vs original"]["change_detected"], bool)
    assert nationality["adapted vs NOEs"]["r"] is not None  # 12 countries
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["from_cache"] is True


def test_adapt_cli_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(tmp_path / "s.duckdb"), "adapt", "--attributes", "age", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "no attribute 'age'" in captured.err and captured.err.count("\n") == 1
    assert not (tmp_path / "s.duckdb").exists()  # nothing written
