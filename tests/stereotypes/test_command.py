"""`python -m fairness_core stereotypes`: the --json contract, StereoSet predictions evaluated as the released
script does, and bad input refused in one sentence naming the field, with nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.stereotypes import data as D
from fairness_core.store import RunStore


def _run(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(store), "stereotypes", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_crows_pairs_json_contract(tiny_gpt2_long: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, tmp_path / "s.duckdb", "crows-pairs", "--model", str(tiny_gpt2_long), "--limit",
                          "9", "--resamples", "50", "--json")
    assert code == 0
    # what the size costs is said before scoring (stderr), here and, labelled as estimates, on a GPU or endpoint
    assert "crows-pairs: 18 texts" in err and "estimates not measured here" in err and "on one GPU" in err
    assert "through an endpoint" in err
    payload = json.loads(out)
    overall = payload["overall"]
    for key in ("n", "pct_stereotype", "likelihood_diff", "pct_stereotype_ci_low", "pct_stereotype_ci_high",
                "likelihood_diff_ci_low", "likelihood_diff_ci_high", "p_value", "n_ties", "verdict"):
        assert key in overall, key
    assert overall["n"] == 9 and 0.0 <= overall["pct_stereotype"] <= 1.0
    assert set(payload["by_bias_type"]) == set(D.CROWS_BIAS_TYPES)  # 9 pairs, one per type
    assert payload["licence"].startswith("Creative Commons Attribution-ShareAlike 4.0") and payload["run_id"]


def _predictions(clusters: list[D.StereoCluster], score: dict[str, float]) -> dict:
    out: dict[str, list] = {"intrasentence": [], "intersentence": []}
    for cluster in clusters:
        for label, (sentence_id, _) in cluster.sentences.items():
            out[cluster.split].append({"id": sentence_id, "score": score[label]})
    return out


def test_stereoset_predictions_are_evaluated_like_the_released_script(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    clusters = [c for c in D.stereoset()]
    # the stereotype always wins and both meaningful sentences beat the unrelated one: LMS 100, SS 100, ICAT 0 ...
    scores = {"stereotype": 0.9, "anti-stereotype": 0.5, "unrelated": 0.1}
    predictions = _predictions(clusters, scores)
    # ... except the religion intrasentence clusters, where the anti-stereotype wins: SS 0 there
    religion = {sid for c in clusters if c.split == "intrasentence" and c.domain == "religion"
                for sid, _ in c.sentences.values()}
    for entry in predictions["intrasentence"]:
        if entry["id"] in religion and entry["score"] == 0.5:
            entry["score"] = 0.95
    file = tmp_path / "predictions.json"
    file.write_text(json.dumps(predictions))
    code, out, _ = _run(capsys, tmp_path / "s.duckdb", "stereoset", "--predictions", str(file), "--resamples", "0",
                        "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["intrasentence"]["religion"] == {"count": 79, "n_terms": 3, "lms": 100.0, "ss": 0.0, "icat": 0.0}
    assert payload["intersentence"]["overall"]["ss"] == 100.0 and payload["intersentence"]["overall"]["count"] == 2123
    terms = {c.target for c in clusters if c.split == "intrasentence"}
    religious = {c.target for c in clusters if c.split == "intrasentence" and c.domain == "religion"}
    assert payload["intrasentence"]["overall"]["ss"] == pytest.approx(100 * (len(terms) - len(religious)) / len(terms))
    assert payload["predictions"] == "predictions.json" and payload["model"] is None


BAD = [
    (["nonsense"], "BENCHMARK 'nonsense'"),
    (["crows-pairs", "--subset", "race"], "--subset 'race'"),
    (["crows-pairs", "--limit", "0"], "--limit must be"),
    (["bbq", "--resamples", "-1"], "--resamples must be"),
    (["crows-pairs", "--model", " "], "--model is empty"),
]


@pytest.mark.parametrize(("args", "phrase"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_sentence_and_stores_nothing(args: list[str], phrase: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, tmp_path / "s.duckdb", *args)
    assert code == 2 and out == "" and phrase in err and err.count("\n") == 1, err
    assert not (tmp_path / "s.duckdb").exists() or RunStore(tmp_path / "s.duckdb").list_runs() == []


def _one_cluster_file(tmp_path: Path, change) -> Path:
    cluster = D.stereoset()[0]
    predictions = _predictions([cluster], {"stereotype": 1.0, "anti-stereotype": 0.5, "unrelated": 0.0})
    change(predictions)
    file = tmp_path / "p.json"
    file.write_text(json.dumps(predictions))
    return file


PREDICTION_FILES = [
    (lambda p: p["intrasentence"].append({"id": "not-a-stereoset-id", "score": 1.0}), "is not a sentence of"),
    (lambda p: None, "has no score for"),  # one cluster of 4,229 given: the others are missing
    (lambda p: p["intrasentence"][0].update(score="high"), "is not a finite number"),
    (lambda p: p.clear() or p.update({"example_id": 0, "label": 2}), "is not a StereoSet predictions file"),
]


@pytest.mark.parametrize(("change", "phrase"), PREDICTION_FILES, ids=["unknown id", "missing ids", "not a number",
                                                                       "another benchmark"])
def test_a_bad_predictions_file_is_one_sentence_and_stores_nothing(change, phrase: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    file = _one_cluster_file(tmp_path, change)
    code, out, err = _run(capsys, tmp_path / "s.duckdb", "stereoset", "--predictions", str(file))
    assert code == 2 and out == "" and phrase in err and "p.json" in err and err.count("\n") == 1, err
    assert not (tmp_path / "s.duckdb").exists() or RunStore(tmp_path / "s.duckdb").list_runs() == []


def test_a_stereoset_file_given_for_bbq_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = _one_cluster_file(tmp_path, lambda p: None)
    code, _, err = _run(capsys, tmp_path / "s.duckdb", "bbq", "--subset", "Religion", "--limit", "3",
                        "--predictions", str(file))
    assert code == 2 and "is not an lm-eval --log_samples file" in err and err.count("\n") == 1, err


def test_lm_eval_samples_of_crows_pairs_are_evaluated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pairs = [p for p in D.crows_pairs() if p.bias_type == "religion"]
    pairs = list({(p.sent_more, p.sent_less): p for p in pairs}.values())  # a duplicated pair: one document
    lines = []
    for n, pair in enumerate(pairs):  # lm-eval logs numbers as strings; sent_more wins in two pairs of three
        more, less = (-10.0, -12.5) if n % 3 else (-11.0, -10.0)
        lines.append({"doc_id": n, "doc": {"sent_more": pair.sent_more, "sent_less": pair.sent_less},
                      "arguments": [], "resps": [], "filtered_resps": [[str(more), "False"], [str(less), "False"]]})
    file = tmp_path / "samples_crows_pairs_english.jsonl"
    file.write_text("\n".join(json.dumps(line) for line in lines))
    code, out, err = _run(capsys, tmp_path / "s.duckdb", "crows-pairs", "--subset", "religion", "--predictions",
                          str(file), "--resamples", "0", "--json")
    assert code == 0, err
    overall = json.loads(out)["overall"]
    assert overall["n"] == 105 and len(pairs) == 104  # the duplicated pair's document scores both copies
    duplicate = next(n for n, p in enumerate(pairs) if p.item == "cp-1459" or p.sent_more == next(
        q.sent_more for q in D.crows_pairs() if q.item == "cp-1459"))
    wins = sum(1 for n in range(len(pairs)) if n % 3) + (1 if duplicate % 3 else 0)
    assert overall["pct_stereotype"] == pytest.approx(wins / 105)
    assert overall["likelihood_diff"] == pytest.approx((2.5 * wins + 1.0 * (105 - wins)) / 105)


def test_bbq_predictions_with_a_prediction_field_are_evaluated(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    items = D.bbq("Religion")
    file = tmp_path / "religion_predictions.jsonl"  # every answer names the targeted group
    file.write_text("\n".join(json.dumps({"category": i.category, "example_id": i.example_id,
                                          "prediction": i.answers[i.target_loc]}) for i in items))
    code, out, err = _run(capsys, tmp_path / "s.duckdb", "bbq", "--subset", "Religion", "--predictions", str(file),
                          "--resamples", "0", "--json")
    assert code == 0, err
    cells = json.loads(out)["by_category"]["Religion"]
    for condition in ("ambig", "disambig"):
        chosen = [i for i in items if i.condition == condition]
        accuracy = sum(i.label == i.target_loc for i in chosen) / len(chosen)
        raw = 2 * sum(i.polarity == "neg" for i in chosen) / len(chosen) - 1  # biased = a negative question
        assert cells[condition]["accuracy"] == pytest.approx(accuracy)
        assert cells[condition]["bias"] == pytest.approx(raw * (1 - accuracy) if condition == "ambig" else raw)
