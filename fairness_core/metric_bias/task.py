"""Metric-bias as stored jobs: score paired examples with one metric (or read one stored score
column), one run per (dataset version, metric signature, corpus state).

Corpus statistics (BERTScore / MoverScore idf) are computed once per attribute by `Metric.prepare`
over that attribute's 2N candidates and references, before the task is built; the state travels
with the shards and its hash goes into the manifest, so a pair's score never depends on its shard.

Rows are long format: item = pair id, grp = attribute, variant = "1"/"2" (the candidate), metric =
the metric name for its primary output and "<name>.<output>" for the others (bertscore.P, …), value =
the raw score (NaN stays NaN), text = the candidate, attrs = {reference, stereotypical}.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fairness_core.data.pairs import PairDataset
from fairness_core.jobs import CancelToken, Executor, Progress, Task, run_task
from fairness_core.metrics import Metric, metric_from_request, state_hash
from fairness_core.store import RunStore

KIND = "metric-bias"
#: n-gram metrics are cheap, so bigger batches; model metrics report progress more often
SHARD_PAIRS = {"n-gram": 256, "matching": 64, "generation": 32, "regression": 64, "translation": 32,
               "stored": 1024}


@dataclass(frozen=True)
class MetricRun:
    name: str  # metric name, or the stored column's metric name
    label: str
    run_id: str
    from_cache: bool
    manifest: dict[str, Any]
    #: "complete", or "cancelled" when the user stopped it (then only `shards_done` of `n_shards` are stored)
    status: str = "complete"
    shards_done: int = 0
    n_shards: int = 0

    @property
    def partial(self) -> bool:
        return self.status != "complete"


def stored_metric_name(column: str) -> str:
    """A stored column is a metric named `<header> (stored)`, so the authors' `BLEU` never sits beside our
    recomputed `bleu` told apart by case only."""
    return f"{column} (stored)"


def dataset_manifest(dataset: PairDataset) -> dict[str, Any]:
    return {"name": dataset.name, "hash": dataset.content_hash(), "n_pairs": len(dataset),
            "attributes": dataset.attributes}


def corpus(records: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The 2N (candidate, reference) rows of some pairs: all first candidates, then all second ones."""
    candidates = [p["candidate1"] for p in records] + [p["candidate2"] for p in records]
    references = [p["reference"] for p in records] + [p["reference2"] or p["reference"] for p in records]
    return candidates, references


def prepare_states(metric: Metric, dataset: PairDataset) -> dict[str, Any]:
    """`metric.prepare` once per attribute over its whole corpus ({attribute: state or None})."""
    records = dataset.to_records()
    states = {}
    for attribute in dataset.attributes:
        candidates, references = corpus([r for r in records if r["attribute"] == attribute])
        states[attribute] = metric.prepare(candidates, references)
    return states


def build_task(dataset: PairDataset, metric: Metric, states: dict[str, Any] | None = None,
               shard_pairs: int | None = None) -> Task:
    """The stored job of one metric over one dataset version (`states` from `prepare_states`)."""
    states = prepare_states(metric, dataset) if states is None else states
    shard_pairs = shard_pairs or SHARD_PAIRS[metric.family]
    records = dataset.to_records()
    signature = metric.signature()
    shards = []
    for attribute in dataset.attributes:
        mine = [r for r in records if r["attribute"] == attribute]
        for start in range(0, len(mine), shard_pairs):
            shards.append({"metric": {"name": signature["name"], "options": signature["options"]},
                           "state": states.get(attribute), "pairs": mine[start : start + shard_pairs]})
    hashes = {a: state_hash(s) for a, s in states.items() if s is not None}
    job_request = {"dataset": dataset_manifest(dataset), "metric": signature, "shard_pairs": shard_pairs}
    if hashes:
        job_request["corpus_state_sha256"] = hashes
    return Task(KIND, job_request, shards, work)


@functools.lru_cache(maxsize=32)
def _metric(name: str, options_json: str) -> Metric:
    return metric_from_request(name, **json.loads(options_json))


def _rows(pairs: Sequence[dict[str, Any]], outputs: dict[str, Any], candidates: list[str],
          references: list[str]) -> list[dict[str, Any]]:
    rows = []
    n = len(pairs)
    for metric_name, values in outputs.items():
        for i, pair in enumerate(pairs):
            for variant in (1, 2):
                k = i + (variant - 1) * n
                rows.append({"item": pair["item"], "grp": pair["attribute"], "variant": str(variant),
                             "metric": metric_name, "value": float(values[k]), "text": candidates[k],
                             "attrs": {"reference": references[k],
                                       "stereotypical": pair["stereotypical"] == variant}})
    return rows


def work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Score one batch of pairs of one attribute with one metric (the job's pure work unit)."""
    spec = shard["metric"]
    metric = _metric(spec["name"], json.dumps(spec["options"], sort_keys=True))
    pairs = shard["pairs"]
    candidates, references = corpus(pairs)
    scores = metric.score(candidates, references, state=shard.get("state"))
    return _rows(pairs, {metric.output_name(o): v for o, v in scores.items()}, candidates, references)


def build_stored_task(dataset: PairDataset, column: str) -> Task:
    """A stored score column as a run: its rows are read from the data, not computed."""
    records = dataset.to_records()
    shard_pairs = SHARD_PAIRS["stored"]
    name = stored_metric_name(column)
    shards = [{"column": column, "metric": name, "pairs": records[start : start + shard_pairs]}
              for start in range(0, len(records), shard_pairs)]
    job_request = {"dataset": dataset_manifest(dataset),
                   "metric": {"name": name, "version": "1", "options": {"column": column},
                              "source": "scores stored in the data"}, "shard_pairs": shard_pairs}
    return Task(KIND, job_request, shards, stored_work)


def stored_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    pairs = shard["pairs"]
    candidates, references = corpus(pairs)
    first, second = [], []
    for pair in pairs:
        found = {n: (a, b) for n, a, b in pair.get("stored", [])}
        a, b = found.get(shard["column"], (float("nan"), float("nan")))
        first.append(a)
        second.append(b)
    return _rows(pairs, {shard["metric"]: first + second}, candidates, references)


def run_metrics(
    dataset: PairDataset,
    metrics: Sequence[Metric],
    store: RunStore,
    on_progress: Callable[[str, Progress], None] | None = None,
    cancel: CancelToken | None = None,
    stored: Sequence[str] = (),
    executor: Executor | None = None,
) -> list[MetricRun]:
    """Compute (or fetch from the store) each metric and stored column over the dataset. Raises
    ModelUnavailableError for a metric whose model cannot be had here — unless its run is stored."""
    runs = []
    jobs: list[tuple[str, str, Callable[[], Task], Metric | None]] = []
    for metric in metrics:
        jobs.append((metric.name, metric.label, functools.partial(build_task, dataset, metric), metric))
    for column in stored:
        jobs.append((stored_metric_name(column), stored_metric_name(column),
                     functools.partial(build_stored_task, dataset, column), None))
    for metric in metrics:  # every metric checked before any run record exists (nothing partial)
        metric.check_available()  # prepare() may need the model's tokenizer
        metric.validate()
    for name, label, make, _metric in jobs:
        task = make()
        callback = None if on_progress is None else functools.partial(on_progress, name)
        outcome = run_task(task, store, on_progress=callback, cancel=cancel, executor=executor)
        runs.append(MetricRun(name, label, outcome.run_id, outcome.from_cache, task.manifest, outcome.status,
                              outcome.run.shards_done, outcome.run.n_shards))
        if cancel is not None and cancel.cancelled:
            break
    return runs


def model_runs(store: RunStore, dataset_hash: str) -> list[tuple[str, str, str, str]]:
    """(run_id, metric, model source, model identity) of every complete model-based run on this dataset."""
    if not store.path.exists():
        return []
    found = store.query(
        "SELECT run_id, json_extract_string(manifest, '$.request.metric.name') AS metric, "
        "json_extract_string(manifest, '$.request.metric.model.source') AS source, "
        "json_extract_string(manifest, '$.request.metric.model.identity') AS identity FROM runs "
        "WHERE kind = ? AND status = 'complete' AND json_extract_string(manifest, '$.request.dataset.hash') = ? "
        "AND source IS NOT NULL ORDER BY created_at", [KIND, dataset_hash])
    return list(found.itertuples(index=False, name=None))


@dataclass(frozen=True)
class StepProgress(Progress):
    """Progress of one metric's run, named with its place among the request's metrics."""

    step: str = ""

    def describe(self) -> str:
        return f"{self.step}: {super().describe()}"


def run_metric_steps(dataset: PairDataset, metrics: Sequence[Metric], stored: Sequence[str], store: RunStore,
                     on_progress: Callable[[Progress], None], cancel: CancelToken,
                     executor: Executor | None = None) -> tuple[list[MetricRun], list[str]]:
    """The page's job: each metric (then the stored columns) as its own stored run, one after the other, with
    `StepProgress` naming the step. A metric that cannot run here is skipped with one sentence, not fatal:
    (runs, skip notes)."""
    from fairness_core.metrics import MetricOptionError
    from fairness_core.models.interfaces import ModelUnavailableError

    runs: list[MetricRun] = []
    skipped: list[str] = []
    steps = [(m.name, [m], []) for m in metrics] + [(stored_metric_name(c), [], [c]) for c in stored]
    # Progress counts the work (pairs scored, summed over the metrics), across the whole request: a metric's
    # batches alone read "2/2 (100%)" seconds into a long run of six metrics.
    n_pairs = len(dataset)
    total = n_pairs * len(steps)
    started = time.monotonic()
    not_computed = 0  # pairs × metrics answered from the store or skipped, not computed in this process
    for number, (name, chosen, columns) in enumerate(steps, start=1):
        before = (number - 1) * n_pairs

        def forward(_name: str, progress: Progress, name: str = name, number: int = number,
                    before: int = before, not_computed: int = not_computed) -> None:
            per_batch = n_pairs / progress.total if progress.total else 0.0
            # whole batches plus the finished share of the batch in flight, rounded down to whole pairs
            done = before + min(n_pairs, int((progress.done + progress.partial) * per_batch))
            on_progress(StepProgress(done, total, time.monotonic() - started,
                                     not_computed + int(progress.skipped * per_batch),
                                     unit="pairs × metrics scored", step=f"{name} ({number} of {len(steps)})"))

        try:
            new_runs = run_metrics(dataset, chosen, store, on_progress=forward, stored=columns, executor=executor,
                                   cancel=cancel)
            runs += new_runs
            if all(r.from_cache for r in new_runs):
                not_computed += n_pairs
        except (ModelUnavailableError, MetricOptionError) as error:
            skipped.append(f"Skipped {chosen[0].label if chosen else name}: {error}")
            not_computed += n_pairs
        if cancel.cancelled:
            break
    return runs, skipped
