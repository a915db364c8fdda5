"""Which metrics exist, which model each needs, and how to build one from a plain request.

A `MetricRequest` is what a user asks for (name, configuration, model id, options). Its manifest
is computed without loading any model, so the run store can answer a repeated request before a
model is touched; `build()` loads the model through the process-wide cache only when needed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairness_core.metrics.base import Metric
from fairness_core.metrics.ngram import CONFIGS, NGRAM_METRICS, NgramMetric
from fairness_core.models.interfaces import ModelUnavailableError


@dataclass(frozen=True)
class MetricInfo:
    name: str
    label: str
    family: str
    task: str | None = None  # model task, None for n-gram metrics
    default_model: str | None = None
    outputs: tuple[str, ...] = ("score",)


METRICS: dict[str, MetricInfo] = {
    "bleu": MetricInfo("bleu", "BLEU", "n-gram"),
    "rouge1": MetricInfo("rouge1", "ROUGE-1 F", "n-gram"),
    "meteor": MetricInfo("meteor", "METEOR", "n-gram"),
    "nist": MetricInfo("nist", "NIST", "n-gram"),
    "chrf": MetricInfo("chrf", "chrF", "n-gram"),
    "bertscore": MetricInfo("bertscore", "BERTScore", "matching", "encoder", "all-minilm-l6-v2", ("F", "P", "R")),
    "moverscore": MetricInfo("moverscore", "MoverScore", "matching", "encoder", "all-minilm-l6-v2"),
    "bartscore": MetricInfo("bartscore", "BARTScore", "generation", "lm", "smollm2-135m-instruct", ("F", "P", "R")),
    "bleurt": MetricInfo("bleurt", "BLEURT", "regression", "classifier", "bleurt-base-512"),
    "frugalscore": MetricInfo("frugalscore", "FrugalScore", "regression", "classifier", "frugalscore-tiny"),
}
DEFAULT_NGRAM = NGRAM_METRICS


def parse_metric_list(text: str) -> list[str]:
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(METRICS)}")
    if not names:
        raise ValueError("no metric given")
    return list(dict.fromkeys(names))


def lm_task(model: str) -> str:
    """'seq2seq-lm' or 'causal-lm' for a BARTScore backbone (preset, local directory or hub id)."""
    from fairness_core.models.presets import _BY_KEY

    if model in _BY_KEY:
        return _BY_KEY[model].task
    path = Path(model).expanduser()
    if path.suffix == ".gguf" or (path.is_dir() and any(path.glob("*.gguf"))):
        return "causal-lm"  # GGUF checkpoints here are decoder-only
    config_path = path / "config.json"
    if not config_path.exists():
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(model, "config.json")
        except Exception:  # any hub problem means: not available here
            found = None
        if not isinstance(found, str):
            raise ModelUnavailableError(f"{model} is unavailable here: not a local directory and not in the "
                                        "Hugging Face cache, so its architecture cannot be checked offline.")
        config_path = Path(found)
    return "seq2seq-lm" if json.loads(config_path.read_text()).get("is_encoder_decoder") else "causal-lm"


@dataclass(frozen=True)
class MetricRequest:
    name: str
    config: str = "default"  # n-gram configuration
    model: str | None = None  # preset key, hub id or local path; None = the metric's default
    layer: int | None = None
    idf: bool = False
    baseline: str | None = None
    n_gram: int = 2

    def __post_init__(self) -> None:
        if self.name not in METRICS:
            raise ValueError(f"unknown metric {self.name!r}; choose from {', '.join(METRICS)}")
        if self.config not in CONFIGS:
            raise ValueError(f"unknown configuration {self.config!r}; choose {' or '.join(CONFIGS)}")

    @property
    def info(self) -> MetricInfo:
        return METRICS[self.name]

    @property
    def model_id(self) -> str | None:
        return None if self.info.task is None else (self.model or self.info.default_model)

    def model_spec(self) -> Any:
        from fairness_core.models import resolve_model

        if self.model_id is None:
            return None
        task = lm_task(self.model_id) if self.info.task == "lm" else self.info.task
        return resolve_model(self.model_id, task)

    def check_available(self) -> None:
        """Raise ModelUnavailableError (one sentence) when the model cannot be had on this machine."""
        from fairness_core.models.presets import _BY_KEY, availability

        model = self.model_id
        if model is None:
            return
        if model in _BY_KEY:
            found = availability(_BY_KEY[model])
            if not found.usable:
                raise ModelUnavailableError(f"{self.info.label} needs {_BY_KEY[model].label}, which is "
                                            f"unavailable here: {found.reason}.")
            return
        spec = self.model_spec()  # raises for an unknown architecture offline
        if not spec.is_local:
            from fairness_core.models.presets import hub_reachable
            from fairness_core.models.spec import hub_cached_revision

            if hub_cached_revision(spec.source) is None and not hub_reachable():
                raise ModelUnavailableError(f"{self.info.label} needs {model}, which is unavailable here: not in the "
                                            "local Hugging Face cache and the hub cannot be reached.")

    def describe(self) -> dict[str, Any]:
        """The manifest part for this metric (loads no model; hashes local model files)."""
        record: dict[str, Any] = {"name": self.name}
        if self.info.family == "n-gram":
            record["config"] = self.config
            return record
        spec = self.model_spec()
        record["model"] = spec.to_manifest()
        if self.name in ("bertscore", "moverscore"):
            record["layer"] = self.layer
        if self.name == "bertscore":
            record |= {"idf": self.idf, "baseline": self.baseline}
        if self.name == "moverscore":
            record["n_gram"] = self.n_gram
        if self.name == "bartscore":
            from fairness_core.metrics.generation import PROMPT

            record["backend"] = "seq2seq" if spec.task == "seq2seq-lm" else "decoder-only"
            if spec.task == "causal-lm":
                record["prompt"] = PROMPT
        return record

    def build(self) -> Metric:
        """The metric object, its model loaded through the process-wide cache."""
        if self.info.family == "n-gram":
            return NgramMetric(self.name, self.config)
        from fairness_core.models import load_model

        spec = self.model_spec()
        model = load_model(spec)
        manifest = spec.to_manifest()
        if self.name == "bertscore":
            from fairness_core.metrics.matching import BERTScore

            return BERTScore(model, layer=self.layer, idf=self.idf, baseline=self.baseline, model_manifest=manifest)
        if self.name == "moverscore":
            from fairness_core.metrics.matching import MoverScore

            return MoverScore(model, layer=self.layer, n_gram=self.n_gram, model_manifest=manifest)
        if self.name == "bartscore":
            from fairness_core.metrics.generation import BARTScore

            return BARTScore(model, model_manifest=manifest)
        from fairness_core.metrics.learned import PairRegressionMetric

        return PairRegressionMetric(self.name, model, model_manifest=manifest)
