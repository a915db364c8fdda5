"""Model layer: four small interfaces, a transformers backend, presets and a process-wide cache."""

from fairness_core.models.adapters import AdapterError, AdapterInfo, list_adapters
from fairness_core.models.cache import load_model
from fairness_core.models.interfaces import (
    CausalLM,
    DecodingConfig,
    Encoder,
    ModelUnavailableError,
    Seq2SeqLM,
    TextClassifier,
    TokenEmbeddings,
    TokenScores,
)
from fairness_core.models.presets import PRESETS, Preset, availability, get_preset, load_preset, resolve_model
from fairness_core.models.serving import offline_serving_folder
from fairness_core.models.spec import ModelSpec

__all__ = [
    "PRESETS",
    "AdapterError",
    "AdapterInfo",
    "CausalLM",
    "DecodingConfig",
    "Encoder",
    "ModelSpec",
    "ModelUnavailableError",
    "Preset",
    "Seq2SeqLM",
    "TextClassifier",
    "TokenEmbeddings",
    "TokenScores",
    "availability",
    "get_preset",
    "list_adapters",
    "load_model",
    "load_preset",
    "offline_serving_folder",
    "resolve_model",
]
