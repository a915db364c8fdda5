"""Every deviation the Stereotype benchmarks page states is in docs/stereotypes.md too, word for word."""

from __future__ import annotations

from pathlib import Path

from fairness_core.stereotypes import DEVIATIONS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "stereotypes.md"


def test_each_deviation_sentence_is_in_the_docs() -> None:
    docs = " ".join(DOCS.read_text(encoding="utf-8").split())
    for sentence in DEVIATIONS:
        assert " ".join(sentence.split()) in docs, sentence[:60]
