"""Human judgments: the shipped REALSumm copy, the REALSumm folder format, a user's table, and bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from fairness_core.data import judgments as J

SHARED = Path(__file__).resolve().parents[2] / "data" / "realsumm"


def table(rows: list[str], header: str = "item_id,system,candidate,reference,human") -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode("utf-8")


GOOD = [f"d{i},{s},cand {i}{s},ref {i},{(i * 3 + k) % 5 / 4}" for i in range(4) for k, s in enumerate("ABC")]


def test_the_shipped_realsumm_copy_is_100_documents_by_24_systems() -> None:
    judgments = J.load_realsumm()
    assert (judgments.n_items, judgments.n_systems, len(judgments)) == (100, 24, 2400)
    assert judgments.stored_columns == ["BARTScore-BART-base (stored)", "BARTScore-BART-base+adapter (stored)"]
    assert list(judgments.frame.columns[:6]) == ["item_id", "system", "candidate", "reference", "source", "human"]
    assert judgments.frame["source"].str.len().min() > 0 and judgments.notes == ()
    assert "Metric-Fairness" in judgments.licence and "MIT" in judgments.licence and "Bhandari" in judgments.licence
    first = judgments.frame.iloc[0]
    assert (first["item_id"], first["system"], first["human"]) == ("0", "banditsumm_out", 0.5)
    assert first["candidate"].startswith("( cnn ) two cnn heroes are among the earthquake survivors")


def test_the_folder_format_reads_the_same_rows_as_the_shipped_copy(tmp_path: Path) -> None:
    for name in (J.DOCUMENTS_FILE, J.SUMMARIES_FILE):
        (tmp_path / name).write_bytes(gzip.decompress((SHARED / f"{name}.gz").read_bytes()))
    from_folder = J.read_realsumm_dir(tmp_path)
    shipped = J.load_realsumm()
    assert from_folder.data_hash == shipped.data_hash
    assert from_folder.frame.equals(shipped.frame)


def test_a_table_reads_from_bytes_with_stored_columns_and_notes() -> None:
    rows = [f"{r},{0.1 * n:.1f},fluent" for n, r in enumerate(GOOD)]
    judgments = J.read_table(table(rows, "item_id,system,candidate,reference,human,BLEU,comment"), "mine.csv")
    assert (judgments.n_items, judgments.n_systems) == (4, 3)
    assert judgments.stored_columns == ["BLEU (stored)"]
    assert any("comment hold text" in note for note in judgments.notes)
    assert judgments.frame["source"].eq("").all()


def test_jsonl_and_csv_of_the_same_rows_are_the_same_version() -> None:
    csv_rows = J.read_table(table(GOOD), "a.csv")
    lines = []
    for row in GOOD:
        item, system, candidate, reference, human = row.split(",")
        lines.append(json.dumps({"item_id": item, "system": system, "candidate": candidate, "reference": reference,
                                 "human": float(human)}))
    jsonl_rows = J.read_table(("\n".join(lines) + "\n").encode(), "a.jsonl")
    assert jsonl_rows.data_hash == csv_rows.data_hash


def test_an_empty_candidate_is_kept_and_counted() -> None:
    rows = list(GOOD)
    rows[0] = "d0,A,,ref 0,0.0"
    judgments = J.read_table(table(rows), "empty.csv")
    assert len(judgments) == 12 and any("1 empty candidate(s) kept" in note for note in judgments.notes)


@pytest.mark.parametrize(("rows", "message"), [
    ([*GOOD[:-1], "d3,C,cand,ref 3,"], "mine.csv, line 13: field 'human' is empty"),
    ([*GOOD[:-1], "d3,C,cand,ref 3,good"], "mine.csv, line 13: field 'human' is not a number ('good')"),
    ([*GOOD[:-1], "d3,C,cand,ref 3,inf"], "field 'human' is infinite"),
    ([*GOOD, "d0,A,again,ref 0,0.5"], "line 14: item 'd0' already has a candidate from system 'A' (line 2)"),
    (GOOD[:-1], "system 'C' has candidates for 3 of 4 items (none for item 'd3')"),
    (GOOD[:6], "has 2 item(s); a correlation with an interval over items needs at least 3"),
    ([r.rsplit(",", 1)[0] + ",0.5" for r in GOOD], "every human score is 0.5; a correlation with a constant is"),
    ([*GOOD[:-1], "d3,C,cand,,0.5"], "line 13: field 'reference' is empty"),
])
def test_bad_judgments_are_one_sentence_naming_the_row_or_reason(rows: list[str], message: str) -> None:
    with pytest.raises(J.JudgmentDataError) as caught:
        J.read_table(table(rows), "mine.csv")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_column_is_named() -> None:
    with pytest.raises(J.JudgmentDataError, match="missing column human"):
        J.read_table(b"item_id,system,candidate,reference\nd0,A,x,y\n", "mine.csv")


def test_a_summary_of_an_unknown_document_is_named(tmp_path: Path) -> None:
    (tmp_path / J.DOCUMENTS_FILE).write_text('{"doc_id": "0", "source": "s", "reference": "r"}\n')
    (tmp_path / J.SUMMARIES_FILE).write_text('{"doc_id": "7", "system": "x", "summary": "a", '
                                             '"litepyramid_recall": 0.5}\n')
    with pytest.raises(J.JudgmentDataError, match=r"line 1: document .7. is not in realsumm_documents\.jsonl"):
        J.read_realsumm_dir(tmp_path)


def test_uploaded_bytes_that_hold_a_path_are_text_not_a_path() -> None:
    with pytest.raises(J.JudgmentDataError, match="missing columns"):
        J.read_table(str(SHARED / "realsumm_summaries.jsonl.gz").encode(), "upload.csv")



GROUPED = [f"{lp}:{i},{s},cand,ref,{lp},{(i * 3 + k) % 5 / 4}" for lp, systems in (("de-en", "AB"), ("en-de", "ACD"))
           for i in range(3) for k, s in enumerate(systems)]
GROUP_HEADER = "item_id,system,candidate,reference,group,human"


def test_a_group_column_gives_each_group_its_own_items_and_systems() -> None:
    """WMT-style data: one group per language pair; a system name shared by two pairs is two systems, and every
    system scores every item of its own group only."""
    judgments = J.read_table(table(GROUPED, GROUP_HEADER), "wmt.csv")
    assert judgments.groups == ["de-en", "en-de"] and judgments.n_items == 6 and len(judgments) == 15
    assert len(set(judgments.system_codes)) == 5 and "in 2 groups" in judgments.describe()
    assert judgments.stored_columns == [] and list(judgments.frame.columns[:6]) == [
        "item_id", "system", "candidate", "reference", "source", "human"]
    plain = J.read_table(table(GOOD), "a.csv")
    assert plain.groups == [""] and plain.n_groups == 1 and "group" not in plain.frame


@pytest.mark.parametrize(("rows", "message"), [
    ([*GROUPED, "de-en:0,C,cand,ref,en-de,0.5"],
     "line 17: item 'de-en:0' is in group 'en-de' but in group 'de-en' on line 2; an item belongs to one group"),
    (GROUPED[:-1], "system 'D' of group 'en-de' has candidates for 2 of 3 items (none for item 'en-de:2'); every "
                   "system must score every item of group 'en-de'"),
    ([*GROUPED[:-1], "en-de:2,D,cand,ref,,0.5"], "line 16: field 'group' is empty"),
])
def test_bad_groups_are_one_sentence(rows: list[str], message: str) -> None:
    with pytest.raises(J.JudgmentDataError) as caught:
        J.read_table(table(rows, GROUP_HEADER), "wmt.csv")
    assert message in str(caught.value) and "\n" not in str(caught.value)
