"""DATScore-LM and BARTScore-LM as metric plug-ins, so the Metric bias page can measure their social bias.

Both use the LM variant of DATScore's backbone (`fairness_core.translation.backbones.CausalLMBackbone`): an
offline causal LM (SmolLM2-135M-Instruct by default) translates with a chat prompt and scores X→Y as
log P(Y | translation prompt containing X). They are *not* the paper's seq2seq DATScore (M2M-100); the "-LM"
in their names says so. A seq2seq `model` (M2M-100, NLLB, mBART-50 from the hub) makes `datscore-lm` compute
the paper's DATScore; the signature records which backbone ran.

* `bartscore-lm`: BARTScore's facets with the translation prompt (Section 3): P = Ref→Hypo, R = Hypo→Ref,
  F = (P + R) / 2 (and faithfulness Src→Hypo when sources are given), uniform or entropy term weights.
* `datscore-lm`: Eq. 2 over the directions centred on the candidate (Hypo) with Eq. 3 one-vs-rest weights as
  corpus state (`prepare`), Eq. 1 terms weighted uniformly or by entropy (Eq. 4). Without sources (the
  Metric bias page's pairs have none) it uses the 4 directions Hypo↔Ref and Hypo↔Trans2, as the paper does
  for tasks without a translatable source (Section 5); with sources all 8.

Scores of a (direction, X, Y) are cached per process so `prepare` (which needs every direction score of the
corpus for Eq. 3) and `score` do not run the model twice. Reads the DATScore package's pure modules, which
import only `fairness_core.models` and numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairness_core.metrics.base import MetricOptions, check_parallel
from fairness_core.metrics.model_based import ModelMetric
from fairness_core.metrics.registry import register_metric

_CACHE: dict[tuple[Any, ...], tuple[float, float]] = {}
_TRANSLATIONS: dict[tuple[Any, ...], str] = {}
_CACHE_LIMIT = 200_000


@dataclass(frozen=True)
class DATScoreLMOptions(MetricOptions):
    #: causal LM (the LM variant; default SmolLM2-135M-Instruct, offline) or a multilingual seq2seq
    model: str | None = None
    #: language of candidates and references (ISO 639-1)
    tgt_lang: str = "en"
    #: language of the sources, when sources are given
    src_lang: str = "fr"
    #: Eq. 1 term weights: "entropy" (Eq. 4) or "uniform" (BARTScore's mean)
    term_weighting: str = "entropy"
    #: direction averaging: "one-vs-rest" (Eq. 3) or "uniform"
    averaging: str = "one-vs-rest"
    #: length limit of the augmented translations
    max_new_tokens: int = 48

    def problems(self) -> list[str]:
        found = []
        if self.term_weighting not in ("entropy", "uniform"):
            found.append(f"term_weighting must be entropy or uniform (got {self.term_weighting!r})")
        if self.averaging not in ("one-vs-rest", "uniform"):
            found.append(f"averaging must be one-vs-rest or uniform (got {self.averaging!r})")
        if self.tgt_lang == self.src_lang:
            found.append(f"src_lang and tgt_lang are both {self.tgt_lang!r}")
        if not 1 <= self.max_new_tokens <= 256:
            found.append(f"max_new_tokens must be between 1 and 256 (got {self.max_new_tokens})")
        return found


class _LMVariantMetric(ModelMetric):
    family = "translation"
    task = "lm"
    default_model = "smollm2-135m-instruct"
    Options = DATScoreLMOptions
    options: DATScoreLMOptions
    needs_sources = False

    def _backbone(self) -> Any:
        from fairness_core.translation.backbones import backbone_for

        return backbone_for(self.model)

    def signature(self) -> dict[str, Any]:
        from fairness_core.translation.backbones import TRANSLATION_PROMPT

        signature = super().signature()
        task = self._model_task()
        signature["backbone"] = "seq2seq (the paper's DATScore)" if task == "seq2seq-lm" else "lm (LM variant)"
        if task != "seq2seq-lm":
            signature["prompt"] = TRANSLATION_PROMPT
        return signature

    def _model_task(self) -> str:
        from fairness_core.models.interfaces import Seq2SeqLM

        if self._model is not None:
            return "seq2seq-lm" if isinstance(self._model, Seq2SeqLM) else "causal-lm"
        return self.model_spec().task

    def _key(self) -> tuple[Any, ...]:
        return (tuple(getattr(self.model, "cache_key", ()) or (id(self.model),)),)

    def _translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:
        from fairness_core.jobs.context import checkpoint

        key = (*self._key(), src, tgt, self.options.max_new_tokens)
        todo = list(dict.fromkeys(t for t in texts if (*key, t) not in _TRANSLATIONS))
        if todo:
            translated = self._backbone().translate(todo, src, tgt, self.options.max_new_tokens,
                                                    on_progress=checkpoint)  # Cancel inside a metric job
            for text, out in zip(todo, translated, strict=True):
                _TRANSLATIONS[(*key, text)] = out
        return [_TRANSLATIONS[(*key, t)] for t in texts]

    def _direction(self, xs: Sequence[str], ys: Sequence[str], x_lang: str, y_lang: str) -> np.ndarray:
        """Eq. 1 score of each (x, y) under the chosen term weighting; each distinct pair computed once."""
        from fairness_core.jobs.context import checkpoint
        from fairness_core.translation import weights as W
        from fairness_core.translation.backbones import ScoreRequest

        key = (*self._key(), x_lang, y_lang)
        todo = list(dict.fromkeys((x, y) for x, y in zip(xs, ys, strict=True) if (*key, x, y) not in _CACHE))
        if todo:
            if len(_CACHE) > _CACHE_LIMIT:
                _CACHE.clear()
            scored = self._backbone().score([ScoreRequest(x, y, x_lang, y_lang) for x, y in todo],
                                            on_progress=checkpoint)  # Cancel within a batch of a metric job
            for (x, y), result in zip(todo, scored, strict=True):
                _CACHE[(*key, x, y)] = (W.direction_score(result.logprobs, term_weighting=W.UNIFORM),
                                        W.direction_score(result.logprobs, result.entropies, W.ENTROPY))
        column = 0 if self.options.term_weighting == "uniform" else 1
        return np.array([_CACHE[(*key, x, y)][column] for x, y in zip(xs, ys, strict=True)], dtype=float)

    def direction_matrix(self, candidates: Sequence[str], references: Sequence[str],
                         sources: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
        """(direction labels, n × k scores): 8 directions with sources, Hypo↔Ref and Hypo↔Trans2 without."""
        from fairness_core.translation import directions as D

        check_parallel(candidates, references)
        languages = D.entity_languages(self.options.src_lang, self.options.tgt_lang)
        texts: dict[str, list[str]] = {D.HYPO: list(candidates), D.REF: list(references)}
        texts[D.TRANS2] = self._translate(references, languages[D.REF], languages[D.TRANS2])
        chosen = D.REFERENCE_ONLY
        if sources is not None:
            check_parallel(candidates, sources)
            texts[D.SRC] = list(sources)
            texts[D.TRANS1] = self._translate(sources, languages[D.SRC], languages[D.TRANS1])
            chosen = D.DIRECTIONS
        columns = [self._direction(texts[d.source], texts[d.target], languages[d.source], languages[d.target])
                   for d in chosen]
        return [d.label for d in chosen], np.stack(columns, axis=1) if columns else np.zeros((0, 0))


@register_metric
class BARTScoreLM(_LMVariantMetric):
    name = "bartscore-lm"
    label = "BARTScore-LM"
    version = "1"
    outputs = ("F", "P", "R")
    description = ("BARTScore facets with a causal LM and a translation prompt (LM variant of DATScore's backbone; "
                   "P = Ref→Hypo, R = Hypo→Ref, F = mean)")

    def score(self, candidates: Sequence[str], references: Sequence[str], sources: Sequence[str] | None = None,
              state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        from fairness_core.translation import directions as D

        check_parallel(candidates, references)
        lang = self.options.tgt_lang
        precision = self._direction(references, candidates, lang, lang)  # Ref→Hypo
        recall = self._direction(candidates, references, lang, lang)  # Hypo→Ref
        out = {"F": (precision + recall) / 2, "P": precision, "R": recall}
        if sources is not None:
            langs = D.entity_languages(self.options.src_lang, lang)
            out["faithfulness"] = self._direction(sources, candidates, langs[D.SRC], lang)
        return out


@register_metric
class DATScoreLM(_LMVariantMetric):
    name = "datscore-lm"
    label = "DATScore-LM"
    version = "1"
    outputs = ("score",)
    description = ("DATScore's augmented-translation directions and Eq. 3 weights with a causal LM backbone "
                   "(LM variant: the LM translates and scores with a prompt; not the paper's M2M-100)")

    def prepare(self, candidates: Sequence[str], references: Sequence[str],
                sources: Sequence[str] | None = None) -> dict[str, Any] | None:
        """Eq. 3 one-vs-rest weights over the whole corpus (or uniform weights), with the directions used."""
        from fairness_core.translation import weights as W

        labels, matrix = self.direction_matrix(candidates, references, sources)
        if self.options.averaging == "uniform":
            weights = W.uniform_weights(len(labels))
        elif len(candidates) < 2:
            raise ValueError("DATScore's Eq. 3 weights are correlations over a corpus and need at least 2 candidates")
        else:
            weights = W.one_vs_rest_weights(matrix)
        return {"directions": labels, "weights": [round(float(w), 12) for w in weights],
                "averaging": self.options.averaging, "n_segments": int(W.complete_rows(matrix).sum())}

    def score(self, candidates: Sequence[str], references: Sequence[str], sources: Sequence[str] | None = None,
              state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        """Eq. 2 with the corpus weights from `prepare` (computed on this batch when no state is given)."""
        from fairness_core.translation import weights as W

        labels, matrix = self.direction_matrix(candidates, references, sources)
        if state is None:
            state = self.prepare(candidates, references, sources)
        assert state is not None
        if list(state["directions"]) != labels:
            raise ValueError(f"the corpus state has directions {state['directions']} but these texts give {labels} "
                             "(prepare and score must both have sources, or both not)")
        return {"score": W.combine(matrix, np.asarray(state["weights"], dtype=float))}
