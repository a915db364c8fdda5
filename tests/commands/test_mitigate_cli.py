"""`mitigate train|evaluate|export|import` and `--adapter` on `metric-bias` / `metric-quality`, with tiny BERTs the
tests build (the JSON contracts of issue 28), and the backbone swap of §3.1 on both axes with paired intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.cli import main
from tests.mitigation.training_cache import build_once, fresh_cache
from tests.tiny_models import build_tiny_bert

TRAIN_KEYS = {"adapter_id", "run_id", "steps", "trainable_parameters", "total_parameters", "seconds",
              "loss_debias_first", "loss_debias_last", "loss_kd_last"}
INTERVAL_KEYS = {"before", "after", "difference", "ci_low", "ci_high"}


@pytest.fixture(scope="module")
def data_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_once(tmp_path_factory.mktemp("data-cache"))


@pytest.fixture()
def workspace(data_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_store: Path) -> Path:
    monkeypatch.setenv("FAIRNESS_LAB_CACHE", str(fresh_cache(data_cache, tmp_path / "cache")))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    return tmp_path


def _judgments(path: Path) -> Path:
    """A small judgments table: 6 items × 3 systems with human scores."""
    rows = ["item_id,system,candidate,reference,human"]
    texts = ["the nurse said that she would help the patient", "a man worked as a teacher",
             "the carpenter made a desk for the clerk", "the doctor said that he would help",
             "a person was known for kindness", "the woman was regarded as smart"]
    for item, reference in enumerate(texts):
        for system, candidate in enumerate([reference, reference.split()[0] + " patient", "black and white people"]):
            rows.append(f"d{item},s{system},{candidate},{reference},{1.0 - 0.3 * system + 0.01 * item}")
    path.write_text("\n".join(rows) + "\n")
    return path


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_train_evaluate_export_import_and_the_adapter_everywhere(workspace, tiny_bert, capsys):
    trained = _json(capsys, ["mitigate", "train", "--metric", "bertscore", "--model", str(tiny_bert), "--attribute",
                             "gender", "--steps", "3", "--seed", "1", "--json"])
    assert set(trained) >= TRAIN_KEYS and trained["steps"] == 3
    assert trained["trainable_parameters"] < trained["total_parameters"]
    adapter = trained["adapter_id"]

    listed = _json(capsys, ["models", "--json"])
    assert [a["id"] for a in listed["adapters"]] == [adapter]

    judgments = _judgments(workspace / "j.csv")
    evaluated = _json(capsys, ["mitigate", "evaluate", "--metric", "bertscore", "--model", str(tiny_bert),
                               "--adapter", adapter, "--format", "winobias", "--quality", str(judgments),
                               "--resamples", "200", "--json"])
    assert INTERVAL_KEYS | {"relative"} <= set(evaluated["bias"]) and set(evaluated["quality"]) >= INTERVAL_KEYS
    assert set(evaluated["attributes"]) == {"gender"} and evaluated["bias"]["n_pairs"] == 396
    bias = evaluated["bias"]
    assert bias["ci_low"] <= bias["difference"] <= bias["ci_high"]
    assert bias["difference"] == pytest.approx(bias["after"] - bias["before"])
    assert bias["relative"] == pytest.approx(bias["difference"] / bias["before"])
    # one number, one interval: the bias before is quoted with the metric-bias study's own draw
    study = _json(capsys, ["metric-bias", "--format", "winobias", "--data", "type1-dev", "--metrics", "bertscore",
                           "--model", str(tiny_bert), "--resamples", "200", "--json"])["gender"]["bertscore"]
    assert bias["before"] == pytest.approx(study["bias"], abs=1e-6)
    assert bias["before_ci"] == pytest.approx([study["ci_low"], study["ci_high"]], abs=1e-6)

    exported = workspace / "shared.safetensors"
    assert main(["mitigate", "export", adapter, "--out", str(exported)]) == 0
    capsys.readouterr()
    (workspace / "cache" / "adapters" / f"{adapter}.safetensors").unlink()
    assert _json(capsys, ["mitigate", "import", str(exported), "--json"])["id"] == adapter

    table = _json(capsys, ["metric-bias", "--format", "demo", "--metrics", "bleu,bertscore", "--model",
                           str(tiny_bert), "--adapter", adapter, "--resamples", "100", "--json"])
    assert set(table["gender"]) == {"bleu", "bertscore"}
    quality = _json(capsys, ["metric-quality", "--data", str(judgments), "--metrics", "bertscore", "--model",
                             str(tiny_bert), "--adapter", adapter, "--resamples", "100", "--json"])
    assert quality["bertscore"]["n"] == 18


def test_a_backbone_swap_on_both_axes_with_paired_intervals(workspace, tiny_bert, capsys):
    other = build_tiny_bert(workspace / "other-bert")
    judgments = _judgments(workspace / "j.csv")
    swapped = _json(capsys, ["mitigate", "evaluate", "--metric", "bertscore", "--model", str(tiny_bert),
                             "--compare-model", str(other), "--format", "crows-pairs", "--data", "race", "religion",
                             "--quality", str(judgments), "--resamples", "200", "--changed", "5", "--json"])
    assert set(swapped["attributes"]) == {"race", "religion"} and swapped["bias"]["attribute"] == "all"
    for change in swapped["attributes"].values():
        assert change["ci_low"] <= change["difference"] <= change["ci_high"]
    assert swapped["quality"]["n_documents"] == 6 and swapped["after"] == str(other)
    assert len(swapped["changed_pairs"]) == 5


def test_a_training_set_empty_after_filtering_is_one_sentence_and_stores_nothing(workspace, tiny_bert, capsys,
                                                                                 monkeypatch):
    from fairness_core.mitigation import data

    monkeypatch.setenv("FAIRNESS_LAB_CACHE", str(workspace / "empty-cache"))  # nothing built yet
    monkeypatch.setattr(data, "cda_sources", lambda: [data.SourceText("only", "The developer argued with the "
                                                                      "designer because he did not like the design.")])
    store = workspace / "runs.duckdb"
    code = main(["--store", str(store), "mitigate", "train", "--model", str(tiny_bert), "--steps", "2", "--json"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: no counterfactual (Eq. 4) triples are left for gender")
    assert not store.exists() and not list((workspace / "empty-cache").rglob("*.safetensors"))
