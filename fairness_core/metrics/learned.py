"""Regression and distilled metrics that are sequence classifiers on the hub: BLEURT, FrugalScore.

Both read a (reference, candidate) sentence pair and output one number. The `TextClassifier`
interface scores single texts and squashes outputs into probabilities, so these metrics call the
classifier backend's tokenizer with a text pair and read the raw regression output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairness_core.metrics.base import Metric, check_parallel
from fairness_core.models.interfaces import ModelUnavailableError, TextClassifier


class PairRegressionMetric(Metric):
    family = "regression"
    outputs = ("score",)

    def __init__(self, name: str, classifier: TextClassifier, model_manifest: dict[str, Any] | None = None,
                 batch_size: int = 32) -> None:
        self.name = name
        self.classifier = classifier
        self.model_manifest = model_manifest or classifier.describe()
        self.batch_size = batch_size
        if not hasattr(classifier, "model") or not hasattr(classifier, "tokenizer"):
            raise ModelUnavailableError(f"{classifier.name} is not a transformers sequence classifier, "
                                        f"so it cannot serve as {name}")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model_manifest, "input": "(reference, candidate) pair",
                "output": "raw first logit"}

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> dict[str, np.ndarray]:
        import torch

        check_parallel(candidates, references)
        model, tokenizer = self.classifier.model, self.classifier.tokenizer  # type: ignore[attr-defined]
        device = next(model.parameters()).device
        out = np.zeros(len(candidates))
        order = sorted(range(len(candidates)), key=lambda i: len(candidates[i]) + len(references[i]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            encoded = tokenizer([references[i] for i in batch], [candidates[i] for i in batch],
                                return_tensors="pt", padding=True, truncation=True)
            with torch.no_grad():
                logits = model(**{k: v.to(device) for k, v in encoded.items()}).logits.float().cpu()
            out[batch] = logits[:, 0].numpy()
        return {"score": out}
