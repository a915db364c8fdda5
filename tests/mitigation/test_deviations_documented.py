"""Every deviation from the paper the Mitigation page states is in docs/mitigation.md too, word for word."""

from __future__ import annotations

from pathlib import Path

from fairness_core.mitigation import DEVIATIONS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "mitigation.md"


def test_each_deviation_sentence_is_in_the_docs():
    docs = " ".join(DOCS.read_text(encoding="utf-8").split())
    for sentence in DEVIATIONS:
        assert " ".join(sentence.split()) in docs, sentence[:60]
