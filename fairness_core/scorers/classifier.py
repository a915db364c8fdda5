"""Any Hugging Face text classifier as a scorer: one probability column per label (`prob_<label>`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairness_core.models import ModelUnavailableError, TextClassifier
from fairness_core.scorers.base import Scorer, ScorerOptions, column_name, load_classifier, register_scorer


@dataclass(frozen=True)
class ClassifierOptions(ScorerOptions):
    model: str = ""  # preset key, hub id or local directory of a sequence classifier

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ValueError("option model is required (a hub id or a local classifier directory)")


@register_scorer
class ClassifierScorer(Scorer):
    """Label probabilities of any sequence classifier, of the sentence as generated."""

    name = "classifier"
    label = "Any text classifier (label probabilities)"
    version = "1"
    Options = ClassifierOptions
    options: ClassifierOptions

    def _classifier(self) -> TextClassifier:
        return load_classifier(self.options.model, f"classifier {self.options.model}")  # type: ignore[no-any-return]

    @property
    def columns(self) -> tuple[str, ...]:
        columns = tuple(f"prob_{column_name(label)}" for label in self._classifier().labels)
        if len(set(columns)) != len(columns):
            raise ModelUnavailableError(f"classifier {self.options.model} has labels that clash as column names")
        return columns

    def model_manifest(self) -> dict[str, Any]:
        from fairness_core.scorers.base import classifier_spec

        return classifier_spec(self.options.model).to_manifest()

    def check_available(self) -> None:
        _ = self.columns

    def score(self, texts: Sequence[str], prompts: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        probabilities = np.asarray(self._classifier().predict_proba(list(texts)), dtype=float).reshape(len(texts), -1)
        return {column: probabilities[:, index] for index, column in enumerate(self.columns)}
