"""Regression and distilled metrics that are sequence classifiers on the hub: BLEURT, FrugalScore.

Both read a (reference, candidate) sentence pair and output one number. The `TextClassifier`
interface scores single texts and squashes outputs into probabilities, so these metrics call the
classifier backend's tokenizer with a text pair and read the raw regression output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairness_core.metrics.base import MetricOptions, check_parallel
from fairness_core.metrics.model_based import ModelMetric
from fairness_core.metrics.registry import register_metric


@dataclass(frozen=True)
class PairRegressionOptions(MetricOptions):
    #: a hub id or local path of a sequence classifier trained as this metric; None = the default
    model: str | None = None
    #: a debiasing adapter's id (models/adapters.py; `mitigate train`); None = the plain model
    adapter: str | None = None


class PairRegressionMetric(ModelMetric):
    family = "regression"
    task = "classifier"
    outputs = ("score",)
    Options = PairRegressionOptions
    batch_size = 32

    def signature(self) -> dict[str, Any]:
        return super().signature() | {"input": "(reference, candidate) pair", "output": "raw first logit"}

    def score(self, candidates: Sequence[str], references: Sequence[str], sources: Sequence[str] | None = None,
              state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        import torch

        from fairness_core.models.interfaces import ModelUnavailableError

        check_parallel(candidates, references)
        classifier = self.model
        if not hasattr(classifier, "model") or not hasattr(classifier, "tokenizer"):
            raise ModelUnavailableError(f"{classifier.name} is not a transformers sequence classifier, "
                                        f"so it cannot serve as {self.name}")
        model, tokenizer = classifier.model, classifier.tokenizer
        device = next(model.parameters()).device
        out = np.zeros(len(candidates))
        order = sorted(range(len(candidates)), key=lambda i: len(candidates[i]) + len(references[i]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            encoded = tokenizer([references[i] for i in batch], [candidates[i] for i in batch],
                                return_tensors="pt", padding=True, truncation=True)
            with torch.inference_mode():
                logits = model(**{k: v.to(device) for k, v in encoded.items()}).logits.float().cpu()
            out[batch] = logits[:, 0].numpy()
        return {"score": out}


@register_metric
class BLEURT(PairRegressionMetric):
    name = "bleurt"
    label = "BLEURT"
    default_model = "bleurt-base-512"
    description = "BLEURT regression head (hub only)"


@register_metric
class FrugalScore(PairRegressionMetric):
    name = "frugalscore"
    label = "FrugalScore"
    default_model = "frugalscore-tiny"
    description = "FrugalScore distilled regression head (hub only)"
