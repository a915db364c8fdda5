"""The generic generate-then-score task: systems × prompts × seeds × samples, then scorers.

Storage (long result rows, written by the job runner one shard per transaction):
- a generation: item = generation id, grp = group, variant = system key, metric = "generation",
  text = the (truncated) continuation, attrs = raw text, prompt, sample, seed, row seed, settings;
- a score: item = generation id, variant = "score:<scorer signature hash>", metric = the column,
  value, text = exactly the text the scorer read.

A generation's id hashes (system key, prompt text, sample, seed, max_new_tokens, truncate, mode,
where generation stops), and its per-row random stream depends on the same things only, so any
subset or superset of prompts, and any other request that contains the same generation, reads it
back instead of regenerating it. A stored score is reused when its scorer signature and its input
text match, so adding a scorer scores stored generations without regenerating them. An interrupted
run keeps its finished shards; the next call computes only what is still missing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.data.prompts import PromptError, PromptItem, PromptSet, validate
from fairness_core.generation.systems import System
from fairness_core.generation.text import first_sentence, redact_names
from fairness_core.models.interfaces import DecodingConfig, ModelUnavailableError
from fairness_core.models.sampling import row_seed

KIND = "generation"
SCHEMA = 1  # bump when stored rows change meaning: old generations then stop matching
GENERATION_METRIC = "generation"
SCORE_PREFIX = "score:"
#: "TIMING ..." lines (model call, scorers) for `bench.classroom`'s breakdown of a move; silent unless the app was
#: started with FAIRNESS_LAB_TIMING_LOG=1 (ui/jobs.py attaches a handler then)
timing_log = logging.getLogger("fairness_core.timing")
TRUNCATIONS = ("none", "first-sentence")
MODES = ("continue", "chat")
#: The contract's columns of `load_generations`, in order; scorer columns follow, then the extras.
BASE_COLUMNS = ("system", "system_name", "prompt_id", "group", "family", "source", "prompt", "sample", "seed",
                "continuation", "scored_text")
EXTRA_COLUMNS = ("generation_id", "raw", "empty", "redacted", "row_seed", "run_id")


class GenerationInputError(ValueError):
    """Bad generation request, found before any work starts; the message is one sentence."""


@dataclass(frozen=True)
class GenerationRequest:
    systems: tuple[System, ...]
    prompts: PromptSet  # prompt_id, group, family, text, source, redact
    scorers: tuple[tuple[str, dict], ...] = ()  # (scorer name, options)
    samples: int = 1
    seeds: tuple[int, ...] = (0,)
    max_new_tokens: int = 25
    truncate: str = "none"  # none|first-sentence
    mode: str = "continue"  # continue (plain prompt) | chat (prompt is the user message)
    #: With first-sentence truncation a row stops once its first sentence is settled (same
    #: truncated text, much less work); True always generates max_new_tokens (whole raw text kept).
    full_length: bool = False
    batch_size: int = 64  # rows per shard (one batch on the device); does not change outputs

    @property
    def stops(self) -> str:
        early = self.truncate == "first-sentence" and not self.full_length and self.mode == "continue"
        return "first sentence settled" if early else "max_new_tokens"

    def problems(self) -> list[str]:
        found = []
        if not self.systems:
            found.append("the request has no systems: give at least one model with a decoding setting")
        if self.samples <= 0:
            found.append(f"samples per prompt must be positive (got {self.samples})")
        if not self.seeds:
            found.append("the request has no seeds: give at least one")
        if len(set(self.seeds)) != len(self.seeds):
            found.append("a seed is listed twice")
        if self.max_new_tokens <= 0:
            found.append(f"max new tokens must be positive (got {self.max_new_tokens})")
        if self.truncate not in TRUNCATIONS:
            found.append(f"truncate must be one of {', '.join(TRUNCATIONS)} (got {self.truncate!r})")
        if self.mode not in MODES:
            found.append(f"mode must be one of {', '.join(MODES)} (got {self.mode!r})")
        if self.batch_size <= 0:
            found.append(f"batch size must be positive (got {self.batch_size})")
        return found


def generation_id(system_key: str, prompt: str, sample: int, seed: int, max_new_tokens: int, truncate: str,
                  mode: str, stops: str) -> str:
    payload = json.dumps([SCHEMA, system_key, prompt, int(sample), int(seed), int(max_new_tokens), truncate, mode,
                          stops], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def build_scorers(scorers: Sequence[tuple[str, dict]]) -> list[Any]:
    """Scorer objects for (name, options) pairs; unknown names/options raise GenerationInputError."""
    from fairness_core.scorers import ScorerOptionError, scorer_from_request

    built = []
    for name, options in scorers:
        try:
            built.append(scorer_from_request(name, **dict(options or {})))
        except ScorerOptionError as error:
            raise GenerationInputError(str(error)) from None
    return built


def available_scorers(scorers: Sequence[tuple[str, dict]]) -> tuple[tuple[tuple[str, dict], ...], list[str]]:
    """Split scorers into those that run here and one-sentence notes for those that do not."""
    kept, notes = [], []
    for (name, options), scorer in zip(scorers, build_scorers(scorers), strict=True):
        try:
            scorer.check_available()
        except ModelUnavailableError as error:
            text = str(error)
            notes.append(text if "unavailable" in text else f"{name} is unavailable here: {text}")
            continue
        kept.append((name, dict(options or {})))
    return tuple(kept), notes


# ------------------------------------------------------------------------------------------ texts
def cut_continuation(raw: str, truncate: str) -> str:
    """The kept part of a raw continuation, with its leading space (so prompt + cut reads as written)."""
    return first_sentence(raw, strip=False) if truncate == "first-sentence" else raw.rstrip()


def texts_of(prompt: str, raw: str, redact: Sequence[str], truncate: str, mode: str) -> dict[str, str]:
    """Everything a scorer may read of one generation, keyed by `Scorer.reads`."""
    cut = cut_continuation(raw, truncate)
    continuation = cut.strip()
    sentence = continuation if mode == "chat" else (prompt + cut).strip()
    return {"continuation": redact_names(continuation, redact), "scored_text": redact_names(sentence, redact),
            "generation": continuation, "kept": continuation}


# ------------------------------------------------------------------------------------------- plan
@dataclass
class GenerationPlan:
    """A validated request, what the store already holds, and the job for the rest (or None)."""

    request: GenerationRequest
    system_keys: list[str]
    scorer_signatures: list[dict[str, Any]]
    scorer_hashes: list[str]
    scorer_columns: list[tuple[str, ...]]
    n_wanted: int = 0  # distinct generations the request needs
    n_to_generate: int = 0
    n_to_score: int = 0  # stored generations that only need scores
    task: Any = None

    @property
    def from_store(self) -> bool:
        return self.task is None


def _check_causal(system: System) -> dict[str, Any]:
    """Load the generator once (through the cache) and return the spec record a worker loads it by."""
    from fairness_core.models import load_model

    try:
        spec = system.spec()
        lm = load_model(spec)
    except (ModelUnavailableError, ValueError) as error:
        raise GenerationInputError(str(error)) from None
    architectures = getattr(getattr(getattr(lm, "model", None), "config", None), "architectures", None) or []
    if architectures and not any("CausalLM" in a or "LMHead" in a for a in architectures):
        raise GenerationInputError(f"{system.model} is not a causal language model "
                                   f"(its checkpoint is a {architectures[0]})")
    return spec_record(spec)


def spec_record(spec: Any) -> dict[str, Any]:
    return {"source": spec.source, "task": spec.task, "dtype": spec.dtype, "quantization": spec.quantization,
            "device": spec.device, "revision": spec.revision, "gguf_file": spec.gguf_file}


def _wanted(request: GenerationRequest, system_keys: Sequence[str]) -> list[dict[str, Any]]:
    """One record per (system, prompt item, seed, sample), in request order."""
    records = []
    for index, key in enumerate(system_keys):
        for item in request.prompts.items:
            for seed in request.seeds:
                for sample in range(request.samples):
                    records.append({
                        "system": index, "key": key, "item": item, "seed": int(seed), "sample": sample,
                        "id": generation_id(key, item.text, sample, int(seed), request.max_new_tokens,
                                            request.truncate, request.mode, request.stops)})
    return records


def _stored_generations(store: Any, ids: Sequence[str]) -> pd.DataFrame:
    if not ids or not store.path.exists():
        return pd.DataFrame(columns=["item", "variant", "text", "attrs", "run_id"])
    found = store.query(
        "SELECT item, variant, text, attrs, run_id FROM results WHERE metric = ? "
        "AND item IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id, shard, rowid",
        [GENERATION_METRIC, list(dict.fromkeys(ids))])
    return found.drop_duplicates("item")


def _stored_scores(store: Any, ids: Sequence[str], hashes: Sequence[str]) -> pd.DataFrame:
    if not ids or not hashes or not store.path.exists():
        return pd.DataFrame(columns=["item", "variant", "metric", "value", "text", "run_id"])
    found = store.query(
        "SELECT item, variant, metric, value, text, run_id FROM results "
        "WHERE variant IN (SELECT unnest(?::VARCHAR[])) AND item IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY run_id, shard, rowid",
        [[SCORE_PREFIX + h for h in hashes], list(dict.fromkeys(ids))])
    return found


def plan_generation(request: GenerationRequest, store: Any) -> GenerationPlan:
    """Validate, find what is stored, check models for what is missing, and build the job for the rest."""
    from fairness_core.jobs import Task

    problems = request.problems()
    if problems:
        raise GenerationInputError(problems[0])
    try:
        validate(request.prompts)
    except PromptError as error:
        raise GenerationInputError(str(error)) from None
    scorers = build_scorers(request.scorers)
    for scorer in scorers:
        try:
            scorer.check_available()
        except ModelUnavailableError as error:
            raise GenerationInputError(str(error)) from None
    columns = [tuple(scorer.columns) for scorer in scorers]
    seen: dict[str, str] = {}
    for scorer, produced in zip(scorers, columns, strict=True):
        for column in produced:
            if column in seen:
                raise GenerationInputError(f"scorers {seen[column]} and {scorer.name} both produce the column "
                                           f"{column}; keep one of them")
            seen[column] = scorer.name
    try:
        system_keys = [system.key() for system in request.systems]
    except (ModelUnavailableError, ValueError) as error:
        raise GenerationInputError(str(error)) from None
    if len(set(system_keys)) != len(system_keys):
        raise GenerationInputError("two systems have the same model and decoding setting; list each once")
    signatures = [scorer.signature() for scorer in scorers]
    hashes = [scorer.signature_hash() for scorer in scorers]
    plan = GenerationPlan(request, system_keys, signatures, hashes, columns)

    wanted = _wanted(request, system_keys)
    first_of: dict[str, dict[str, Any]] = {}
    for record in wanted:  # a text asked for twice is generated once, under its first item's labels
        first_of.setdefault(record["id"], record)
    unique = list(first_of.values())
    plan.n_wanted = len(unique)
    stored = _stored_generations(store, [r["id"] for r in unique])
    stored_raw = {item: json.loads(attrs)["raw"] for item, attrs in zip(stored["item"], stored["attrs"], strict=True)}
    scores = _stored_scores(store, list(stored_raw), hashes)
    have_score = set(zip(scores["item"], scores["variant"], scores["metric"], scores["text"], strict=True))
    work = []
    for record in unique:
        item: PromptItem = record["item"]
        raw = stored_raw.get(record["id"])
        needed = list(range(len(scorers)))
        if raw is not None:
            texts = texts_of(item.text, raw, item.redact, request.truncate, request.mode)
            needed = [j for j, scorer in enumerate(scorers)
                      if any((record["id"], SCORE_PREFIX + hashes[j], column, texts[scorer.reads]) not in have_score
                             for column in columns[j])]
            if not needed:
                continue
        work.append({**record, "raw": raw, "scorers": needed})
    plan.n_to_generate = sum(1 for r in work if r["raw"] is None)
    plan.n_to_score = len(work) - plan.n_to_generate
    if not work:
        return plan

    loaders: dict[int, dict[str, Any]] = {}
    for record in work:
        if record["raw"] is None and record["system"] not in loaders:
            loaders[record["system"]] = _check_causal(request.systems[record["system"]])
    shards = _shards(request, work, loaders)
    base = {
        "schema": SCHEMA,
        "systems": [{"key": key, "name": system.name, **system.manifest()}
                    for key, system in zip(system_keys, request.systems, strict=True)],
        "scorers": [{"name": s.name, "options": dict(request.scorers[j][1] or {}), "signature": signatures[j],
                     "hash": hashes[j], "reads": s.reads} for j, s in enumerate(scorers)],
        "prompts": {"name": request.prompts.name, "hash": request.prompts.content_hash(),
                    "n": len(request.prompts.items)},
        "samples": request.samples, "seeds": list(request.seeds), "max_new_tokens": request.max_new_tokens,
        "truncate": request.truncate, "mode": request.mode, "stops": request.stops,
        "batch_size": request.batch_size,
    }
    # The job computes only the missing work, so the work itself is part of what determines the output.
    work_digest = hashlib.sha256(json.dumps([[r["id"], r["raw"] is None, r["scorers"]] for r in work],
                                            sort_keys=True).encode()).hexdigest()[:16]
    done = {"digest": work_digest, "generate": plan.n_to_generate, "score_only": plan.n_to_score}
    # A prompt whose every generation and score was stored leaves no row in this run; its text is recorded so that
    # what the run covers (its whole request: reading.rows.covered_generations) can be rebuilt from the manifest.
    with_work = {r["item"].text for r in work}
    read_prompts = sorted({item.text for item in request.prompts.items} - with_work)
    if read_prompts:
        done["read_prompts"] = read_prompts
        # and how this request labels them (family, group, template, id; one list per prompt, in that order): the
        # rows it reads were stored by other runs, which may have labelled the same text otherwise, e.g. "custom"
        # (reading.rows.generation_rows reads them with these; issue 43)
        labels: dict[str, PromptItem] = {}
        for item in request.prompts.items:  # a text's first item: `repeated_items` lists the others
            labels.setdefault(item.text, item)
        done["read_labels"] = [[labels[text].family, labels[text].group, labels[text].source,
                                labels[text].prompt_id] for text in read_prompts]
    repeated = repeated_items(request.prompts.items)
    if repeated:
        done["repeated"] = repeated
    plan.task = Task(KIND, {**base, "work": done}, shards, generation_work)
    return plan


def repeated_items(items: Sequence[PromptItem]) -> list[list[str]]:
    """The request's items whose text an earlier item already has, under other labels: [text, family, group,
    template, id] each, in request order. A text is generated once (its generation id is the text's) and stored
    under its first item's labels (`plan_generation`), so a reader rebuilds the others from this list — CAIRO's
    default request has two paraphrase sets holding the same text, and Compare read 7 prompts of a set where the
    page used 8 (issue 43)."""
    first: dict[str, tuple[str, str, str, str]] = {}
    out = []
    for item in items:
        labels = (item.family, item.group, item.source, item.prompt_id)
        if item.text not in first:
            first[item.text] = labels
        elif labels != first[item.text]:
            out.append([item.text, *(str(v) for v in labels)])
    return out


def _shards(request: GenerationRequest, work: list[dict[str, Any]],
            loaders: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """Batches of rows; rows that generate are grouped by model so systems sharing one share a batch."""
    systems = request.systems

    def model_of(record: dict[str, Any]) -> str:
        return json.dumps(loaders[record["system"]], sort_keys=True) if record["raw"] is None else ""

    by_model: dict[str, list[dict[str, Any]]] = {}
    for record in work:
        by_model.setdefault(model_of(record), []).append(record)
    shards = []
    for model_key, records in by_model.items():
        # Rows of the same prompt sit together (across systems): similar lengths, little padding.
        records.sort(key=lambda r: (len(r["item"].text), r["item"].text, r["seed"], r["sample"], r["key"]))
        for start in range(0, len(records), request.batch_size):
            chunk = records[start : start + request.batch_size]
            shards.append({
                "model": json.loads(model_key) if model_key else None,
                "rows": [{"id": r["id"], "system": r["system"], "prompt": r["item"].text, "group": r["item"].group,
                          "prompt_id": r["item"].prompt_id, "family": r["item"].family, "source": r["item"].source,
                          "redact": list(r["item"].redact), "sample": r["sample"], "seed": r["seed"],
                          **({"attributes": [list(a) for a in r["item"].attributes]} if r["item"].attributes else {}),
                          "row_seed": row_seed(r["seed"], r["item"].text, r["sample"]), "raw": r["raw"],
                          "scorers": r["scorers"], "system_name": systems[r["system"]].name}
                         for r in chunk],
            })
    return shards


# ------------------------------------------------------------------------------------------- work
def decoding_from_record(record: dict[str, Any], max_new_tokens: int) -> DecodingConfig:
    if record.get("greedy"):
        return DecodingConfig(greedy=True, max_new_tokens=max_new_tokens)
    return DecodingConfig(temperature=float(record.get("temperature", 1.0)), top_k=record.get("top_k"),
                          top_p=record.get("top_p"), max_new_tokens=max_new_tokens)


def _streamer(request: dict[str, Any], rows: list[dict[str, Any]]) -> Any:
    """A sampler `on_step` that publishes each row's text so far to the job's caller (jobs.context), or None
    when nobody listens. What it publishes: the generation id, system key, group, prompt id and text,
    sample, the kept text so far (`text`, the first sentence once it ends), the sentence as the scorers
    will read it (`shown`: the `scored_text`, names redacted) and whether the row is finished."""
    from fairness_core.jobs.context import publish, wants_partials

    if not wants_partials():
        return None

    def on_step(updates: list[tuple[int, str, bool]]) -> None:
        for index, raw, done in updates:
            row = rows[index]
            texts = texts_of(row["prompt"], raw, row["redact"], request["truncate"], request["mode"])
            publish({"kind": "generation", "id": row["id"], "system": request["systems"][row["system"]]["key"],
                     "group": row["group"], "prompt_id": row["prompt_id"], "prompt": row["prompt"],
                     "sample": row["sample"], "text": texts["kept"], "shown": texts["scored_text"],
                     "done": bool(done)})

    return on_step


def _generate(request: dict[str, Any], model: dict[str, Any],
              rows: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, int] | None]]:
    """The rows' raw texts, and per row the tokens a remote endpoint counted for it (None in-process)."""
    from fairness_core.models import ModelSpec, load_model

    lm = load_model(ModelSpec(**model))
    max_new = int(request["max_new_tokens"])
    configs = [decoding_from_record(request["systems"][r["system"]]["decoding"], max_new) for r in rows]
    if getattr(lm, "remote", False) and request["mode"] == "continue":
        from fairness_core.jobs.context import checkpoint

        # Requests go out concurrently; checkpoint (progress, and cancel: nothing more is sent) runs in
        # this thread while they are out.
        answered = lm.generate_rows_with_usage(  # type: ignore[attr-defined]
            [r["prompt"] for r in rows], configs, [int(r["row_seed"]) for r in rows], max_new,
            on_step=_streamer(request, rows), progress=checkpoint)
        return [text for text, _ in answered], [usage for _, usage in answered]
    if request["mode"] == "continue":
        return _generate_in_process(lm, request, rows, configs, max_new), [None] * len(rows)
    if getattr(lm, "remote", False):
        from fairness_core.jobs.context import checkpoint

        answered = _chat(lm, request, rows, configs, progress=checkpoint)
        return [text for text, _ in answered], [usage for _, usage in answered]
    return _chat(lm, request, rows, configs), [None] * len(rows)


def _generate_in_process(lm: Any, request: dict[str, Any], rows: list[dict[str, Any]],
                         configs: list[DecodingConfig], max_new: int) -> list[str]:
    from fairness_core.jobs.context import checkpoint

    # the model layer knows no jobs: progress and Cancel reach the sampler's steps through on_progress
    return lm.generate_rows([r["prompt"] for r in rows], configs, [int(r["row_seed"]) for r in rows],
                            max_new, stop_at_sentence_end=request["stops"] == "first sentence settled",
                            on_step=_streamer(request, rows), on_progress=checkpoint)


def _chat(lm: Any, request: dict[str, Any], rows: list[dict[str, Any]], configs: list[DecodingConfig],
          progress: Callable[[int, int], None] | None = None) -> list[Any]:
    """Each row's reply; with `progress` (a remote endpoint) each row's (reply, tokens counted)."""
    from fairness_core.jobs.context import checkpoint

    chat = getattr(lm, "chat" if progress is None else "chat_with_usage", None)
    if chat is None:
        raise ModelUnavailableError(f"{lm.name} cannot chat in this version of the model layer")
    # CausalLM.chat: reply j to conversation i depends only on (seed, conversation, j), so one call
    # per (system, seed) with n = the highest sample needed gives each row its own reply.
    out: list[Any] = [""] * len(rows)
    groups: dict[tuple[int, int], list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault((row["system"], row["seed"]), []).append(index)
    for (_, seed), indices in groups.items():
        prompts = list(dict.fromkeys(rows[i]["prompt"] for i in indices))
        n = max(rows[i]["sample"] for i in indices) + 1
        if progress is not None:
            extra: dict[str, Any] = {"progress": progress}
        else:  # in process: Cancel between calls, and inside one where the backend reports its decoding steps
            checkpoint()
            extra = {"on_progress": checkpoint} if getattr(lm, "reports_steps", False) else {}
        replies = chat([[{"role": "user", "content": p}] for p in prompts], configs[indices[0]], n=n, seed=seed,
                       **extra)
        by_prompt = dict(zip(prompts, replies, strict=True))
        for i in indices:
            out[i] = by_prompt[rows[i]["prompt"]][rows[i]["sample"]]
    return out


def generation_work(request: dict[str, Any], shard: dict[str, Any],
                    generated: dict[str, tuple[str, dict[str, int] | None]] | None = None) -> list[dict[str, Any]]:
    """Generate the shard's missing rows, then score every row with the scorers it still needs.

    Pure: models come from the process cache, scorers are rebuilt from (name, options). `generated` (generation
    id -> (raw text, tokens counted)) holds rows already generated by a call shared with other requests
    (`run_planned_together`); those rows are taken from it instead of calling the model again.
    """
    from fairness_core.scorers import scorer_from_request

    rows = shard["rows"]
    fresh = [i for i, r in enumerate(rows) if r["raw"] is None]
    raws = [r["raw"] for r in rows]
    usages: dict[int, dict[str, int] | None] = {}
    if fresh:
        if generated is not None and all(rows[i]["id"] in generated for i in fresh):
            answered: Any = ([generated[rows[i]["id"]][0] for i in fresh], [generated[rows[i]["id"]][1] for i in fresh])
        else:
            began = time.perf_counter()
            answered = _generate(request, shard["model"], [rows[i] for i in fresh])
            timing_log.info("TIMING model rows=%d seconds=%.3f", len(fresh), time.perf_counter() - began)
        # (texts, usages); a plain list of texts is accepted too (scripted generators in tests)
        generated_texts, counted = answered if isinstance(answered, tuple) else (answered, [None] * len(fresh))
        for i, text, usage in zip(fresh, generated_texts, counted, strict=True):
            raws[i] = text
            usages[i] = usage
    texts = [texts_of(r["prompt"], raw, r["redact"], request["truncate"], request["mode"])
             for r, raw in zip(rows, raws, strict=True)]
    out: list[dict[str, Any]] = []
    for i in fresh:
        row = rows[i]
        key = request["systems"][row["system"]]["key"]
        out.append({"item": row["id"], "grp": row["group"], "variant": key, "metric": GENERATION_METRIC,
                    "value": None, "text": texts[i]["kept"],
                    "attrs": {"raw": raws[i], "prompt": row["prompt"], "prompt_id": row["prompt_id"],
                              "family": row["family"], "source": row["source"], "redact": row["redact"],
                              "sample": row["sample"], "seed": row["seed"], "row_seed": row["row_seed"],
                              "system_name": row["system_name"], "max_new_tokens": request["max_new_tokens"],
                              "truncate": request["truncate"], "mode": request["mode"], "stops": request["stops"],
                              **({"usage": usages[i]} if usages.get(i) is not None else {}),
                              # each attribute of a prompt about several at once (issue 46): {name: value}
                              **({"attributes": dict(row["attributes"])} if row.get("attributes") else {})}})
    began, scored = time.perf_counter(), 0
    for j, described in enumerate(request["scorers"]):
        members = [i for i, r in enumerate(rows) if j in r["scorers"]]
        if not members:
            continue
        scored = max(scored, len(members))
        scorer = scorer_from_request(described["name"], **described["options"])
        inputs = [texts[i][scorer.reads] for i in members]
        prompts = [rows[i]["prompt"] for i in members] if scorer.needs_prompts else None
        values = scorer.score(inputs, prompts)
        for column, array in values.items():
            for position, i in enumerate(members):
                value = float(array[position])
                out.append({"item": rows[i]["id"], "grp": rows[i]["group"], "variant": SCORE_PREFIX + described["hash"],
                            "metric": column, "value": value if np.isfinite(value) else None,
                            "text": inputs[position], "attrs": None})
    if scored:
        timing_log.info("TIMING scorers rows=%d seconds=%.3f", scored, time.perf_counter() - began)
    return out


# -------------------------------------------------------------------------------------------- run
@dataclass
class GenerationOutcome:
    plan: GenerationPlan
    generations: pd.DataFrame  # `load_generations(store, request)`
    run_ids: list[str] = field(default_factory=list)  # runs whose rows the generations came from
    from_cache: bool = False  # nothing was computed: every generation and score was stored
    status: str = "complete"  # complete | cancelled

    @property
    def request(self) -> GenerationRequest:
        return self.plan.request


def run_generation(request: GenerationRequest, store: Any, on_progress: Callable[[Any], None] | None = None,
                   cancel: Any = None, executor: Any = None,
                   on_partial: Callable[[dict[str, Any]], None] | None = None) -> GenerationOutcome:
    """Plan (validate, reuse stored work), compute the rest as one job, and read everything back.

    `on_partial` sees each generation's text while it is generated (in-process executors only; see
    `_streamer` for the fields): for display, before the shard's rows are stored and scored.
    """
    return _run_plan(plan_generation(request, store), store, on_progress, cancel, executor, on_partial)


def _run_plan(plan: GenerationPlan, store: Any, on_progress: Callable[[Any], None] | None = None,
              cancel: Any = None, executor: Any = None, on_partial: Callable[[dict[str, Any]], None] | None = None,
              generated: dict[str, tuple[str, dict[str, int] | None]] | None = None) -> GenerationOutcome:
    """Run a plan's job (if any) and read the request's generations back; `generated`: see `generation_work`."""
    from fairness_core.jobs import run_task

    status = "complete"
    if plan.task is not None:
        task = plan.task
        if generated is not None:  # rows made by a call shared with other plans: stored and scored as alone
            task = replace(task, work=partial(generation_work, generated=generated))
        outcome = run_task(task, store, on_progress=on_progress, cancel=cancel, executor=executor,
                           on_partial=on_partial)
        status = outcome.status
        if status == "complete":
            _supersede_interrupted(store, plan.task.request, outcome.run_id)
    generations = load_generations(store, plan.request)
    run_ids = set(generations["run_id"].dropna()) if not generations.empty else set()
    if plan.task is not None:
        run_ids.add(outcome.run_id)
    return GenerationOutcome(plan, generations, sorted(run_ids), from_cache=plan.task is None, status=status)


def run_planned_together(plans: Sequence[GenerationPlan], store: Any,
                         on_partial: Callable[[int, dict[str, Any]], None] | None = None,
                         cancel: Any = None) -> list[GenerationOutcome]:
    """Run several planned requests with the generations they lack made in one model call per model.

    Each plan's missing rows (exactly the rows it would generate alone: its own settings x prompts x its own seeds
    x samples, no cross product with the other plans') are gathered, each generation id once, and generated
    together; then each plan runs as its own job (its own manifest, run id and stored rows, as if it had run
    alone), taking its rows' texts from that call and scoring them. A row's text depends only on its setting and
    its own random stream (`models.sampling.row_seed`: seed, prompt, sample), never on the rows beside it, so
    each request gets the texts it would have got alone. `on_partial(i, partial)` gets the partial texts of
    plan `i`'s rows only (a row two plans share goes to both). Cancelled during the shared call: nothing is
    stored and every outcome is "cancelled" with what the store already held.
    """
    from fairness_core.jobs.context import ShardCancelled, shard_context

    owners: dict[str, list[int]] = {}
    calls: dict[str, tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]] = {}
    for index, plan in enumerate(plans):
        if plan.task is None:
            continue
        request = plan.task.request
        for shard in plan.task.shards:
            for row in shard["rows"]:
                if row["raw"] is not None:
                    continue
                owners.setdefault(row["id"], []).append(index)
                if len(owners[row["id"]]) > 1:
                    continue  # generated once, for every plan that asks for it
                # one call per model and generation length: rows of every plan, each with its own setting
                call = json.dumps([shard["model"], request["max_new_tokens"], request["stops"], request["mode"],
                                   request["truncate"]], sort_keys=True)
                shared, positions, rows = calls.setdefault(call, (
                    {key: request[key] for key in ("max_new_tokens", "stops", "mode", "truncate")} | {"systems": []},
                    {}, []))
                system = request["systems"][row["system"]]
                if system["key"] not in positions:
                    positions[system["key"]] = len(shared["systems"])
                    shared["systems"].append(system)
                rows.append({**row, "system": positions[system["key"]], "model": shard["model"]})

    def fan_out(partial_row: dict[str, Any]) -> None:
        for index in owners.get(partial_row.get("id", ""), ()):
            on_partial(index, partial_row)  # type: ignore[misc]

    generated: dict[str, tuple[str, dict[str, int] | None]] = {}
    try:
        with shard_context(cancel, None, fan_out if on_partial is not None else None):
            for shared, _, rows in calls.values():
                rows.sort(key=lambda r: (len(r["prompt"]), r["prompt"], r["seed"], r["sample"], r["system"]))
                began = time.perf_counter()
                texts, usages = _generate(shared, rows[0]["model"], rows)
                timing_log.info("TIMING model rows=%d seconds=%.3f", len(rows), time.perf_counter() - began)
                generated.update({row["id"]: (text, usage) for row, text, usage in zip(rows, texts, usages,
                                                                                         strict=True)})
    except ShardCancelled:
        return [GenerationOutcome(plan, load_generations(store, plan.request), status="cancelled"
                                  if plan.task is not None else "complete", from_cache=plan.task is None)
                for plan in plans]
    return [_run_plan(plan, store, cancel=cancel, generated=generated) for plan in plans]


def _supersede_interrupted(store: Any, manifest: dict[str, Any], completed: str) -> None:
    """A resumed request runs only its missing rows, so it gets a new run id; once it completes, the unfinished
    runs of the same request (same manifest apart from the missing-work digest) are marked superseded by it."""
    from fairness_core.store import CANCELLED, FAILED, INCOMPLETE
    from fairness_core.store.manifest import build_manifest

    def without_work(stored: dict[str, Any]) -> dict[str, Any]:
        return {**stored, "request": {k: v for k, v in (stored.get("request") or {}).items() if k != "work"}}

    request_part = without_work(build_manifest(KIND, manifest))
    earlier = [info.run_id for info in store.list_runs(kind=KIND)
               if info.run_id != completed and info.status in (INCOMPLETE, CANCELLED, FAILED)
               and without_work(info.manifest) == request_part]
    store.supersede(earlier, completed)


# ------------------------------------------------------------------------------------------- read
def token_usage(store: Any, run_ids: Sequence[str]) -> dict[str, int]:
    """Tokens remote endpoints counted for the generations these runs wrote (stored in each row's attrs
    and exported with it): requests, prompt_tokens, completion_tokens; zeros for in-process models."""
    total = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
    if not run_ids or not store.path.exists():
        return total
    found = store.query("SELECT attrs FROM results WHERE metric = ? AND run_id IN (SELECT unnest(?::VARCHAR[]))",
                        [GENERATION_METRIC, list(run_ids)])
    for attrs in found["attrs"]:
        usage = json.loads(attrs).get("usage") if attrs else None
        if usage:
            total["requests"] += 1
            total["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
            total["completion_tokens"] += int(usage.get("completion_tokens") or 0)
    return total


def load_generations(store: Any, request_or_run_ids: GenerationRequest | Sequence[str]) -> pd.DataFrame:
    """One row per generation (request order), with the contract's columns and one per scorer column.

    With a request: every (system, prompt, seed, sample) it asks for that is stored (rows not yet
    generated are absent). With run ids: the generations those runs wrote or scored.
    """
    if isinstance(request_or_run_ids, GenerationRequest):
        frame, reads = _request_frame(store, request_or_run_ids)
    else:
        frame, reads = _runs_frame(store, list(request_or_run_ids))
    if frame.empty:
        return pd.DataFrame(columns=[*BASE_COLUMNS, *EXTRA_COLUMNS])
    scores = _stored_scores(store, list(frame["generation_id"]), list(reads))
    texts = frame.pop("_texts")
    score_columns: list[str] = []
    if not scores.empty:
        # A stored score counts only if its scorer read the text this generation gives now (the
        # redaction of a prompt item may differ between prompt sets).
        expected = {(gid, SCORE_PREFIX + h): t[kind] for gid, t in zip(frame["generation_id"], texts, strict=True)
                    for h, kind in reads.items() if kind is not None}
        keep = [expected.get((item, variant), text) == text
                for item, variant, text in zip(scores["item"], scores["variant"], scores["text"], strict=True)]
        scores = scores[keep].drop_duplicates(["item", "variant", "metric"])
        wide = scores.pivot_table(index="item", columns="metric", values="value", aggfunc="first", dropna=False)
        order = {SCORE_PREFIX + h: i for i, h in enumerate(reads)}  # the request's scorer order
        ranked = sorted(zip(scores["variant"].map(order), range(len(scores)), scores["metric"], strict=True))
        score_columns = list(dict.fromkeys(metric for _, _, metric in ranked))
        for column in score_columns:
            mapped = frame["generation_id"].map(wide[column]) if column in wide else np.nan
            frame[column] = pd.to_numeric(mapped, errors="coerce").astype(float)
    return frame[[*BASE_COLUMNS, *score_columns, *EXTRA_COLUMNS]].reset_index(drop=True)


def _generation_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(records, columns=[*BASE_COLUMNS, *EXTRA_COLUMNS, "_texts"])


def _row(system_key: str, system_name: str, item: dict[str, Any], raw: str, sample: int, seed: int,
         truncate: str, mode: str, gid: str, run_id: str) -> dict[str, Any]:
    texts = texts_of(item["text"], raw, item["redact"], truncate, mode)
    return {"system": system_key, "system_name": system_name, "prompt_id": item["prompt_id"],
            "group": item["group"], "family": item["family"], "source": item["source"], "prompt": item["text"],
            "sample": sample, "seed": seed, "continuation": texts["kept"], "scored_text": texts["scored_text"],
            "generation_id": gid, "raw": raw, "empty": not texts["kept"], "redacted": bool(item["redact"]),
            "row_seed": row_seed(seed, item["text"], sample), "run_id": run_id, "_texts": texts}


def _request_frame(store: Any, request: GenerationRequest) -> tuple[pd.DataFrame, dict[str, str | None]]:
    keys = [system.key() for system in request.systems]
    reads: dict[str, str | None] = {s.signature_hash(): s.reads for s in build_scorers(request.scorers)}
    wanted = _wanted(request, keys)
    stored = _stored_generations(store, [r["id"] for r in wanted])
    found = {item: (json.loads(attrs)["raw"], run_id)
             for item, attrs, run_id in zip(stored["item"], stored["attrs"], stored["run_id"], strict=True)}
    records = []
    for record in wanted:
        if record["id"] not in found:
            continue
        raw, run_id = found[record["id"]]
        item = record["item"]
        records.append(_row(record["key"], request.systems[record["system"]].name,
                            {"prompt_id": item.prompt_id, "group": item.group, "family": item.family,
                             "source": item.source, "text": item.text, "redact": list(item.redact)},
                            raw, record["sample"], record["seed"], request.truncate, request.mode, record["id"],
                            run_id))
    return _generation_frame(records), reads


def _runs_frame(store: Any, run_ids: list[str]) -> tuple[pd.DataFrame, dict[str, str | None]]:
    if not run_ids or not store.path.exists():
        return _generation_frame([]), {}
    touched = store.query(
        "SELECT DISTINCT item, variant FROM results WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [run_ids])
    ids = list(dict.fromkeys(touched["item"]))
    # Which text each stored scorer read is not known from run ids alone, so the first score is taken.
    reads: dict[str, str | None] = {v[len(SCORE_PREFIX):]: None for v in touched["variant"]
                                    if str(v).startswith(SCORE_PREFIX)}
    stored = _stored_generations(store, ids)
    records = []
    for item_id, key, attrs_text, run_id in zip(stored["item"], stored["variant"], stored["attrs"], stored["run_id"],
                                                strict=True):
        attrs = json.loads(attrs_text)
        item = {"prompt_id": attrs["prompt_id"], "group": attrs.get("group"), "family": attrs["family"],
                "source": attrs["source"], "text": attrs["prompt"], "redact": attrs.get("redact", [])}
        records.append(_row(key, attrs.get("system_name", key), item, attrs["raw"], attrs["sample"], attrs["seed"],
                            attrs["truncate"], attrs["mode"], item_id, run_id))
    frame = _generation_frame(records)
    if not frame.empty:
        groups = store.query("SELECT DISTINCT item, grp FROM results WHERE metric = ? "
                             "AND item IN (SELECT unnest(?::VARCHAR[]))", [GENERATION_METRIC, ids])
        frame["group"] = frame["generation_id"].map(dict(zip(groups["item"], groups["grp"], strict=False)))
    return frame, reads
