"""Quality proxy: mean token log-probability of a continuation given its prompt under a scorer LM.

This is a *proxy* for the paper's human quality ratings (fluency/coherence): it rewards text the
scorer finds likely, which also favours bland, repetitive text. With the generator as its own
scorer, low temperature trivially scores high; a different scorer model is the fairer choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairness_core.models import CausalLM, ModelSpec, ModelUnavailableError
from fairness_core.scorers.base import Measure, Scorer, ScorerOptions, register_scorer


def mean_logprob(scorer: CausalLM, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
    """Per pair: mean log p(token) over the continuation's tokens (NaN for an empty continuation)."""
    values = np.full(len(prompts), np.nan)
    keep = [i for i, text in enumerate(continuations) if text.strip()]
    if keep:
        scores = scorer.loglikelihood([prompts[i] for i in keep], [" " + continuations[i].strip() for i in keep])
        for index, score in zip(keep, scores, strict=True):
            values[index] = score.mean
    return values


@dataclass(frozen=True)
class QualityOptions(ScorerOptions):
    model: str = "smollm2-135m-instruct"  # causal LM: preset key, hub id, local directory or .gguf


@register_scorer
class QualityLogprobScorer(Scorer):
    """Mean token log-probability of the continuation given its prompt under `model` (a quality proxy)."""

    name = "quality_logprob"
    label = "Quality proxy (mean token log-prob)"
    version = "1"
    Options = QualityOptions
    reads = "generation"
    needs_prompts = True
    options: QualityOptions
    measures = (Measure("quality_logprob", "quality_mean_logprob", "quality proxy (mean token log-prob)", "mean"),)

    default_range = None  # a mean token log-probability: any value at or below 0

    @property
    def columns(self) -> tuple[str, ...]:
        return ("quality_logprob",)

    def _spec(self) -> ModelSpec:
        from fairness_core.models import resolve_model

        try:
            return resolve_model(self.options.model, "causal-lm")
        except ValueError as error:
            raise ModelUnavailableError(f"quality scorer {self.options.model} is unavailable here: {error}") from None

    def model_manifest(self) -> dict[str, Any]:
        return self._spec().to_manifest()

    def _model(self) -> CausalLM:
        from fairness_core.models import load_model

        return load_model(self._spec())  # type: ignore[return-value]

    def check_available(self) -> None:
        reason = self._model().cannot("loglikelihood")
        if reason:  # e.g. an endpoint that returns no prompt log-probs
            raise ModelUnavailableError(f"the quality proxy is {reason}")

    def score(self, texts: Sequence[str], prompts: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        prompts = self._require_prompts(texts, prompts)
        return {"quality_logprob": mean_logprob(self._model(), prompts, [t.strip() for t in texts])}
