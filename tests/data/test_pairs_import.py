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
    assert any("bleu" in note for note in dataset.notes)  # stored score columns are reported, not used


def test_lf_file_with_final_newline_reads_the_same(tmp_path: Path) -> None:
    text = FIXTURE.read_bytes().decode().replace("\r\n", "\n") + "\n"
    (tmp_path / "gender.tsv").write_text(text)
    assert pairs.read_metric_fairness(tmp_path / "gender.tsv").pairs == pairs.read_metric_fairness(FIXTURE).pairs


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("candidate\treference\na she\tref\n", "line 2: odd number of data rows"),
        ("cand\treference\na\tb\nc\td\n", "missing column 'candidate'"),
        ("candidate\treference\n\tref\nhe\tref\n", "line 2: candidate is empty"),
        ("candidate\treference\nshe\t\nhe\tref\n", "line 2: reference is empty"),
        ("candidate\treference\nsame\tref\nsame\tref\n", "lines 2-3: the two candidates are identical"),
    ],
)
def test_bad_release_files_name_file_and_row(tmp_path: Path, body: str, message: str) -> None:
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
    bad_json = tmp_path / "b.jsonl"
    bad_json.write_text('{"candidate1": "a", "candidate2": "b", "reference": "c"}\n{oops\n')
    with pytest.raises(PairDataError, match=r"b\.jsonl, line 2: not valid JSON"):
        pairs.read_pairs_table(bad_json)
    stereo = tmp_path / "s.csv"
    stereo.write_text("candidate1,candidate2,reference,stereotypical\na,b,c,maybe\n")
    with pytest.raises(PairDataError, match=r"s\.csv, line 2: stereotypical must be 1, 2 or empty"):
        pairs.read_pairs_table(stereo)


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


def test_saving_unchanged_references_changes_nothing() -> None:
    """The page passes every row's reference back; rows the user did not touch must stay as they were."""
    dataset = pairs.read_metric_fairness(FIXTURE)
    untouched = dataset.with_references({p.item: p.reference for p in dataset.pairs})
    assert untouched.pairs == dataset.pairs
    assert untouched.pairs[2].reference2 == "Persons are slow."


def test_versions_live_next_to_the_chosen_store(tmp_path: Path) -> None:
    assert pairs.versions_dir(tmp_path / "elsewhere.duckdb") == tmp_path / "metric_bias_datasets"
