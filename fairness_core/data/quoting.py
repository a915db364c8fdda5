"""A visitor's text quoted inside a one-sentence message: short enough to read, whatever was pasted.

A message that quotes the input it refuses ("seeds must be whole numbers (got 'x…')") must stay one readable
sentence even when the input is a 10 MB line (issue 30 §4: the CAIRO seeds box echoed all of it).

    quoted("abc")          # "'abc'"
    quoted("x" * 10**7)    # "'xxxxxxxx…' (10,000,000 characters)"
"""

from __future__ import annotations

#: characters of the input a message shows (a markdown link and image with their URLs fit)
QUOTE_LIMIT = 80


def quoted(text: object, limit: int = QUOTE_LIMIT) -> str:
    """`repr` of `text` when it is short; else its first `limit` characters, an ellipsis and its length."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)".replace("'…", "…'")


def typed_text_problem(text: object, what: str, max_chars: int) -> str | None:
    """Why a short text a visitor typed into a table cell or box cannot be used (one sentence naming `what`), or
    None: at most `max_chars` characters, and no control characters (tabs and line breaks are whitespace, fine).
    Markdown and paths are text like any other: they are shown as text and never followed."""
    text = str(text)
    if len(text) > max_chars:
        return f"{what} is {len(text):,} characters long; at most {max_chars:,} are allowed"
    for position, character in enumerate(text):
        if (ord(character) < 32 and character not in "\t\n\r") or 127 <= ord(character) < 160:
            return (f"{what} contains a control character (U+{ord(character):04X} at position {position + 1}); "
                    "type plain text")
    return None
