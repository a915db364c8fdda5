"""Offline classifiers that ship inside PyPI packages, behind the TextClassifier interface."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from fairness_core.models.interfaces import ModelUnavailableError, TextClassifier


class VaderSentiment(TextClassifier):
    """VADER (rule + lexicon). `predict_proba` gives its neg/neu/pos proportions; `compound` its score."""

    labels: ClassVar[list[str]] = ["negative", "neutral", "positive"]
    name = "VADER sentiment (vaderSentiment 3.3.2 lexicon)"
    cache_key = ("classifier", "vader")

    def __init__(self) -> None:
        try:
            from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
        except ImportError as error:
            raise ModelUnavailableError(
                f"VADER cannot be loaded: vaderSentiment is not installed ({error})."
            ) from error
        self._analyzer = SentimentIntensityAnalyzer()

    def scores(self, texts: Sequence[str]) -> list[dict[str, float]]:
        return [self._analyzer.polarity_scores(text) for text in texts]

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[s["neg"], s["neu"], s["pos"]] for s in self.scores(texts)]).reshape(len(texts), 3)

    def compound(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([s["compound"] for s in self.scores(texts)], dtype=float)


class OffensiveLanguage(TextClassifier):
    """alt-profanity-check: a linear SVM over words (offline proxy for a toxicity classifier)."""

    labels: ClassVar[list[str]] = ["not_offensive", "offensive"]
    name = "Offensive language (alt-profanity-check)"
    cache_key = ("classifier", "profanity-check")

    def __init__(self) -> None:
        try:
            from profanity_check import predict_prob
        except ImportError as error:
            raise ModelUnavailableError(
                f"the offensive-language classifier cannot be loaded: alt-profanity-check is not installed ({error})."
            ) from error
        self._predict_prob = predict_prob

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 2))
        offensive = np.asarray(self._predict_prob(list(texts)), dtype=float)
        return np.stack([1 - offensive, offensive], axis=1)
