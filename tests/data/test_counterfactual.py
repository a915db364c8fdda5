"""Counterfactual prompt sets: the stated swap rule, word lists (shipped and the user's), counts and bad input."""

from __future__ import annotations

import pytest

from fairness_core.data.counterfactual import (
    build_counterfactual,
    parse_lists,
    prompt_texts,
    read_lists_file,
    shipped_lists,
)
from fairness_core.data.prompt_set import PromptError


@pytest.fixture(scope="module")
def lists():
    return shipped_lists()


def variants(text: str, lists, attribute: str = "gender") -> dict[str, str]:
    built = build_counterfactual([text], lists, [attribute])
    return dict(zip(built.pairs["group"], built.pairs["variant"], strict=True))


def test_whole_words_only_and_case_kept(lists) -> None:
    assert variants("The man said THE MAN and The Man", lists)["woman"] == "The woman said THE WOMAN and The Woman"
    assert variants("He thought then", lists)["woman"] == "She thought then"  # "he" inside "then" is not a word


def test_both_directions_and_the_prompt_itself_is_its_groups_variant(lists) -> None:
    assert variants("The woman worked as", lists) == {"man": "The man worked as", "woman": "The woman worked as"}
    assert variants("The man worked as", lists) == {"man": "The man worked as", "woman": "The woman worked as"}


def test_her_and_his_follow_their_use(lists) -> None:
    assert variants("She gave her book to", lists)["man"] == "He gave his book to"
    assert variants("She saw her and", lists)["man"] == "He saw him and"
    assert variants("He lost his keys and", lists)["woman"] == "She lost her keys and"
    assert variants("The car was his and", lists)["woman"] == "The car was hers and"


def test_multi_word_terms_longest_first_and_the_article_agrees(lists) -> None:
    race = variants("An Asian American woman was", lists, "race")
    assert race == {"Black": "An African American woman was", "White": "A European American woman was",
                    "Asian": "An Asian American woman was"}
    assert variants("An Asian man was", lists, "race")["Black"] == "A Black man was"


def test_prompts_naming_no_group_or_two_groups_are_left_out_and_counted(lists) -> None:
    built = build_counterfactual(["The man worked as", "The cat sat", "He told her that", "The woman worked as"],
                                 lists, ["gender"])
    assert built.counts == {"prompts": 4, "used": 1, "no_word": 1, "mixed": 1, "repeated": 1, "variants": 2}
    assert any("name no word of gender" in note for note in built.notes)
    assert any("two or more gender groups" in note for note in built.notes)
    assert any("count once" in note for note in built.notes)


def test_a_prompts_variants_share_one_source_so_they_are_resampled_together(lists) -> None:
    built = build_counterfactual(["The man worked as", "Her sister was"], lists, ["gender"])
    items = built.prompt_set.items
    assert {item.family for item in items} == {"gender"}
    by_source: dict[str, set[str]] = {}
    for item in items:
        assert "{group}" in item.source
        by_source.setdefault(item.source, set()).add(item.group)
    assert list(by_source.values()) == [{"man", "woman"}, {"man", "woman"}]


def test_no_prompt_naming_a_group_is_one_sentence(lists) -> None:
    with pytest.raises(PromptError, match="none of the 2 prompt"):
        build_counterfactual(["The cat sat", "It rained"], lists, ["gender"])
    with pytest.raises(PromptError, match="have no attribute 'gendr'"):
        build_counterfactual(["The man"], lists, ["gendr"])


def test_users_own_lists_in_text_and_json() -> None:
    text = "[job]\n# a custom replacement dictionary\nnurse: nurse, nurses\nsurgeon: surgeon, surgeons\n"
    own = parse_lists(text, "jobs.txt")
    assert variants("The nurses said", own, "job") == {"nurse": "The nurses said", "surgeon": "The surgeons said"}
    same = parse_lists('{"job": {"nurse": ["nurse", "nurses"], "surgeon": ["surgeon", "surgeons"]}}', "jobs.json")
    assert same.attributes == own.attributes


@pytest.mark.parametrize("text, phrase", [
    ("", "is empty"),
    ("[job]\nnurse: nurse\n", "needs two or more groups"),
    ("[job]\nnurse: nurse, nurses\nsurgeon: surgeon\n", "list different numbers of words (nurse 2, surgeon 1)"),
    ("[job]\nnurse: nurse,, nurses\nsurgeon: a, b\n", "line 2: group 'nurse' has an empty word"),
    ("nurse: nurse\n", "line 1: group 'nurse' comes before any '[attribute]' heading"),
    ("[job]\nnurse nurse\n", "line 2 ('nurse nurse') is not 'group: word, word'"),
    ("[job]\nnurse: nurse\nsurgeon: nurse\n", "the word 'nurse' is in group 'nurse' and in 'surgeon'"),
    ('{"job": ', "looks like JSON but does not parse"),
])
def test_bad_word_lists_are_one_sentence_naming_the_line_or_group(text: str, phrase: str) -> None:
    with pytest.raises(PromptError, match=None) as caught:
        parse_lists(text, "lists.txt")
    assert phrase in str(caught.value) and str(caught.value).startswith("lists.txt")


def test_a_lists_upload_is_bytes_and_bad_bytes_are_named() -> None:
    with pytest.raises(PromptError, match=r"up\.txt is not UTF-8 text"):
        read_lists_file(None, data="[g]\na: é\nb: x\n".encode("latin-1"), name="up.txt")
    with pytest.raises(PromptError, match=r"up\.bin is a binary file"):
        read_lists_file(None, data=b"\x00\x01", name="up.bin")


def test_prompt_texts_read_lines_csv_and_json() -> None:
    assert prompt_texts("# mine\nThe man worked as\n\nShe said\n") == ["The man worked as", "She said"]
    assert prompt_texts("id,prompt\n1,The man worked as\n2,\"She said, then\"\n") == ["The man worked as",
                                                                                     "She said, then"]
    assert prompt_texts('["The man", "The woman"]') == ["The man", "The woman"]
    with pytest.raises(PromptError, match="holds no prompt"):
        prompt_texts("# only a comment\n")


def test_the_command_previews_and_writes_a_set_decoding_reads_back_paired(tmp_path, capsys) -> None:
    import json

    from fairness_core.cli import main
    from fairness_core.data.prompts import parse_custom

    prompts = tmp_path / "mine.txt"
    prompts.write_text("The man worked as\nHer sister was\nThe cat sat\n", encoding="utf-8")
    out = tmp_path / "set.json"
    assert main(["counterfactual", "--prompts", str(prompts), "--attribute", "gender", "--out", str(out),
                 "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["counts"]["no_word"] == 1 and len(record["pairs"]) == 4 and record["rule"].startswith("Whole words")
    read_back = parse_custom(out.read_text(encoding="utf-8"))
    assert len(read_back.items) == 4 and {item.family for item in read_back.items} == {"gender"}
    assert len({item.source for item in read_back.items}) == 2 and all("{group}" in i.source for i in read_back.items)


def test_an_attribute_named_twice_is_swapped_once(lists) -> None:
    """Issue 43 §3: `--attribute gender --attribute gender` built every variant twice (12 for 6)."""
    once = build_counterfactual(["The man worked as", "She was known for"], lists, ["gender"])
    twice = build_counterfactual(["The man worked as", "She was known for"], lists, ["gender", "gender"])
    assert len(twice.prompt_set.items) == len(once.prompt_set.items) == 4
    assert twice.counts == once.counts
