"""What a reader sees of a message the app escaped with `ui.common.escape_markdown` (for assertions on it)."""

from __future__ import annotations

import re


def shown(markdown: str) -> str:
    """`markdown` with escape backslashes and the zero-width spaces that break auto-links removed."""
    return re.sub(r"\\(.)", r"\1", str(markdown)).replace("\u200b", "")
