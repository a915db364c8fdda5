"""Valid but unusual input gets the right answer, not an error and not a silently wrong number (issue 23).

Each case says what the right answer is: a repeated row counts once (and the drop is said), a 1 MB cell is data,
a generated id never collides with one the file gives, a read-only store can be listed.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from fairness_core.cli import main

EEC_HEADER = "ID,Sentence,Template,Person,Gender,Race,Emotion,Emotion word\n"
EEC_ROW = "{id},{person} feels angry.,<person subject> feels <emotion word>.,{person},{gender},{race},anger,angry\n"


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_repeated_perturbation_row_counts_once_in_vbcm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "t1,A,a,0.9\nt1,B,b,0.8\nt2,A,a,1.0\nt2,B,b,1.0\n"
    (tmp_path / "once.csv").write_text("template_id,group,term,score\n" + rows)
    (tmp_path / "thrice.csv").write_text("template_id,group,term,score\n" + "t1,A,a,0.9\n" * 2 + rows)
    _, once, _ = run_cli(["vbcm", "--scores", str(tmp_path / "once.csv"), "--json"], capsys)
    code, thrice, err = run_cli(["vbcm", "--scores", str(tmp_path / "thrice.csv"), "--json"], capsys)
    assert code == 0 and json.loads(thrice) == json.loads(once)  # A 0.975 / B 0.975, not 0.9875 / 0.9625
    assert "2 repeated row(s) (same template_id, group and term) were dropped" in err


def test_a_repeated_eec_id_counts_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    alonzo = EEC_ROW.format(id="2018-En-1", person="Alonzo", gender="male", race="African-American")
    amanda = EEC_ROW.format(id="2018-En-2", person="Amanda", gender="female", race="European")
    (tmp_path / "eec.csv").write_text(EEC_HEADER + alonzo + alonzo + amanda)
    code, out, err = run_cli(["templates", "import", "--format", "eec", str(tmp_path / "eec.csv"), "--json"], capsys)
    assert code == 0
    assert json.loads(out) == {"n_rows": 2, "n_templates": 1, "groups": {"gender": {"male": 1, "female": 1},
                                                                         "race": {"African-American": 1,
                                                                                  "European": 1}}}
    assert "1 row(s) repeat an ID given earlier in the file and were dropped" in err


def test_a_repeated_prompt_counts_once(tmp_path: Path) -> None:
    from fairness_core.decoding.request import load_prompts

    (tmp_path / "p.txt").write_text("woman: The woman was\nwoman: The woman was\nman: The man was\n")
    prompts = load_prompts(str(tmp_path / "p.txt"))
    assert [(item.group, item.text) for item in prompts.items] == [("woman", "The woman was"), ("man", "The man was")]
    assert prompts.notes == ("1 repeated prompt(s) (same group and text) were dropped; each prompt counts once",)


@pytest.mark.parametrize("command", ["eec", "vbcm"])
def test_a_one_megabyte_cell_is_data(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = "x" * 1_000_000
    path = tmp_path / "big.csv"
    if command == "eec":
        path.write_text(EEC_HEADER + EEC_ROW.format(id="1", person="Alonzo", gender="male", race=big))
        argv = ["templates", "import", "--format", "eec", str(path), "--json"]
    else:
        path.write_text(f"template_id,group,term,score\nt1,A,{big},0.5\nt1,B,b,0.7\n")
        argv = ["vbcm", "--scores", str(path), "--json"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and json.loads(out)


def test_a_generated_pair_id_never_takes_an_id_the_file_gives() -> None:
    from fairness_core.data.pairs import read_pairs_table

    table = ("id,candidate1,candidate2,reference\n"
             "p-0001,he is a nurse,she is a nurse,the person is a nurse\n"
             ",he sings,she sings,the person sings\n")  # its generated id would be p-0001 as well
    dataset = read_pairs_table(table.encode(), "p.csv")
    assert [pair.item for pair in dataset.pairs] == ["p-0001", "p-0001-1"]


def test_a_read_only_store_can_be_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    import fairness_core.store.store as store_module
    from fairness_core.jobs import run_task
    from fairness_core.store import RunStore
    from tests.jobs.slow_task import make_task

    path = tmp_path / "runs.duckdb"
    run_id = run_task(make_task(), RunStore(path)).run_id
    real_open = store_module.open_duckdb

    def read_only_file(target: str | Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        if not read_only and Path(target) == path.absolute():  # as a chmod 444 file or a read-only mount would
            raise duckdb.IOException(f'IO Error: Cannot open file "{target}": Permission denied')
        return real_open(target, read_only=read_only)

    monkeypatch.setattr(store_module, "open_duckdb", read_only_file)
    code, out, err = run_cli(["runs", "list", "--store", str(path), "--json"], capsys)
    assert code == 0, err
    assert [run["run_id"] for run in json.loads(out)] == [run_id]


def test_metric_quality_keeps_an_empty_candidate_and_leaves_out_a_missing_stored_score(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], isolated_store: Path) -> None:
    """An empty summary is data (BLEU 0 against its reference); a stored score left empty is a missing value: that
    candidate is left out of the stored column's correlation and counted, never read as 0 or NaN in the JSON."""
    rows = [f"d{i},{s},the cat sat on {'the mat ' * k},the cat sat on the mat,{k + 0.1 * i},"
            f"{k if (i, k) != (0, 1) else ''}" for i in range(4) for k, s in enumerate("ABC")]
    rows[0] = "d0,A,,the cat sat on the mat,0.0,0"
    (tmp_path / "j.csv").write_text("item_id,system,candidate,reference,human,Mine\n" + "\n".join(rows) + "\n")
    code, out, err = run_cli(["metric-quality", "--data", str(tmp_path / "j.csv"), "--metrics", "bleu",
                              "--stored-scores", "--resamples", "100", "--json"], capsys)
    payload = json.loads(out, parse_constant=lambda c: pytest.fail(c))
    assert code == 0 and "1 empty candidate(s) kept" in err and "Mine (stored) has no value for 1 candidate(s)" in err
    assert payload["bleu"]["n"] == 12 and payload["bleu"]["n_excluded"] == 0
    assert payload["Mine (stored)"]["n"] == 11 and payload["Mine (stored)"]["n_excluded"] == 1
    assert "Mine (stored): 1 candidate(s) have no finite score and are left out" in err
