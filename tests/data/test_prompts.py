"""Prompt sets: regard templates, custom prompts, BOLD, and the bad-input messages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fairness_core.data.prompts import PromptError, load_prompt_source, parse_custom, regard_prompts


def test_regard_templates_cover_the_papers_groups() -> None:
    prompts = regard_prompts()
    assert len(prompts.items) == 10 * 11
    assert prompts.families["race"] == ["Black person", "White person", "Asian person"]
    assert "The woman worked as" in {item.text for item in prompts.items}
    assert prompts.content_hash() == regard_prompts().content_hash()


def test_edited_templates_and_groups() -> None:
    prompts = regard_prompts(["The {group} liked"], {"age": ["old person", "young person"]})
    assert [item.text for item in prompts.items] == ["The old person liked", "The young person liked"]
    assert prompts.content_hash() != regard_prompts().content_hash()
    with pytest.raises(PromptError, match="no \\{group\\} placeholder"):
        regard_prompts(["The person liked"], {"age": ["old person"]})
    with pytest.raises(PromptError, match="empty"):
        regard_prompts(["The {group} liked"], {"age": []})


def test_custom_prompts_from_lines_csv_and_json() -> None:
    lines = parse_custom("woman: The woman said\nman: The man said\n# comment\n")
    assert lines.groups == ["woman", "man"] and lines.families == {"custom": ["woman", "man"]}
    csv = parse_custom("group,prompt,family\nnurse,The nurse said,jobs\ndoctor,The doctor said,jobs\n")
    assert csv.families == {"jobs": ["nurse", "doctor"]}
    assert parse_custom('{"a": ["A said"], "b": ["B said"]}').groups == ["a", "b"]


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("just a prompt without group", "is not 'group: prompt'"),
    ("woman: ", "empty prompt"),
    ('{"a": ["A said"], "b": []}', "group 'b' has no prompts"),
])
def test_bad_custom_prompts(text: str, message: str) -> None:
    with pytest.raises(PromptError, match=message):
        parse_custom(text)


def test_selecting_a_group_without_prompts_is_an_error() -> None:
    with pytest.raises(PromptError, match="'nurse' have no prompts"):
        regard_prompts().only_groups(["man", "nurse"])
    assert regard_prompts().only_groups(["Man", "woman"]).groups == ["man", "woman"]


def test_prompt_source_strings(tmp_path: Path) -> None:
    assert load_prompt_source("regard").name == "regard templates"
    path = tmp_path / "mine.txt"
    path.write_text("a: A did\nb: B did\n")
    assert load_prompt_source(str(path)).groups == ["a", "b"]
    with pytest.raises(PromptError, match="neither"):
        load_prompt_source(str(tmp_path / "missing.txt"))


def test_bold_prompts_are_sampled_per_group_and_names_are_marked_for_redaction() -> None:
    prompts = load_prompt_source("bold:gender", per_group=3, seed=0)
    assert prompts.groups == ["American_actors", "American_actresses"]
    assert len(prompts.items) == 6
    item = prompts.items[0]
    assert item.redact == (item.source.replace("_", " "),)
    assert not item.text.endswith(" ")
    assert load_prompt_source("bold:gender", per_group=3, seed=0) == prompts
    assert load_prompt_source("bold:profession", per_group=1).items[0].redact == ()
    with pytest.raises(PromptError, match="unknown BOLD domain"):
        load_prompt_source("bold:sports")


@pytest.mark.parametrize("text, phrase", [
    ('{"woman": "Hello"}', "must map to a list of prompt texts"),
    ("[null]", "JSON entry 1 must be an object"),
    ('{"woman": 5}', "(got a number)"),
    ('{"woman": [null]}', "prompt 1 of group 'woman' must be text (got null)"),
    ('[{"group": "woman", "prompt": 3}]', "needs 'prompt' as text"),
    ("7", "is not 'group: prompt'"),
    ("group,prompt,Group\nwoman,x,y\n", "names the column 'group' more than once"),
])
def test_malformed_custom_prompts_are_one_sentence(text: str, phrase: str) -> None:
    from fairness_core.data.prompts import PromptError, parse_custom

    with pytest.raises(PromptError, match=re.escape(phrase)):
        parse_custom(text)


def test_json_list_of_objects_and_binary_or_non_utf8_uploads() -> None:
    from fairness_core.data.prompts import PromptError, decode_upload, parse_custom

    prompts = parse_custom('[{"group": "woman", "prompt": "The woman was", "family": "gender"}]')
    assert prompts.items[0].family == "gender" and prompts.items[0].text == "The woman was"
    with pytest.raises(PromptError, match=r"up\.bin is a binary file"):
        decode_upload("up.bin", b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(PromptError, match="not UTF-8 text"):
        decode_upload("latin.txt", "woman: caf\xe9".encode("latin-1"))
    assert decode_upload("ok.txt", "\ufeffwoman: x".encode()) == "woman: x"
