"""The choices the metric-bias page and the `metric-bias` command offer: data sources and their subsets, metrics
with their option schemas, n-gram settings, backbones. Part of the study's face (re-exported by `__init__.py`);
it needs no store, jobs or model itself."""

from __future__ import annotations

from collections.abc import Sequence

from fairness_core.bias.paired import NORMALISATIONS
from fairness_core.data.crows_pairs import ATTRIBUTES as _CROWS_PAIRS_LABELS
from fairness_core.data.crows_pairs import PAPER_ATTRIBUTES as CROWS_PAIRS_PAPER_ATTRIBUTES
from fairness_core.data.winobias import DEFAULT_SUBSET as WINOBIAS_DEFAULT_SUBSET
from fairness_core.data.winobias import SUBSETS as WINOBIAS_SUBSETS
from fairness_core.metrics import METRICS, Metric, MetricOptionError, metric_names
from fairness_core.metrics.ngram import CONFIGS as NGRAM_CONFIGS

__all__ = ["CROWS_PAIRS_ATTRIBUTES", "CROWS_PAIRS_PAPER_ATTRIBUTES", "METRICS", "NGRAM_CONFIGS", "NORMALISATIONS",
           "WINOBIAS_DEFAULT_SUBSET", "WINOBIAS_SUBSETS", "Metric", "MetricOptionError", "metric_names",
           "metric_takes", "model_for_metric", "preset_identities"]

#: the CrowS-Pairs bias types a user can pick (the paper's five and the others), sorted
CROWS_PAIRS_ATTRIBUTES = tuple(sorted(set(_CROWS_PAIRS_LABELS.values())))


def metric_takes(names: Sequence[str], option: str) -> bool:
    """Whether any of the metrics `names` declares `option` (so the page passes it on only then)."""
    return any(option in METRICS[name].Options.__dataclass_fields__ for name in names)


def model_for_metric(name: str, encoder: str | None, lm: str | None) -> str | None:
    """The model a metric runs on: the chosen encoder for matching metrics, the chosen LM for generation ones."""
    task_kind = getattr(METRICS[name], "task", None)
    if task_kind == "encoder" and encoder:
        return encoder
    if task_kind == "lm":
        return lm
    return None


def preset_identities() -> dict[str, str]:
    """Weights identity -> preset key of the shipped (local) transformers backbones, so that stored runs of them
    are recognised by model size (the page's backbone-size view)."""
    from fairness_core.models import PRESETS, ModelUnavailableError

    found = {}
    for preset in PRESETS:
        if preset.offline and preset.backend == "hf":
            try:
                found[str(preset.spec().to_manifest()["identity"])] = preset.key
            except ModelUnavailableError:
                continue
    return found
