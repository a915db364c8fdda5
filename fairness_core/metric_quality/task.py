"""Metric quality as stored jobs: score every candidate of a judgments set with a metric (or read a stored
score column), then correlate with the human scores.

1. **scores** (kind `metric-quality-scores`): one run per (judgments version, metric signature, corpus state).
   Corpus statistics (BERTScore idf, MoverScore idf) are computed once by `Metric.prepare` over every candidate
   and reference of the set (each row as scored, so a reference shared by 24 systems counts 24 times), before
   the shards are built; the state travels with each shard and its hash is in the manifest. Shards hold whole
   items (an item's candidates share their reference, which the matching metrics then encode once). Rows:
   item = item_id, grp = system, metric = the metric's output name (`bertscore`, `bertscore.P`, ...), value =
   the raw score (NaN stays NaN). A stored column is a run of the same kind whose rows are read from the data.
2. **agreement** (kind `metric-quality`): the correlations of the chosen metrics under one rule with their
   intervals; its manifest names the judgments version, the score runs' manifest hashes, the rule, the
   statistic, the resampling unit (documents, systems or both) and what the interval generalises over, the
   document rule's treatment of constant documents, averaging over groups, the resamples and the seed. Rows:
   item = metric name, grp = rule, metric = the field (spearman, ci_low, ...), value.

A repeated request is read back from the store without loading a model.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.data.judgments import Judgments
from fairness_core.jobs import CancelToken, Executor, Progress, Task, run_task
from fairness_core.jobs.estimates import weighted_fraction
from fairness_core.metric_quality.agreement import Correlation, correlate, interval_scope
from fairness_core.metric_quality.request import QualityRequest, quality_work, scoring_costs
from fairness_core.metrics import Metric, metric_from_request, state_hash
from fairness_core.store import RunStore

SCORES, AGREEMENT = "metric-quality-scores", "metric-quality"
#: candidates per shard: n-gram metrics are cheap; model metrics report progress (and obey Cancel) more often
SHARD_ROWS = {"n-gram": 1200, "matching": 240, "generation": 48, "regression": 96, "translation": 48,
              "stored": 100_000}
FIELDS = ("spearman", "ci_low", "ci_high", "pearson", "kendall", "n", "n_documents", "n_systems", "n_excluded",
          "n_undefined_resamples", "n_constant_documents", "n_undefined_documents", "n_groups", "n_items")


def stored_metric_name(column: str) -> str:
    return column if column.endswith(" (stored)") else f"{column} (stored)"


def data_manifest(judgments: Judgments) -> dict[str, Any]:
    return {"name": judgments.name, "hash": judgments.data_hash, "n": len(judgments),
            "n_items": judgments.n_items, "n_systems": judgments.n_systems}


def _texts(judgments: Judgments, metric: Metric) -> tuple[list[str], list[str], list[str] | None]:
    frame = judgments.frame
    sources = frame["source"].tolist() if metric.needs_sources else None
    return frame["candidate"].tolist(), frame["reference"].tolist(), sources


@functools.lru_cache(maxsize=32)
def _metric(name: str, options_json: str) -> Metric:
    return metric_from_request(name, **json.loads(options_json))


def _shards_by_item(judgments: Judgments, size: int) -> list[list[int]]:
    """Row indices in shards of about `size` candidates that never split an item."""
    shards: list[list[int]] = [[]]
    codes = judgments.item_codes
    for start, stop in _item_bounds(codes):
        if shards[-1] and len(shards[-1]) + (stop - start) > size:
            shards.append([])
        shards[-1].extend(range(start, stop))
    return [s for s in shards if s]


def _item_bounds(codes: np.ndarray) -> list[tuple[int, int]]:
    change = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1], True])
    return list(zip(change[:-1].tolist(), change[1:].tolist(), strict=True))


def scores_task(judgments: Judgments, metric: Metric, state: dict[str, Any] | None = None,
                shard_rows: int | None = None) -> Task:
    """The stored job of one metric over one judgments version (`state` from `metric.prepare` over the whole
    set; computed here when not given)."""
    candidates, references, sources = _texts(judgments, metric)
    if state is None:
        state = metric.prepare(candidates, references, sources)
    shard_rows = shard_rows or SHARD_ROWS[metric.family]
    signature = metric.signature()
    frame = judgments.frame
    shards = []
    for rows in _shards_by_item(judgments, shard_rows):
        shards.append({"metric": {"name": signature["name"], "options": signature["options"]}, "state": state,
                       "items": frame["item_id"].iloc[rows].tolist(), "systems": frame["system"].iloc[rows].tolist(),
                       "candidates": [candidates[i] for i in rows], "references": [references[i] for i in rows],
                       "sources": None if sources is None else [sources[i] for i in rows]})
    request: dict[str, Any] = {"data": data_manifest(judgments), "metric": signature, "shard_rows": shard_rows}
    digest = state_hash(state)
    if digest is not None:
        request["corpus_state_sha256"] = digest
    return Task(SCORES, request, shards, scores_work)


def scores_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Score one shard of candidates with one metric (the job's pure work unit)."""
    spec = shard["metric"]
    metric = _metric(spec["name"], json.dumps(spec["options"], sort_keys=True))
    outputs = metric.score(shard["candidates"], shard["references"], shard.get("sources"), state=shard.get("state"))
    rows = []
    for output, values in outputs.items():
        name = metric.output_name(output)
        for item, system, value in zip(shard["items"], shard["systems"], np.asarray(values, dtype=float),
                                       strict=True):
            rows.append({"item": item, "grp": system, "variant": "", "metric": name, "value": float(value)})
    return rows


def stored_task(judgments: Judgments, column: str) -> Task:
    """A stored score column as a run: its rows are read from the data, not computed."""
    name = stored_metric_name(column)
    frame = judgments.frame
    shard = {"metric": name, "items": frame["item_id"].tolist(), "systems": frame["system"].tolist(),
             "values": [float(v) for v in frame[name]]}
    request = {"data": data_manifest(judgments),
               "metric": {"name": name, "version": "1", "options": {"column": name.removesuffix(" (stored)")},
                          "source": "scores stored in the data"}}
    return Task(SCORES, request, [shard], stored_work)


def stored_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"item": item, "grp": system, "variant": "", "metric": shard["metric"], "value": value}
            for item, system, value in zip(shard["items"], shard["systems"], shard["values"], strict=True)]


# -- scoring without the store (variants, mitigation) ----------------------------------------------------------
def score_metric(judgments: Judgments, metric: str | Metric, options: Mapping[str, Any] | None = None,
                 output: str | None = None, on_progress: Callable[[int, int], None] | None = None,
                 batch_size: int | None = None) -> np.ndarray:
    """Scores of every candidate (in the judgments' row order) with a registered metric, through
    `fairness_core.metrics` (`metric_from_request(name, **options)`, or a built metric object): corpus state
    once over the whole set, then batches of whole items. Returns the primary output, or `output` (e.g. "P").
    Nothing is stored (the stored path is `run_quality`). Raises ModelUnavailableError when it cannot run here."""
    chosen = metric if isinstance(metric, Metric) else metric_from_request(metric, **dict(options or {}))
    chosen.check_available()
    chosen.validate()
    wanted = output or chosen.primary
    if wanted not in chosen.outputs:
        raise ValueError(f"{chosen.name} has no output {wanted!r}; its outputs are {', '.join(chosen.outputs)}")
    candidates, references, sources = _texts(judgments, chosen)
    state = chosen.prepare(candidates, references, sources)
    out = np.full(len(candidates), np.nan)
    batches = _shards_by_item(judgments, batch_size or SHARD_ROWS[chosen.family])
    done = 0
    for rows in batches:
        scored = chosen.score([candidates[i] for i in rows], [references[i] for i in rows],
                              None if sources is None else [sources[i] for i in rows], state=state)
        out[rows] = np.asarray(scored[wanted], dtype=float)
        done += len(rows)
        if on_progress is not None:
            on_progress(done, len(candidates))
    return out


# -- the stored pipeline ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoreRun:
    name: str  # metric name or "<column> (stored)"
    label: str
    run_id: str
    from_cache: bool
    manifest: dict[str, Any]
    status: str = "complete"


@dataclass
class QualityOutcome:
    request: QualityRequest
    runs: list[ScoreRun]
    #: the candidates with one column per metric (primary output) beside the human score
    scores: pd.DataFrame
    correlations: dict[str, Correlation]
    agreement_run: str | None = None
    agreement_manifest: dict[str, Any] = field(default_factory=dict)
    from_cache: bool = False
    skipped: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        return any(r.status != "complete" for r in self.runs)


def _score_column(store: RunStore, run: ScoreRun, judgments: Judgments) -> np.ndarray:
    frame = store.query("SELECT item, grp, value FROM results WHERE run_id = ? AND metric = ?",
                        [run.run_id, run.name])
    lookup = {(i, g): v for i, g, v in frame.itertuples(index=False, name=None)}
    keys = zip(judgments.frame["item_id"], judgments.frame["system"], strict=True)
    return np.array([lookup.get(key, np.nan) for key in keys], dtype=float)


def scores_frame(store: RunStore, runs: Sequence[ScoreRun], judgments: Judgments) -> pd.DataFrame:
    """item_id, system, candidate, reference, human and one column per run's metric (NaN where missing)."""
    frame = judgments.frame[["item_id", "system", "candidate", "reference", "human"]].copy()
    for run in runs:
        frame[run.name] = _score_column(store, run, judgments)
    return frame


def _tasks(request: QualityRequest) -> list[tuple[str, str, Callable[[], Task], Metric | None]]:
    jobs: list[tuple[str, str, Callable[[], Task], Metric | None]] = []
    for metric in request.metrics:
        jobs.append((metric.name, metric.label, functools.partial(scores_task, request.judgments, metric), metric))
    for column in request.stored:
        name = stored_metric_name(column)
        jobs.append((name, name, functools.partial(stored_task, request.judgments, column), None))
    return jobs


def agreement_task(request: QualityRequest, runs: Sequence[ScoreRun], scores: pd.DataFrame) -> Task:
    from fairness_core.store.manifest import manifest_hash

    judgments = request.judgments
    shard = {"human": judgments.human.tolist(), "items": judgments.frame["item_id"].tolist(),
             "systems": judgments.frame["system"].tolist(),
             "scores": {run.name: [None if v != v else float(v) for v in scores[run.name]] for run in runs}}
    if judgments.n_groups > 1:
        shard["groups"] = judgments.frame["group"].tolist()
    resample = request.resample_unit
    job_request = {"data": data_manifest(judgments),
                   "metrics": [{"name": run.name, "scores_manifest_sha256": manifest_hash(run.manifest)}
                               for run in runs],
                   "rule": request.rule, "statistic": request.statistic, "n_resamples": request.n_resamples,
                   "seed": request.seed, "resample": resample, "constant_documents": request.constant,
                   "group_average": request.group_average,
                   "interval": "95% percentile bootstrap that "
                               + interval_scope(resample, judgments.n_items, judgments.n_systems)}
    return Task(AGREEMENT, job_request, [shard], agreement_work)


def agreement_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Correlate every metric's scores with the human scores under the request's rule (pure)."""
    from fairness_core.data.judgments import from_frame

    frame = pd.DataFrame({"item_id": shard["items"], "system": shard["systems"], "candidate": "",
                          "reference": "-", "human": shard["human"]})
    if "groups" in shard:
        frame["group"] = shard["groups"]
    judgments = from_frame(frame, "agreement")
    rows = []
    for name, values in shard["scores"].items():
        scores = np.array([np.nan if v is None else v for v in values], dtype=float)
        result = correlate(judgments, scores, rule=request["rule"], n_resamples=int(request["n_resamples"]),
                           seed=int(request["seed"]), statistic=request["statistic"],
                           resample=request.get("resample", "documents"),
                           constant=request.get("constant_documents", "zero"),
                           group_average=bool(request.get("group_average", False)))
        for key in FIELDS:
            rows.append({"item": name, "grp": request["rule"], "variant": request["statistic"], "metric": key,
                         "value": float(getattr(result, key))})
    return rows


def _read_agreement(store: RunStore, run_id: str, request: QualityRequest,
                    names: Sequence[str]) -> dict[str, Correlation]:
    frame = store.query("SELECT item, metric, value FROM results WHERE run_id = ?", [run_id])
    values = {(i, m): v for i, m, v in frame.itertuples(index=False, name=None)}
    out = {}
    for name in names:
        got = {key: values.get((name, key), np.nan) for key in FIELDS}
        count = {key: int(value) if np.isfinite(value) else 0 for key, value in got.items()}
        out[name] = Correlation(got["spearman"], got["pearson"], got["kendall"], got["ci_low"], got["ci_high"],
                                count["n"], count["n_documents"], count["n_systems"], request.rule,
                                request.statistic, count["n_excluded"], request.n_resamples,
                                count["n_undefined_resamples"], resample=request.resample_unit,
                                n_constant_documents=count["n_constant_documents"],
                                n_undefined_documents=count["n_undefined_documents"], constant=request.constant,
                                n_groups=count["n_groups"] or 1, n_items=count["n_items"])
    return out


def run_quality(request: QualityRequest, store: RunStore, on_progress: Callable[[Progress], None] | None = None,
                cancel: CancelToken | None = None, executor: Executor | None = None,
                skip_unavailable: bool = False) -> QualityOutcome:
    """Score (or read back) each metric and stored column, then correlate under the request's rule (stored too).

    A metric that cannot run here raises ModelUnavailableError before any run record exists — or, with
    `skip_unavailable` (the page), is skipped with one sentence in `outcome.skipped`."""
    from fairness_core.models.interfaces import ModelUnavailableError

    skipped: list[str] = []
    usable: list[Metric] = []
    for metric in request.metrics:  # every metric checked before any run record exists (nothing partial)
        try:
            metric.check_available()
            metric.validate()
            usable.append(metric)
        except ModelUnavailableError as error:
            if not skip_unavailable:
                raise
            skipped.append(f"Skipped {metric.label}: {error}")
    from dataclasses import replace

    request_used = replace(request, metrics=tuple(usable))
    jobs = _tasks(request_used)
    n_rows = len(request.judgments)
    total = n_rows * max(len(jobs), 1)
    # progress weighted by each metric's cost: BLEU's candidates take a millisecond, BERTScore's tens (the page said
    # "9 s left" at 50% and "1 min 30 s" at 66%); the agreement's bootstrap after the last metric is a part too
    work = quality_work(request_used)
    costs = [*scoring_costs(request_used), work.fixed_s]
    started = time.monotonic()
    runs: list[ScoreRun] = []
    for number, (name, label, make, _metric_obj) in enumerate(jobs):
        task = make()

        def forward(progress: Progress, number: int = number) -> None:
            if on_progress is None:
                return
            per_shard = n_rows / progress.total if progress.total else 0.0
            done = number * n_rows + min(n_rows, int((progress.done + progress.partial) * per_shard))
            shares = [1.0 if i < number else progress.fraction if i == number else 0.0 for i in range(len(costs))]
            on_progress(Progress(done, total, time.monotonic() - started, unit="candidates × metrics scored",
                                 weighted=weighted_fraction(list(zip(costs, shares, strict=True)))))

        outcome = run_task(task, store, on_progress=forward, cancel=cancel, executor=executor)
        runs.append(ScoreRun(name, label, outcome.run_id, outcome.from_cache, task.manifest, outcome.status))
        if cancel is not None and cancel.cancelled:
            break
    scores = scores_frame(store, runs, request.judgments)
    complete = [r for r in runs if r.status == "complete"]
    correlations: dict[str, Correlation] = {}
    agreement_run, agreement_manifest, cached = None, {}, bool(runs) and all(r.from_cache for r in runs)
    if complete and len(complete) == len(jobs):
        task = agreement_task(request_used, complete, scores)
        outcome = run_task(task, store)
        agreement_run, agreement_manifest = outcome.run_id, task.manifest
        cached = cached and outcome.from_cache
        correlations = _read_agreement(store, outcome.run_id, request_used, [r.name for r in complete])
    else:  # cancelled: what there is, computed here, never stored as the request's agreement
        for run in complete:
            correlations[run.name] = correlate(request.judgments, scores[run.name].to_numpy(), request.rule,
                                               request.n_resamples, request.seed, request.statistic,
                                               resample=request.resample_unit, constant=request.constant,
                                               group_average=request.group_average)
    return QualityOutcome(request_used, runs, scores, correlations, agreement_run, agreement_manifest, cached,
                          skipped)


def find_stored(request: QualityRequest, store: RunStore) -> QualityOutcome | None:
    """The complete stored result of this request, or None — nothing is scored and no model loaded (the page's
    instant path). Model metrics' corpus states need no model for the default options (no idf)."""
    if not store.path.exists():
        return None
    runs = []
    for name, label, make, metric in _tasks(request):
        if metric is not None and _needs_model_to_plan(metric):
            return None
        task = make()
        found = store.find_complete(task.manifest)
        if found is None:
            return None
        runs.append(ScoreRun(name, label, found.run_id, True, task.manifest))
    scores = scores_frame(store, runs, request.judgments)
    task = agreement_task(request, runs, scores)
    found = store.find_complete(task.manifest)
    if found is None:
        return None
    return QualityOutcome(request, runs, scores, _read_agreement(store, found.run_id, request, [r.name for r in runs]),
                          found.run_id, task.manifest, True)


def _needs_model_to_plan(metric: Metric) -> bool:
    """True when building the metric's task would run its model (corpus state from the model's tokenizer: idf)."""
    return bool(getattr(metric.options, "idf", False)) or metric.name in ("moverscore", "moverscore-bigram",
                                                                          "datscore-lm")
