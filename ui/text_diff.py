"""Two texts that differ in a few words, shown so the words that differ stand out (a per-example drill-down).

A table cell cuts a long text off, often before the word that differs (*he* / *she* at the end of a WinoBias
sentence). `changed_words` gives the difference in a few characters for a table column ("he → she"); `show_pair`
draws both texts whole with the differing words highlighted. The texts are data: they are escaped, never read as
markdown.

    changed_words("the nurse said he was late", "the nurse said she was late")   # 'he → she'
    show_pair("the nurse said he was late", "the nurse said she was late", ("Candidate 1", "Candidate 2"))

`word_diff` is the pure part (no Streamlit), so pages, reports and tests share it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from ui.common import escape_markdown

#: a word with its trailing space, so joining the pieces gives the text back exactly
_PIECES = re.compile(r"\S+\s*|\s+")
#: Streamlit's highlight for a differing word; colour words, not hex, so dark themes keep their contrast
HIGHLIGHT = "orange-background"
#: at most this many characters of each side in `changed_words` (a column stays narrow)
SHORT = 60


@dataclass(frozen=True)
class Piece:
    text: str
    changed: bool


def _pieces(text: str) -> list[str]:
    return _PIECES.findall(text)


def _matched(a: str, b: str) -> tuple[list[str], list[str], list[tuple[str, int, int, int, int]]]:
    """Both texts in pieces and difflib's opcodes over their words (compared without spaces, case-sensitively)."""
    left, right = _pieces(a), _pieces(b)
    matcher = difflib.SequenceMatcher(None, [p.strip() for p in left], [p.strip() for p in right], autojunk=False)
    return left, right, matcher.get_opcodes()


def word_diff(a: str, b: str) -> tuple[list[Piece], list[Piece]]:
    """Each text cut into words (with their spaces, so joining gives the text back), marked where the other text has
    something else."""
    left, right, opcodes = _matched(a, b)
    marked_a: list[Piece] = []
    marked_b: list[Piece] = []
    for tag, i1, i2, j1, j2 in opcodes:
        same = tag == "equal"
        marked_a += [Piece(p, not same) for p in left[i1:i2]]
        marked_b += [Piece(p, not same) for p in right[j1:j2]]
    return marked_a, marked_b


def _runs(pieces: Sequence[Piece]) -> list[tuple[str, bool]]:
    """Neighbouring pieces with the same mark joined: [(text, changed), ...]."""
    runs: list[tuple[str, bool]] = []
    for piece in pieces:
        if runs and runs[-1][1] == piece.changed:
            runs[-1] = (runs[-1][0] + piece.text, piece.changed)
        else:
            runs.append((piece.text, piece.changed))
    return runs


def changed_words(a: str, b: str) -> str:
    """The words that differ, as 'he → she' ('; ' between separate places); '(same)' when the texts are equal and
    '(nothing) → x' for a word only one side has. Each side is cut at SHORT characters."""
    if not isinstance(a, str) or not isinstance(b, str):
        return ""
    left, right, opcodes = _matched(a, b)
    changes = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        was = " ".join(p.strip() for p in left[i1:i2]) or "(nothing)"
        now = " ".join(p.strip() for p in right[j1:j2]) or "(nothing)"
        changes.append(f"{_cut(was)} → {_cut(now)}")
    return "; ".join(changes) if changes else "(same)"


def _cut(text: str) -> str:
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def with_changes(frame: pd.DataFrame, a: str, b: str, column: str = "differs", after: str | None = None
                 ) -> pd.DataFrame:
    """`frame` with a `column` of `changed_words(row[a], row[b])`, placed after `after` (default: before `a`)."""
    out = frame.copy()
    values = [changed_words(x, y) for x, y in zip(out[a], out[b], strict=True)] if len(out) else []
    position = list(out.columns).index(after) + 1 if after in out.columns else list(out.columns).index(a)
    out.insert(position, column, values)
    return out


def marked_markdown(pieces: Iterable[Piece]) -> str:
    """Markdown of one text, escaped, with its changed words highlighted in bold (spaces kept outside the mark)."""
    out = []
    for text, changed in _runs(list(pieces)):
        body = text.rstrip()
        trailing = " " if text != body else ""
        if changed and body:
            out.append(f":{HIGHLIGHT}[**{escape_markdown(body)}**]{trailing}")
        else:
            out.append(escape_markdown(body) + trailing)
    return "".join(out).strip()


def show_pair(a: str, b: str, labels: tuple[str, str] = ("Text 1", "Text 2")) -> None:
    """Both texts whole, one under the other, the words that differ highlighted."""
    first, second = word_diff(str(a), str(b))
    for label, pieces in zip(labels, (first, second), strict=True):
        st.markdown(f"**{escape_markdown(label)}:** " + (marked_markdown(pieces) or "*(empty)*"))
