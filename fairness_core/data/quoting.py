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
