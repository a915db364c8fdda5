"""Turning a ModelSpec into transformers objects: device, dtype, bitsandbytes, GGUF conversion."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any

from fairness_core import config
from fairness_core.models.interfaces import ModelUnavailableError
from fairness_core.models.spec import ModelSpec

log = logging.getLogger(__name__)

_AUTO_CLASSES = {
    "causal-lm": "AutoModelForCausalLM",
    "seq2seq-lm": "AutoModelForSeq2SeqLM",
    "encoder": "AutoModel",
    "classifier": "AutoModelForSequenceClassification",
    "masked-lm": "AutoModelForMaskedLM",
}

# transformers will happily build e.g. BertLMHeadModel from a BERT checkpoint, but a
# bidirectional encoder is not a usable left-to-right generator: refuse it up front.
_ENCODER_ONLY_TYPES = {"bert", "roberta", "distilbert", "albert", "electra", "deberta", "deberta-v2", "xlm-roberta",
                       "camembert", "mpnet", "ernie", "rembert", "roformer"}

_TASK_WORDS = {
    "causal-lm": "a causal (decoder-only) language model",
    "seq2seq-lm": "a sequence-to-sequence model",
    "encoder": "an encoder",
    "classifier": "a text classifier",
    "masked-lm": "a masked language model",
}


def torch_dtype(name: str) -> Any:
    import torch

    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def quantization_config(spec: ModelSpec) -> Any | None:
    """BitsAndBytesConfig for 8-bit or 4-bit NF4 (transformers 5 takes it in `quantization_config=`)."""
    if spec.quantization == "none":
        return None
    try:
        import bitsandbytes  # noqa: F401
        from transformers import BitsAndBytesConfig
    except ImportError as error:
        raise ModelUnavailableError(
            f"{spec.display_name} cannot be quantized to {spec.quantization}: bitsandbytes is not installed ({error})."
        ) from error
    # Output heads stay in full precision: they are small, and a head whose width is not a multiple
    # of the 4-bit block size (e.g. a 3-label classifier) cannot be quantized at all.
    skip = ["lm_head", "classifier", "score", "classification_head", "pre_classifier"]
    if spec.quantization == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True, llm_int8_skip_modules=skip)
    return BitsAndBytesConfig(
        load_in_4bit=True,
        llm_int8_skip_modules=skip,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_compute_dtype=torch_dtype(spec.dtype),
        bnb_4bit_use_double_quant=False,
    )


def load_hf(spec: ModelSpec) -> tuple[Any, Any]:
    """(model, tokenizer) in eval mode on the spec's device. Raises ModelUnavailableError."""
    spec = spec.resolved()
    if spec.device == "cuda" and not _cuda_available():
        raise ModelUnavailableError(f"{spec.display_name} was requested on CUDA, but this machine has no GPU.")
    started = time.monotonic()
    try:
        import transformers

        auto_model = getattr(transformers, _AUTO_CLASSES[spec.task])
        source, revision = spec.source, spec.revision
        if spec.gguf_file:
            source, revision = str(gguf_converted_dir(spec)), None
        model_config = transformers.AutoConfig.from_pretrained(source, revision=revision, trust_remote_code=False)
        if (spec.task == "causal-lm" and model_config.model_type in _ENCODER_ONLY_TYPES
                and not getattr(model_config, "is_decoder", False)):
            raise ModelUnavailableError(
                f"{spec.display_name} cannot be loaded as {_TASK_WORDS[spec.task]}: it is an encoder-only "
                f"({model_config.model_type}) model."
            )
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, revision=revision, trust_remote_code=False)
        kwargs: dict[str, Any] = {"revision": revision, "trust_remote_code": False, "dtype": torch_dtype(spec.dtype)}
        quant = quantization_config(spec)
        if quant is not None:
            kwargs["quantization_config"] = quant
            kwargs["device_map"] = {"": spec.device}
        model = auto_model.from_pretrained(source, **kwargs)
        if quant is None:
            model = model.to(spec.device)
        model.eval()
    except ModelUnavailableError:
        raise
    except Exception as error:
        raise ModelUnavailableError(explain_load_failure(spec, error)) from error
    log.info("loaded %s in %.1f s", spec.display_name, time.monotonic() - started)
    return model, tokenizer


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def explain_load_failure(spec: ModelSpec, error: Exception) -> str:
    """One sentence naming the model and the reason, for the UI and the CLI."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    lowered = str(error).lower()
    name = spec.display_name
    if "unrecognized configuration class" in lowered or "does not recognize this architecture" in lowered:
        return f"{name} cannot be loaded as {_TASK_WORDS[spec.task]}: its architecture does not support that task."
    if isinstance(error, OSError) and not spec.is_local:
        return (
            f"{name} is not in the local Hugging Face cache and could not be downloaded "
            f"(offline, or no such model id): {text}"
        )
    if isinstance(error, ImportError):
        return f"{name} needs a Python package that is not installed: {text}"
    return f"{name} could not be loaded: {type(error).__name__}: {text}"


def gguf_converted_dir(spec: ModelSpec) -> Path:
    """A safetensors copy of a GGUF checkpoint, made once (~20 s) and reused (< 1 s to load)."""
    assert spec.gguf_file is not None
    target = config.cache_dir() / "gguf" / spec.identity().replace(":", "-")
    if (target / "config.json").exists() and any(target.glob("*.safetensors")):
        return target
    import transformers

    source = str(Path(spec.source).expanduser())
    auto_model = getattr(transformers, _AUTO_CLASSES[spec.task])
    tokenizer = transformers.AutoTokenizer.from_pretrained(source, gguf_file=spec.gguf_file)
    dequantized = auto_model.from_pretrained(source, gguf_file=spec.gguf_file, dtype=torch_dtype("fp32"))
    # A model loaded from GGUF keeps a GGUF quantization_config and refuses save_pretrained;
    # rebuilding it from a clean config gives an ordinary fp32 checkpoint.
    model_config = dequantized.config
    if hasattr(model_config, "quantization_config"):
        delattr(model_config, "quantization_config")
    clean = auto_model.from_config(model_config, dtype=torch_dtype("fp32"))
    clean.load_state_dict(dequantized.state_dict())
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    clean.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)  # atomic publish: a crash never leaves a half-written cache
    return target
