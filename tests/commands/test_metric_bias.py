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
        assert set(entry) == {"bias", "ci_low", "ci_high", "n_pairs", "n_excluded"} and entry["n_pairs"] == 3
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


def test_a_pair_with_identical_candidates_is_kept_counted_and_noted(tmp_path: Path, isolated_store: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    """The released race.tsv has one such pair; refusing the file made the race column unreproducible."""
    path = tmp_path / "race.tsv"
    path.write_text("candidate\treference\tBLEU\nblack men run\tmen run\t0.5\nwhite men run\tmen run\t0.4\n"
                    "the men run\tmen run\t0.9\nthe men run\tmen run\t0.9\n")
    assert main(["metric-bias", "--data", str(path), "--format", "metric-fairness", "--metrics", "chrf",
                 "--stored-scores", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)["race"]
    assert result["chrf"]["n_pairs"] == 2 and result["BLEU (stored)"]["n_pairs"] == 2
    assert result["BLEU (stored)"]["bias"] == pytest.approx((20 + 0) / 2)  # unit 0.9 - 0.4: gaps 100 * 0.1 / 0.5 and 0
    assert "1 pair(s) have identical candidates (lines 4-5); kept with gap 0" in captured.err


def test_duplicate_pair_ids_are_refused_with_their_lines(tmp_path: Path, isolated_store: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """Issue 12: the self-join multiplied a repeated id (3 pairs reported as n_pairs = 5)."""
    path = tmp_path / "dup.csv"
    path.write_text("id,candidate1,candidate2,reference\na,he is a nurse,she is a nurse,the person is a nurse\n"
                    "a,he was a great doctor,she was a great doctor,the person was a great doctor\n"
                    "b,he sings,she sings,the person sings\n")
    assert main(["metric-bias", "--data", str(path), "--format", "pairs", "--json"]) == 2
    assert "dup.csv: pair id 'a' occurs more than once (line 2, line 3)" in capsys.readouterr().err
    assert RunStore(isolated_store).list_runs() == []


def test_the_stored_scores_of_a_released_file_are_metrics_named_by_their_header(
        isolated_store: Path, capsys: pytest.CaptureFixture) -> None:
    result = run_json(capsys, "--data", str(FIXTURE), "--format", "metric-fairness", "--metrics", "bleu",
                      "--config", "metric-fairness-2022", "--stored-scores")
    assert sorted(result["gender"]) == ["BERTScore (stored)", "BLEU (stored)", "bleu"]
    assert main(["metric-bias", "--data", str(FIXTURE), "--format", "metric-fairness", "--stored-scores", "PRISM",
                 "--json"]) == 2
    assert "has no stored score column 'PRISM'; it has: BLEU, BERTScore" in capsys.readouterr().err


def test_an_option_no_chosen_metric_takes_is_refused(isolated_store: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["metric-bias", "--format", "demo", "--metrics", "bleu", "--idf", "--json"]) == 2
    assert "the idf option applies to bertscore only" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"cand\treference\nshe\tref\nhe\tref\n", "bad.tsv, line 1: missing column 'candidate'"),
        (b"candidate\treference\n\xff\xfe\tref\nhe\tref\n", "bad.tsv, line 2: not UTF-8"),
        (b"candidate\treference\n\tref\nhe\tref\n", "bad.tsv: no usable pairs"),
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
    from fairness_core.metric_bias.request import RequestError as UserFacingError
    from fairness_core.metric_bias.request import load_dataset

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


RELEASE = sorted((Path(__file__).parents[1] / "data" / "fixtures" / "metric_fairness_release").glob("*.tsv"))


def test_issue_7_done_when_all_six_release_files_with_and_without_stored_scores(
        isolated_store: Path, capsys: pytest.CaptureFixture) -> None:
    """The Done-when command of issue 7 on six files in the release layout (31 columns, 29 stored scores)."""
    assert [p.stem for p in RELEASE] == ["age", "gender", "physical-appearance", "race", "religion", "socioeconomic"]
    base = ["--data", *map(str, RELEASE), "--format", "metric-fairness", "--metrics", "bleu,rouge1,nist,chrf",
            "--config", "metric-fairness-2022"]
    result = run_json(capsys, *base)
    assert sorted(result) == [p.stem for p in RELEASE]
    for attribute, metrics in result.items():
        assert sorted(metrics) == ["bleu", "chrf", "nist", "rouge1"]
        assert {m["n_pairs"] for m in metrics.values()} == {5 if attribute == "race" else 4}
    assert main(["metric-bias", *base, "--stored-scores", "--json"]) == 0
    captured = capsys.readouterr()
    stored = json.loads(captured.out)
    header = RELEASE[0].read_text().splitlines()[0].split("\t")[2:-1]
    assert len(header) == 29 and header[0] == "BLEU" and header[-1] == "FrugalScore-BERT-medium"
    for attribute in stored:
        assert set(stored[attribute]) == {f"{h} (stored)" for h in header} | {"bleu", "rouge1", "nist", "chrf"}
    # the identical pair is kept (gap 0), counted in n_pairs and noted on stderr
    race = stored["race"]
    assert race["BLEU (stored)"]["n_pairs"] == 5 and race["BLEU (stored)"]["n_excluded"] == 0
    assert "note: race.tsv: 1 pair(s) have identical candidates (lines 10-11); kept with gap 0" in captured.err


def test_a_cell_of_one_megabyte_is_read(tmp_path: Path, isolated_store: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 12 §3: a valid 1 MB cell failed with `field larger than field limit`."""
    long = " ".join(["word"] * 210_000)  # ~1 MB
    path = tmp_path / "long.csv"
    path.write_text(f"candidate1,candidate2,reference\nhe {long},she {long},they {long}\nhe runs,she runs,they run\n")
    result = run_json(capsys, "--data", str(path), "--format", "pairs", "--metrics", "bleu")
    assert result["long"]["bleu"]["n_pairs"] == 2


def test_a_metric_that_cannot_run_is_reported_and_the_others_compute(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A clone without the WordNet set-up step: METEOR is unavailable with its fix, BLEU and chrF still compute."""
    import fairness_core.metrics.ngram as ngram

    monkeypatch.setattr(ngram, "wordnet_installed", lambda: False)
    code = main(["metric-bias", "--format", "demo", "--metrics", "bleu,meteor,chrf", "--resamples", "50", "--json",
                 "--store", str(tmp_path / "runs.duckdb")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "skipped METEOR: METEOR is unavailable here: NLTK's WordNet is not installed (fix: make run" \
        in captured.err
    assert set(json.loads(captured.out)["gender"]) == {"bleu", "chrf"}
