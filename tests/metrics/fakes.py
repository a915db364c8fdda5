"""Deterministic stand-in models with hand-picked outputs, so metric arithmetic can be checked by hand."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fairness_core.models.interfaces import CausalLM, Encoder, Seq2SeqLM, TokenEmbeddings, TokenScores


class WordVectorEncoder(Encoder):
    """Each word is a fixed vector; [CLS] and [SEP] wrap every sentence (flagged special)."""

    name = "word-vectors"
    num_layers = 1

    def __init__(self, vectors: dict[str, Sequence[float]]) -> None:
        self.vectors = {k: np.asarray(v, dtype=float) for k, v in vectors.items()}
        self.calls: list[list[str]] = []

    def token_embeddings(self, texts: Sequence[str], layer: int | None = None) -> list[TokenEmbeddings]:
        self.calls.append(list(texts))
        out = []
        for text in texts:
            tokens = ["[CLS]", *text.split(), "[SEP]"]
            out.append(TokenEmbeddings(tokens, np.stack([self.vectors[t] for t in tokens]),
                                       np.array([t in ("[CLS]", "[SEP]") for t in tokens])))
        return out


class TableLM(CausalLM):
    """log p(continuation | context) per token = a number looked up from (context, continuation)."""

    name = "table-lm"

    def __init__(self, table: dict[tuple[str, str], list[float]]) -> None:
        self.table = table
        self.seen: list[tuple[str, str]] = []

    def generate(self, prompts, decoding, n=1, seed=0):  # pragma: no cover - not used by metrics
        raise NotImplementedError

    def loglikelihood(self, contexts: Sequence[str], continuations: Sequence[str]) -> list[TokenScores]:
        out = []
        for context, continuation in zip(contexts, continuations, strict=True):
            source = context.split("Sentence: ")[1].split("\n")[0]
            self.seen.append((source, continuation.strip()))
            values = self.table[(source, continuation.strip())]
            out.append(TokenScores(continuation.split(), np.asarray(values, dtype=float)))
        return out


class TableSeq2Seq(Seq2SeqLM):
    name = "table-seq2seq"

    def __init__(self, table: dict[tuple[str, str], list[float]]) -> None:
        self.table = table

    def token_logprobs(self, sources, targets, with_entropy=False):
        return [TokenScores(t.split(), np.asarray(self.table[(s, t)], dtype=float))
                for s, t in zip(sources, targets, strict=True)]

    def step_distributions(self, source, target):  # pragma: no cover - not used by metrics
        raise NotImplementedError
