"""Build and validate a metric-quality request from plain values — the one place the CLI and the page turn
user choices (judgments source, metric names, model, rule) into data and metric objects.

Every problem is a `RequestError` with one sentence naming the file, row, metric or option; nothing is
computed or stored before the whole request has been checked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from fairness_core.data.judgments import (
    REALSUMM,
    JudgmentDataError,
    Judgments,
    load_realsumm,
    read_realsumm_dir,
    read_table,
)
from fairness_core.metric_quality.agreement import CONSTANT_POLICIES, DEFAULT_UNIT, RULES, STATISTICS, UNITS
from fairness_core.metrics import METRICS, Metric, MetricOptionError, metric_from_request, metric_names

#: the page's and the CLI's default metrics: the n-gram ones and BERTScore (MiniLM) answer in under a minute
DEFAULT_METRICS = ("bleu", "rouge1", "chrf", "bertscore")
#: every metric that runs offline here (the measured set of docs/metric-quality.md)
OFFLINE_METRICS = ("bleu", "rouge1", "meteor", "chrf", "bertscore", "moverscore", "bartscore-lm")
MAX_RESAMPLES = 100_000
#: metrics whose model is a trained regression head: a general --model (an encoder or LM) never applies
_OWN_HEAD = ("bleurt", "frugalscore")
#: rough cost of scoring one candidate of REALSumm length (~70 words against a ~56-word reference; ms, one process
#: on the 2-core machine; docs/metric-quality.md has the measurements). Matching 17 ms since 2026-11-28: BLEU,
#: ROUGE-1, chrF and BERTScore-MiniLM on 480 summaries took 7.5 s at load 0.5 and 12.7 s at load 2 (BERTScore's two
#: threads stall beside one busy process, which the load gauge does not see): 17 ms puts both within 1.35x
#: (`python -m bench.job_estimates`)
RATE_MS = {"n-gram": 1.0, "matching": 17.0, "generation": 400.0, "regression": 60.0, "translation": 400.0}


class RequestError(ValueError):
    """A bad metric-quality request; the message is one sentence for the user."""


def load_judgments(data: str | Path | bytes, name: str | None = None) -> Judgments:
    """Judgments from `"realsumm"` (the shipped copy), a folder in the REALSumm format or a table file (paths:
    the CLI), or uploaded bytes with their file `name` (the page: bytes are never read as a path)."""
    try:
        if isinstance(data, bytes | bytearray):
            if not name:
                raise RequestError("an uploaded judgments file needs its file name (for its format: .csv, .tsv, "
                                   ".jsonl)")
            return read_table(bytes(data), Path(name).name)
        text = str(data).strip()
        if text.lower() == REALSUMM:
            return load_realsumm()
        if not text:
            raise RequestError("--data is empty; give realsumm, a folder in the REALSumm format, or a CSV/JSONL file")
        path = Path(text).expanduser()
        if path.is_dir():
            return read_realsumm_dir(path)
        if not path.exists():
            raise RequestError(f"{text}: no such file or folder (give realsumm, a folder with "
                               "realsumm_documents.jsonl and realsumm_summaries.jsonl, or a CSV/JSONL file)")
        return read_table(path, path.name)
    except JudgmentDataError as error:
        raise RequestError(str(error)) from None


@dataclass(frozen=True)
class QualityRequest:
    judgments: Judgments
    metrics: tuple[Metric, ...]
    #: stored score columns of the judgments used as metrics ("<name> (stored)")
    stored: tuple[str, ...] = ()
    rule: str = "pooled"
    n_resamples: int = 1000
    seed: int = 0
    statistic: str = "spearman"
    #: what the interval resamples (documents, systems, both); None = the rule's default (system rule: both)
    resample: str | None = None
    #: the document rule's treatment of a document on which the metric is constant: "zero" or "drop"
    constant: str = "zero"
    #: the rule within each group (e.g. WMT language pair), averaged over groups
    group_average: bool = False

    @property
    def resample_unit(self) -> str:
        return self.resample or DEFAULT_UNIT[self.rule]


def _takes(name: str, option: str) -> bool:
    return option in {f.name for f in fields(METRICS[name].Options)}


def parse_metric_names(text: str | Sequence[str]) -> list[str]:
    """Metric names from `bleu,rouge1,...` (or a list); unknown names are one sentence."""
    names = [n.strip().lower() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise RequestError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(metric_names())}")
    return list(dict.fromkeys(names))


def parse_metric_options(items: Sequence[str]) -> dict[str, dict[str, str]]:
    """`--option bartscore-lm.term_weighting=uniform` (repeatable) as {metric: {option: value}}; the values are
    checked by the metric registry when the metrics are built."""
    options: dict[str, dict[str, str]] = {}
    for item in items:
        target, sep, value = item.partition("=")
        metric, dot, key = target.strip().partition(".")
        if not sep or not dot or not metric or not key.strip():
            raise RequestError(f"--option {item!r} must look like METRIC.OPTION=VALUE, e.g. "
                               "bartscore-lm.term_weighting=uniform")
        options.setdefault(metric.lower(), {})[key.strip()] = value.strip()
    return options


def build_metrics(names: Sequence[str], model: str | None = None,
                  options: Mapping[str, Mapping[str, Any]] | None = None) -> list[Metric]:
    """Metric objects (no model loaded): `model` goes to every model-based metric (not to those with their own
    trained head), `options[name]` to one metric."""
    names = parse_metric_names(names)
    options = dict(options or {})
    stray = [target for target in options if target not in names]
    if stray:
        raise RequestError(f"an option names {stray[0]!r}, which is not among the chosen metrics "
                           f"({', '.join(names) or 'none'})")
    if model is not None and not any(_takes(n, "model") and n not in _OWN_HEAD for n in names):
        raise RequestError("--model applies to model-based metrics (bertscore, moverscore, bartscore, bartscore-lm, "
                           "…) and none of them is among the chosen metrics")
    metrics = []
    for name in names:
        chosen = dict(options.get(name, {}))
        if model and _takes(name, "model") and name not in _OWN_HEAD and "model" not in chosen:
            chosen["model"] = model
        try:
            metrics.append(metric_from_request(name, **chosen))
        except MetricOptionError as error:
            raise RequestError(str(error)) from None
    return metrics


def choose_stored(judgments: Judgments, stored: bool | Sequence[str]) -> list[str]:
    """Stored score columns to use: all (True), none (False), or the named ones (with or without " (stored)")."""
    available = judgments.stored_columns
    if stored is True:
        if not available:
            raise RequestError(f"{judgments.name} has no stored score columns (numbers beside the texts)")
        return available
    if not stored:
        return []
    chosen = []
    for column in stored:
        full = column if column.endswith(" (stored)") else f"{column} (stored)"
        if full not in available:
            raise RequestError(f"{judgments.name} has no stored score column {column!r}; it has: "
                               f"{', '.join(available) or 'none'}")
        chosen.append(full)
    return list(dict.fromkeys(chosen))


def parse_resamples(value: str | int) -> int:
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number != int(number) or not 0 <= number <= MAX_RESAMPLES:
        raise RequestError(f"--resamples must be a whole number between 0 (no interval) and {MAX_RESAMPLES:,} "
                           f"(got {text!r})")
    return int(number)


def build_request(judgments: Judgments, metrics: Sequence[Metric], stored: Sequence[str] = (),
                  rule: str = "pooled", n_resamples: int = 1000, seed: int = 0,
                  statistic: str = "spearman", resample: str | None = None, constant: str = "zero",
                  group_average: bool = False) -> QualityRequest:
    if rule not in RULES:
        raise RequestError(f"unknown rule {rule!r}; choose from {', '.join(RULES)}")
    if statistic not in STATISTICS:
        raise RequestError(f"unknown statistic {statistic!r}; choose from {', '.join(STATISTICS)}")
    if resample is not None and resample not in UNITS:
        raise RequestError(f"unknown resampling unit {resample!r}; choose from {', '.join(UNITS)}")
    if constant not in CONSTANT_POLICIES:
        raise RequestError(f"unknown treatment of constant documents {constant!r}; choose from "
                           f"{', '.join(CONSTANT_POLICIES)}")
    if group_average and judgments.n_groups < 2:
        raise RequestError(f"{judgments.name} has no groups to average over (give a 'group' column, e.g. the "
                           "language pair of a WMT row)")
    if not metrics and not stored:
        raise RequestError("choose at least one metric or stored score column")
    parse_resamples(n_resamples)
    return QualityRequest(judgments, tuple(metrics), tuple(stored), rule, int(n_resamples), int(seed), statistic,
                          resample, constant, bool(group_average))


def estimate_seconds(request: QualityRequest) -> float:
    """Scoring time from sizes alone (an upper bound: stored runs are read back instead)."""
    n = len(request.judgments)
    return sum(n * RATE_MS.get(m.family, 60.0) / 1000 for m in request.metrics)


#: the page's job kind (its estimates are learnt per kind)
JOB_KIND = "metric-quality"
#: a stored score column is read back, not computed: seconds per candidate
STORED_SECONDS_PER_ROW = 2e-5
#: the agreement after scoring: seconds per candidate, metric and bootstrap resample (documents resampled)
AGREEMENT_SECONDS_PER_ROW_RESAMPLE = 2e-7


def scoring_costs(request: QualityRequest) -> list[float]:
    """Seconds each scoring job of the request (each metric, then each stored column, as `task._tasks` orders
    them) costs on the quiet reference machine: what the progress of a run is weighted by."""
    n = len(request.judgments)
    return [n * RATE_MS.get(m.family, 60.0) / 1000 for m in request.metrics] + \
        [n * STORED_SECONDS_PER_ROW for _ in request.stored]


def quality_work(request: QualityRequest) -> Any:
    """What the request costs (`fairness_core.jobs.estimates.Work`): every metric's candidates scored, then the
    agreement with its bootstrap over documents. Torch-bound when a model-based metric runs, else one thread."""
    from fairness_core.jobs.estimates import SHARE, TORCH, Work

    n = len(request.judgments)
    outputs = len(request.metrics) + len(request.stored)
    units = n * max(outputs, 1)
    agreement = n * outputs * request.n_resamples * AGREEMENT_SECONDS_PER_ROW_RESAMPLE
    torch_bound = any(m.family not in ("n-gram",) for m in request.metrics)
    return Work(JOB_KIND, units, sum(scoring_costs(request)) / units, "candidates × metrics", agreement,
                TORCH if torch_bound else SHARE)
