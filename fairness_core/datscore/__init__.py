"""DATScore (data-augmented translation score) and its offline LM variant, DATScore-LM.

The arithmetic and backbones live in `fairness_core.translation` (`directions`, `weights` with Eq. 1-5,
`backbones`), shared with the metric plug-ins. Here: `request` (inputs), `task` (stored pipeline),
`summary` / `metaeval` (tables, CIs, ablations), `synthetic` (the offline demo set).
Importing the package imports nothing heavy.

This module is the study's one public face: the page and the `datscore` command import from here and nothing else
of the core (the direction labels and weighting names they show come through it too).
"""

from fairness_core.datscore.metaeval import (
    FULL_NAME,
    Variant,
    eq3_weights,
    hypothesis_tokens,
    meta_table,
    negative_weight_note,
    pipeline_report,
    uploaded_variants,
    variants,
    weight_intervals,
    with_weight_intervals,
)
from fairness_core.datscore.request import (
    RequestError,
    ScoreRequest,
    SegmentSet,
    backbone_name,
    check_languages,
    endpoint_problem,
    preset_unavailable,
    read_direct_assessment,
    read_direction_scores,
    read_relative_ranking,
    read_segments,
)
from fairness_core.datscore.summary import (
    SegmentSummary,
    cli_payload,
    corpus_scores,
    segment_summary,
    segment_view,
    token_frame,
    weights_table,
)
from fairness_core.datscore.synthetic import SRC_LANG as SYNTHETIC_SRC_LANG
from fairness_core.datscore.synthetic import TGT_LANG as SYNTHETIC_TGT_LANG
from fairness_core.datscore.synthetic import load as load_synthetic
from fairness_core.datscore.task import PipelineCancelled, PipelineOutcome, find_stored, run_pipeline, score_matrix
from fairness_core.models.interfaces import ModelUnavailableError
from fairness_core.translation.backbones import metric_label_for
from fairness_core.translation.directions import DIRECTIONS, TRANS1, TRANS2, augmentation_languages
from fairness_core.translation.directions import LABELS as DIRECTION_LABELS
from fairness_core.translation.weights import (
    ENTROPY,
    ENTROPY_MEAN,
    ONE_VS_REST,
    ONE_VS_REST_CLIPPED,
    SUM,
    TERM_LABELS,
    TERM_WEIGHTINGS,
    UNIFORM,
)

__all__ = [
    "DIRECTIONS",
    "DIRECTION_LABELS",
    "ENTROPY",
    "ENTROPY_MEAN",
    "FULL_NAME",
    "ONE_VS_REST",
    "ONE_VS_REST_CLIPPED",
    "SUM",
    "SYNTHETIC_SRC_LANG",
    "SYNTHETIC_TGT_LANG",
    "TERM_LABELS",
    "TERM_WEIGHTINGS",
    "TRANS1",
    "TRANS2",
    "UNIFORM",
    "ModelUnavailableError",
    "PipelineCancelled",
    "PipelineOutcome",
    "RequestError",
    "ScoreRequest",
    "SegmentSet",
    "SegmentSummary",
    "Variant",
    "augmentation_languages",
    "backbone_name",
    "check_languages",
    "cli_payload",
    "corpus_scores",
    "endpoint_problem",
    "eq3_weights",
    "find_stored",
    "hypothesis_tokens",
    "load_synthetic",
    "meta_table",
    "metric_label_for",
    "negative_weight_note",
    "pipeline_report",
    "preset_unavailable",
    "read_direct_assessment",
    "read_direction_scores",
    "read_relative_ranking",
    "read_segments",
    "run_pipeline",
    "score_matrix",
    "segment_summary",
    "segment_view",
    "token_frame",
    "uploaded_variants",
    "variants",
    "weight_intervals",
    "weights_table",
    "with_weight_intervals",
]
