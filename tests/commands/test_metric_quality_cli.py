"""`python -m fairness_core metric-quality`: the JSON contract, stored columns, the three data sources, and a
repeat read from the store."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.store import RunStore

REALSUMM = Path(__file__).resolve().parents[2] / "data" / "realsumm"
CONTRACT = {"spearman", "ci_low", "ci_high", "pearson", "kendall", "n", "n_documents", "rule"}


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    assert main(argv) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out, parse_constant=lambda c: pytest.fail(f"not JSON: {c}")), captured.err


def test_realsumm_stored_columns_reproduce_table_5(isolated_store: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    payload, err = run_json(["metric-quality", "--data", "realsumm", "--stored-scores", "--json"], capsys)
    assert list(payload) == ["BARTScore-BART-base (stored)", "BARTScore-BART-base+adapter (stored)"]
    base, adapter = payload["BARTScore-BART-base (stored)"], payload["BARTScore-BART-base+adapter (stored)"]
    assert set(base) >= CONTRACT and (base["n"], base["n_documents"], base["rule"]) == (2400, 100, "pooled")
    assert (round(base["spearman"], 3), round(adapter["spearman"], 3)) == (0.325, 0.307)
    assert base["ci_low"] < base["spearman"] < base["ci_high"]
    assert "Metric-Fairness (MIT licence" in err and "computed and stored" in err


def test_metrics_and_a_repeat_from_the_store(isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["metric-quality", "--data", "realsumm", "--metrics", "bleu,chrf", "--stored-scores",
            "BARTScore-BART-base", "--rule", "system", "--resamples", "200", "--json"]
    first, _ = run_json(argv, capsys)
    assert list(first) == ["bleu", "chrf", "BARTScore-BART-base (stored)"]
    assert all(v["rule"] == "system" and v["n_systems"] == 24 for v in first.values())
    again, err = run_json(argv, capsys)
    assert again == first and "computed and stored" not in err and err.count("from the store") == 3
    kinds = RunStore(isolated_store).query("SELECT kind, count(*) AS n FROM runs GROUP BY kind ORDER BY kind")
    assert kinds.to_dict("records") == [{"kind": "metric-quality", "n": 1}, {"kind": "metric-quality-scores", "n": 3}]


def test_a_realsumm_folder_and_a_user_table(tmp_path: Path, isolated_store: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "copy"
    folder.mkdir()
    for name in ("realsumm_documents.jsonl", "realsumm_summaries.jsonl"):
        (folder / name).write_bytes(gzip.decompress((REALSUMM / f"{name}.gz").read_bytes()))
    from_folder, _ = run_json(["metric-quality", "--data", str(folder), "--stored-scores", "BARTScore-BART-base",
                               "--json"], capsys)
    assert round(from_folder["BARTScore-BART-base (stored)"]["spearman"], 3) == 0.325
    table = tmp_path / "mine.jsonl"
    rows = [{"item_id": f"seg{i}", "system": f"mt{k}", "candidate": f"the cat sat {'on the mat ' * k}",
             "reference": "the cat sat on the mat", "source": "le chat", "human": k + 0.1 * i}
            for i in range(5) for k in range(3)]
    table.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    mine, err = run_json(["metric-quality", "--data", str(table), "--metrics", "bleu", "--rule", "document",
                          "--json"], capsys)
    assert mine["bleu"]["n"] == 15 and mine["bleu"]["n_documents"] == 5 and "licence: user-supplied" in err


def test_an_option_of_one_metric_reaches_it(isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--option METRIC.OPTION=VALUE`: here BLEU as the paper's released code computes it; its manifest says so."""
    payload, _ = run_json(["metric-quality", "--data", "realsumm", "--metrics", "bleu", "--option",
                           "bleu.config=metric-fairness-2022", "--resamples", "0", "--json"], capsys)
    default, _ = run_json(["metric-quality", "--data", "realsumm", "--metrics", "bleu", "--resamples", "0", "--json"],
                          capsys)
    assert payload["bleu"]["spearman"] != default["bleu"]["spearman"] and payload["bleu"]["ci_low"] is None
    options = RunStore(isolated_store).query(
        "SELECT json_extract_string(manifest, '$.request.metric.options.config') AS config FROM runs "
        "WHERE kind = 'metric-quality-scores' ORDER BY config")
    assert options["config"].tolist() == ["default", "metric-fairness-2022"]


def test_a_wmt_style_table_with_the_statistic_the_unit_and_group_averaging(
        tmp_path: Path, isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Sun et al.'s WMT protocol from the command line: system-level Pearson per language pair, averaged; the
    interval is of Pearson and says what it resamples (stored columns: no model)."""
    rows = ["item_id,system,candidate,reference,group,human,chrF"]
    for lp, systems in (("de-en", ("A", "B", "C", "D")), ("zh-en", ("A", "E", "F", "G"))):
        for i in range(6):
            for k, system in enumerate(systems):
                rows.append(f"{lp}-{i},{system},cand,ref,{lp},{k + 0.3 * ((i * 7 + k) % 4)},{k + 0.2 * (i % 3)}")
    table = tmp_path / "wmt.csv"
    table.write_text("\n".join(rows) + "\n")
    payload, err = run_json(["metric-quality", "--data", str(table), "--stored-scores", "--rule", "system",
                             "--statistic", "pearson", "--group-average", "--resamples", "100", "--json"], capsys)
    chrf = payload["chrF (stored)"]
    assert (chrf["ci_of"], chrf["resample"], chrf["n_groups"], chrf["rule"]) == ("pearson", "both", 2, "system")
    assert chrf["value"] == chrf["pearson"] and chrf["ci_low"] <= chrf["pearson"] <= chrf["ci_high"]
    assert "other documents and other systems" in chrf["interval_generalises"] and "in 2 groups" in err
    manifest = RunStore(isolated_store).query("SELECT manifest FROM runs WHERE kind = 'metric-quality'")
    request = json.loads(manifest["manifest"].iloc[0])["request"]
    assert (request["resample"], request["statistic"], request["group_average"]) == ("both", "pearson", True)
    documents, _ = run_json(["metric-quality", "--data", str(table), "--stored-scores", "--rule", "system",
                             "--resample", "documents", "--resamples", "100", "--json"], capsys)
    assert "for these systems only" in documents["chrF (stored)"]["interval_generalises"]
