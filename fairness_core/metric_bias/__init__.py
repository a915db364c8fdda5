"""Metric bias pipeline (Sun et al. 2022): `request` (data + metrics from plain values, shared by the
CLI and the page), `task` (stored jobs that score pairs), `summary` (gaps, bias tables, agreement).

This module is the study's one public face: the page and the `metric-bias` command import from here (or from
the lighter `options`) and nothing else of the core.
"""

from fairness_core.bias.paired import rank_agreement
from fairness_core.data.pairs import PairDataError, PairDataset, list_versions, save_version, versions_dir
from fairness_core.metric_bias.options import (
    CROWS_PAIRS_ATTRIBUTES,
    CROWS_PAIRS_PAPER_ATTRIBUTES,
    METRICS,
    NGRAM_CONFIGS,
    NORMALISATIONS,
    WINOBIAS_DEFAULT_SUBSET,
    WINOBIAS_SUBSETS,
    Metric,
    MetricOptionError,
    metric_names,
    metric_takes,
    model_for_metric,
    preset_identities,
)
from fairness_core.metric_bias.request import (
    DEFAULT_METRICS,
    FORMATS,
    LM_PRESETS,
    MAX_SECONDS,
    PARAMS_M,
    MetricBiasRequest,
    RequestError,
    WorkEstimate,
    adapters_for,
    build_metrics,
    build_request,
    check_limits,
    choose_stored,
    estimate,
    expand_presets,
    load_dataset,
    parse_adapter_flags,
    parse_model_flags,
    parse_resamples,
)
from fairness_core.metric_bias.summary import (
    DIRECTION_RULE,
    OCCUPATION_UNIT,
    agreement,
    alignment_tables,
    backbone_points,
    bias_table,
    direction_screen,
    expected_pairs,
    mean_interval,
    notes,
    occupation_factors,
    pair_table,
    partial_warning,
    rank_agreement_interval,
    summary_json,
)
from fairness_core.metric_bias.task import MetricRun, StepProgress, model_runs, run_metric_steps, run_metrics
from fairness_core.models.interfaces import ModelUnavailableError

__all__ = [
    "CROWS_PAIRS_ATTRIBUTES", "CROWS_PAIRS_PAPER_ATTRIBUTES", "DEFAULT_METRICS", "DIRECTION_RULE", "FORMATS",
    "LM_PRESETS", "MAX_SECONDS", "METRICS", "NGRAM_CONFIGS", "NORMALISATIONS", "OCCUPATION_UNIT", "PARAMS_M",
    "WINOBIAS_DEFAULT_SUBSET",
    "WINOBIAS_SUBSETS", "Metric", "MetricBiasRequest", "MetricOptionError", "MetricRun", "ModelUnavailableError",
    "PairDataError", "PairDataset", "RequestError", "StepProgress", "WorkEstimate",
    "adapters_for", "agreement", "alignment_tables", "backbone_points", "bias_table", "build_metrics",
    "build_request", "check_limits", "choose_stored", "direction_screen", "estimate", "expand_presets",
    "expected_pairs",
    "list_versions", "load_dataset", "mean_interval", "metric_names", "metric_takes", "model_for_metric",
    "model_runs", "notes", "occupation_factors",
    "pair_table", "parse_adapter_flags", "parse_model_flags", "parse_resamples", "partial_warning",
    "preset_identities",
    "rank_agreement", "rank_agreement_interval", "run_metric_steps", "run_metrics",
    "save_version", "summary_json", "versions_dir",
]
