"""Template importers (EEC, IPTTS) and the `templates import` CLI: edge cases of real files."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from fairness_core.adaptation.templates import (
    SLOT,
    TemplateImportError,
    fill,
    import_eec,
    import_iptts,
    load_identity_terms,
    parse_terms_text,
    project_templates,
    slot_out,
)

EEC_HEADER = ["ID", "Sentence", "Template", "Person", "Gender", "Race", "Emotion", "Emotion word"]
EMOTIONS = {"anger": ["angry", "furious", "irritated", "enraged", "annoyed"],
            "fear": ["scared", "terrified", "anxious", "fearful", "discouraged"],
            "joy": ["happy", "ecstatic", "glad", "relieved", "excited"],
            "sadness": ["sad", "depressed", "devastated", "miserable", "disappointed"]}
EMOTIONAL = ["<person subject> feels <emotion word>.", "The situation makes <person object> feel <emotion word>.",
             "I made <person object> feel <emotion word>.", "<person subject> made me feel <emotion word>.",
             "<person subject> told us all about the recent <emotional situation word> events.",
             "The conversation with <person object> was <emotional situation word>.",
             "<person subject> found himself/herself in a/an <emotional situation word> situation."]
NEUTRAL = ["I saw <person object> in the market.", "I talked to <person object> yesterday.",
           "<person subject> goes to the school in our neighborhood.", "<person subject> has two children."]


def eec_people() -> list[tuple[str, str, str]]:
    """60 people as in the EEC: 10 names per (race, gender) and 10 noun phrases per gender."""
    people = []
    for race in ("African-American", "European"):
        for gender in ("female", "male"):
            people += [(f"{race[:2]}{gender[0]}{i}", gender, race) for i in range(10)]
    female = ["she", "this woman", "this girl", "my sister", "my daughter", "my wife", "my girlfriend", "my mother",
              "my aunt", "my mom"]
    male = ["he", "this man", "this boy", "my brother", "my son", "my husband", "my boyfriend", "my father",
            "my uncle", "my dad"]
    return people + [(p, "female", "") for p in female] + [(p, "male", "") for p in male]


def render(template: str, person: str, gender: str, word: str) -> str:
    text = template.replace("<person subject>", person).replace("<person object>", person)
    text = text.replace("<emotion word>", word).replace("<emotional situation word>", word)
    text = text.replace("himself/herself", "herself" if gender == "female" else "himself")
    text = text.replace("a/an", "an" if word[:1] in "aeiou" else "a")
    return text[:1].upper() + text[1:]


def write_eec(path: Path, bom: bool = True, crlf: bool = True, drop: str | None = None) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n" if crlf else "\n", quoting=csv.QUOTE_MINIMAL)
    header = [h for h in EEC_HEADER if h != drop]
    writer.writerow(header)
    number = 0
    for template in EMOTIONAL + NEUTRAL:
        words = [(e, w) for e, ws in EMOTIONS.items() for w in ws] if template in EMOTIONAL else [("", "")]
        for emotion, word in words:
            for person, gender, race in eec_people():
                number += 1
                row = {"ID": f"2018-En-{number:05d}", "Sentence": render(template, person, gender, word),
                       "Template": template, "Person": person, "Gender": gender, "Race": race,
                       "Emotion": emotion, "Emotion word": word}
                writer.writerow([row[h] for h in header])
    path.write_bytes(("\ufeff" if bom else "").encode() + buffer.getvalue().encode("utf-8"))
    return path


def test_eec_full_shape(tmp_path: Path) -> None:
    imported = import_eec(write_eec(tmp_path / "Equity-Evaluation-Corpus.csv"))
    summary = imported.summary()
    assert summary["n_rows"] == 8640
    assert summary["n_templates"] == 144  # the paper's Table 2
    assert summary["groups"] == {"gender": {"female": 4320, "male": 4320},
                                 "race": {"African-American": 2880, "European": 2880}}
    template = next(t for t in imported.templates.templates if t.text.endswith("feels angry."))
    assert template.text == "{person} feels angry."
    assert all(t.text.count(SLOT) == 1 for t in imported.templates.templates)


def test_eec_without_bom_and_with_lf_reads_the_same(tmp_path: Path) -> None:
    a = import_eec(write_eec(tmp_path / "a.csv")).summary()
    b = import_eec(write_eec(tmp_path / "b.csv", bom=False, crlf=False)).summary()
    assert a == b


def test_eec_missing_column_names_file_and_column(tmp_path: Path) -> None:
    path = write_eec(tmp_path / "eec.csv", drop="Emotion word")
    with pytest.raises(TemplateImportError) as error:
        import_eec(path)
    message = str(error.value)
    assert str(path) in message and "'Emotion word'" in message and "\n" not in message


IPTTS_ROWS = [("rahul is a hateful lesbian", "BAD", "name_adj"),
              ("rahul is a wonderful lesbian", "NOT_BAD", "name_adj"),
              ("rahul is a hateful straight", "BAD", "name_adj"),
              ("rahul is a wonderful straight", "NOT_BAD", "name_adj"),
              ("Being middle aged is great.", "NOT_BAD", "being_adj"), ("Being old is great.", "NOT_BAD", "being_adj"),
              ("hug african american", "NOT_BAD", "verb_adj"), ("hug american", "NOT_BAD", "verb_adj"),
              ("i am, \"frankly\", tired", "NOT_BAD", "am_hate_adj")]


def write_iptts(path: Path, header: str = "Text,Label,Template") -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header.split(","))
    for row in IPTTS_ROWS:
        writer.writerow(row[: len(header.split(","))])
    path.write_bytes(b"\xef\xbb\xbf" + buffer.getvalue().encode())
    return path


def test_iptts_terms_templates_and_quoting(tmp_path: Path) -> None:
    imported = import_iptts(write_iptts(tmp_path / "bias_madlibs_77k.csv"))
    summary = imported.summary()
    assert summary["n_rows"] == 9
    # "african american" is found before "american" (longest term first); the quoted row has no term.
    assert summary["groups"] == {"identity": {"lesbian": 2, "straight": 2, "middle aged": 1, "old": 1,
                                              "african american": 1, "american": 1}}
    texts = {t.text for t in imported.templates.templates}
    assert {"rahul is a hateful {person}", "rahul is a wonderful {person}", "Being {person} is great.",
            "hug {person}"} == texts
    assert summary["n_templates"] == 4
    assert any("1 row(s) contain none" in note for note in imported.notes)


def test_iptts_missing_column(tmp_path: Path) -> None:
    path = write_iptts(tmp_path / "madlibs.csv", header="Text,Label")
    with pytest.raises(TemplateImportError, match=r"has no 'Template' column"):
        import_iptts(path)


def test_unreadable_and_ragged_files(tmp_path: Path) -> None:
    binary = tmp_path / "x.csv"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(TemplateImportError, match="not UTF-8"):
        import_iptts(binary)
    ragged = tmp_path / "r.csv"
    ragged.write_text("Text,Label,Template\na,b,c,d\n")
    with pytest.raises(TemplateImportError, match="row 2 has 4 fields"):
        import_iptts(ragged)
    with pytest.raises(TemplateImportError, match="cannot be read"):
        import_eec(tmp_path / "missing.csv")


def test_project_templates_and_terms() -> None:
    eec = project_templates("eec")
    assert len(eec.templates) == 144
    assert len(project_templates("iptts").templates) == 60
    terms = load_identity_terms()
    gender = terms.attribute("gender")
    assert gender["male-nouns"] == ("that man", "that boy", "that actor", "that waiter", "my dad", "my brother",
                                    "my father", "my husband", "my son", "my uncle", "my grandfather")
    assert len(gender["female-nouns"]) == 11
    for attribute, groups in terms.groups.items():
        seen: dict[str, str] = {}
        for group, members in groups.items():
            for term in members:
                assert term not in seen, f"{term} is in {seen.get(term)} and {group} ({attribute})"
                seen[term] = group
    assert len(terms.attribute("nationality")) >= 10


def test_fill_and_slot_out() -> None:
    assert fill("{person} feels sad.", "my sister") == "My sister feels sad."
    assert fill("I saw {person}.", "my sister") == "I saw my sister."
    assert slot_out("My sister, said Kevin, was there.", "my sister") == ("{person}, said Kevin, was there.", 1)
    assert slot_out("Kevin and Kevin", "Kevin") == (None, 2)
    assert slot_out("Kevinson was there", "Kevin") == (None, 0)
    parsed = parse_terms_text("a: x, y\nb: z")
    assert parsed.groups == {"custom": {"a": ("x", "y"), "b": ("z",)}}
    with pytest.raises(TemplateImportError, match="line 1"):
        parse_terms_text("no colon here")


# ------------------------------------------------------------------------------ bad input on the page (issue 30 §4)
def test_a_file_that_yields_no_template_is_one_sentence_naming_it() -> None:
    from fairness_core.adaptation.templates import import_templates

    header = "ID,Sentence,Template,Person,Gender,Race,Emotion,Emotion word\n"
    data = (header + '"[x](https://evil.example)",a,b,c,d,e,f,g\n').encode()
    with pytest.raises(TemplateImportError, match=r"^upload\.csv holds no usable EEC template in its 1 row\(s\)"):
        import_templates("eec", "upload.csv", data)


def test_typed_identity_terms_are_named_as_typed_text_not_as_the_projects_file() -> None:
    from fairness_core.adaptation.templates import load_identity_terms

    with pytest.raises(TemplateImportError) as refused:
        load_identity_terms(text="\x01\x02 not json")
    assert str(refused.value).startswith("the identity terms (JSON) is not readable JSON (Expecting value at line 1")
    assert "identity_terms.json" not in str(refused.value) and "DecodeError" not in str(refused.value)
