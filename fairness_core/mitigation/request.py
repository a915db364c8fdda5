"""Build and validate mitigation requests from plain values (the CLI's flags and the page's widgets call these).

Every problem is a `MitigationError` with one sentence, raised before any run record exists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from fairness_core.mitigation.options import (
    ATTRIBUTES,
    CPU_SECONDS_PER_STEP_PER_M,
    GPU_SPEEDUP,
    MAX_SECONDS,
    PARAMS_M,
    PRESET_KEYS,
    TRAINABLE,
    Preset,
    preset,
    presets_for,
)

MAX_STEPS = 10_000_000
#: a step costs at least this much whatever the backbone (tokenising, Python, the optimiser)
MIN_SECONDS_PER_STEP = 0.1


class MitigationError(ValueError):
    """A bad mitigation request (unknown adapter, wrong backbone, too long, nothing to train on); one sentence."""


@dataclass(frozen=True)
class TrainRequest:
    """What to train: the metric (with its backbone and options), the attribute, the recipe."""

    metric: Any  # a registered Metric (ModelMetric), no adapter
    attribute: str
    preset: Preset
    seed: int = 0

    @property
    def family(self) -> str:
        return TRAINABLE[self.metric.name]


def parse_steps(value: Any) -> int | None:
    if value is None or value == "":
        return None
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number != int(number) or not 1 <= number <= MAX_STEPS:
        raise MitigationError(f"--steps must be a whole number between 1 and {MAX_STEPS:,} (got {text!r})")
    return int(number)


def build_train_request(metric: str = "bertscore", model: str | None = None, attribute: str = "gender",
                        preset_key: str = "cpu", steps: Any = None, seed: Any = 0, lr: Any = None,
                        batch: Any = None, reduction_factor: Any = None, activation: str | None = None,
                        layer: int | None = None) -> TrainRequest:
    """A training request from plain values; the preset gives the defaults, the other arguments override them."""
    from fairness_core.metrics import MetricOptionError, metric_from_request

    if metric not in TRAINABLE:
        raise MitigationError(f"debiasing adapters are trained here for {', '.join(TRAINABLE)} (one metric per "
                              f"paradigm, as in the paper), not {metric!r}")
    if attribute not in ATTRIBUTES:
        raise MitigationError(f"adapters can be trained for {', '.join(ATTRIBUTES)} only (got {attribute!r}): the "
                              "counterfactual swap lists shipped here are about gender, as is the paper's mitigation")
    chosen = preset(preset_key, metric)
    if chosen is None:
        keys = [p.key for p in presets_for(metric)]
        if preset_key in PRESET_KEYS:
            raise MitigationError(f"the preset {preset_key!r} is for another metric; for {metric} choose "
                                  f"{', '.join(keys)}")
        raise MitigationError(f"unknown preset {preset_key!r}; for {metric} choose {', '.join(keys)}")
    changes: dict[str, Any] = {}
    if model:
        changes["model"] = model
    parsed_steps = parse_steps(steps)
    if parsed_steps is not None:
        changes["steps"] = parsed_steps
    if lr is not None:
        changes["lr"] = _positive(lr, "--lr", float)
    if batch is not None:
        changes["batch"] = int(_positive(batch, "--batch", int))
        if changes["batch"] < 2:
            raise MitigationError("--batch must be at least 2 (one counterfactual triple and one distillation pair)")
    if reduction_factor is not None:
        changes["reduction_factor"] = int(_positive(reduction_factor, "--reduction-factor", int))
    if activation is not None:
        changes["activation"] = activation
    recipe = replace(chosen, **changes)
    from fairness_core.models.adapters import AdapterConfig

    problems = AdapterConfig(recipe.reduction_factor, recipe.activation).problems()
    if problems:
        raise MitigationError(problems[0])
    options: dict[str, Any] = {"model": recipe.model}
    if layer is not None:
        options["layer"] = layer
    try:
        built = metric_from_request(metric, **options)
    except MetricOptionError as error:
        raise MitigationError(str(error)) from error
    try:
        seed_value = int(str(seed).strip())
    except ValueError:
        raise MitigationError(f"--seed must be a whole number (got {seed!r})") from None
    return TrainRequest(built, attribute, recipe, seed_value)


def _positive(value: Any, name: str, kind: type) -> float:
    try:
        number = kind(str(value).strip()) if kind is int else float(value)
    except (TypeError, ValueError):
        raise MitigationError(f"{name} must be a positive number (got {value!r})") from None
    if not (number > 0 and math.isfinite(number)):
        raise MitigationError(f"{name} must be a positive number (got {value!r})")
    return number


@dataclass(frozen=True)
class TrainEstimate:
    steps: int
    seconds_per_step: float
    device: str

    @property
    def seconds(self) -> float:
        return self.steps * self.seconds_per_step

    def describe(self) -> str:
        from fairness_core.jobs import format_seconds

        return (f"about {format_seconds(self.seconds)} on this machine's {self.device.upper()} ({self.steps:,} steps "
                f"at about {self.seconds_per_step:.2g} s each)")


def estimate_training(request: TrainRequest, cuda: bool | None = None) -> TrainEstimate:
    """Training time from the backbone's size, the batch and the measured per-step rate (nothing is loaded)."""
    if cuda is None:
        from fairness_core.device import describe_device

        cuda = describe_device().get("kind") == "cuda"
    recipe = request.preset
    size = PARAMS_M.get(request.metric.model_id)
    if size is None:
        counted = backbone_parameters(request.metric.model_spec().resolved().source)
        size = counted / 1e6 if counted else 110
    seconds = max(MIN_SECONDS_PER_STEP, CPU_SECONDS_PER_STEP_PER_M[request.family] * size * recipe.batch / 32)
    if cuda:
        seconds /= GPU_SPEEDUP
    return TrainEstimate(recipe.steps, seconds, "gpu" if cuda else "cpu")


#: the page's job kinds (estimates are learnt per kind)
TRAIN_KIND, EVALUATE_KIND = "mitigation-train", "mitigation-evaluate"
#: training's set-up on the quiet reference machine: the backbone loaded, the counterfactual and distillation data
#: built, the adapter stored at the end
TRAIN_FIXED_S = 4.0
#: scoring one candidate with a MiniLM-sized backbone on the quiet reference machine: a WinoBias / CrowS-Pairs
#: sentence (~12 words), a REALSumm summary (~70 words, against a ~56-word reference); measured 2026-11-28 at load
#: 0.5 (`python -m bench.job_estimates`: 792 pairs and 480 summaries, both sides, 35.7 s with the bootstraps);
#: re-measured quiet 2026-11-29 (load 1.1-1.6): 21.7 and 23.9 s, so scaled by 0.63 (the estimate was 1.5-1.7x high)
PAIR_CANDIDATE_S, SUMMARY_CANDIDATE_S = 0.0047, 0.013
#: the paired bootstraps after scoring (bias per attribute, agreement over documents), per resample
EVALUATE_SECONDS_PER_RESAMPLE = 0.002


def training_work(request: TrainRequest, cuda: bool | None = None) -> Any:
    """What training costs (`fairness_core.jobs.estimates.Work`): its steps at the estimated rate, and the set-up."""
    from fairness_core.jobs.estimates import BATCHED, TORCH, Work

    estimate = estimate_training(request, cuda)
    return Work(TRAIN_KIND, estimate.steps, estimate.seconds_per_step, "steps", TRAIN_FIXED_S,
                TORCH if estimate.device == "gpu" else BATCHED)


def evaluation_phases(request: EvaluationRequest) -> list[float]:
    """Seconds each scoring phase of an evaluation costs on the quiet reference machine, in the order `evaluate`
    runs them: the pairs before, the pairs after, then (with judgments) the summaries before and after. A bigger
    backbone costs about its size over MiniLM's."""
    size = max(PARAMS_M.get(str(request.before.model), 22), PARAMS_M.get(str(request.after.model), 22)) / 22
    pairs = 2 * len(request.dataset) * PAIR_CANDIDATE_S * size
    phases = [pairs, pairs]
    if request.judgments is not None:
        summaries = len(request.judgments) * SUMMARY_CANDIDATE_S * size
        phases += [summaries, summaries]
    return phases


def evaluation_work(request: EvaluationRequest) -> Any:
    """What a before/after evaluation costs (`fairness_core.jobs.estimates.Work`): both variants' candidates on the
    pairs (and the summaries), then the paired bootstraps."""
    from fairness_core.jobs.estimates import BATCHED, Work

    units = 2 * (2 * len(request.dataset) + (len(request.judgments) if request.judgments is not None else 0))
    phases = evaluation_phases(request)
    return Work(EVALUATE_KIND, units, sum(phases) / units, "candidates scored",
                request.n_resamples * EVALUATE_SECONDS_PER_RESAMPLE, BATCHED)


def check_training_limit(work: TrainEstimate, max_hours: Any = None) -> None:
    """Refuse, before any run exists, a training estimated above the limit (4 h, or --max-hours)."""
    from fairness_core.jobs import format_seconds

    limit = MAX_SECONDS if max_hours is None else _positive(max_hours, "--max-hours", float) * 3600
    if work.seconds > limit:
        raise MitigationError(f"this training would take {work.describe()}, above the limit of "
                              f"{format_seconds(limit)}; choose fewer --steps, the cpu preset, a machine with a GPU, "
                              "or raise the limit (--max-hours)")


@dataclass(frozen=True)
class Variant:
    """One side of a comparison: a metric with its backbone, and an adapter or none."""

    metric: str
    model: str
    adapter: str | None = None
    layer: int | None = None

    def build(self) -> Any:
        from fairness_core.metrics import MetricOptionError, metric_from_request

        options: dict[str, Any] = {"model": self.model}
        if self.adapter:
            options["adapter"] = self.adapter
        if self.layer is not None:
            options["layer"] = self.layer
        try:
            built = metric_from_request(self.metric, **options)
            built.validate()
        except MetricOptionError as error:
            raise MitigationError(str(error)) from None
        return built

    @property
    def label(self) -> str:
        return f"{self.model} + adapter {self.adapter}" if self.adapter else self.model


def adapter_variant(adapter_id: str, metric: str | None = None, model: str | None = None) -> Variant:
    """The variant an adapter id names (metric and backbone from its manifest unless given)."""
    from fairness_core.models.adapters import AdapterError, read_adapter

    try:
        info = read_adapter(adapter_id)
    except AdapterError as error:
        raise MitigationError(str(error)) from None
    trained = info.manifest.get("trained", {})
    name = metric or trained.get("metric", {}).get("name") or "bertscore"
    backbone = model or info.backbone.get("label") or ""
    return Variant(name, backbone, adapter_id)


@dataclass(frozen=True)
class EvaluationRequest:
    """Two variants (before, after), the pairs that measure bias and the judgments that measure quality."""

    before: Any  # task.Variant
    after: Any
    dataset: Any  # data.pairs.PairDataset
    judgments: Any | None  # metric_quality.Judgments, None = no quality axis
    attribute: str = "gender"
    n_resamples: int = 1000


def realsumm_split(judgments: Any, split: str) -> Any:
    """REALSumm's documents of one split (`options.SPLITS`): the first `SELECTION_DOCUMENTS` in the shipped order
    (selection), the rest (report), or all; the rows keep their order, so the same split is the same version."""
    from fairness_core.metric_quality import Judgments
    from fairness_core.mitigation.options import SELECTION_DOCUMENTS

    if split == "all":
        return judgments
    items = judgments.items
    chosen = set(items[:SELECTION_DOCUMENTS] if split == "selection" else items[SELECTION_DOCUMENTS:])
    first, last = (1, SELECTION_DOCUMENTS) if split == "selection" else (SELECTION_DOCUMENTS + 1, len(items))
    frame = judgments.frame[judgments.frame["item_id"].isin(chosen)].reset_index(drop=True)
    return Judgments(f"{judgments.name} ({split}: documents {first}-{last})", frame, judgments.licence,
                     judgments.human_label, judgments.origin, judgments.notes)


def build_evaluation(metric: str | None = None, model: str | None = None, adapter: str | None = None,
                     compare_model: str | None = None, fmt: str = "winobias", data: Any = (),
                     quality: str | bytes | None = "realsumm", attribute: str = "gender", resamples: Any = 1000,
                     quality_name: str | None = None, uploads: Any = None,
                     other_attributes: bool = False, split: str = "report") -> EvaluationRequest:
    """Before = the metric with `model`; after = the same with `adapter`, or `compare_model` (with `adapter` if
    given). `other_attributes` adds CrowS-Pairs' race, religion, physical appearance, age and socioeconomic pairs
    (the paper mitigates gender only: do the others move too?). `split` (`options.SPLITS`) picks the WinoBias
    subset when `data` is not given and REALSumm's documents when `quality` is "realsumm": by default the held-out
    data nothing was chosen on. Every problem is one sentence, before anything is scored."""
    from fairness_core import metric_bias, metric_quality
    from fairness_core.metrics import METRICS
    from fairness_core.mitigation.options import SPLIT_BIAS_DATA, SPLITS

    if split not in SPLITS:
        raise MitigationError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    if fmt == "winobias" and not data:
        data = SPLIT_BIAS_DATA[split]
    if not adapter and not compare_model:
        raise MitigationError("give an adapter (--adapter ID: before vs after it) or another backbone "
                              "(--compare-model: a backbone swap) to compare with")
    chosen = adapter_variant(adapter, metric, model) if adapter else None
    name = metric or (chosen.metric if chosen else "bertscore")
    if name not in METRICS:
        raise MitigationError(f"unknown metric {name!r}; choose a model-based metric such as bertscore")
    if not hasattr(METRICS[name].Options, "adapter") and adapter:
        raise MitigationError(f"{name} takes no adapter (its score involves no neural backbone)")
    base = model or (chosen.model if chosen else METRICS[name].default_model)
    before = Variant(name, base)
    after = Variant(name, compare_model or base, adapter or None)
    before.build()
    after.build()  # an unknown adapter, or one of another backbone: one sentence here
    try:
        n_resamples = metric_bias.parse_resamples(resamples)
        dataset = metric_bias.load_dataset(fmt, list(data or ()), uploads=uploads)
        if other_attributes:
            from fairness_core.data.pairs import merge

            dataset = merge([dataset, metric_bias.load_dataset("crows-pairs", [])],
                            name=f"{dataset.name} + crows-pairs")
    except metric_bias.RequestError as error:
        raise MitigationError(str(error)) from None
    judgments = None
    if quality is not None and quality != "none":
        try:
            judgments = metric_quality.load_judgments(quality, quality_name)
        except metric_quality.RequestError as error:
            raise MitigationError(str(error)) from None
        if isinstance(quality, str) and quality.strip().lower() == metric_quality.REALSUMM:
            judgments = realsumm_split(judgments, split)
    return EvaluationRequest(before, after, dataset, judgments, attribute, n_resamples)


def backbone_parameters(source: str) -> int:
    """Parameters of a local checkpoint, summed from its safetensors headers (no weights read; 0 when unknown)."""
    import json
    from pathlib import Path

    folder = Path(source).expanduser()
    total = 0
    for path in sorted(folder.glob("*.safetensors")) if folder.is_dir() else []:
        try:
            with path.open("rb") as handle:
                header = json.loads(handle.read(int.from_bytes(handle.read(8), "little")))
        except (OSError, ValueError):
            return 0
        total += sum(math.prod(v["shape"]) for k, v in header.items() if k != "__metadata__")
    return total
