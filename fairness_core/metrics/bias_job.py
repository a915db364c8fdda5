"""Metric-bias as a stored job: score paired examples with one metric, then read gaps back.

One task per (dataset version, metric request); a shard is a batch of pairs for that metric. The
shard carries the texts and the metric request, so the work unit is pure. Rows are long format:
item = pair id, grp = attribute, variant = "1"/"2" (the candidate), metric = the metric name for
its primary output (BERTScore F, …) and "<name>.<output>" for the others (bertscore.P, …),
value = the raw score, text = the candidate, attrs = {reference, stereotypical}.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from fairness_core.bias.paired import paired_bias
from fairness_core.data.pairs import PairDataset
from fairness_core.jobs import CancelToken, Executor, Progress, Task, run_task
from fairness_core.metrics.base import Metric
from fairness_core.metrics.registry import MetricRequest
from fairness_core.store import RunStore

KIND = "metric-bias"
#: n-gram metrics are cheap, so bigger batches; model metrics report progress more often
SHARD_PAIRS = {"n-gram": 256, "matching": 64, "generation": 32, "regression": 64}


@dataclass(frozen=True)
class MetricRun:
    request: MetricRequest
    run_id: str
    from_cache: bool
    manifest: dict[str, Any]


def dataset_manifest(dataset: PairDataset) -> dict[str, Any]:
    return {"name": dataset.name, "hash": dataset.content_hash(), "n_pairs": len(dataset),
            "attributes": dataset.attributes}


def build_task(dataset: PairDataset, request: MetricRequest) -> Task:
    shard_pairs = SHARD_PAIRS[request.info.family]
    records = dataset.to_records()
    shards = [{"metric": asdict(request), "pairs": records[start : start + shard_pairs]}
              for start in range(0, len(records), shard_pairs)]
    job_request = {"dataset": dataset_manifest(dataset), "metric": request.describe(), "shard_pairs": shard_pairs}
    return Task(KIND, job_request, shards, work)


@functools.lru_cache(maxsize=32)
def _metric(request: MetricRequest) -> Metric:
    return request.build()


def work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Score one batch of pairs with one metric (the job's pure work unit)."""
    metric = _metric(MetricRequest(**shard["metric"]))
    pairs = shard["pairs"]
    candidates = [p["candidate1"] for p in pairs] + [p["candidate2"] for p in pairs]
    references = [p["reference"] for p in pairs] + [p["reference2"] or p["reference"] for p in pairs]
    scores = metric.score(candidates, references)
    rows = []
    n = len(pairs)
    for output, values in scores.items():
        metric_name = metric.name if output == metric.primary else f"{metric.name}.{output}"
        for i, pair in enumerate(pairs):
            for variant in (1, 2):
                k = i + (variant - 1) * n
                rows.append({"item": pair["item"], "grp": pair["attribute"], "variant": str(variant),
                             "metric": metric_name, "value": float(values[k]), "text": candidates[k],
                             "attrs": {"reference": references[k],
                                       "stereotypical": pair["stereotypical"] == variant}})
    return rows


def run_metrics(
    dataset: PairDataset,
    requests: Sequence[MetricRequest],
    store: RunStore,
    on_progress: Callable[[MetricRequest, Progress], None] | None = None,
    cancel: CancelToken | None = None,
    executor: Executor | None = None,
) -> list[MetricRun]:
    """Compute (or fetch from the store) each metric over the dataset. Raises ModelUnavailableError
    for a metric whose model cannot be had here — unless its run is already stored."""
    runs = []
    for request in requests:
        task = build_task(dataset, request)
        if store.find_complete(task.manifest) is None:
            request.check_available()
        callback = None if on_progress is None else functools.partial(on_progress, request)
        outcome = run_task(task, store, on_progress=callback, cancel=cancel, executor=executor)
        runs.append(MetricRun(request, outcome.run_id, outcome.from_cache, task.manifest))
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


_PAIR_SQL = """
WITH scored AS (
    SELECT r.run_id, r.item, r.grp, r.metric, r.variant, r.value, r.text, r.attrs,
           min(r.value) OVER w AS lo, max(r.value) OVER w AS hi
    FROM results r
    WHERE r.run_id IN ({ids})
    WINDOW w AS (PARTITION BY r.run_id, r.grp, r.metric)
)
SELECT a.run_id, a.item, a.grp AS attribute, a.metric,
       a.text AS candidate1, b.text AS candidate2,
       json_extract_string(a.attrs, '$.reference') AS reference,
       json_extract_string(b.attrs, '$.reference') AS reference2,
       a.value AS score1, b.value AS score2,
       CASE WHEN a.hi > a.lo THEN 100 * (a.value - b.value) / (a.hi - a.lo) ELSE 0 END AS gap,
       CASE WHEN json_extract(a.attrs, '$.stereotypical')::BOOLEAN THEN 1
            WHEN json_extract(b.attrs, '$.stereotypical')::BOOLEAN THEN 2 END AS stereotypical
FROM scored a JOIN scored b
  ON a.run_id = b.run_id AND a.item = b.item AND a.metric = b.metric AND a.variant = '1' AND b.variant = '2'
WHERE 1 = 1 {filters}
ORDER BY abs(gap) DESC, a.item
"""


def pair_table(store: RunStore, run_ids: Sequence[str], attributes: Sequence[str] | None = None,
               metrics: Sequence[str] | None = None, min_gap: float = 0.0, limit: int | None = None) -> pd.DataFrame:
    """Pairs with both scores and the min-max-rescaled gap (0-100, per attribute and metric), largest first."""
    if not run_ids:
        return pd.DataFrame()
    params: list[Any] = list(run_ids)
    filters = ""
    if attributes:
        filters += f" AND a.grp IN ({', '.join('?' * len(attributes))})"
        params += list(attributes)
    if metrics:
        filters += f" AND a.metric IN ({', '.join('?' * len(metrics))})"
        params += list(metrics)
    if min_gap > 0:
        filters += " AND abs(CASE WHEN a.hi > a.lo THEN 100 * (a.value - b.value) / (a.hi - a.lo) ELSE 0 END) >= ?"
        params.append(min_gap)
    sql = _PAIR_SQL.format(ids=", ".join("?" * len(run_ids)), filters=filters)
    if limit:
        sql += f" LIMIT {int(limit)}"
    return store.query(sql, params)


def bias_table(pairs: pd.DataFrame, normalisation: str = "minmax", n_resamples: int = 1000,
               seed: int = 0) -> pd.DataFrame:
    """One row per (attribute, metric): bias with its 95% CI and the stereotypical difference."""
    rows = []
    for (attribute, metric), group in pairs.groupby(["attribute", "metric"], sort=True):
        group = group.sort_values("item")
        result = paired_bias(group["score1"].to_numpy(), group["score2"].to_numpy(),
                             group["stereotypical"].tolist(), normalisation=normalisation,
                             n_resamples=n_resamples, seed=seed)
        rows.append({"attribute": attribute, "metric": metric} | result.as_dict())
    columns = ["attribute", "metric", "bias", "ci_low", "ci_high", "n_pairs", "stereo_diff", "stereo_ci_low",
               "stereo_ci_high"]
    return pd.DataFrame(rows).reindex(columns=columns)


def summary_json(table: pd.DataFrame, metrics: Sequence[str] | None = None) -> dict[str, dict[str, dict]]:
    """The CLI contract: {attribute: {metric: {bias, ci_low, ci_high, n_pairs}}}."""
    out: dict[str, dict[str, dict]] = {}
    for row in table.itertuples(index=False):
        if metrics is not None and row.metric not in metrics:
            continue
        out.setdefault(row.attribute, {})[row.metric] = {
            "bias": round(float(row.bias), 6), "ci_low": round(float(row.ci_low), 6),
            "ci_high": round(float(row.ci_high), 6), "n_pairs": int(row.n_pairs)}
    return out
