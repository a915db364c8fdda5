"""The adaptation pipeline as stored, resumable jobs (Quiroga et al. 2025, Figs. 1–3).

1. NOEs: NER over the domain corpus (`noe.find_noes`, one stored task, kind "adaptation-ner").
2. Rewrites: one chat generation per (template, kind of term) through the generate-then-score core
   (`fairness_core.generation.run_generation`, mode "chat"): each reply is stored under (model + decoding,
   prompt text — which holds the template, the anchor term and the examples —, sample, seed), so it is
   reused by any later request that contains it and an interrupted run resumes.
3. Measures: the classifiers under test score every distinct perturbation text of the original, adapted
   and NOE sets, and the encoder embeds (original, adapted) pairs for the semantic similarity; one stored
   task (kind "adaptation-measures"), shards of texts.
The summaries (VBCM per set, comparisons, characteristics) are computed from the stored rows (summary.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.adaptation.noe import NOEResult, find_noes
from fairness_core.adaptation.request import AdaptationInputError, AdaptationRequest, Classifier
from fairness_core.adaptation.rewrite import Rewrite, build_prompt, judge, pick_anchor, pick_examples
from fairness_core.adaptation.templates import Perturbation, Template, TemplateSet, fill
from fairness_core.data.quoting import quoted

MEASURES_KIND = "adaptation-measures"
MEASURES_SCHEMA = 3  # 2: cosine clipped to [-1, 1]; 3: sentence-transformers pooling ([CLS]/[SEP] in the mean)
SETS = ("original", "adapted", "noe")
SCORE_SHARD = 256
PAIR_SHARD = 128


@dataclass
class AdaptationResult:
    request: AdaptationRequest
    noes: NOEResult | None = None
    noe_templates: TemplateSet | None = None
    rewrites: list[Rewrite] = field(default_factory=list)
    perturbations: dict[tuple[str, str], list[Perturbation]] = field(default_factory=dict)  # (set, attribute)
    scores: pd.DataFrame | None = None  # text, classifier, score (mapped), raw
    similarity: pd.DataFrame | None = None  # template_id, kind, original, adapted, cosine
    run_ids: dict[str, list[str]] = field(default_factory=dict)
    from_cache: bool = False
    status: str = "complete"  # complete | cancelled
    stage: str = ""

    @property
    def complete(self) -> bool:
        return self.status == "complete"


# ------------------------------------------------------------------------------ rewriting prompts
def anchor_candidates(request: AdaptationRequest, kind: str) -> list[str]:
    if kind == "names":
        return list(request.anchor_names)
    return [t for a in request.attributes for g, ts in request.groups(a).items() if request.kind_of(g) == "nouns"
            for t in ts]


def rewrite_prompts(request: AdaptationRequest, examples_pool: tuple[str, ...]) -> list[dict[str, Any]]:
    """One record per (template, kind): anchor, examples and the App. A.4 prompt."""
    records = []
    for template in request.templates.templates:
        examples = pick_examples(examples_pool, request.n_examples, template.template_id, request.seed)
        for kind in request.kinds():
            anchor = pick_anchor(anchor_candidates(request, kind), template.template_id, kind, request.seed)
            prompt = build_prompt(fill(template.text, anchor), anchor, examples, request.prompt)
            records.append({"template": template, "kind": kind, "anchor": anchor, "examples": examples,
                            "prompt": prompt, "prompt_id": f"{template.template_id}|{kind}"})
    return records


def generation_request(request: AdaptationRequest, records: list[dict[str, Any]]) -> Any:
    from fairness_core.data.prompts import PromptItem, PromptSet
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest
    from fairness_core.models import DecodingConfig

    decoding = (DecodingConfig(greedy=True, max_new_tokens=request.max_new_tokens) if request.temperature == 0
                else DecodingConfig(temperature=request.temperature, max_new_tokens=request.max_new_tokens))
    items = tuple(PromptItem(r["prompt_id"], r["kind"], "adaptation", r["prompt"], source=r["template"].template_id)
                  for r in records)
    return GenerationRequest(systems=(System(request.model, decoding),),
                             prompts=PromptSet(f"adaptation prompts of {request.templates.name}", items),
                             scorers=(), samples=1, seeds=(request.seed,), max_new_tokens=request.max_new_tokens,
                             truncate="none", mode="chat", batch_size=8)


# ------------------------------------------------------------------------------ perturbations
def build_perturbations(request: AdaptationRequest, rewrites: list[Rewrite],
                        noe_templates: TemplateSet) -> dict[tuple[str, str], list[Perturbation]]:
    """Original / adapted / NOE perturbations per attribute (NOEs: name groups only)."""
    adapted: dict[str, dict[str, str]] = {}
    for rewrite in rewrites:
        if rewrite.accepted and rewrite.adapted_template is not None:
            adapted.setdefault(rewrite.template_id, {})[rewrite.kind] = rewrite.adapted_template
    out: dict[tuple[str, str], list[Perturbation]] = {}
    for attribute in request.attributes:
        groups = request.groups(attribute)
        needed = {request.kind_of(g) for g in groups}
        original, rewritten, noe = [], [], []
        for template in request.templates.templates:
            versions = adapted.get(template.template_id, {})
            keep = needed <= set(versions)  # every kind this attribute needs was accepted
            for group, terms in groups.items():
                for term in terms:
                    original.append(Perturbation(template.template_id, attribute, group, term,
                                                 fill(template.text, term)))
                    if keep:
                        rewritten.append(Perturbation(template.template_id, attribute, group, term,
                                                      fill(versions[request.kind_of(group)], term)))
        for template in noe_templates.templates:
            for group, terms in groups.items():
                if request.kind_of(group) != "names":
                    continue
                for term in terms:
                    noe.append(Perturbation(template.template_id, attribute, group, term, fill(template.text, term)))
        out[("original", attribute)] = original
        out[("adapted", attribute)] = rewritten
        out[("noe", attribute)] = noe
    return out


# ------------------------------------------------------------------------------ measures task
def _text_id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def map_score(value: float, mapping: str) -> float:
    """The stated mapping to [0, 1]: VADER (compound + 1) / 2; other columns as they are."""
    if mapping == "(compound + 1) / 2":
        return (value + 1.0) / 2.0
    return value


def measures_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Score a shard of texts with one classifier, or embed a shard of (original, adapted) pairs."""
    from fairness_core.jobs import checkpoint

    if shard["kind"] == "score":
        from fairness_core.scorers import scorer_from_request

        classifier = request["classifiers"][shard["classifier"]]
        scorer = scorer_from_request(classifier["scorer"], **classifier["options"])
        column = classifier["column"] or scorer.columns[0]
        texts = shard["texts"]
        values = np.asarray(scorer.score(texts)[column], dtype=float)
        checkpoint(len(texts), len(texts))
        rows = []
        for text, value in zip(texts, values, strict=True):
            mapped = map_score(float(value), classifier["mapping"]) if np.isfinite(value) else None
            rows.append({"item": _text_id(text), "grp": classifier["label"], "variant": "score", "metric": "score",
                         "value": mapped, "text": text, "attrs": {"raw": float(value) if np.isfinite(value) else None,
                                                                  "column": column}})
        return rows
    from fairness_core.models import load_preset

    encoder = load_preset(request["encoder"])
    pairs = shard["pairs"]
    originals = encoder.sentence_embeddings([p[0] for p in pairs])
    adapted = encoder.sentence_embeddings([p[1] for p in pairs])
    # L2-normalised embeddings: cosine = dot product; float32 rounding can step past ±1, so it is clipped.
    cosine = np.clip((originals * adapted).sum(axis=1), -1.0, 1.0)
    return [{"item": _text_id(p[0] + "\u241e" + p[1]), "grp": None, "variant": "similarity", "metric": "cosine",
             "value": float(c), "text": p[1], "attrs": {"original": p[0]}} for p, c in zip(pairs, cosine, strict=True)]


def measures_task(request: AdaptationRequest, texts: list[str], pairs: list[tuple[str, str]]) -> Any:
    from fairness_core.jobs import Task
    from fairness_core.scorers import scorer_from_request

    classifiers = []
    for classifier in request.classifiers:
        scorer = scorer_from_request(classifier.scorer, **dict(classifier.options))
        classifiers.append({**classifier.record(), "label": classifier.label, "signature": scorer.signature()})
    shards: list[dict[str, Any]] = []
    for index in range(len(classifiers)):
        for start in range(0, len(texts), SCORE_SHARD):
            shards.append({"kind": "score", "classifier": index, "texts": texts[start:start + SCORE_SHARD]})
    for start in range(0, len(pairs), PAIR_SHARD):
        shards.append({"kind": "similarity", "pairs": [list(p) for p in pairs[start:start + PAIR_SHARD]]})
    digest = hashlib.sha256(json.dumps([texts, pairs], ensure_ascii=False).encode()).hexdigest()[:16]
    payload = {"schema": MEASURES_SCHEMA, "classifiers": classifiers, "encoder": request.encoder,
               "texts": {"hash": digest, "n": len(texts), "pairs": len(pairs)}}
    return Task(MEASURES_KIND, payload, shards, measures_work)


def check_classifiers(classifiers: tuple[Classifier, ...]) -> None:
    from fairness_core.models.interfaces import ModelUnavailableError
    from fairness_core.scorers import ScorerOptionError, scorer_from_request

    for classifier in classifiers:
        try:
            scorer = scorer_from_request(classifier.scorer, **dict(classifier.options))
            scorer.check_available()
        except (ModelUnavailableError, ScorerOptionError) as error:
            raise AdaptationInputError(str(error)) from None
        if classifier.column and classifier.column not in scorer.columns:
            raise AdaptationInputError(f"{classifier.scorer} has no column {quoted(classifier.column)}; its columns: "
                                       f"{', '.join(scorer.columns)}")


# ------------------------------------------------------------------------------ the pipeline
def run_adaptation(request: AdaptationRequest, store: Any, on_progress: Callable[[Any], None] | None = None,
                   cancel: Any = None, executor: Any = None,
                   log: Callable[[str], None] | None = None) -> AdaptationResult:
    """NER -> rewrites -> measures, each stored; a repeated request is read back, a cancelled one resumes."""
    from fairness_core.generation.task import GenerationInputError, run_generation

    say = log or (lambda message: None)
    result = AdaptationResult(request)
    check_classifiers(request.classifiers)

    result.stage = "NER"
    say(f"finding person names in {len(request.corpus.texts)} domain sentences ({request.ner})")
    try:
        noes = find_noes(request.corpus, store, request.ner, on_progress, cancel, executor)
    except ValueError as error:
        raise AdaptationInputError(str(error)) from None
    result.noes = noes
    result.run_ids["ner"] = [noes.run_id]
    if cancel is not None and cancel.cancelled:
        result.status = "cancelled"
        return result
    result.noe_templates = noes.limited(request.max_noes, request.seed)
    if not request.rewrite:  # the original templates against the NOEs: no chat model is loaded
        return _measure(request, result, store, on_progress, cancel, executor, say, noes.from_cache)
    if request.n_examples and not noes.examples_pool:
        raise AdaptationInputError("no domain sentence without a person name is left for the examples")
    result.stage = "rewriting"
    records = rewrite_prompts(request, noes.examples_pool)
    say(f"rewriting {len(records)} filled templates with {request.model}")
    try:
        generated = run_generation(generation_request(request, records), store, on_progress=on_progress,
                                   cancel=cancel, executor=executor)
    except GenerationInputError as error:
        raise AdaptationInputError(str(error)) from None
    result.run_ids["rewrites"] = generated.run_ids
    replies = {row["prompt_id"]: row["raw"] for _, row in generated.generations.iterrows()}
    result.rewrites = [judge(r["template"].template_id, r["kind"], r["anchor"], r["template"].text,
                             replies[r["prompt_id"]]) for r in records if r["prompt_id"] in replies]
    if generated.status != "complete" or len(result.rewrites) < len(records):
        result.status = "cancelled"
        return result
    return _measure(request, result, store, on_progress, cancel, executor, say,
                    noes.from_cache and generated.from_cache)


def _measure(request: AdaptationRequest, result: AdaptationResult, store: Any, on_progress: Any, cancel: Any,
             executor: Any, say: Callable[[str], None], reused: bool) -> AdaptationResult:
    """Stage 3: score every perturbation of every set, embed the accepted (original, adapted) pairs."""
    assert result.noe_templates is not None
    result.stage = "scoring"
    result.perturbations = build_perturbations(request, result.rewrites, result.noe_templates)
    texts = list(dict.fromkeys(p.text for ps in result.perturbations.values() for p in ps))
    pairs = list(dict.fromkeys((r.original, r.cleaned) for r in result.rewrites if r.accepted))
    say(f"scoring {len(texts)} texts with {', '.join(c.label for c in request.classifiers)}; "
        f"embedding {len(pairs)} original/adapted pairs")
    from fairness_core.jobs import run_task

    outcome = run_task(measures_task(request, texts, pairs), store, on_progress=on_progress, cancel=cancel,
                       executor=executor)
    result.run_ids["measures"] = [outcome.run_id]
    result.from_cache = reused and outcome.from_cache
    if outcome.status != "complete":
        result.status = "cancelled"
        return result
    rows = store.rows(outcome.run_id)
    scored = rows[rows["variant"] == "score"]
    result.scores = pd.DataFrame({"text": scored["text"], "classifier": scored["grp"],
                                  "score": pd.to_numeric(scored["value"], errors="coerce")})
    similar = rows[rows["variant"] == "similarity"]
    by_pair = {(a["original"], t): v for a, t, v in zip(similar["attrs"], similar["text"], similar["value"],
                                                       strict=True)}
    result.similarity = pd.DataFrame(
        [{"template_id": r.template_id, "kind": r.kind, "original": r.original, "adapted": r.cleaned,
          "cosine": by_pair.get((r.original, r.cleaned), np.nan)} for r in result.rewrites if r.accepted],
        columns=["template_id", "kind", "original", "adapted", "cosine"])
    result.stage = "done"
    return result


def anchor_originals(request: AdaptationRequest) -> list[str]:
    """Each template filled with its anchor term, per kind of term (the sentences a rewrite starts from)."""
    return list(dict.fromkeys(fill(t.text, pick_anchor(anchor_candidates(request, kind), t.template_id, kind,
                                                       request.seed))
                              for t in request.templates.templates for kind in request.kinds()))


def templates_of(result: AdaptationResult) -> dict[str, list[Template]]:
    return {"original": list(result.request.templates.templates),
            "noe": list(result.noe_templates.templates) if result.noe_templates else []}
