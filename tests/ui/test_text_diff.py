"""Two texts with the words that differ marked: a short column for tables and both texts whole for a drill-down."""

from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

from tests.markdown_text import shown
from ui.text_diff import changed_words, marked_markdown, with_changes, word_diff


def test_the_words_that_differ_are_named_in_a_few_characters() -> None:
    assert changed_words("The developer argued with the designer because he did not like the design.",
                         "The developer argued with the designer because she did not like the design.") == "he → she"
    assert changed_words("a b c", "a b c") == "(same)"
    assert changed_words("the poor man", "the rich man sang") == "poor → rich; (nothing) → sang"
    assert changed_words("he said", None) == ""  # a missing text (a pair with one side absent) is not a difference


def test_joining_the_pieces_gives_each_text_back_exactly() -> None:
    a, b = "The  nurse said\the was late. ", "The nurse said she was late."
    left, right = word_diff(a, b)
    assert "".join(p.text for p in left) == a and "".join(p.text for p in right) == b
    assert [p.text.strip() for p in left if p.changed] == ["he"]
    assert [p.text.strip() for p in right if p.changed] == ["she"]


def test_the_marked_text_is_escaped_and_only_the_changed_words_are_highlighted() -> None:
    _left, right = word_diff("[x](https://evil.example) he *is* here", "[x](https://evil.example) she *is* here")
    markdown = marked_markdown(right)
    assert markdown.count(":orange-background[") == 1 and ":orange-background[**she**]" in markdown
    assert "](https" not in markdown  # the link is escaped: it stays text
    assert shown(markdown).replace(":orange-background[**she**]", "she") == "[x](https://evil.example) she *is* here"


def test_a_table_gets_a_differs_column_beside_the_texts() -> None:
    frame = pd.DataFrame({"item": ["1", "2"], "candidate1": ["he sings", "the black man"],
                          "candidate2": ["she sings", "the white man"]})
    out = with_changes(frame, "candidate1", "candidate2")
    assert list(out.columns) == ["item", "differs", "candidate1", "candidate2"]
    assert list(out["differs"]) == ["he → she", "black → white"]
    assert list(with_changes(frame.iloc[:0], "candidate1", "candidate2").columns) == list(out.columns)


def _pair_app() -> None:
    from ui.text_diff import show_pair

    show_pair("The doctor said he would call.", "The doctor said she would call.", ("Candidate 1", "Candidate 2"))


def test_show_pair_draws_both_texts_with_their_labels() -> None:
    app = AppTest.from_function(_pair_app).run()
    assert not app.exception
    lines = [m.value for m in app.markdown]
    assert lines[0].startswith("**Candidate 1:**") and ":orange-background[**he**]" in lines[0]
    assert lines[1].startswith("**Candidate 2:**") and ":orange-background[**she**]" in lines[1]
