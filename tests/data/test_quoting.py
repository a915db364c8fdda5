"""User text inside a message is cut to a readable length (issue 30 §4)."""

from __future__ import annotations

from fairness_core.data.quoting import quoted


def test_short_text_is_quoted_as_it_is() -> None:
    assert quoted("0,1,x") == "'0,1,x'"
    assert quoted("it's") == '"it\'s"'


def test_a_ten_megabyte_line_becomes_its_start_and_its_length() -> None:
    text = quoted("x" * 10_000_000)
    assert text == "'" + "x" * 80 + "…' (10,000,000 characters)"
    assert len(text) < 120
