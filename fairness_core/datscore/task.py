"""The DATScore pipeline as two stored jobs, so a rerun resumes and re-weighting never recomputes.

1. **translations** (kind `datscore-translations`): every distinct source into Trans1's language and every
   distinct reference into Trans2's (Section 3, Fig. 1). Rows: item = sha256 of the input text, grp =
   "Trans1"/"Trans2", variant = language, metric = "translation", text = the translation, attrs = {input}.
2. **directions** (kind `datscore-directions`): the 8 directions of every segment (Eq. 1), all directions of
   a shard's segments scored together in length-sorted batches; one forward pass gives the four token
   aggregations of Eq. 1 (`weights.TERM_WEIGHTINGS`: mean, plain sum, entropy-weighted sum with Eq. 4,
   entropy-normalised mean). Rows: item = segment id, grp = direction label, metric = the aggregation,
   value = the score, attrs = {n_tokens}; the "entropy" row of a direction into Hypo carries the
   hypothesis's tokens, log-probs and entropies in attrs (the page's token view). Its request names the
   translation run's manifest hash, so new translations mean new direction scores.

Eq. 3 weights and Eq. 2 scores are computed from the stored direction scores (`summary.py`): choosing other
weightings reads the store, it does not run a model. The backbone's model is named in each shard (a local
path is machine-specific) and identified in the manifest by `ModelSpec.to_manifest()` (content hash).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.datscore.request import ScoreRequest
from fairness_core.jobs import CancelToken, Executor, Progress, Task, run_task
from fairness_core.store import RunStore
from fairness_core.translation import directions as D

TRANSLATIONS, DIRECTION_SCORES = "datscore-translations", "datscore-directions"
TRANSLATION_SHARD = 16
SEGMENT_SHARD = 16
DIGITS = 5  # token-level values kept in attrs (display only; scores are stored at full precision)


class PipelineCancelled(RuntimeError):
    """The user cancelled; finished shards are stored and a rerun resumes."""


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def backbone_manifest(model_id: str) -> dict[str, Any]:
    """The backbone's identity without loading weights: spec manifest + kind (seq2seq | lm) + LM prompt."""
    from fairness_core.translation.backbones import (
        ENDPOINT_ENTROPY,
        ENDPOINT_SCORING_FORMAT,
        LM_VARIANT,
        SEQ2SEQ,
        TRANSLATION_PROMPT,
        model_spec,
    )

    spec = model_spec(model_id)
    kind = SEQ2SEQ if spec.task == "seq2seq-lm" else LM_VARIANT
    record: dict[str, Any] = {"kind": kind, "model": spec.to_manifest()}
    if kind == LM_VARIANT:
        record["prompt"] = TRANSLATION_PROMPT
    if spec.is_endpoint:  # host, served model and capabilities are in record["model"]; these change the numbers
        record["scoring_format"] = ENDPOINT_SCORING_FORMAT
        record["entropy"] = ENDPOINT_ENTROPY
    return record


def translation_task(request: ScoreRequest, backbone: dict[str, Any]) -> Task:
    trans1, trans2 = D.augmentation_languages(request.src_lang, request.tgt_lang)
    items: list[dict[str, str]] = []
    for entity, texts, src, tgt in ((D.TRANS1, [s.src for s in request.segments.segments], request.src_lang, trans1),
                                    (D.TRANS2, [s.ref for s in request.segments.segments], request.tgt_lang, trans2)):
        for text in dict.fromkeys(texts):
            items.append({"entity": entity, "text": text, "src_lang": src, "tgt_lang": tgt})
    shards = [{"model_id": request.model, "items": items[i : i + TRANSLATION_SHARD]}
              for i in range(0, len(items), TRANSLATION_SHARD)]
    job_request = {"data": {"name": request.segments.name, "hash": request.segments.content_hash()},
                   "inputs_sha256": hashlib.sha256("\n".join(f"{i['entity']}\t{i['text']}" for i in items)
                                                   .encode("utf-8")).hexdigest(),
                   "languages": {"src": request.src_lang, "tgt": request.tgt_lang, "Trans1": trans1, "Trans2": trans2},
                   "backbone": backbone, "decoding": {"greedy": True, "max_new_tokens": request.max_new_tokens},
                   "shard_items": TRANSLATION_SHARD}
    return Task(TRANSLATIONS, job_request, shards, translate_work)


def translate_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Translate one shard of texts (grouped by language pair) with the backbone."""
    from fairness_core.jobs.context import checkpoint
    from fairness_core.translation.backbones import load_backbone

    backbone = load_backbone(shard["model_id"])
    max_new = int(request["decoding"]["max_new_tokens"])
    rows = []
    groups: dict[tuple[str, str], list[dict[str, str]]] = {}
    for item in shard["items"]:
        groups.setdefault((item["src_lang"], item["tgt_lang"]), []).append(item)
    for (src, tgt), items in groups.items():
        outputs = backbone.translate([i["text"] for i in items], src, tgt, max_new, on_progress=checkpoint)
        for item, output in zip(items, outputs, strict=True):
            rows.append({"item": text_key(item["text"]), "grp": item["entity"], "variant": tgt,
                         "metric": "translation", "value": float(len(output)), "text": output,
                         "attrs": {"input": item["text"], "src_lang": src}})
    return rows


def load_translations(store: RunStore, run_id: str) -> dict[tuple[str, str], str]:
    """(entity, input text) -> translation."""
    frame = store.rows(run_id)
    return {(row.grp, row.attrs["input"]): (row.text or "") for row in frame.itertuples()}


def direction_task(request: ScoreRequest, backbone: dict[str, Any], translations: dict[tuple[str, str], str],
                   translation_manifest_hash: str) -> Task:
    from fairness_core.translation import weights as W

    segments = []
    for s in request.segments.segments:
        segments.append({"segment_id": s.segment_id, "texts": {D.SRC: s.src, D.REF: s.ref, D.HYPO: s.hypo,
                                                               D.TRANS1: translations[D.TRANS1, s.src],
                                                               D.TRANS2: translations[D.TRANS2, s.ref]}})
    shards = [{"model_id": request.model, "segments": segments[i : i + SEGMENT_SHARD]}
              for i in range(0, len(segments), SEGMENT_SHARD)]
    job_request = {"data": {"name": request.segments.name, "hash": request.segments.content_hash(),
                            "n_segments": len(segments)},
                   "languages": D.entity_languages(request.src_lang, request.tgt_lang),
                   "directions": list(D.LABELS), "term_weightings": list(W.TERM_WEIGHTINGS), "backbone": backbone,
                   "translations_manifest_sha256": translation_manifest_hash, "shard_segments": SEGMENT_SHARD}
    return Task(DIRECTION_SCORES, job_request, shards, direction_work)


def direction_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Eq. 1 for the 8 directions of a shard's segments, every token aggregation (mean, sum, entropy-weighted
    sum with Eq. 4, entropy-normalised mean) from one forward pass."""
    from fairness_core.translation import weights as W
    from fairness_core.translation.backbones import ScoreRequest as Scored
    from fairness_core.translation.backbones import load_backbone

    backbone = load_backbone(shard["model_id"])
    languages = request["languages"]
    keys, asks = [], []
    for segment in shard["segments"]:
        for direction in D.DIRECTIONS:
            x, y, x_lang, y_lang = D.direction_texts(direction, segment["texts"], languages)
            keys.append((segment["segment_id"], direction))
            asks.append(Scored(x, y, x_lang, y_lang))
    scored = backbone.score(asks)
    rows = []
    for (segment_id, direction), result in zip(keys, scored, strict=True):
        attrs: dict[str, Any] = {"n_tokens": len(result.tokens)}
        for term_weighting in W.TERM_WEIGHTINGS:
            value = W.direction_score(result.logprobs, result.entropies, term_weighting=term_weighting)
            detail = dict(attrs)
            if term_weighting == W.ENTROPY and direction.into_hypo:
                detail |= {"tokens": list(result.tokens),
                           "logprobs": [round(float(v), DIGITS) for v in result.logprobs],
                           "entropies": [round(float(v), DIGITS) for v in np.asarray(result.entropies)]}
            rows.append({"item": segment_id, "grp": direction.label, "variant": "", "metric": term_weighting,
                         "value": value, "text": None, "attrs": detail})
    return rows


@dataclass
class PipelineOutcome:
    request: ScoreRequest
    backbone: dict[str, Any]
    translations_run: str
    directions_run: str
    from_cache: bool
    manifests: dict[str, dict[str, Any]]
    translations: dict[tuple[str, str], str]
    scores: pd.DataFrame  # segment_id, direction, uniform, entropy


def load_direction_scores(store: RunStore, run_id: str) -> pd.DataFrame:
    """Wide frame: segment_id, direction, one column per token aggregation (`W.TERM_WEIGHTINGS`), n_tokens
    (scored target tokens) and attrs (+ token detail for directions into Hypo)."""
    frame = store.rows(run_id)
    values = frame.pivot_table(index=["item", "grp"], columns="metric", values="value", aggfunc="first",
                               dropna=False).reset_index()
    detail = frame[frame["metric"] == "entropy"][["item", "grp", "attrs"]]
    out = values.merge(detail, on=["item", "grp"], how="left")
    out = out.rename(columns={"item": "segment_id", "grp": "direction"})
    out.columns.name = None
    out["n_tokens"] = out["attrs"].map(lambda a: float(a.get("n_tokens", np.nan)) if isinstance(a, dict) else np.nan)
    return out


def score_matrix(scores: pd.DataFrame, term_weighting: str, directions: list[str] | tuple[str, ...] = D.LABELS,
                 segment_order: list[str] | None = None) -> tuple[list[str], np.ndarray]:
    """(segment ids, n × k matrix) of one term weighting, directions in the given order."""
    table = scores.pivot_table(index="segment_id", columns="direction", values=term_weighting, aggfunc="first",
                               dropna=False)
    order = segment_order or list(dict.fromkeys(scores["segment_id"]))
    table = table.reindex(index=order, columns=list(directions))
    return order, table.to_numpy(dtype=np.float64)


def run_pipeline(request: ScoreRequest, store: RunStore, on_progress: Callable[[Progress], None] | None = None,
                 cancel: CancelToken | None = None, executor: Executor | None = None) -> PipelineOutcome:
    """Translations, then direction scores; each from the store when complete, else computed (resumable).
    Raises ModelUnavailableError before any work when the backbone cannot be had here."""
    import time

    backbone = backbone_manifest(request.model)
    started = time.monotonic()
    first = translation_task(request, backbone)
    n_first = len(first.shards)
    n_total = n_first + -(-len(request.segments.segments) // SEGMENT_SHARD)

    def relay(offset: int) -> Callable[[Progress], None] | None:
        if on_progress is None:
            return None

        def report(progress: Progress) -> None:
            on_progress(Progress(offset + progress.done, n_total, time.monotonic() - started,
                                 skipped=offset + progress.skipped if offset == 0 else progress.skipped + n_first,
                                 partial=progress.partial))
        return report

    if store.find_complete(first.manifest) is None:
        from fairness_core.translation.backbones import load_backbone

        load_backbone(request.model)  # unavailable models fail here, before a run is opened
    done_first = run_task(first, store, on_progress=relay(0), cancel=cancel, executor=executor)
    if done_first.status != "complete":
        raise PipelineCancelled("cancelled during the translations; finished batches are stored and running it "
                                "again resumes")
    translations = load_translations(store, done_first.run_id)
    from fairness_core.store.manifest import manifest_hash

    second = direction_task(request, backbone, translations, manifest_hash(first.manifest))
    done_second = run_task(second, store, on_progress=relay(n_first), cancel=cancel, executor=executor)
    if done_second.status != "complete":
        raise PipelineCancelled("cancelled during the direction scores; finished batches are stored and running "
                                "it again resumes")
    return PipelineOutcome(request, backbone, done_first.run_id, done_second.run_id,
                           done_first.from_cache and done_second.from_cache,
                           {TRANSLATIONS: first.manifest, DIRECTION_SCORES: second.manifest}, translations,
                           load_direction_scores(store, done_second.run_id))


def find_stored(request: ScoreRequest, store: RunStore) -> PipelineOutcome | None:
    """The complete stored result of this request, or None — no model is loaded (the page's instant path)."""
    from fairness_core.store.manifest import manifest_hash

    backbone = backbone_manifest(request.model)
    first = translation_task(request, backbone)
    found = store.find_complete(first.manifest)
    if found is None:
        return None
    translations = load_translations(store, found.run_id)
    try:
        second = direction_task(request, backbone, translations, manifest_hash(first.manifest))
    except KeyError:
        return None
    done = store.find_complete(second.manifest)
    if done is None:
        return None
    return PipelineOutcome(request, backbone, found.run_id, done.run_id, True,
                           {TRANSLATIONS: first.manifest, DIRECTION_SCORES: second.manifest}, translations,
                           load_direction_scores(store, done.run_id))
