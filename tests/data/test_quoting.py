"""User text inside a message is cut to a readable length (issue 30 §4)."""

from __future__ import annotations

from fairness_core.data.quoting import quoted, typed_text_problem


def test_short_text_is_quoted_as_it_is() -> None:
    assert quoted("0,1,x") == "'0,1,x'"
    assert quoted("it's") == '"it\'s"'


def test_a_ten_megabyte_line_becomes_its_start_and_its_length() -> None:
    text = quoted("x" * 10_000_000)
    assert text == "'" + "x" * 80 + "…' (10,000,000 characters)"
    assert len(text) < 120


def test_typed_text_is_refused_for_control_characters_and_length_but_markdown_and_paths_are_text() -> None:
    """A table cell or a short box (issue 36's battery: the CAIRO category, an edited reference)."""
    assert typed_text_problem("[x](https://evil.example/x) /etc/passwd\tend", "the cell", 200) is None
    assert typed_text_problem("ÿþh\x00e", "the cell", 200) == ("the cell contains a control character (U+0000 at "
                                                               "position 4); type plain text")
    assert "U+001B" in typed_text_problem("red \x1b[31m", "the cell", 200)
    assert "U+0085" in typed_text_problem("next\x85line", "the cell", 200)  # a C1 control
    assert typed_text_problem("x" * 201, "the cell", 200) == "the cell is 201 characters long; at most 200 are allowed"
