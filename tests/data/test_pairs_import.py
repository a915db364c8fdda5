"""Importing paired data: the paper's released TSV (with all its quirks), tables, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.data import pairs
from fairness_core.data.pairs import PairDataError

FIXTURE = Path(__file__).parent / "fixtures" / "gender.tsv"


def test_fixture_has_the_release_quirks() -> None:
    raw = FIXTURE.read_bytes()
    assert b"\r\n" in raw and not raw.endswith(b"\n")  # CRLF, no final newline
    assert b"\t\r\n" in raw  # a trailing tab: an empty last column
    assert b'\t"The CEO' in raw or raw.count(b'"The CEO') == 3  # CSV-quoted cells


def test_release_format_pairs_rows_and_strips_quotes() -> None:
    dataset = pairs.read_metric_fairness(FIXTURE)
    assert dataset.name == "gender" and len(dataset) == 3
    first, second, third = dataset.pairs
    assert first.attribute == "gender"
    assert first.candidate1 == "The nurse said that she would help."
    assert first.candidate2 == "The nurse said that he would help."
    assert first.reference == "The nurse said that the nurse would help."
    assert first.reference2 is None  # both rows carry the same reference
    # quotes that wrap a cell are not part of the text
    assert second.candidate1 == "The CEO thanked the clerk, because she was kind."
    assert second.reference2 is None
    # the last pair's rows carry different references: each candidate keeps its own
    assert third.reference == "People are slow." and third.reference2 == "Persons are slow."
    assert third.reference_for(1) == "People are slow." and third.reference_for(2) == "Persons are slow."
    assert any("different reference" in note for note in dataset.notes)
    assert any("2 stored score column(s) available as metrics (BLEU, BERTScore)" in n for n in dataset.notes)
    assert first.stored == (("BLEU", 0.51, 0.51), ("BERTScore", 0.93, 0.90))


def test_lf_file_with_final_newline_reads_the_same(tmp_path: Path) -> None:
    text = FIXTURE.read_bytes().decode().replace("\r\n", "\n") + "\n"
    (tmp_path / "gender.tsv").write_text(text)
    assert pairs.read_metric_fairness(tmp_path / "gender.tsv").pairs == pairs.read_metric_fairness(FIXTURE).pairs


GOOD = "she runs\tref\nhe runs\tref\n"


@pytest.mark.parametrize(
    ("body", "kept", "note"),
    [
        ("candidate\treference\n" + GOOD + "a she\tref\n", 1, "line 4 has no partner row (odd number of data "
                                                             "rows, 3); skipped"),
        ("candidate\treference\n\tref\nhe\tref\n" + GOOD, 1, "1 pair(s) skipped (line 2: candidate is empty)"),
        ("candidate\treference\nshe\t\nhe\tref\n" + GOOD, 1, "1 pair(s) skipped (line 2: reference is empty)"),
        ("candidate\treference\textra\nshe\nhe\tref\t1\n" + GOOD, 1, "1 pair(s) skipped (line 2 has too few"),
        ("candidate\treference\nsame\tref\nsame\tref\n" + GOOD, 2,
         "1 pair(s) have identical candidates (lines 2-3); kept with gap 0"),
        ("candidate\treference\tBLEU\tnote\n" + "she\tref\t0.5\tok\nhe\tref\t\tfine\n", 1,
         "1 stored score column(s) available as metrics (BLEU); 1 empty score cell(s) are missing values"),
    ],
)
def test_odd_rows_in_release_files_are_kept_or_skipped_by_rule_and_noted(tmp_path: Path, body: str, kept: int,
                                                                          note: str) -> None:
    path = tmp_path / "race.tsv"
    path.write_text(body)
    dataset = pairs.read_metric_fairness(path)
    assert len(dataset) == kept
    assert any(note in n and n.startswith("race.tsv: ") for n in dataset.notes), dataset.notes


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("cand\treference\na\tb\nc\td\n", "missing column 'candidate'"),
        ("candidate\treference\n\tref\nhe\tref\n", "no usable pairs"),
        ("", "the file is empty"),
    ],
)
def test_unusable_release_files_name_the_file(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "race.tsv"
    path.write_text(body)
    with pytest.raises(PairDataError, match=r"race\.tsv") as caught:
        pairs.read_metric_fairness(path)
    assert message in str(caught.value)


def test_non_utf8_bytes_are_reported_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "age.tsv"
    path.write_bytes(b"candidate\treference\nold \xe9 man\tref\nyoung man\tref\n")
    with pytest.raises(PairDataError, match=r"age.tsv, line 2: not UTF-8"):
        pairs.read_metric_fairness(path)


def test_a_50_mb_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.csv"
    with open(path, "wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: costs no disk
    with pytest.raises(PairDataError, match=r"huge.csv: file is 52 MB; the limit is 10 MB"):
        pairs.read_pairs_table(path)


def test_table_upload_csv_and_jsonl(tmp_path: Path) -> None:
    csv_path = tmp_path / "mine.csv"
    csv_path.write_text("candidate1,candidate2,reference,attribute,stereotypical\n"
                        "she is a nurse,he is a nurse,the nurse is here,gender,1\n"
                        "\"he cooks, well\",she cooks,the cook cooks,,2\n")
    table = pairs.read_pairs_table(csv_path)
    assert [p.attribute for p in table.pairs] == ["gender", "mine"]  # missing attribute -> file stem
    assert [p.stereotypical for p in table.pairs] == [1, 2]
    assert table.pairs[1].candidate1 == "he cooks, well"

    jsonl = tmp_path / "mine.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in [
        {"candidate1": "a he", "candidate2": "a she", "reference": "a person"},
        {"candidate1": "b he", "candidate2": "b she", "reference": "b person", "stereotypical": None}]))
    assert len(pairs.read_pairs_table(jsonl)) == 2


def test_table_upload_errors(tmp_path: Path) -> None:
    missing = tmp_path / "m.csv"
    missing.write_text("candidate1,reference\nx,y\n")
    with pytest.raises(PairDataError, match=r"m\.csv, line 1: missing column 'candidate2'"):
        pairs.read_pairs_table(missing)
    repeated = tmp_path / "r.csv"
    repeated.write_text("candidate1,candidate2,reference,reference\nx,y,z,w\n")
    with pytest.raises(PairDataError, match=r"r\.csv, line 1: column 'reference' appears more than once"):
        pairs.read_pairs_table(repeated)


def test_table_rows_with_problems_are_skipped_or_kept_by_rule(tmp_path: Path) -> None:
    bad_json = tmp_path / "b.jsonl"
    bad_json.write_text('{"candidate1": "a", "candidate2": "b", "reference": "c"}\n{oops\n')
    table = pairs.read_pairs_table(bad_json)
    assert len(table) == 1 and "b.jsonl: 1 row(s) skipped (line 2 is not valid JSON" in table.notes[0]
    stereo = tmp_path / "s.csv"
    stereo.write_text("candidate1,candidate2,reference,stereotypical\na,b,c,maybe\nd,e,f,1\n")
    table = pairs.read_pairs_table(stereo)
    assert [p.stereotypical for p in table.pairs] == [None, 1]
    assert "s.csv: stereotypical is not 1, 2 or empty on 1 row(s) (line 2); read as unknown" in table.notes


def test_table_score_columns_come_in_pairs(tmp_path: Path) -> None:
    path = tmp_path / "scored.csv"
    path.write_text("candidate1,candidate2,reference,bleu_1,bleu_2,comet_1,comet_2,note_1,note_2\n"
                    "he runs,she runs,they run,0.5,0.25,0.9,,a,b\n")
    table = pairs.read_pairs_table(path)
    name, first, second = table.pairs[0].stored[1]
    assert table.pairs[0].stored[0] == ("bleu", 0.5, 0.25) and name == "comet" and first == 0.9
    assert second != second  # an empty cell is a missing value (NaN)
    assert table.stored_columns == ["bleu", "comet"]
    assert any("column pair(s) note hold text" in n for n in table.notes)


def test_merge_keeps_one_attribute_per_file(tmp_path: Path) -> None:
    other = tmp_path / "race.tsv"
    other.write_text("candidate\treference\nblack men run\tmen run\nwhite men run\tmen run\n")
    merged = pairs.merge([pairs.read_metric_fairness(FIXTURE), pairs.read_metric_fairness(other)])
    assert merged.attributes == ["gender", "race"] and len(merged) == 4


def test_edited_references_become_a_new_content_hashed_version(tmp_path: Path) -> None:
    dataset = pairs.read_metric_fairness(FIXTURE)
    edited = dataset.with_references({"gender-0002": "Someone is slow."})
    assert edited.content_hash() != dataset.content_hash()
    assert edited.pairs[2].reference == "Someone is slow." and edited.pairs[2].rule == "edited"
    assert edited.pairs[2].reference2 is None  # the edit is the reference of both candidates
    assert edited.pairs[:2] == dataset.pairs[:2]
    path = pairs.save_version(edited, tmp_path)
    assert path.name == f"gender-{edited.content_hash()[:12]}.jsonl"
    assert pairs.save_version(edited, tmp_path) == path  # same content, same file
    loaded = pairs.load_version(path)
    assert loaded.pairs == edited.pairs and loaded.content_hash() == edited.content_hash()
    assert pairs.list_versions(tmp_path) == [path]
    with pytest.raises(PairDataError, match="reference is empty"):
        dataset.with_references({"gender-0000": "  "})
    # typed into the editor's cell (issue 36's battery): control characters and a run-on text are one sentence
    with pytest.raises(PairDataError, match=r"^the reference of pair 'gender-0000' contains a control character"):
        dataset.with_references({"gender-0000": "he\x1b[31m is"})
    with pytest.raises(PairDataError, match="is 10,000,000 characters long; at most 5,000 are allowed"):
        dataset.with_references({"gender-0000": "x" * 10_000_000})


def test_saving_unchanged_references_changes_nothing() -> None:
    """The page passes every row's reference back; rows the user did not touch must stay as they were."""
    dataset = pairs.read_metric_fairness(FIXTURE)
    untouched = dataset.with_references({p.item: p.reference for p in dataset.pairs})
    assert untouched.pairs == dataset.pairs
    assert untouched.pairs[2].reference2 == "Persons are slow."


def test_versions_live_next_to_the_chosen_store(tmp_path: Path) -> None:
    assert pairs.versions_dir(tmp_path / "elsewhere.duckdb") == tmp_path / "metric_bias_datasets"


def test_saved_versions_keep_their_data_notes(tmp_path: Path) -> None:
    release = tmp_path / "race.tsv"
    release.write_text("candidate\treference\nthe men run\tmen run\nthe men run\tmen run\n"
                       "black men run\tmen run\nwhite men run\tmen run\n")
    dataset = pairs.read_metric_fairness(release)
    loaded = pairs.load_version(pairs.save_version(dataset, tmp_path / "v"))
    assert loaded.notes == dataset.notes and any("identical candidates" in n for n in loaded.notes)
    path = next((tmp_path / "v").glob("*.jsonl"))
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["dataset"]["notes"] = "not a list"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(PairDataError, match="notes must be a list of text"):
        pairs.load_version(path)
