"""CAIRO (Zayed et al. 2024): released prompts, Eq. 1 bias, combination search, the run pipeline, paraphrasing.

See docs/cairo.md. Modules: data, bias, search, request, task, paraphrase, summary. This module is the study's one
public face: the page and the `cairo` command import from here and nothing else of the core.
"""

from fairness_core.cairo.data import DEFAULT_MAPPING, METRICS, CairoDataError, overlap_table
from fairness_core.cairo.deviations import DEVIATIONS
from fairness_core.cairo.paraphrase import STYLES as PARAPHRASE_STYLES
from fairness_core.cairo.paraphrase import ParaphraseRequest, ParaphraseResult, run_paraphrase
from fairness_core.cairo.request import BiasTable, BiasTableError, read_bias_table, read_bias_table_file
from fairness_core.cairo.summary import (
    combination_prompts,
    contributions,
    interval_power,
    interval_power_note,
    load_demo,
    mapping_from_rows,
    metric_overview,
    r_text,
    rankings,
    search_json,
    size_frame,
    system_values,
    table_with_intervals,
    uncertainty_frame,
)
from fairness_core.cairo.task import (
    CairoInputError,
    PipelineOutcome,
    RunRequest,
    parse_seeds,
    parse_systems,
    pipeline_manifest,
    plan_sets,
    run_pipeline,
)
from fairness_core.cairo.uncertainty import add_uncertainty, pair_uncertainty

__all__ = [
    "DEFAULT_MAPPING",
    "DEVIATIONS",
    "METRICS",
    "PARAPHRASE_STYLES",
    "BiasTable",
    "BiasTableError",
    "CairoDataError",
    "CairoInputError",
    "ParaphraseRequest",
    "ParaphraseResult",
    "PipelineOutcome",
    "RunRequest",
    "add_uncertainty",
    "combination_prompts",
    "contributions",
    "interval_power",
    "interval_power_note",
    "load_demo",
    "mapping_from_rows",
    "metric_overview",
    "overlap_table",
    "pair_uncertainty",
    "parse_seeds",
    "parse_systems",
    "pipeline_manifest",
    "plan_sets",
    "r_text",
    "rankings",
    "read_bias_table",
    "read_bias_table_file",
    "run_paraphrase",
    "run_pipeline",
    "search_json",
    "size_frame",
    "system_values",
    "table_with_intervals",
    "uncertainty_frame",
]
