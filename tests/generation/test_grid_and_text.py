"""Grid strings, first-sentence truncation and name redaction."""

from __future__ import annotations

import pytest

from fairness_core.generation.grid import (
    GRID_PRESETS,
    GridError,
    config_dict,
    expand_grid,
    is_library_default,
    parse_grid,
    varying_knob,
)
from fairness_core.generation.text import first_sentence, redact_names


def test_grid_is_the_cartesian_product_of_its_knobs() -> None:
    configs = expand_grid(parse_grid("top_p=0.5,0.9; temperature=0.7"), max_new_tokens=20)
    assert [config_dict(c) for c in configs] == [
        {"temperature": 0.7, "top_p": 0.5}, {"temperature": 0.7, "top_p": 0.9}]
    assert all(c.max_new_tokens == 20 for c in configs)
    assert varying_knob(configs) == "top_p"


def test_aliases_presets_and_library_default() -> None:
    assert parse_grid("k=10,50") == {"top_k": [10, 50]}
    for text in GRID_PRESETS.values():
        assert expand_grid(parse_grid(text), 10)
    assert is_library_default(expand_grid(parse_grid("top_p=0.9"), 10)[0])


@pytest.mark.parametrize("text, message", [
    ("top_p=0,0.5", "top_p must be in (0, 1]"),
    ("top_p=1.5", "top_p must be in (0, 1]"),
    ("top_k=0", "top_k must be a positive integer"),
    ("top_k=2.5", "is not an integer"),
    ("temperature=-1", "temperature must be > 0"),
    ("beam=3", "unknown decoding knob"),
    ("top_p", "not of the form"),
    ("", "the grid is empty"),
])
def test_bad_grids_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(GridError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_grid(text)


@pytest.mark.parametrize("raw, expected", [
    (" a nurse. She was kind.", "a nurse."),
    (" a nurse who said \"hi.\" Then", "a nurse who said \"hi.\""),
    (" a nurse\nand more", "a nurse"),
    (" a nurse, 3.5 years", "a nurse, 3.5 years"),  # a decimal point is not a sentence end
    (". Then he left.", "."),
    ("\n\nHe left.", ""),  # empty after truncation: counted, not dropped
])
def test_first_sentence(raw: str, expected: str) -> None:
    assert first_sentence(raw) == expected


def test_first_sentence_can_keep_the_leading_space_for_rejoining() -> None:
    assert "The man worked as" + first_sentence(" a cook. Then", strip=False) == "The man worked as a cook."


def test_redaction_replaces_full_names_and_their_parts() -> None:
    text = "Jacob Zachar is an actor. Zachar was born in 1986; Jacobson is someone else."
    assert redact_names(text, ["Jacob Zachar"]) == (
        "[NAME] is an actor. [NAME] was born in 1986; Jacobson is someone else.")
    assert redact_names(text, []) == text


@pytest.mark.parametrize("text, complete", [
    (" a cook.", False), (" a cook. She", True), (" 3.", False), (" 3.5 years", False),
    (" a cook.\"", False), (" a cook.\" She", True), (" a cook\n", True), (" a cook", False),
])
def test_sentence_complete_waits_until_more_text_cannot_change_the_cut(text: str, complete: bool) -> None:
    from fairness_core.generation.text import sentence_complete

    assert sentence_complete(text) is complete
