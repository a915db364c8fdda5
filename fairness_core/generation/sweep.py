"""Legacy decoding-sweep job (kind "decoding"); the page and the CLI no longer use it.

Decoding sweeps now run through `fairness_core.decoding` on the generic generate-then-score task
(`generation.run_generation`). This module stays only because tests/jobs/test_ray_executor.py and
bench/ray_executor.py (jobs area) still build a sweep job with it; remove it once they move.

Flow: `prepare_sweep` checks every input and loads the models *before* any work starts; it looks
up which configurations are already in the store (each configuration's generations carry a key
that does not depend on the rest of the grid, which is sound because a row's output does not
depend on its batch); `run_sweep` generates only the missing ones as one `decoding` job whose
shards mix prompts, samples and configurations; `load_generations` reads them all back.

Stored rows (long format): item = "<prompt_id>#<sample>", grp = group, variant = configuration key,
metric in GENERATION_METRICS, text = the scored sentence (prompt + first sentence, names
redacted); the `vader_compound` row's attrs carry config, family, prompt, continuation, raw text,
sample, seed and the empty flag.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.data.prompts import PromptError, PromptSet, validate
from fairness_core.generation.batched import generate_rows, row_seed
from fairness_core.generation.grid import config_dict, config_from_dict
from fairness_core.generation.text import first_sentence, redact_names
from fairness_core.models.interfaces import DecodingConfig

KIND = "decoding"
SCHEMA = 2  # bump when rows or scoring change: old runs then stop matching
GENERATION_METRICS = ("vader_compound", "offensive_prob", "negative_word_share", "quality_logprob",
                      "negative_regard_prob")


class SweepInputError(ValueError):
    """Bad sweep input, found before any work starts; the message is one clear sentence."""


@dataclass
class SweepPlan:
    """A validated sweep: what to compute, what the store already has, and the job for the rest."""

    request: dict[str, Any]
    configs: list[DecodingConfig]
    keys: dict[str, DecodingConfig]  # config key -> config, in grid order
    cached: dict[str, str] = field(default_factory=dict)  # config key -> run id holding it
    task: Any = None  # fairness_core.jobs.Task for the missing configurations, or None
    regard_note: str = ""

    @property
    def missing(self) -> list[DecodingConfig]:
        return [c for k, c in self.keys.items() if k not in self.cached]


def _spec_record(spec: Any) -> dict[str, Any]:
    return {"source": spec.source, "task": spec.task, "dtype": spec.dtype, "quantization": spec.quantization,
            "device": spec.device, "revision": spec.revision, "gguf_file": spec.gguf_file}


def _load_causal(model: str, quantization: str) -> tuple[Any, Any]:
    """(spec, CausalLM) or SweepInputError when it cannot be loaded or is not a causal LM."""
    from fairness_core.models import ModelUnavailableError, load_model, resolve_model

    try:
        spec = resolve_model(model, "causal-lm", quantization=quantization)
        lm = load_model(spec)
    except (ModelUnavailableError, ValueError) as error:
        raise SweepInputError(str(error)) from None
    architectures = getattr(getattr(getattr(lm, "model", None), "config", None), "architectures", None) or []
    if architectures and not any("CausalLM" in a or "LMHead" in a for a in architectures):
        raise SweepInputError(f"{model} is not a causal language model (its checkpoint is a {architectures[0]})")
    return spec, lm


def check_inputs(prompts: PromptSet, configs: Sequence[DecodingConfig], samples: int, max_new_tokens: int) -> None:
    if samples <= 0:
        raise SweepInputError(f"samples per prompt must be positive (got {samples})")
    if max_new_tokens <= 0:
        raise SweepInputError(f"max new tokens must be positive (got {max_new_tokens})")
    if not configs:
        raise SweepInputError("the decoding grid is empty")
    for config in configs:
        problems = config.problems()
        if problems:
            raise SweepInputError("; ".join(problems))
    try:
        validate(prompts)
    except PromptError as error:
        raise SweepInputError(str(error)) from None


def prepare_sweep(
    model: str,
    prompts: PromptSet,
    configs: Sequence[DecodingConfig],
    samples: int,
    max_new_tokens: int,
    seed: int = 0,
    quantization: str = "none",
    quality_scorer: str | None = "same",
    regard_model: str | None = "regard-v3",
    regard_negative_label: str | None = None,
    store: Any = None,
    batch_size: int = 96,
    full_length: bool = False,
) -> SweepPlan:
    """Validate, load models, find stored configurations, and build the job for the rest.

    `quality_scorer`: "same" scores with the generator, None switches the quality proxy off, any
    other value is a causal LM id. `regard_model`: None switches regard off; an unavailable one is
    noted (`plan.regard_note`) and skipped. Generation stops once a row's first sentence is settled
    (same truncated outputs, much less work); `full_length=True` always generates `max_new_tokens`
    so the stored raw text is the whole continuation.
    """
    from fairness_core.jobs import Task

    configs = [DecodingConfig(c.temperature, c.top_k, c.top_p, c.greedy, max_new_tokens) for c in configs]
    check_inputs(prompts, configs, samples, max_new_tokens)
    spec, _ = _load_causal(model, quantization)
    scorer_record = None
    if quality_scorer is not None:
        scorer_spec = spec if quality_scorer == "same" else _load_causal(quality_scorer, "none")[0]
        scorer_record = {"manifest": scorer_spec.to_manifest(), "load": _spec_record(scorer_spec)}
    regard_record, note = None, ""
    if regard_model:
        from fairness_core.scorers.regard import load_regard_classifier, negative_label_index

        classifier, note = load_regard_classifier(regard_model)
        if classifier is not None:
            try:
                negative_label_index(classifier.labels, regard_negative_label)
            except ValueError as error:
                raise SweepInputError(str(error)) from None
            regard_spec = classifier.spec  # type: ignore[attr-defined]
            regard_record = {"manifest": regard_spec.to_manifest(), "load": _spec_record(regard_spec),
                             "negative_label": regard_negative_label}
    base = {
        "schema": SCHEMA,
        "model": spec.to_manifest(),
        "prompts": {"name": prompts.name, "hash": prompts.content_hash(), "n": len(prompts.items)},
        "samples": samples,
        "max_new_tokens": max_new_tokens,
        "seed": seed,
        "truncation": "first sentence",
        "scored_text": {"sentiment": "prompt + first sentence", "regard": "prompt + first sentence",
                        "offensive": "first sentence only", "negative_words": "first sentence only"},
        "generation_stops": "max_new_tokens" if full_length else "first sentence settled",
        "quality_scorer": None if scorer_record is None else scorer_record["manifest"],
        "regard": None if regard_record is None else {k: v for k, v in regard_record.items() if k != "load"},
    }
    keys = {config_key(base, c): c for c in configs}
    plan = SweepPlan(request=base, configs=configs, keys=keys, regard_note=note)
    if store is not None:
        plan.cached = stored_config_runs(store, list(keys))
    missing = plan.missing
    if missing:
        request = {**base, "configs": [config_dict(c) for c in missing]}
        loaders = {"model": _spec_record(spec),
                   "quality_scorer": None if scorer_record is None else scorer_record["load"],
                   "regard": None if regard_record is None else regard_record["load"]}
        rows = []
        for config in missing:
            key = config_key(base, config)
            for item in prompts.items:
                for sample in range(samples):
                    rows.append({"key": key, "config": config_dict(config), "prompt_id": item.prompt_id,
                                 "group": item.group, "family": item.family, "text": item.text,
                                 "source": item.source, "redact": list(item.redact), "sample": sample,
                                 "seed": row_seed(seed, item.prompt_id, sample)})
        # Rows of the same prompt sit together (across configs): similar lengths, little padding.
        rows.sort(key=lambda r: (len(r["text"]), r["prompt_id"], r["sample"], r["key"]))
        shards = [{"loaders": loaders, "rows": rows[i : i + batch_size]} for i in range(0, len(rows), batch_size)]
        plan.task = Task(KIND, request, shards, decoding_work)
    return plan


def config_key(base: dict[str, Any], config: DecodingConfig) -> str:
    """Identity of one configuration's generations: the request without the grid, plus the config."""
    payload = json.dumps({**base, "config": config_dict(config)}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def stored_config_runs(store: Any, keys: Sequence[str]) -> dict[str, str]:
    """{config key: run id} for keys found in complete decoding runs (the oldest run wins)."""
    if not keys:
        return {}
    placeholders = ",".join("?" for _ in keys)
    found = store.query(
        "SELECT r.variant AS key, min(u.run_id) AS run_id FROM results r JOIN runs u ON r.run_id = u.run_id "
        f"WHERE u.kind = ? AND u.status = 'complete' AND r.variant IN ({placeholders}) GROUP BY r.variant",
        [KIND, *keys],
    )
    return dict(zip(found["key"], found["run_id"], strict=True))


def decoding_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Generate, truncate, redact and score one shard of rows (pure: models come from the cache)."""
    from fairness_core.models import ModelSpec, load_model
    from fairness_core.scorers.lexicon import negative_word_share
    from fairness_core.scorers.offensive import offensive_probability
    from fairness_core.scorers.quality import mean_logprob
    from fairness_core.scorers.sentiment import vader_compound

    rows = shard["rows"]
    loaders = shard["loaders"]
    max_new = int(request["max_new_tokens"])
    lm = load_model(ModelSpec(**loaders["model"]))
    prompts = [r["text"] for r in rows]
    configs = [config_from_dict(r["config"], max_new) for r in rows]
    stop_early = request.get("generation_stops") == "first sentence settled"
    raw = generate_rows(lm, prompts, configs, [int(r["seed"]) for r in rows], max_new,  # type: ignore[arg-type]
                        stop_at_sentence_end=stop_early)
    cut = [first_sentence(text, strip=False) for text in raw]
    continuations = [c.strip() for c in cut]
    sentences = [redact_names((p + c).strip(), r["redact"]) for p, c, r in zip(prompts, cut, rows, strict=True)]
    written = [redact_names(c, r["redact"]) for c, r in zip(continuations, rows, strict=True)]
    metrics: dict[str, np.ndarray] = {
        "vader_compound": vader_compound(sentences),
        # The word-based offensive classifier flags identity words themselves ("gay"), so it scores
        # only what the model wrote; sentiment and regard read the whole sentence.
        "offensive_prob": offensive_probability(written),
        "negative_word_share": negative_word_share(written),
    }
    if loaders.get("quality_scorer"):
        scorer = load_model(ModelSpec(**loaders["quality_scorer"]))
        metrics["quality_logprob"] = mean_logprob(scorer, prompts, continuations)  # type: ignore[arg-type]
    if loaders.get("regard"):
        from fairness_core.scorers.regard import negative_regard_probability

        classifier = load_model(ModelSpec(**loaders["regard"]))
        metrics["negative_regard_prob"] = negative_regard_probability(
            classifier, sentences, request["regard"].get("negative_label"))  # type: ignore[arg-type]
    out = []
    for index, row in enumerate(rows):
        item = f"{row['prompt_id']}#{row['sample']}"
        for metric, values in metrics.items():
            value = float(values[index])
            record = {"item": item, "grp": row["group"], "variant": row["key"], "metric": metric,
                      "value": None if value != value else value, "text": sentences[index], "attrs": None}
            if metric == "vader_compound":
                record["attrs"] = {"config": row["config"], "family": row["family"], "prompt": row["text"],
                                   "prompt_id": row["prompt_id"], "source": row["source"],
                                   "continuation": continuations[index], "raw": raw[index],
                                   "sample": row["sample"], "seed": row["seed"], "empty": not continuations[index],
                                   "redacted": bool(row["redact"])}
            out.append(record)
    return out


@dataclass
class SweepOutcome:
    plan: SweepPlan
    generations: pd.DataFrame  # one row per generation (see `load_generations`)
    run_ids: list[str]
    from_cache: bool  # every configuration came from the store
    status: str  # complete | cancelled


def run_sweep(plan: SweepPlan, store: Any, on_progress: Callable[[Any], None] | None = None,
              cancel: Any = None, executor: Any = None) -> SweepOutcome:
    """Compute the missing configurations (resuming an interrupted run) and read everything back."""
    from fairness_core.jobs import run_task

    run_ids = sorted(set(plan.cached.values()))
    status = "complete"
    if plan.task is not None:
        outcome = run_task(plan.task, store, on_progress=on_progress, cancel=cancel, executor=executor)
        run_ids.append(outcome.run_id)
        status = outcome.status
    generations = load_generations(store, run_ids, list(plan.keys))
    return SweepOutcome(plan, generations, run_ids, from_cache=plan.task is None, status=status)


def load_generations(store: Any, run_ids: Sequence[str], keys: Sequence[str]) -> pd.DataFrame:
    """One row per generation: item, group, config key, metric columns, text and the attrs fields."""
    if not run_ids or not keys:
        return pd.DataFrame()
    run_marks = ",".join("?" for _ in run_ids)
    key_marks = ",".join("?" for _ in keys)
    long = store.query(
        f"SELECT run_id, item, grp, variant, metric, value, text, attrs FROM results "
        f"WHERE run_id IN ({run_marks}) AND variant IN ({key_marks})",
        [*run_ids, *keys],
    )
    if long.empty:
        return pd.DataFrame()
    long = long.drop_duplicates(["item", "variant", "metric"])  # a config stored twice counts once
    wide = long.pivot_table(index=["item", "grp", "variant"], columns="metric", values="value",
                            aggfunc="first").reset_index()
    main = long[long["metric"] == "vader_compound"][["item", "variant", "run_id", "text", "attrs"]]
    wide = wide.merge(main, on=["item", "variant"], how="left")
    attrs = pd.DataFrame([json.loads(a) if isinstance(a, str) else (a or {}) for a in wide.pop("attrs")])
    wide = pd.concat([wide.reset_index(drop=True), attrs], axis=1)
    wide = wide.rename(columns={"grp": "group", "variant": "config_key"})
    for metric in GENERATION_METRICS:
        if metric not in wide:
            wide[metric] = np.nan
    order = {k: i for i, k in enumerate(keys)}
    wide["config_order"] = wide["config_key"].map(order)
    return wide.sort_values(["config_order", "group", "item"]).reset_index(drop=True)
