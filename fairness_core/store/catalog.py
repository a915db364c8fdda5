"""The run catalogue: what each stored run is, in one row, and a filter/search over those rows.

`describe_run` reads a run's manifest and says what it computed (kind, dataset name and version hash,
metrics or decoding grid, model, seed, size, when). Manifests differ per kind, so the reader looks for the
shapes the lab writes (`dataset`/`prompts` records, a `metric` record or `metrics` list, a `configs` grid
or `systems`, `model`, `seed`/`seeds`) and leaves a field empty when a kind has no such thing.
`search_runs` filters those rows in DuckDB (kind, status, free text); the CLI and the Run store page
share it.

`store_catalogue` reads a store's catalogue in one SQL query (statuses, batch and row counts joined in DuckDB);
the manifest's description is Python (its rules read nested, kind-specific shapes) and is memoised per
manifest text, which never changes for a run, so a catalogue read parses and describes only runs it has not
seen before.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import pandas as pd

from fairness_core.store.store import (
    CANCELLED,
    CANCELLED_BY_USER,
    FAILED,
    INCOMPLETE,
    RUNNING,
    SUPERSEDED,
    RunInfo,
    RunStore,
    StoreUnreadableError,
    _owner_alive,
    open_duckdb,
)

SUMMARY_COLUMNS = ("run_id", "kind", "status", "dataset", "version", "what", "model", "seed", "size",
                   "batches", "rows", "created", "note")
#: the columns the free-text search looks in
SEARCHED_COLUMNS = ("run_id", "kind", "status", "dataset", "version", "what", "model", "seed", "size", "note")
_MAX_GRID_SHOWN = 6


def describe_run(info: RunInfo) -> dict[str, Any]:
    """One catalogue row for a run (all text fields are plain strings; missing ones are "")."""
    return {
        "run_id": info.run_id,
        "kind": info.kind,
        "status": info.status,
        **describe_manifest(info.manifest),
        "batches": f"{info.shards_done}/{info.n_shards}",
        "rows": info.n_rows,
        "created": info.created_at,
        "note": status_note(info),
    }


def describe_manifest(manifest: Any) -> dict[str, str]:
    """What a manifest computed: dataset, version, what, model, seed, size (missing ones are "")."""
    request = manifest.get("request", {}) if isinstance(manifest, dict) else {}
    request = request if isinstance(request, dict) else {}
    dataset_name, version, dataset_size = _dataset(request)
    return {"dataset": dataset_name, "version": version, "what": _what(request), "model": _model(request),
            "seed": _seed(request), "size": ", ".join(part for part in (dataset_size, _repeats(request)) if part)}


@lru_cache(maxsize=8192)
def _described(manifest_text: str) -> dict[str, str] | None:
    """`describe_manifest` of a stored manifest's JSON text (None: not JSON); callers copy the dict."""
    try:
        return describe_manifest(json.loads(manifest_text))
    except (TypeError, ValueError):
        return None


_CATALOGUE_SQL = """
    SELECT r.run_id, r.kind, r.manifest, r.status, r.owner, r.error, r.n_shards,
           coalesce(s.done, 0) AS done, coalesce(s.n, 0) AS n, r.created_at
    FROM runs r LEFT JOIN (SELECT run_id, count(*) AS done, sum(n_rows) AS n FROM shards GROUP BY run_id) s
         USING (run_id)
    ORDER BY r.created_at DESC
"""


def store_catalogue(store: RunStore) -> pd.DataFrame:
    """The catalogue of every run in the store, newest first: the same rows as `catalogue(store.list_runs())`,
    read in one SQL query."""
    if not store.path.exists():
        return pd.DataFrame(columns=list(SUMMARY_COLUMNS))
    found = store.query(_CATALOGUE_SQL)
    rows = []
    for run_id, kind, manifest, status, owner, error, n_shards, done, n, created in found.itertuples(index=False):
        described = _described(manifest)
        if described is None:
            raise StoreUnreadableError(f"run store {store.path} is damaged: the manifest of run {run_id} is not "
                                       "JSON; nothing was changed")
        if status == RUNNING and not _owner_alive(owner):
            status = INCOMPLETE
        error = None if error is None or error != error else error  # a NULL read through pandas
        info = RunInfo(run_id=run_id, kind=kind, manifest={}, manifest_hash="", status=status,
                       n_shards=int(n_shards), shards_done=int(done), n_rows=int(n), created_at=created,
                       finished_at=None, versions={}, error=error)
        rows.append({"run_id": run_id, "kind": kind, "status": status, **described,
                     "batches": f"{int(done)}/{int(n_shards)}", "rows": int(n), "created": created,
                     "note": status_note(info)})
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def status_note(info: RunInfo) -> str:
    """A sentence for runs that did not finish: never an exception's repr for a cancel."""
    done = f"{info.shards_done} of {info.n_shards} batches stored"
    if info.status == CANCELLED:
        return f"{CANCELLED_BY_USER} ({done})"
    if info.status == FAILED:
        return f"failed: {_short(info.error or 'unknown error', 160)} ({done})"
    if info.status == INCOMPLETE:
        return f"interrupted ({done}); running the same request again resumes it"
    if info.status == SUPERSEDED:
        return f"{info.error or 'superseded'}: that run completed this request ({done} here are part of it)"
    return ""


def catalogue(runs: Iterable[RunInfo]) -> pd.DataFrame:
    """Catalogue rows for these runs, newest first, with the columns of `SUMMARY_COLUMNS`."""
    rows = [describe_run(info) for info in runs]
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def search_runs(
    store: RunStore,
    kinds: Sequence[str] | None = None,
    statuses: Sequence[str] | None = None,
    search: str = "",
) -> pd.DataFrame:
    """The store's catalogue filtered by kind, status and free text (every word must appear somewhere).

    Superseded runs (an interrupted run whose request a later run completed) are listed only when asked for by
    status, so each request shows once."""
    table = store_catalogue(store)
    if statuses is None:
        table = table[table["status"] != SUPERSEDED].reset_index(drop=True)
    return filter_catalogue(table, kinds=kinds, statuses=statuses, search=search)


def empty_cancelled(table: pd.DataFrame) -> pd.Series:
    """Catalogue rows of runs cancelled before they stored a row (a slider stepped with auto-generate on starts and
    cancels one per step): nothing to open or compare, so the pages hide them unless asked."""
    if table.empty:
        return pd.Series(False, index=table.index)
    return table["status"].isin([CANCELLED, INCOMPLETE, FAILED]) & (table["rows"] == 0)


def filter_catalogue(
    table: pd.DataFrame,
    kinds: Sequence[str] | None = None,
    statuses: Sequence[str] | None = None,
    search: str = "",
) -> pd.DataFrame:
    """Filter catalogue rows in DuckDB; `None` for kinds/statuses means all, words are case-insensitive."""
    if table.empty:
        return table
    conditions, params = [], []
    if kinds is not None:
        conditions.append("list_contains(?, kind)")
        params.append(list(kinds))
    if statuses is not None:
        conditions.append("list_contains(?, status)")
        params.append(list(statuses))
    haystack = " || ' ' || ".join(f"coalesce(CAST({column} AS VARCHAR), '')" for column in SEARCHED_COLUMNS)
    for word in search.lower().split():
        conditions.append(f"contains(lower({haystack}), ?)")
        params.append(word)
    where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    con = open_duckdb(":memory:")
    try:
        con.register("catalogue", table)
        found = con.execute(f"SELECT * FROM catalogue {where} ORDER BY created DESC, run_id", params).df()
    finally:
        con.close()
    return found.reset_index(drop=True)


#: catalogue fields that tell apart runs whose kind, data, what and model are the same, in the order a label names
#: them (the Run store shows each as a column, and its search finds them)
_TELLING_FIELDS = (("size", "{}"), ("seed", "seed {}"), ("version", "data version {}"), ("status", "{}"),
                   ("created", "created {}"))


def run_labels(table: pd.DataFrame, limit: int = 160) -> dict[str, str]:
    """One label per catalogue row (run id -> words) that names what the run computed as the Run store does
    (kind, what, data, model), and, for runs that would read alike, what tells them apart (prompts or pairs and
    samples, seed, data version, status, when): two top-p 0.5 runs of 22 and 33 prompts never share a label."""
    if table.empty:
        return {}
    frame = table.copy()
    if "created" in frame:
        frame["created"] = pd.to_datetime(frame["created"], errors="coerce").dt.strftime("%Y-%m-%d %H:%M:%S")
    base_columns = [c for c in ("kind", "what", "dataset", "model") if c in frame]
    base = frame[base_columns].astype(str).agg(" · ".join, axis=1)
    labels: dict[str, str] = {}
    for _, alike in frame.groupby(base, sort=False):
        telling: list[tuple[str, str]] = []  # fields in order until they tell these runs apart
        for column, form in _TELLING_FIELDS if len(alike) > 1 else ():
            if column in alike and alike[column].astype(str).nunique() > 1:
                telling.append((column, form))
                if not alike[[c for c, _ in telling]].astype(str).duplicated().any():
                    break
        for row in alike.to_dict(orient="records"):
            differs = [form.format(row[column]) for column, form in telling if str(row[column] or "")]
            what = _short(str(row.get("what") or ""), 90)
            parts = [row["run_id"], row.get("kind"), *differs, what, row.get("dataset"), row.get("model")]
            labels[row["run_id"]] = _short(" · ".join(str(p) for p in parts if p), limit)
    return labels


# -- reading manifests ---------------------------------------------------------------------------
def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dataset(request: dict[str, Any]) -> tuple[str, str, str]:
    for key in ("dataset", "prompts", "data", "corpus", "texts"):
        record = request.get(key)
        if isinstance(record, dict) and ("name" in record or "hash" in record):
            size = ""
            if isinstance(record.get("n_pairs"), int):
                size = f"{record['n_pairs']} pairs"
            elif isinstance(record.get("n_segments"), int):
                size = f"{record['n_segments']} segments"
            elif isinstance(record.get("n"), int):
                unit = {"prompts": "prompts", "corpus": "texts", "texts": "texts"}.get(key, "items")
                size = f"{record['n']} {unit}"
            return str(record.get("name", "")), str(record.get("hash", ""))[:12], size
    return "", "", ""


def _model_name(record: Any) -> str:
    if isinstance(record, str):
        return record
    if isinstance(record, dict):
        for key in ("source", "name", "key", "model"):
            if isinstance(record.get(key), (str, dict)):
                return _model_name(record[key])
    return ""


def _config_text(config: Any) -> str:
    if not isinstance(config, dict):
        return str(config)
    short = {"temperature": "T", "top_p": "p", "top_k": "k", "greedy": "greedy"}
    parts = []
    for key, value in config.items():
        if key == "greedy":
            if value:
                parts.append("greedy")
            continue
        if value is None:  # a knob that is off
            continue
        parts.append(f"{short.get(key, key)}={value}")
    return " ".join(parts)


def _options_text(record: dict[str, Any]) -> str:
    """A metric's options in words ("config metric-fairness-2022"); its model has a column of its own."""
    options = record.get("options") if isinstance(record.get("options"), dict) else {}
    return ", ".join(f"{k} {v}" for k, v in sorted(options.items()) if v not in (None, ""))


def _what(request: dict[str, Any]) -> str:
    """What a run computed, naming what tells two runs apart (a metric's configuration, the decoding settings,
    the classifiers, the NER model, the directions): the Run store and Compare pages show it and search it."""
    parts = []
    metric = request.get("metric")
    if isinstance(metric, dict) and metric.get("name"):
        options = _options_text(metric)
        parts.append(f"metric {metric['name']}" + (f" ({options})" if options else ""))
    metrics = request.get("metrics")
    if isinstance(metrics, (list, tuple)) and metrics:
        names = [m.get("name", "") if isinstance(m, dict) else str(m) for m in metrics]
        parts.append("metrics " + ", ".join(name for name in names if name))
    configs = request.get("configs") or request.get("grid")
    if isinstance(configs, (list, tuple)) and configs:
        shown = "; ".join(_config_text(c) for c in configs[:_MAX_GRID_SHOWN])
        more = f"; +{len(configs) - _MAX_GRID_SHOWN} more" if len(configs) > _MAX_GRID_SHOWN else ""
        parts.append(f"grid of {len(configs)}: {shown}{more}")
    systems = request.get("systems")
    if isinstance(systems, (list, tuple)) and systems:
        settings = [_config_text(s["decoding"]) for s in systems if isinstance(s, dict)
                    and isinstance(s.get("decoding"), dict)]
        if settings and len(settings) == len(systems):
            shown = "; ".join(settings[:_MAX_GRID_SHOWN]) + (f"; +{len(settings) - _MAX_GRID_SHOWN} more"
                                                             if len(settings) > _MAX_GRID_SHOWN else "")
            parts.append(f"{len(systems)} setting(s): {shown}")
        else:
            names = [s.get("name") or _model_name(s) if isinstance(s, dict) else str(s) for s in systems]
            parts.append(f"{len(systems)} system(s): " + ", ".join(n for n in names if n))
    classifiers = request.get("classifiers")
    if isinstance(classifiers, (list, tuple)) and classifiers:
        labels = [c.get("label") or c.get("scorer", "") if isinstance(c, dict) else str(c) for c in classifiers]
        parts.append("classifiers " + ", ".join(str(label) for label in labels if label))
    if isinstance(request.get("ner"), str):
        parts.append(f"person names found by {request['ner']}")
    directions = request.get("directions")
    if isinstance(directions, (list, tuple)) and directions:
        parts.append(f"{len(directions)} directions ({', '.join(str(d) for d in directions[:_MAX_GRID_SHOWN])}"
                     f"{' …' if len(directions) > _MAX_GRID_SHOWN else ''})")
    languages = request.get("languages")
    if isinstance(languages, dict) and not directions and languages.get("src"):
        targets = ", ".join(f"{k} {v}" for k, v in languages.items() if k.startswith("Trans"))
        parts.append(f"translations of {languages['src']}→{languages.get('tgt', '?')} ({targets})")
    decoding = request.get("decoding")
    if isinstance(decoding, dict) and isinstance(decoding.get("max_new_tokens"), int):
        parts.append(f"{decoding['max_new_tokens']} new tokens")
    criteria = request.get("criteria")
    if isinstance(criteria, (list, tuple)) and criteria and all(isinstance(c, dict) for c in criteria):
        passed = sum(bool(c.get("passed")) for c in criteria)  # a check (fairness_core.check): its verdict first
        parts.append(f"check {'passed' if passed == len(criteria) else 'FAILED'}: {passed} of {len(criteria)} "
                     "criteria (" + "; ".join(str(c.get("name", "")) for c in criteria[:_MAX_GRID_SHOWN]) + ")")
    scorers = request.get("scorers")
    if isinstance(scorers, (list, tuple)) and scorers:
        names = [s[0] if isinstance(s, (list, tuple)) and s else s.get("name", "") if isinstance(s, dict) else str(s)
                 for s in scorers]
        parts.append("scorers " + ", ".join(str(n) for n in names if n))
    return _short("; ".join(parts), 240)


def _model(request: dict[str, Any]) -> str:
    if request.get("model") is not None:
        return _model_name(request["model"])
    backbone = request.get("backbone")
    if isinstance(backbone, dict) and backbone.get("model") is not None:
        return _model_name(backbone["model"])
    if isinstance(request.get("encoder"), str):
        return str(request["encoder"])
    metric = request.get("metric")
    if isinstance(metric, dict) and metric.get("model") is not None:
        return _model_name(metric["model"])
    systems = request.get("systems")
    if isinstance(systems, (list, tuple)):
        names = sorted({_model_name(s.get("model", s)) for s in systems if isinstance(s, dict)} - {""})
        return ", ".join(names)
    return ""


def _seed(request: dict[str, Any]) -> str:
    if "seed" in request and request["seed"] is not None:
        return str(request["seed"])
    seeds = request.get("seeds")
    if isinstance(seeds, (list, tuple)) and seeds:
        return ", ".join(str(seed) for seed in seeds)
    return ""


def _repeats(request: dict[str, Any]) -> str:
    samples = request.get("samples")
    return f"{samples} sample(s) each" if isinstance(samples, int) and samples > 1 else ""
