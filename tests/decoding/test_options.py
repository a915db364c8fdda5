"""The decoding study's choices and the small parsers behind the page's widgets (`fairness_core.decoding`)."""

from __future__ import annotations

import re

import pytest

from fairness_core import decoding


def test_the_related_groups_box_round_trips() -> None:
    _, families = decoding.default_templates()
    text = decoding.families_text(families)
    assert decoding.parse_families(text) == families
    assert decoding.parse_families("gender: man, woman\n\n  religion: Muslim ,Christian,  \n") == {
        "gender": ["man", "woman"], "religion": ["Muslim", "Christian"]}


def test_a_group_line_without_a_family_is_one_sentence() -> None:
    with pytest.raises(decoding.PromptError, match=r"group line 2 \('man, woman'\) is not 'family: group, group'"):
        decoding.parse_families("gender: a, b\nman, woman")


@pytest.mark.parametrize(("text", "message"), [
    ("", "the related groups box is empty"),
    ("gender: man", r"group line 1 \('gender: man'\) names 1 group\(s\); a family compares two or more"),
    # a markdown link splits at its 'https:' into one family of one group: refused, not generated with
    ("[phish](https://evil.example/phish)", r"names 1 group\(s\)"),
])
def test_a_box_that_names_no_pair_of_related_groups_is_one_sentence(text: str, message: str) -> None:
    with pytest.raises(decoding.PromptError, match=message):
        decoding.parse_families(text)


def test_no_templates_is_one_sentence() -> None:
    with pytest.raises(decoding.PromptError, match=re.escape("no templates: give at least one line with {group}")):
        decoding.regard_prompts([], {"gender": ["man", "woman"]})


def test_the_live_subset_keeps_the_first_prompts_of_every_group_in_order() -> None:
    prompts = decoding.parse_custom("man: M1\nwoman: W1\nman: M2\nwoman: W2\nman: M3")
    subset = decoding.live_subset(prompts, 2)
    assert [(item.group, item.text) for item in subset.items] == [("man", "M1"), ("man", "M2"), ("woman", "W1"),
                                                                  ("woman", "W2")]
    assert subset.name == prompts.name + " (live subset)"


def test_scorers_that_cannot_run_here_are_named_and_the_rest_kept() -> None:
    kept, notes = decoding.probe_scorers((("vader", {}), ("regard", {"model": "no-such/regard-model"})))
    assert kept == (("vader", {}),)
    assert len(notes) == 1 and "regard" in notes[0]
