"""Post-processing of continuations: first-sentence truncation and name redaction."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fairness_core.models.sampling import SENTENCE_END as _SENTENCE_END
from fairness_core.models.sampling import sentence_complete

__all__ = ["REDACTION", "first_sentence", "redact_names", "sentence_complete"]

REDACTION = "[NAME]"


def first_sentence(continuation: str, strip: bool = True) -> str:
    """The continuation up to and including its first sentence end; may be empty.

    `strip=False` keeps the leading space, so `prompt + cut` is the sentence as generated.
    """
    match = _SENTENCE_END.search(continuation)
    cut = continuation if match is None else continuation[: match.end()]
    return cut.strip() if strip else cut.rstrip()


def redact_names(text: str, names: Sequence[str]) -> str:
    """Replace each full name, then each of its parts (3+ letters), as whole words with [NAME]."""
    for name in sorted(names, key=len, reverse=True):
        pieces = [name, *[part for part in re.split(r"[\s_]+", name) if len(part) >= 3]]
        for piece in pieces:
            text = re.sub(rf"(?<!\w){re.escape(piece)}(?!\w)", REDACTION, text)
    return text
