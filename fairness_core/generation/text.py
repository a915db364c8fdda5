"""Post-processing of continuations: first-sentence truncation and name redaction."""

from __future__ import annotations

import re
from collections.abc import Sequence

# A sentence ends at . ! or ? (with any closing quotes/brackets) followed by whitespace or the end
# of the text, or at a line break. Deliberately simple: "Dr. Smith" ends a sentence here, which
# the paper's truncation also does not try to avoid; the raw text is always kept beside it.
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)|\n")

REDACTION = "[NAME]"


def first_sentence(continuation: str, strip: bool = True) -> str:
    """The continuation up to and including its first sentence end; may be empty.

    `strip=False` keeps the leading space, so `prompt + cut` is the sentence as generated.
    """
    match = _SENTENCE_END.search(continuation)
    cut = continuation if match is None else continuation[: match.end()]
    return cut.strip() if strip else cut.rstrip()


def sentence_complete(continuation: str) -> bool:
    """True once more text can no longer change `first_sentence(continuation)`.

    A terminator at the very end is not enough ("3." may become "3.5", "." may gain a closing
    quote): the first sentence is settled only when something follows its end, or at a line break.
    """
    match = _SENTENCE_END.search(continuation)
    return match is not None and (match.group() == "\n" or match.end() < len(continuation))


def redact_names(text: str, names: Sequence[str]) -> str:
    """Replace each full name, then each of its parts (3+ letters), as whole words with [NAME]."""
    for name in sorted(names, key=len, reverse=True):
        pieces = [name, *[part for part in re.split(r"[\s_]+", name) if len(part) >= 3]]
        for piece in pieces:
            text = re.sub(rf"(?<!\w){re.escape(piece)}(?!\w)", REDACTION, text)
    return text
