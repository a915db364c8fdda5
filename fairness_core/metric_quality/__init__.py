"""Metric quality: does a metric agree with people? (Sun et al. 2022, §3 and Tables 4-5: a fairer metric must
still agree with human judgments.)

`request` (judgments + metrics from plain values, shared by the CLI and the page), `agreement` (correlations
under the pooled / per-document / system rules with intervals that resample items, paired differences),
`task` (stored scoring and agreement runs; `score_metric` for scoring without the store), `summary` (tables,
JSON, drill-down, the bias-quality points). The judgments readers live in `fairness_core.data.judgments`.

This module is the study's one public face: the page, the `metric-quality` command and the mitigation study
import from here and nothing else of this package. Importing it imports nothing heavy.
"""

from fairness_core.data.judgments import (
    REALSUMM,
    REALSUMM_DIR,
    REALSUMM_LICENCE,
    ROW_RULES,
    JudgmentDataError,
    Judgments,
    from_frame,
)
from fairness_core.metric_quality.agreement import (
    LEVEL,
    RULE_LABELS,
    RULES,
    STATISTICS,
    AgreementError,
    Correlation,
    Difference,
    correlate,
    paired_difference,
)
from fairness_core.metric_quality.request import (
    DEFAULT_METRICS,
    JOB_KIND,
    OFFLINE_METRICS,
    QualityRequest,
    RequestError,
    build_metrics,
    build_request,
    choose_stored,
    estimate_seconds,
    load_judgments,
    parse_metric_names,
    parse_metric_options,
    parse_resamples,
    quality_work,
)
from fairness_core.metric_quality.summary import (
    BIAS_SOURCE,
    PAPER_REALSUMM,
    agreement_table,
    bias_quality_points,
    drilldown,
    gender_bias,
    gender_bias_estimate_s,
    gender_bias_work,
    metric_labels,
    notes,
    rule_label,
    summary_json,
)
from fairness_core.metric_quality.task import (
    AGREEMENT,
    SCORES,
    QualityOutcome,
    ScoreRun,
    find_stored,
    run_quality,
    score_metric,
)
from fairness_core.metrics import METRICS, MetricOptionError, metric_names
from fairness_core.models.interfaces import ModelUnavailableError

__all__ = [
    "AGREEMENT",
    "BIAS_SOURCE",
    "DEFAULT_METRICS",
    "JOB_KIND",
    "LEVEL",
    "METRICS",
    "OFFLINE_METRICS",
    "PAPER_REALSUMM",
    "REALSUMM",
    "REALSUMM_DIR",
    "REALSUMM_LICENCE",
    "ROW_RULES",
    "RULES",
    "RULE_LABELS",
    "SCORES",
    "STATISTICS",
    "AgreementError",
    "Correlation",
    "Difference",
    "JudgmentDataError",
    "Judgments",
    "MetricOptionError",
    "ModelUnavailableError",
    "QualityOutcome",
    "QualityRequest",
    "RequestError",
    "ScoreRun",
    "agreement_table",
    "bias_quality_points",
    "build_metrics",
    "build_request",
    "choose_stored",
    "correlate",
    "drilldown",
    "estimate_seconds",
    "find_stored",
    "from_frame",
    "gender_bias",
    "gender_bias_estimate_s",
    "gender_bias_work",
    "load_judgments",
    "metric_labels",
    "metric_names",
    "notes",
    "paired_difference",
    "parse_metric_names",
    "parse_metric_options",
    "parse_resamples",
    "quality_work",
    "rule_label",
    "run_quality",
    "score_metric",
    "summary_json",
]
