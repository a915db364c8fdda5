"""BLEU, ROUGE-1 F, METEOR, NIST and chrF through sacrebleu / rouge-score / nltk (no re-implementations).

Two configurations:

* `default` — each library's standard sentence-level settings (sacrebleu for BLEU and chrF, with
  sacrebleu's own tokenizer; rouge-score without stemming; nltk NIST with n=5).
* `metric-fairness-2022` — exactly what the released code of Sun et al. (2022) computes: nltk BLEU
  with method1 smoothing on whitespace tokens, ROUGE-1 with the Porter stemmer, nltk chrF with its
  defaults, nltk NIST with n=2 (the released score columns match n=2, not the code's default n=5).

METEOR is nltk's `single_meteor_score` on whitespace tokens in both configurations. The released code
passed Python *sets* of tokens to METEOR, so its scores depend on the hash seed (set order changes
the alignment); we deliberately do not replicate that.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fairness_core.metrics.base import Metric, check_parallel

CONFIGS = ("default", "metric-fairness-2022")
NGRAM_METRICS = ("bleu", "rouge1", "meteor", "nist", "chrf")


def _bleu(config: str) -> Callable[[str, str], float]:
    if config == "default":
        from sacrebleu.metrics import BLEU

        bleu = BLEU(effective_order=True)  # sacrebleu's recommended setting for sentence BLEU
        return lambda cand, ref: bleu.sentence_score(cand, [ref]).score
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smoothing = SmoothingFunction().method1
    return lambda cand, ref: sentence_bleu([ref.split()], cand.split(), weights=(0.25, 0.25, 0.25, 0.25),
                                           smoothing_function=smoothing)


def _rouge1(config: str) -> Callable[[str, str], float]:
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer(["rouge1"], use_stemmer=config == "metric-fairness-2022")
    return lambda cand, ref: scorer.score(ref, cand)["rouge1"].fmeasure  # score(target, prediction)


def _meteor(config: str) -> Callable[[str, str], float]:
    from fairness_core import config as paths

    paths.ensure_nltk_path()
    from nltk.translate.meteor_score import single_meteor_score

    return lambda cand, ref: single_meteor_score(ref.split(), cand.split())


def _nist(config: str) -> Callable[[str, str], float]:
    from nltk.translate.nist_score import sentence_nist

    order = 2 if config == "metric-fairness-2022" else 5

    def nist(cand: str, ref: str) -> float:
        tokens = cand.split()
        if not tokens:
            return 0.0
        # nltk divides by the number of candidate n-grams of each order, so a candidate shorter than
        # n raises ZeroDivisionError; use the orders the candidate has (as effective-order BLEU does).
        return sentence_nist([ref.split()], tokens, n=min(order, len(tokens)))

    return nist


def _chrf(config: str) -> Callable[[str, str], float]:
    if config == "default":
        from sacrebleu.metrics import CHRF

        chrf = CHRF()
        return lambda cand, ref: chrf.sentence_score(cand, [ref]).score
    from nltk.translate.chrf_score import sentence_chrf

    return lambda cand, ref: sentence_chrf(ref, cand)


_BUILDERS = {"bleu": _bleu, "rouge1": _rouge1, "meteor": _meteor, "nist": _nist, "chrf": _chrf}
_LIBRARIES = {
    "default": {"bleu": "sacrebleu BLEU(effective_order=True)", "rouge1": "rouge-score rouge1 F, no stemmer",
                "meteor": "nltk single_meteor_score, whitespace tokens",
                "nist": "nltk sentence_nist n=5 (capped at the candidate length)",
                "chrf": "sacrebleu CHRF()"},
    "metric-fairness-2022": {"bleu": "nltk sentence_bleu, 4-gram, method1 smoothing",
                             "rouge1": "rouge-score rouge1 F, Porter stemmer",
                             "meteor": "nltk single_meteor_score, whitespace tokens (lists, not sets)",
                             "nist": "nltk sentence_nist n=2", "chrf": "nltk sentence_chrf defaults"},
}


class NgramMetric(Metric):
    family = "n-gram"

    def __init__(self, name: str, config: str = "default") -> None:
        if name not in _BUILDERS:
            raise ValueError(f"unknown n-gram metric {name!r}; choose from {', '.join(NGRAM_METRICS)}")
        if config not in CONFIGS:
            raise ValueError(f"unknown metric configuration {config!r}; choose {' or '.join(CONFIGS)}")
        self.name = name
        self.config = config
        self._fn = _BUILDERS[name](config)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "config": self.config, "implementation": _LIBRARIES[self.config][self.name]}

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> dict[str, np.ndarray]:
        check_parallel(candidates, references)
        cache: dict[tuple[str, str], float] = {}  # pairs repeat (shared references, templated data)
        values = []
        for cand, ref in zip(candidates, references, strict=True):
            key = (cand, ref)
            if key not in cache:
                value = float(self._fn(cand, ref))
                cache[key] = value if math.isfinite(value) else 0.0
            values.append(cache[key])
        return {"score": np.asarray(values, dtype=float)}
