"""Mitigation as stored jobs: training an adapter (a run of kind `mitigation-train`, then its adapter file) and
judging a variant against a baseline on both axes (bias on pairs, agreement with people), each side's scores
stored as ordinary metric-bias and metric-quality runs.

A training run's manifest is its request: the metric's signature (backbone source and identity hash, layer,
version), the attribute, the data (sha256 and sizes), the adapter configuration and layout, every hyper-parameter
and the trainer's version. Its rows are the loss curve (loss_debias, loss_kd and their sum per step). When the run
is complete the final checkpoint becomes the adapter file (models/adapters.py), addressed by
`<metric>-<backbone>-<attribute>-<hash of the request>`: the same request names the same adapter, so asking again
is answered from the store.
"""

from __future__ import annotations

import math
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fairness_core.jobs import CancelToken, Progress, Task, run_task
from fairness_core.mitigation.data import BUILDER_VERSION, TrainingData, TrainingDataError, training_data
from fairness_core.mitigation.options import BACKBONE_TASK
from fairness_core.mitigation.request import MitigationError, TrainRequest, Variant
from fairness_core.mitigation.training import (
    GRAD_CLIP,
    KIND,
    TRAINER_VERSION,
    checkpoint_dir,
    checkpoint_path,
    read_checkpoint,
    request_key,
    work,
)
from fairness_core.store import RunStore

#: loss averages reported as "first" and "last" are over this many steps (one step's loss is noisy)
LOSS_WINDOW = 10


def shard_steps(steps: int) -> int:
    """Steps per shard (a checkpoint after each): about twelve shards, between 10 and 200 steps each."""
    return max(1, min(steps, max(10, min(200, math.ceil(steps / 12)))))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "model"


def job_request(request: TrainRequest, data: TrainingData) -> dict[str, Any]:
    """The training run's manifest request (module docstring)."""
    from transformers import AutoConfig

    from fairness_core.models.adapters import (
        AdapterConfig,
        AdapterError,
        backbone_manifest,
        checkpoint_folder,
        parameter_counts,
    )

    metric = request.metric
    spec = metric.model_spec()
    try:
        config = AutoConfig.from_pretrained(checkpoint_folder(spec), trust_remote_code=False)
        adapter_config = AdapterConfig(request.preset.reduction_factor, request.preset.activation)
        backbone = backbone_manifest(spec, config, metric.model_id)
        counts = parameter_counts(config, adapter_config)
    except AdapterError as error:
        raise MitigationError(f"{metric.model_id}: {error}") from None
    except OSError as error:
        raise MitigationError(f"the configuration of {metric.model_id} cannot be read ({error})") from None
    recipe = request.preset
    steps = recipe.steps
    return {
        "metric": metric.signature(), "family": request.family, "attribute": request.attribute,
        "backbone": backbone,
        "adapter": adapter_config.manifest() | {"bottleneck": counts["bottleneck"], "sites": counts["sites"],
                                                "parameters": counts["adapter"]},
        "data": {"sha256": data.content_hash(), "builder_version": BUILDER_VERSION, "cda_triples": len(data.triples),
                 "kd_pairs": len(data.kd_pairs)},
        "train": {"steps": steps, "debias_batch": recipe.debias_batch, "kd_batch": recipe.kd_batch, "lr": recipe.lr,
                  "seed": request.seed, "shard_steps": shard_steps(steps), "optimizer": "Adam",
                  "grad_clip_norm": GRAD_CLIP, "dropout": "off (backbone in eval mode)",
                  "loss": "Eq. 4 + Eq. 5, unweighted sum"},
        "preset": {"key": recipe.key, "source": recipe.source, "device": recipe.device},
        "trainer_version": TRAINER_VERSION,
    }


def adapter_id_for(job: dict[str, Any]) -> str:
    from pathlib import Path

    label = str(job["backbone"].get("label") or job["backbone"].get("source"))
    backbone = _slug(Path(label).name if Path(label).expanduser().exists() else label)
    return f"{job['metric']['name']}-{backbone}-{job['attribute']}-{request_key(job)[:10]}"


def build_training_task(request: TrainRequest, data: TrainingData | None = None) -> Task:
    """The stored job of a training request (shards of steps; see `training.work`)."""
    if data is None:
        try:
            data = training_data(request.attribute)
        except TrainingDataError as error:
            raise MitigationError(str(error)) from None
    job = job_request(request, data)
    steps, size = job["train"]["steps"], job["train"]["shard_steps"]
    shards = [{"start": start, "stop": min(start + size, steps)} for start in range(0, steps, size)]
    return Task(KIND, job, shards, work)


@dataclass
class TrainOutcome:
    adapter_id: str | None
    run_id: str
    status: str
    from_cache: bool
    steps: int
    steps_done: int
    trainable_parameters: int
    total_parameters: int
    seconds: float
    loss_debias_first: float
    loss_debias_last: float
    loss_kd_last: float
    manifest: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"adapter_id": self.adapter_id, "run_id": self.run_id, "steps": self.steps_done,
                "trainable_parameters": self.trainable_parameters, "total_parameters": self.total_parameters,
                "seconds": self.seconds, "loss_debias_first": self.loss_debias_first,
                "loss_debias_last": self.loss_debias_last, "loss_kd_last": self.loss_kd_last,
                "status": self.status, "from_cache": self.from_cache}


def loss_curve(store: RunStore, run_id: str) -> Any:
    """One row per stored step: step, loss_debias, loss_kd, loss, seconds."""
    import pandas as pd

    rows = store.query("SELECT CAST(variant AS INTEGER) AS step, metric, value, "
                       "CAST(json_extract(attrs, '$.seconds') AS DOUBLE) AS seconds FROM results WHERE run_id = ?",
                       [run_id])
    if rows.empty:
        return pd.DataFrame(columns=["step", "loss_debias", "loss_kd", "loss", "seconds"])
    wide = rows.pivot_table(index="step", columns="metric", values="value", aggfunc="first").reset_index()
    seconds = rows.groupby("step")["seconds"].first().reset_index()
    return wide.merge(seconds, on="step").sort_values("step").reset_index(drop=True)


def _backbone_parameters(job: dict[str, Any]) -> int:
    """The backbone's parameter count (from its safetensors headers; no weights are loaded)."""
    from fairness_core.metrics.registry import metric_from_signature
    from fairness_core.mitigation.request import backbone_parameters
    from fairness_core.models.adapters import checkpoint_folder

    return backbone_parameters(checkpoint_folder(metric_from_signature(job["metric"]).model_spec()))


def publish(store: RunStore, run_id: str, job: dict[str, Any]) -> str:
    """Write the adapter file of a complete training run from its final checkpoint (once); returns its id."""
    from fairness_core.models.adapters import AdapterError, read_adapter, save_adapter

    adapter_id = adapter_id_for(job)
    try:
        read_adapter(adapter_id)
        return adapter_id
    except AdapterError:
        pass
    steps = int(job["train"]["steps"])
    state = read_checkpoint(checkpoint_path(job, steps))
    if state is None:
        raise MitigationError(f"training run {run_id} is complete but its final checkpoint and its adapter "
                              f"{adapter_id!r} are gone from the cache; remove the run (`runs delete {run_id}`) "
                              "and train again")
    curve = loss_curve(store, run_id)
    every = max(1, len(curve) // 200)
    manifest = {
        "id": adapter_id, "backbone": job["backbone"], "adapter": job["adapter"],
        "parameters": {"adapter": int(job["adapter"]["parameters"]), "backbone": _backbone_parameters(job)},
        "trained": {"metric": job["metric"], "attribute": job["attribute"], "run_id": run_id,
                    "request_key": request_key(job), "steps": steps, "preset": job["preset"], "data": job["data"],
                    "train": job["train"], "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "loss_curve": [[int(r.step), float(r.loss_debias), float(r.loss_kd)]
                                   for r in curve.iloc[::every].itertuples(index=False)]},
    }
    save_adapter(adapter_id, state["adapters"], manifest)
    shutil.rmtree(checkpoint_dir(job), ignore_errors=True)  # the adapter file holds what is still needed
    return adapter_id


def train(request: TrainRequest, store: RunStore, on_progress: Callable[[Progress], None] | None = None,
          cancel: CancelToken | None = None) -> TrainOutcome:
    """Train (or resume, or read back) the adapter of `request`; publishes the adapter once the run is complete.

    Always on this process (shards depend on the previous one's checkpoint); a cancelled run keeps its stored
    shards and its last checkpoint, and the same request resumes there."""
    metric = request.metric
    try:
        metric.check_available()
    except Exception as error:  # ModelUnavailableError: one sentence naming the model
        raise MitigationError(str(error)) from None
    task = build_training_task(request)
    outcome = run_task(task, store, on_progress=on_progress, cancel=cancel)
    job = task.request
    adapter_id = publish(store, outcome.run_id, job) if outcome.status == "complete" else None
    curve = loss_curve(store, outcome.run_id)
    window = min(LOSS_WINDOW, max(1, len(curve)))
    nan = float("nan")
    adapter_parameters = int(job["adapter"]["parameters"])
    return TrainOutcome(
        adapter_id, outcome.run_id, outcome.status, outcome.from_cache, int(job["train"]["steps"]), len(curve),
        adapter_parameters, adapter_parameters + _backbone_parameters(job),
        float(curve["seconds"].sum()) if len(curve) else 0.0,
        float(curve["loss_debias"].head(window).mean()) if len(curve) else nan,
        float(curve["loss_debias"].tail(window).mean()) if len(curve) else nan,
        float(curve["loss_kd"].tail(window).mean()) if len(curve) else nan, task.manifest)


# -- judging a variant: bias on pairs, agreement with people ------------------------------------------------------
def score_pairs(variant: Variant, dataset: Any, store: RunStore, cancel: CancelToken | None = None,
                on_progress: Callable[[Progress], None] | None = None) -> Any:
    """Per-pair scores of a variant on a pair dataset (a stored metric-bias run): item, attribute, texts, s1, s2."""
    from fairness_core import metric_bias

    metric = variant.build()
    try:
        runs = metric_bias.run_metrics(dataset, [metric], store, cancel=cancel,
                                       on_progress=None if on_progress is None else lambda _n, p: on_progress(p))
    except (metric_bias.ModelUnavailableError, metric_bias.MetricOptionError) as error:
        raise MitigationError(str(error)) from None
    if runs[0].partial or (cancel is not None and cancel.cancelled):
        raise MitigationError(f"scoring {variant.label} on {dataset.name} was cancelled")
    table = metric_bias.pair_table(store, [runs[0].run_id], metrics=[metric.name])
    table = table.rename(columns={"score1": "s1", "score2": "s2"})
    return table[["item", "attribute", "candidate1", "candidate2", "reference", "s1", "s2"]].assign(
        run_id=runs[0].run_id)


def score_quality(variant: Variant, judgments: Any, store: RunStore, cancel: CancelToken | None = None,
                  on_progress: Callable[[Progress], None] | None = None) -> tuple[Any, str]:
    """A variant's scores of every candidate of the judgments (a stored metric-quality run) and its run id."""
    from fairness_core import metric_quality

    metric = variant.build()
    request = metric_quality.build_request(judgments, [metric], n_resamples=0)
    try:
        outcome = metric_quality.run_quality(request, store, on_progress=on_progress, cancel=cancel)
    except (metric_quality.ModelUnavailableError, metric_quality.MetricOptionError) as error:
        raise MitigationError(str(error)) from None
    if not outcome.runs or outcome.runs[0].status != "complete" or (cancel is not None and cancel.cancelled):
        raise MitigationError(f"scoring {variant.label} on {judgments.name} was cancelled")
    return outcome.scores[metric.name].to_numpy(), outcome.runs[0].run_id


@dataclass
class Evaluation:
    """Bias (per attribute, and for the adapter's attribute) and quality, before and after, with paired intervals."""

    before: Variant
    after: Variant
    bias_attribute: str
    bias: Any  # summary.BiasChange of the chosen attribute
    attributes: dict[str, Any]  # attribute -> BiasChange
    quality: Any | None  # metric_quality.Difference (after − before), None when not asked
    pairs: Any  # the per-pair table of both sides (for the drill-down)
    data_name: str
    quality_name: str | None
    run_ids: dict[str, str]
    #: each side's own agreement (metric_quality.Correlation, interval over documents), None without judgments
    quality_sides: tuple[Any, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        bias = self.bias.to_json() | {"attribute": self.bias_attribute}
        out: dict[str, Any] = {"bias": bias, "attributes": {a: c.to_json() for a, c in self.attributes.items()},
                               "before": self.before.label, "after": self.after.label, "data": self.data_name,
                               "runs": self.run_ids}
        if self.quality is not None:
            q = self.quality
            out["quality"] = {"before": q.a, "after": q.b, "difference": q.difference, "ci_low": q.ci_low,
                              "ci_high": q.ci_high, "statistic": q.statistic, "rule": q.rule, "n": q.n,
                              "n_documents": q.n_documents, "data": self.quality_name}
            if self.quality_sides is not None:
                for side, correlation in zip(("before", "after"), self.quality_sides, strict=True):
                    out["quality"][f"{side}_ci"] = [correlation.ci_low, correlation.ci_high]
        return out


def evaluate(before: Variant, after: Variant, dataset: Any, store: RunStore, judgments: Any | None = None,
             attribute: str = "gender", n_resamples: int = 1000, seed: int = 0,
             cancel: CancelToken | None = None, on_step: Callable[[str], None] | None = None,
             on_progress: Callable[[Progress], None] | None = None) -> Evaluation:
    """Both variants on the pairs (paired bias change per attribute) and, with `judgments`, on the judgments
    (paired Spearman difference, documents resampled: `metric_quality.paired_difference`, pooled rule).
    `on_progress` sees one step per (variant, data set) scored, with the fraction of the step in flight."""
    from fairness_core import metric_bias, metric_quality
    from fairness_core.jobs.estimates import weighted_fraction
    from fairness_core.mitigation.request import EvaluationRequest, evaluation_phases
    from fairness_core.mitigation.summary import bias_change

    phases = 4 if judgments is not None else 2
    # each step weighted by what it costs: 800 short pairs and 2,400 summaries are not the same step (the page's
    # time left jumped at each step when they counted alike)
    costs = evaluation_phases(EvaluationRequest(before, after, dataset, judgments, attribute, n_resamples))
    started = time.monotonic()

    def phase(number: int, text: str) -> Callable[[Progress], None]:
        if on_step is not None:
            on_step(text)

        def forward(inner: Progress) -> None:
            if on_progress is not None:
                parts = [(cost, 1.0 if i < number else inner.fraction if i == number else 0.0)
                         for i, cost in enumerate(costs)]
                on_progress(Progress(number, phases, time.monotonic() - started, partial=inner.fraction,
                                     unit="scoring steps", weighted=weighted_fraction(parts)))

        forward(Progress(0, 1, 0.0))
        return forward

    table_before = score_pairs(before, dataset, store, cancel, phase(0, f"scoring the pairs with {before.label}"))
    table_after = score_pairs(after, dataset, store, cancel, phase(1, f"scoring the pairs with {after.label}"))
    keys = ["attribute", "item"]
    pairs = table_before.merge(table_after[[*keys, "s1", "s2", "run_id"]], on=keys, suffixes=("_before", "_after"))
    if len(pairs) != len(table_before) or len(pairs) != len(table_after):
        raise MitigationError("the two variants scored different pairs; nothing was compared")
    attributes = {}
    # pairs in the metric-bias study's order (by item within an attribute), so that each side's interval is the
    # very draw the metric-bias study reports for that bias: one number, one interval
    pairs = pairs.sort_values(["attribute", "item"], kind="stable").reset_index(drop=True)
    for name, group in pairs.groupby("attribute", sort=True):
        # WinoBias pairs share occupations: their intervals are over the occupations, as on the metric-bias page
        attributes[str(name)] = bias_change(group["s1_before"], group["s2_before"], group["s1_after"],
                                            group["s2_after"], n_resamples=n_resamples, seed=seed,
                                            factors=metric_bias.occupation_factors(group["item"].tolist(),
                                                                                   group["candidate1"].tolist()))
    chosen = attribute if attribute in attributes else "all"
    overall = attributes.get(attribute) or bias_change(
        pairs["s1_before"], pairs["s2_before"], pairs["s1_after"], pairs["s2_after"], n_resamples=n_resamples,
        seed=seed, factors=metric_bias.occupation_factors(pairs["item"].tolist(), pairs["candidate1"].tolist()))
    run_ids = {"bias_before": str(table_before["run_id"].iloc[0]), "bias_after": str(table_after["run_id"].iloc[0])}
    quality = sides = None
    if judgments is not None:
        scores_before, run_ids["quality_before"] = score_quality(
            before, judgments, store, cancel, phase(2, f"scoring {judgments.name} with {before.label}"))
        scores_after, run_ids["quality_after"] = score_quality(
            after, judgments, store, cancel, phase(3, f"scoring {judgments.name} with {after.label}"))
        quality = metric_quality.paired_difference(judgments, scores_before, scores_after, rule="pooled",
                                                   statistic="spearman", n_resamples=n_resamples, seed=seed)
        sides = tuple(metric_quality.correlate(judgments, scores, "pooled", n_resamples, seed)
                      for scores in (scores_before, scores_after))
    if on_progress is not None:
        on_progress(Progress(phases, phases, time.monotonic() - started, unit="scoring steps"))
    return Evaluation(before, after, chosen, overall, attributes, quality, pairs, dataset.name,
                      None if judgments is None else judgments.name, run_ids, sides)


def changed(evaluation: Evaluation, limit: int = 20) -> list[dict[str, Any]]:
    from fairness_core.mitigation.summary import changed_pairs

    frame = evaluation.pairs
    return changed_pairs(frame.to_dict("records"), frame["s1_before"], frame["s2_before"], frame["s1_after"],
                         frame["s2_after"], limit=limit)



def run_evaluation(request: Any, store: RunStore, cancel: CancelToken | None = None,
                   on_step: Callable[[str], None] | None = None,
                   on_progress: Callable[[Progress], None] | None = None) -> Evaluation:
    """`evaluate` for an `EvaluationRequest` (request.build_evaluation)."""
    return evaluate(request.before, request.after, request.dataset, store, request.judgments, request.attribute,
                    request.n_resamples, cancel=cancel, on_step=on_step, on_progress=on_progress)


def export_adapter(adapter_id: str) -> bytes:
    from fairness_core.models.adapters import AdapterError
    from fairness_core.models.adapters import export_adapter as export

    try:
        return export(adapter_id)
    except AdapterError as error:
        raise MitigationError(str(error)) from None


def import_adapter(data: bytes, name: str = "upload") -> dict[str, Any]:
    """Store an uploaded adapter file (bytes, never a path); its description."""
    from fairness_core.models.adapters import AdapterError
    from fairness_core.models.adapters import import_adapter as store_adapter

    try:
        return store_adapter(bytes(data), name).describe()
    except AdapterError as error:
        raise MitigationError(str(error)) from None


def list_adapters(model: str | None = None, metric: str | None = None) -> list[dict[str, Any]]:
    """Adapters in the cache directory: those of backbone `model` only, and those a `metric` can wear only (its
    backbone's task: an encoder's adapter for BERTScore, a causal LM's for BARTScore), when given."""
    from fairness_core.models.adapters import list_adapters as listed

    out = [info.describe() for info in listed()]
    if model:
        out = [a for a in out if model in (a["backbone"].get("label"), a["backbone"].get("source"))]
    if metric:
        out = [a for a in out if a["backbone"].get("task") == BACKBONE_TASK[metric]]
    return out


def find_adapter(request: TrainRequest) -> str | None:
    """The id of an adapter already trained for exactly this request (metric signature, attribute, recipe, seed),
    read from the adapters' manifests: no data is built and no model loaded (the page's instant path)."""
    from fairness_core.models.adapters import list_adapters as listed

    recipe = request.preset
    wanted_metric = request.metric.signature()
    for info in listed():
        trained = info.manifest.get("trained", {})
        train_settings = trained.get("train", {})
        settings = info.manifest.get("adapter", {})
        if (trained.get("metric") == wanted_metric and trained.get("attribute") == request.attribute
                and train_settings.get("steps") == recipe.steps and train_settings.get("seed") == request.seed
                and train_settings.get("lr") == recipe.lr and train_settings.get("debias_batch") == recipe.debias_batch
                and train_settings.get("kd_batch") == recipe.kd_batch
                and settings.get("reduction_factor") == recipe.reduction_factor
                and settings.get("activation") == recipe.activation):
            return info.adapter_id
    return None
