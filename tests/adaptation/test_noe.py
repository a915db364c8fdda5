"""NOEs: person names found by the NER role (spaCy en_core_web_sm), templated, counted, stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_core.adaptation.noe import Corpus, bold_wikipedia, find_noes, noe_templates, read_corpus
from fairness_core.adaptation.templates import SLOT, TemplateImportError, fill

SENTENCES = (
    "Serena Williams is an American professional tennis player.",
    "Angela Merkel met Emmanuel Macron in Paris.",
    "The bridge was completed in 1932.",
    "Yesterday, Albert Einstein gave a lecture in Berlin.",
)


def test_ner_finds_people_and_builds_single_person_templates(store) -> None:
    result = find_noes(Corpus("few", SENTENCES), store)
    assert (result.n_searched, result.n_with_person, result.n_single_person, result.n_multi_person) == (4, 3, 2, 1)
    texts = [t.text for t in result.templates.templates]
    assert texts == [f"{SLOT} is an American professional tennis player.",
                     f"Yesterday, {SLOT} gave a lecture in Berlin."]
    assert [t.attrs["name"] for t in result.templates.templates] == ["Serena Williams", "Albert Einstein"]
    assert result.examples_pool == ("The bridge was completed in 1932.",)
    assert fill(texts[1], "Yui") == "Yesterday, Yui gave a lecture in Berlin."
    again = find_noes(Corpus("few", SENTENCES), store)
    assert again.from_cache and again.run_id == result.run_id


def test_noe_rule_on_given_mentions() -> None:
    templates, with_person, multi = noe_templates(["A B met C.", "No one.", "Only D here."],
                                                  [[[0, 3, "A B"], [8, 9, "C"]], [], [[5, 6, "D"]]])
    assert (with_person, multi) == (2, 1)
    assert [t.text for t in templates] == ["Only {person} here."]


def test_user_corpora(tmp_path: Path) -> None:
    lines = tmp_path / "c.txt"
    lines.write_text("\ufeffone text\r\n\r\ntwo text\r\none text\r\n", encoding="utf-8")
    assert read_corpus(lines).texts == ("one text", "two text")
    table = tmp_path / "c.csv"
    table.write_text('id,comment\n1,"hello, world"\n2,bye\n', encoding="utf-8")
    assert read_corpus(table, "csv", "comment").texts == ("hello, world", "bye")
    with pytest.raises(TemplateImportError, match="no 'text' column"):
        read_corpus(table, "csv", "text")
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text('{"text": "a"}\n{"body": "b"}\n', encoding="utf-8")
    with pytest.raises(TemplateImportError, match="line 2 has no 'text' field"):
        read_corpus(jsonl, "jsonl")


def test_bold_wikipedia_corpus() -> None:
    corpus = bold_wikipedia(("religious_ideology",))
    assert len(corpus.texts) > 500 and corpus.licence == "CC BY-SA 4.0"
    assert all("\n" not in t for t in corpus.texts)
    assert corpus.sample(10, seed=1).texts == corpus.sample(10, seed=1).texts
    with pytest.raises(TemplateImportError, match="unknown BOLD domain"):
        bold_wikipedia(("sports",))


def test_a_corpus_text_longer_than_the_limit_is_skipped_and_counted(tmp_path) -> None:
    """Issue 30 §4: a 10 MB line in an uploaded corpus is not a domain example (and spaCy refuses such a text)."""
    from fairness_core.adaptation.noe import MAX_TEXT_CHARS

    data = ("a short comment\n" + "x" * (MAX_TEXT_CHARS + 1) + "\nanother one\n").encode()
    corpus = read_corpus("upload.txt", data=data)
    assert corpus.texts == ("a short comment", "another one") and corpus.n_too_long == 1
    with pytest.raises(TemplateImportError, match=r"upload.txt holds no text of at most 100,000 characters \(1 "):
        read_corpus("upload.txt", data=b"x" * 10_000_000)
