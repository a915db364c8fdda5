"""BARTScore-style generation metrics: how likely a model finds one text given the other.

precision = mean token log p(candidate | reference), recall = mean token log p(reference | candidate),
F = their arithmetic mean (Yuan et al., 2021, Eq. 1 with uniform token weights, as used by Sun et al.
2022). Two backends:

* a sequence-to-sequence model (`Seq2SeqLM.token_logprobs`): facebook/bart-base, bart-large-cnn, …;
* a decoder-only model (`CausalLM.loglikelihood`) scoring the target after a paraphrase prompt that
  contains the source — the offline default is SmolLM2-135M-Instruct.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairness_core.metrics.base import MetricOptions, check_parallel
from fairness_core.metrics.model_based import ModelMetric
from fairness_core.metrics.registry import register_metric

if TYPE_CHECKING:
    from fairness_core.models.interfaces import CausalLM, Seq2SeqLM

#: The decoder-only prompt: the source sentence, then the target as its paraphrase.
PROMPT = "Paraphrase the sentence.\nSentence: {source}\nParaphrase:"


@dataclass(frozen=True)
class BARTScoreOptions(MetricOptions):
    #: preset key, hub id or local path of a seq2seq or decoder-only LM; None = SmolLM2-135M-Instruct
    model: str | None = None
    #: a debiasing adapter's id (models/adapters.py; `mitigate train`); None = the plain backbone
    adapter: str | None = None


#: (source, target) pairs scored per model call between two cancellation checks
_CHUNK = 32


@register_metric
class BARTScore(ModelMetric):
    name = "bartscore"
    label = "BARTScore"
    family = "generation"
    version = "1"
    outputs = ("F", "P", "R")
    Options = BARTScoreOptions
    options: BARTScoreOptions
    task = "lm"
    default_model = "smollm2-135m-instruct"
    description = "mean token log-likelihood both ways (seq2seq, or decoder-only with a paraphrase prompt)"

    def __init__(self, options: BARTScoreOptions | None = None, *, model: Seq2SeqLM | CausalLM | None = None,
                 prompt: str = PROMPT) -> None:
        from fairness_core.models.interfaces import CausalLM, Seq2SeqLM

        if model is not None and not isinstance(model, Seq2SeqLM | CausalLM):
            raise TypeError("BARTScore needs a sequence-to-sequence or a causal language model")
        super().__init__(options, model=model)
        self.prompt = prompt

    @property
    def backend(self) -> str:
        from fairness_core.models.interfaces import Seq2SeqLM

        if self._model is not None:
            return "seq2seq" if isinstance(self._model, Seq2SeqLM) else "decoder-only"
        return "seq2seq" if self.model_spec().task == "seq2seq-lm" else "decoder-only"

    def signature(self) -> dict[str, Any]:
        signature = super().signature() | {"backend": self.backend}
        if self.backend == "decoder-only":
            signature["prompt"] = self.prompt
        return signature

    def direction(self, sources: Sequence[str], targets: Sequence[str]) -> np.ndarray:
        """Mean token log p(target | source) for each pair, each distinct pair computed once."""
        distinct = sorted(set(zip(sources, targets, strict=True)))
        if not distinct:
            return np.zeros(0)
        src, tgt = [s for s, _ in distinct], [t for _, t in distinct]
        from fairness_core.jobs.context import checkpoint
        from fairness_core.models.interfaces import CausalLM, Seq2SeqLM

        if isinstance(self.model, CausalLM) and self.model.reports_scoring_progress:
            # One call: the model layer shares the prompt's prefix across pairs and buckets by length over all of
            # them, and reports after each batch (Cancel acts within one).
            scores = self.model.loglikelihood([self.prompt.format(source=s) for s in src], [" " + t for t in tgt],
                                              on_progress=checkpoint)  # type: ignore[call-arg]
        else:
            scores = []
            for start in range(0, len(src), _CHUNK):  # chunks so that Cancel acts within seconds
                checkpoint(start, len(src))
                s_chunk, t_chunk = src[start : start + _CHUNK], tgt[start : start + _CHUNK]
                if isinstance(self.model, Seq2SeqLM):
                    scores += self.model.token_logprobs(s_chunk, t_chunk)
                else:
                    scores += self.model.loglikelihood([self.prompt.format(source=s) for s in s_chunk],
                                                       [" " + t for t in t_chunk])
        by_pair = {pair: s.mean for pair, s in zip(distinct, scores, strict=True)}
        return np.array([by_pair[pair] for pair in zip(sources, targets, strict=True)], dtype=float)

    def score(self, candidates: Sequence[str], references: Sequence[str], sources: Sequence[str] | None = None,
              state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        check_parallel(candidates, references)
        precision = self.direction(references, candidates)  # p(sys | ref)
        recall = self.direction(candidates, references)  # p(ref | sys)
        return {"F": (precision + recall) / 2, "P": precision, "R": recall}
