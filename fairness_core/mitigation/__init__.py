"""Mitigating metric bias (Sun et al. 2022 §3): debiasing adapters trained into a frozen backbone (Eq. 3-5), and
backbone swaps, judged on both axes — bias on pairs (Eq. 2) and agreement with people (Spearman on REALSumm) —
with paired intervals.

`options` (presets, trainable metrics), `request` (training and evaluation requests from plain values), `data`
(the offline training set), `training` (the resumable trainer, the job's work unit), `task` (stored training runs,
adapter files, evaluation), `summary` (paired bias change, changed pairs). This module is the study's one public
face: the page and the `mitigate` command import from here and nothing else of this package.
"""

from fairness_core.mitigation.data import TrainingData, TrainingDataError, training_data
from fairness_core.mitigation.options import (
    ATTRIBUTES,
    BACKBONE_TASK,
    DEFAULT_QUALITY,
    DEVIATIONS,
    GOALS,
    PAPER_TABLE5,
    PRESET_KEYS,
    PRESETS,
    SPLIT_LABELS,
    SPLITS,
    STEP_CANDIDATES,
    TRAINABLE,
    Preset,
    preset,
    presets_for,
)
from fairness_core.mitigation.request import (
    EVALUATE_KIND,
    TRAIN_KIND,
    EvaluationRequest,
    MitigationError,
    TrainEstimate,
    TrainRequest,
    Variant,
    build_evaluation,
    build_train_request,
    check_training_limit,
    estimate_training,
    evaluation_work,
    realsumm_split,
    training_work,
)
from fairness_core.mitigation.summary import BiasChange, bias_change, changed_pairs
from fairness_core.mitigation.task import (
    Evaluation,
    TrainOutcome,
    adapter_id_for,
    build_training_task,
    changed,
    evaluate,
    export_adapter,
    find_adapter,
    import_adapter,
    list_adapters,
    loss_curve,
    run_evaluation,
    train,
)

__all__ = [
    "ATTRIBUTES", "BACKBONE_TASK", "DEFAULT_QUALITY", "DEVIATIONS", "EVALUATE_KIND", "GOALS", "PAPER_TABLE5",
    "PRESETS", "PRESET_KEYS", "SPLITS", "SPLIT_LABELS", "STEP_CANDIDATES", "TRAINABLE", "TRAIN_KIND", "BiasChange",
    "Evaluation", "EvaluationRequest", "MitigationError", "Preset", "TrainEstimate", "TrainOutcome", "TrainRequest",
    "TrainingData", "TrainingDataError", "Variant", "adapter_id_for", "bias_change", "build_evaluation",
    "build_train_request", "build_training_task", "changed", "changed_pairs", "check_training_limit",
    "estimate_training", "evaluate", "evaluation_work", "export_adapter", "find_adapter", "import_adapter",
    "list_adapters", "loss_curve", "preset", "presets_for", "realsumm_split", "run_evaluation", "train",
    "training_data", "training_work",
]
