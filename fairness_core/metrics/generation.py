"""BARTScore-style generation metrics: how likely a model finds one text given the other.

precision = mean token log p(candidate | reference), recall = mean token log p(reference | candidate),
F = their arithmetic mean (Yuan et al., 2021, as used by Sun et al., 2022). Two backends:

* a sequence-to-sequence model (`Seq2SeqLM.token_logprobs`): facebook/bart-base, bart-large-cnn, …;
* a decoder-only model (`CausalLM.loglikelihood`) scoring the target after a paraphrase prompt that
  contains the source — the offline default is SmolLM2-135M-Instruct.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairness_core.metrics.base import Metric, check_parallel
from fairness_core.models.interfaces import CausalLM, Seq2SeqLM

#: The decoder-only prompt: the source sentence, then the target as its paraphrase.
PROMPT = "Paraphrase the sentence.\nSentence: {source}\nParaphrase:"


class BARTScore(Metric):
    family = "generation"
    outputs = ("F", "P", "R")

    def __init__(self, model: Seq2SeqLM | CausalLM, model_manifest: dict[str, Any] | None = None,
                 prompt: str = PROMPT) -> None:
        if not isinstance(model, Seq2SeqLM | CausalLM):
            raise TypeError("BARTScore needs a sequence-to-sequence or a causal language model")
        self.name = "bartscore"
        self.model = model
        self.prompt = prompt
        self.model_manifest = model_manifest or model.describe()

    @property
    def backend(self) -> str:
        return "seq2seq" if isinstance(self.model, Seq2SeqLM) else "decoder-only"

    def describe(self) -> dict[str, Any]:
        record: dict[str, Any] = {"name": self.name, "model": self.model_manifest, "backend": self.backend,
                                  "aggregate": "mean token log-prob", "F": "arithmetic mean of P and R"}
        if self.backend == "decoder-only":
            record["prompt"] = self.prompt
        return record

    def direction(self, sources: Sequence[str], targets: Sequence[str]) -> np.ndarray:
        """Mean token log p(target | source) for each pair, each distinct pair computed once."""
        distinct = sorted(set(zip(sources, targets, strict=True)))
        if not distinct:
            return np.zeros(0)
        src, tgt = [s for s, _ in distinct], [t for _, t in distinct]
        if isinstance(self.model, Seq2SeqLM):
            scores = self.model.token_logprobs(src, tgt)
        else:
            scores = self.model.loglikelihood([self.prompt.format(source=s) for s in src], [" " + t for t in tgt])
        by_pair = {pair: s.mean for pair, s in zip(distinct, scores, strict=True)}
        return np.array([by_pair[pair] for pair in zip(sources, targets, strict=True)], dtype=float)

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> dict[str, np.ndarray]:
        check_parallel(candidates, references)
        precision = self.direction(references, candidates)  # p(sys | ref)
        recall = self.direction(candidates, references)  # p(ref | sys)
        return {"F": (precision + recall) / 2, "P": precision, "R": recall}
