"""`datscore --direction-scores`: the exact JSON contract (Eq. 2/3/5, |r|) and bad uploads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.cli import build_parser, main

# Hand-computed: r(A,B) = 0.8, r(A,C) = -1, r(B,C) = -0.8 -> w = (-0.2, 0.0, -1.8)
SCORES = """segment_id,direction,score
s1,A,1
s1,B,1
s1,C,4
s2,A,2
s2,B,3
s2,C,3
s3,A,3
s3,B,2
s3,C,2
s4,A,4
s4,B,4
s4,C,1
"""
EXPECTED = {"s1": -0.2 * 1 - 1.8 * 4, "s2": -0.2 * 2 - 1.8 * 3, "s3": -0.2 * 3 - 1.8 * 2, "s4": -0.2 * 4 - 1.8 * 1}


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run_json(capsys: pytest.CaptureFixture, *args: str) -> dict:
    assert main(["datscore", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_exact_output_with_hand_computed_weights_scores_tau_and_r(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    scores = write(tmp_path, "scores.csv", SCORES)
    only = run_json(capsys, "--direction-scores", scores)
    assert list(only) == ["weights", "scores"]
    assert only["weights"] == pytest.approx({"A": -0.2, "B": 0.0, "C": -1.8})
    assert only["scores"] == pytest.approx(EXPECTED)
    # DATScore: s4 (-2.6) > s3 (-4.2) > s2 (-5.8) > s1 (-7.4)
    rr = write(tmp_path, "rr.csv", "better_id,worse_id\ns4,s3\ns3,s2\ns1,s2\ns2,s2x\n".replace("s2,s2x\n", ""))
    da = write(tmp_path, "da.csv", "segment_id,score\ns1,10\ns2,20\ns3,40\ns4,30\n")
    full = run_json(capsys, "--direction-scores", scores, "--human-rr", rr, "--human-da", da)
    assert list(full) == ["weights", "scores", "kendall_tau_like", "pearson_abs"]
    assert full["kendall_tau_like"] == pytest.approx((2 - 1) / 3)
    # |r| between (-7.4, -5.8, -4.2, -2.6) and (10, 20, 40, 30): r = 0.8 by hand (same deviations as A, B)
    assert full["pearson_abs"] == pytest.approx(0.8)


def test_metric_tie_counts_as_discordant(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    scores = write(tmp_path, "scores.csv", "segment_id,direction,score\na,X,1\na,Y,1\nb,X,1\nb,Y,1\nc,X,2\nc,Y,3\n")
    rr = write(tmp_path, "rr.csv", "better_id,worse_id\na,b\nc,a\n")
    assert run_json(capsys, "--direction-scores", scores, "--human-rr", rr)["kendall_tau_like"] == 0.0


def test_the_score_mode_parses_next_to_the_direction_scores_form() -> None:
    args = build_parser().parse_args(["datscore", "score", "--data", "x.csv", "--src-lang", "fr", "--tgt-lang", "en",
                                      "--model", "m", "--json"])
    assert args.datscore_mode == "score" and args.json and args.model == "m" and args.handler.__name__ == "run_score"
    args = build_parser().parse_args(["datscore", "--direction-scores", "f.csv", "--json"])
    assert args.datscore_mode is None and args.json and args.handler.__name__ == "run_direction_scores"


@pytest.mark.parametrize(("files", "message"), [
    ({"s.csv": "segment,direction,score\ns1,A,1\n"}, "s.csv: missing column segment_id"),
    ({"s.csv": "segment_id,direction\ns1,A\n"}, "s.csv: missing column score"),
    ({"s.csv": "segment_id,direction,score\ns1,A,1\ns1,B,2\n"}, "s.csv: has only one segment ('s1')"),
    ({"s.csv": "segment_id,direction,score\ns1,A,1\ns2,A,2\n"}, "s.csv: has only one direction"),
    ({"s.csv": "segment_id,direction,score\ns1,A,1\ns1,B,x\n"}, "s.csv line 3: field 'score' is not a number ('x')"),
    ({"s.csv": "segment_id,direction,score\ns1,A,1\ns1,A,2\n"}, "s.csv line 3: segment 's1' already has a score"),
    ({"s.csv": SCORES, "rr.csv": "better_id,worse_id\ns1,zz\n"},
     "rr.csv line 2: field 'worse_id' names segment 'zz', which is not in"),
    ({"s.csv": SCORES, "rr.csv": "better,worse\ns1,s2\n"}, "rr.csv: missing columns better_id, worse_id"),
    ({"s.csv": SCORES, "da.csv": "segment_id,score\ns1,1\nq9,2\n"},
     "da.csv line 3: field 'segment_id' names segment 'q9', which is not in"),
    ({"s.csv": SCORES, "da.csv": "segment_id,score\ns1,\n"}, "da.csv line 2: field 'score' is empty"),
])
def test_bad_uploads_get_one_sentence_naming_file_row_field(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                             files: dict[str, str], message: str) -> None:
    paths = {name: write(tmp_path, name, text) for name, text in files.items()}
    args = ["datscore", "--direction-scores", paths["s.csv"]]
    if "rr.csv" in paths:
        args += ["--human-rr", paths["rr.csv"]]
    if "da.csv" in paths:
        args += ["--human-da", paths["da.csv"]]
    assert main([*args, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    error = captured.err.strip()
    assert message in error and error.count("\n") == 0 and "Traceback" not in error


def test_missing_scores_follow_the_stated_rule(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    scores = write(tmp_path, "s.csv", SCORES + "s5,A,1\ns5,B,\n")
    assert main(["datscore", "--direction-scores", scores, "--json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["scores"]["s5"] is None and payload["weights"] == pytest.approx({"A": -0.2, "B": 0.0, "C": -1.8})
    assert "1 segment(s) lack a score" in captured.err


SEGMENTS = """segment_id,src,ref,hypo,score
a,Le médecin a dit.,The doctor said.,The doctor said.,90
b,Le médecin a dit.,The doctor said.,The nurse said.,40
c,L'infirmière a dit.,The nurse said.,The nurse told.,70
"""


def test_score_mode_runs_the_stored_pipeline_and_resumes_from_the_store(tmp_path: Path, tiny_m2m100: Path,
                                                                        isolated_store: Path,
                                                                        capsys: pytest.CaptureFixture) -> None:
    data = write(tmp_path, "segments.csv", SEGMENTS)
    rr = write(tmp_path, "rr.csv", "better_id,worse_id\na,b\nc,b\n")
    args = ["datscore", "score", "--data", data, "--src-lang", "fr", "--tgt-lang", "en", "--model", str(tiny_m2m100),
            "--max-new-tokens", "4", "--human-rr", rr, "--resamples", "50", "--json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["metric"] == "DATScore" and first["n_segments"] == 3 and not first["from_cache"]
    assert set(first["weights"]["entropy"]) == {"Src→Hypo", "Hypo→Src", "Ref→Hypo", "Hypo→Ref", "Trans1→Hypo",
                                                "Hypo→Trans1", "Trans2→Hypo", "Hypo→Trans2"}
    assert {row["statistic"] for row in first["meta_evaluation"]} == {"kendall_tau_like"}
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["from_cache"] and second["scores"] == first["scores"] and second["runs"] == first["runs"]


def test_score_mode_bad_segments_file_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = write(tmp_path, "segments.csv", "src,ref\nLe chat.,The cat.\n")
    assert main(["datscore", "score", "--data", data, "--src-lang", "fr", "--tgt-lang", "en", "--model", "x"]) == 2
    assert "segments.csv: missing column hypo" in capsys.readouterr().err
    one = write(tmp_path, "one.csv", "src,ref,hypo\nLe chat.,The cat.,The cat.\n")
    assert main(["datscore", "score", "--data", one, "--src-lang", "fr", "--tgt-lang", "en", "--model", "x"]) == 2
    assert "one.csv: has only one segment" in capsys.readouterr().err
    assert main(["datscore", "score", "--data", "synthetic", "--src-lang", "en", "--tgt-lang", "en",
                 "--model", "x"]) == 2
    assert "both 'en'" in capsys.readouterr().err


def test_negative_eq3_weights_are_said_on_stderr_and_the_json_contract_stays(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture) -> None:
    scores = write(tmp_path, "scores.csv", SCORES)
    assert main(["datscore", "--direction-scores", scores, "--json"]) == 0
    captured = capsys.readouterr()
    assert list(json.loads(captured.out)) == ["weights", "scores"]
    note = [line for line in captured.err.splitlines() if "negative weight" in line]
    assert len(note) == 1 and "A -0.2" in note[0] and "C -1.8" in note[0] and "clipped to 0" in note[0]
