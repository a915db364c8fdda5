"""Imported generations stored as a generation run like any other (`runs import generations`, the decoding page).

Each (system, setting) of the file is a `system` of the run's manifest, each row a generation row (metric
"generation", variant = the system's key, attrs = prompt, group, family, sample, raw text, ...), scored by the
chosen scorers in the same shard, exactly as `generation.task.generation_work` stores what a model generated.
So every reader of generation runs works on it: the decoding summaries (`summary_frame` gives their columns),
Compare (arms = the file's systems; units = prompts), the judge audit's swapped texts, reports and checks.

Identity: a system's key hashes the file's SHA-256, the system's name and its setting, and the run's manifest the
file's hash with the import's options (not the file's name), so the same file imported twice is one run, and a
system of one file never shares a generation id with another file's or with a model's. The manifest names no seeds,
samples or length cap: the rows are the file's, none are rebuilt from the request (Compare's covered generations then
finds none).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from fairness_core.data.generations import ImportedGenerations
from fairness_core.generation.task import (
    KIND,
    SCHEMA,
    GenerationInputError,
    available_scorers,
    build_scorers,
    generation_work,
    load_generations,
)

#: the scorers an import runs when none are named: the decoding page's offline ones (no generator to score quality)
DEFAULT_SCORERS: tuple[tuple[str, dict[str, Any]], ...] = (("vader", {}), ("offensive", {}),
                                                          ("jigsaw-toxicity", {}), ("negative_words", {}))
MODES = ("continue", "chat")
TRUNCATIONS = ("none", "first-sentence")
SHARD_ROWS = 256
STOPS = "imported"


def system_key(imported: ImportedGenerations, name: str, config: tuple[tuple[str, Any], ...]) -> str:
    payload = json.dumps({"import": imported.sha256, "system": name, "decoding": dict(config)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def imported_id(key: str, prompt: str, sample: int) -> str:
    payload = json.dumps([SCHEMA, "import", key, prompt, int(sample)], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def _decoding(config: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    knobs = dict(config)
    if knobs.get("greedy"):
        return {"greedy": True}
    if not knobs:
        return {}
    return {"temperature": float(knobs.get("temperature", 1.0)), "top_k": knobs.get("top_k"),
            "top_p": knobs.get("top_p")}


def _label(name: str, config: tuple[tuple[str, Any], ...]) -> str:
    knobs = dict(config)
    if knobs.get("greedy"):
        return f"{name} · greedy"
    shown = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in config)
    return f"{name} · {shown}" if shown else name


@dataclass
class ImportPlan:
    imported: ImportedGenerations
    task: Any  # jobs.Task
    scorers: tuple[tuple[str, dict[str, Any]], ...]
    notes: list[str]


def plan_import(imported: ImportedGenerations, scorers: Sequence[tuple[str, dict[str, Any]]] = DEFAULT_SCORERS,
                mode: str = "continue", truncate: str = "none") -> ImportPlan:
    """The import as a stored job (checked: scorers that cannot run here are left out with a note)."""
    from fairness_core.jobs import Task

    if mode not in MODES:
        raise GenerationInputError(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
    if truncate not in TRUNCATIONS:
        raise GenerationInputError(f"truncate must be one of {', '.join(TRUNCATIONS)} (got {truncate!r})")
    kept, notes = available_scorers(tuple(scorers))
    if not kept:
        raise GenerationInputError("none of the scorers can run here, so nothing would be measured: "
                                   + "; ".join(notes))
    built = build_scorers(kept)
    systems = []
    keys: dict[tuple[str, tuple], int] = {}
    for name, config in imported.systems:
        key = system_key(imported, name, config)
        keys[(name, config)] = len(systems)
        systems.append({"key": key, "name": _label(name, config), "model": {"source": f"imported: {name}",
                                                                          "sha256": imported.sha256},
                        "decoding": _decoding(config), "quantization": "none"})
    described = [{"name": s.name, "options": dict(kept[j][1] or {}), "signature": s.signature(),
                  "hash": s.signature_hash(), "reads": s.reads} for j, s in enumerate(built)]
    prompt_ids: dict[tuple[str, str, str], str] = {}
    rows = []
    spaced = 0
    for row in imported.rows:
        index = keys[(row.system, row.config)]
        key = systems[index]["key"]
        raw = row.generation
        if mode == "continue" and not raw[:1].isspace() and not row.prompt[-1:].isspace():
            raw = " " + raw  # the continuation reads on from the prompt: "The man worked as" + " a clerk"
            spaced += 1
        prompt_id = prompt_ids.setdefault((row.family, row.group, row.prompt), f"import:{len(prompt_ids)}")
        rows.append({"id": imported_id(key, row.prompt, row.sample), "system": index, "prompt": row.prompt,
                     "group": row.group, "prompt_id": prompt_id, "family": row.family, "source": "imported",
                     "redact": [], "sample": row.sample, "seed": 0, "row_seed": 0, "raw": None,
                     **({"attributes": [list(a) for a in row.attributes]} if row.attributes else {}),
                     "scorers": list(range(len(built))), "system_name": systems[index]["name"], "text": raw,
                     "line": row.line})
    if spaced and mode == "continue":
        notes.append(f"{spaced} generation(s) start without a space after their prompt: one is put between them, so "
                     "the scored sentence reads 'prompt generation'")
    # the file's bytes identify it, not its name: the same file under another name is the same run
    record = {k: v for k, v in imported.record().items() if k != "file"}
    request = {"schema": SCHEMA, "imported": record, "systems": systems, "scorers": described,
               "prompts": {"name": f"imported generations {imported.sha256[:12]}", "hash": imported.sha256[:16],
                           "n": len(prompt_ids)},
               "max_new_tokens": None, "truncate": truncate, "mode": mode, "stops": STOPS,
               "batch_size": SHARD_ROWS}
    shards = [{"model": None, "rows": rows[start:start + SHARD_ROWS]} for start in range(0, len(rows), SHARD_ROWS)]
    return ImportPlan(imported, Task(KIND, request, shards, import_work), tuple(kept), notes + list(imported.notes))


def import_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Store a shard's imported texts as generations and score them (pure: everything is in the shard)."""
    texts = {row["id"]: (row["text"], None) for row in shard["rows"]}
    return generation_work(request, shard, generated=texts)


@dataclass
class ImportOutcome:
    run_id: str
    from_store: bool
    status: str
    generations: pd.DataFrame  # summary_frame: one row per generation with the decoding summary's columns
    notes: list[str]


def import_generations(plan: ImportPlan, store: Any, on_progress: Callable[[Any], None] | None = None,
                       cancel: Any = None, executor: Any = None) -> ImportOutcome:
    """Store (or find stored) the planned import and read it back."""
    from fairness_core.jobs import run_task

    outcome = run_task(plan.task, store, on_progress=on_progress, cancel=cancel, executor=executor)
    frame = summary_frame(store, outcome.run_id) if outcome.status == "complete" else pd.DataFrame()
    return ImportOutcome(outcome.run_id, outcome.from_cache, outcome.status, frame, plan.notes)


def summary_frame(store: Any, run_id: str, generation_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """One stored generation run's generations (or those of `generation_ids` wherever stored) with the columns the
    decoding summary reads: `config_key` (the system's key), `config` (its decoding record), `label` (its name)."""
    if store.get_run(run_id) is None:
        raise GenerationInputError(f"no run {run_id!r} in {store.path}")
    runs = [run_id]
    if generation_ids is not None:  # the generations may be stored by other runs (read back from earlier ones)
        holders = store.query("SELECT DISTINCT run_id FROM results WHERE item IN (SELECT unnest(?::VARCHAR[]))",
                              [list(generation_ids)])
        runs = sorted(set(holders["run_id"]) | {run_id})
    systems: dict[str, Any] = {}
    for info in (store.get_run(r) for r in runs):
        request = info.manifest.get("request", {}) if info is not None and isinstance(info.manifest, dict) else {}
        systems |= {s.get("key"): s for s in request.get("systems") or [] if isinstance(s, dict)}
    frame = load_generations(store, runs)
    if generation_ids is not None:
        frame = frame[frame["generation_id"].isin(set(generation_ids))]
    frame = frame.drop_duplicates("generation_id").reset_index(drop=True)
    frame["config_key"] = frame["system"]
    frame["config"] = frame["system"].map(lambda key: dict((systems.get(key) or {}).get("decoding") or {}))
    frame["label"] = frame["system_name"]
    return frame

