"""The one interface every text-generation metric implements for metric-bias.

A metric turns parallel lists of candidates and references into per-example *statistics* (one
array per output, e.g. BERTScore's P, R and F). Aggregation — rescaling, gaps, bias, confidence
intervals — lives in `fairness_core.bias.paired`, so every metric is aggregated the same way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

FAMILIES = ("n-gram", "matching", "regression", "generation")


class Metric(ABC):
    """Scores candidates against references; higher = more similar/better."""

    name: str = ""
    family: str = "n-gram"
    #: per-example outputs; the first is the primary one that the bias table reports
    outputs: tuple[str, ...] = ("score",)

    @property
    def primary(self) -> str:
        return self.outputs[0]

    def describe(self) -> dict[str, Any]:
        """Everything that determines the scores (goes into the run manifest)."""
        return {"name": self.name}

    @abstractmethod
    def score(self, candidates: Sequence[str], references: Sequence[str]) -> dict[str, np.ndarray]:
        """{output: array of len(candidates)}; candidates[i] is scored against references[i]."""


def check_parallel(candidates: Sequence[str], references: Sequence[str]) -> None:
    if len(candidates) != len(references):
        raise ValueError(f"got {len(candidates)} candidates but {len(references)} references")
