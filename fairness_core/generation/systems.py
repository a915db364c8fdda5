"""A `System`: the thing whose fairness is measured — a causal LM with a decoding setting.

CAIRO correlates metrics across many systems; a decoding sweep is several systems over one model.
`key()` identifies what changes a system's outputs (the model's identity — revision or content
hash, dtype, device — its decoding knobs and quantization), so stored generations are found again
by it; the display `name` and `max_new_tokens` (a property of the request) are not part of it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairness_core.models.endpoint import Endpoint, is_endpoint
from fairness_core.models.interfaces import DecodingConfig
from fairness_core.models.spec import QUANTIZATIONS, ModelSpec


def decoding_record(decoding: DecodingConfig) -> dict[str, Any]:
    """The knobs that change outputs (max_new_tokens belongs to the request, not the system)."""
    if decoding.greedy:
        return {"greedy": True}
    return {"temperature": float(decoding.temperature), "top_k": decoding.top_k,
            "top_p": None if decoding.top_p is None else float(decoding.top_p)}


def default_name(model: str, decoding: DecodingConfig, quantization: str = "none") -> str:
    if is_endpoint(model):
        return f"{Endpoint.parse(model).label()} · {decoding.label()}"
    try:
        local = model.endswith(".gguf") or Path(model).expanduser().exists()
    except OSError:  # a name longer than the file system allows is no local model (it was a traceback)
        local = False
    short = Path(model).name if local else model
    suffix = "" if quantization == "none" else f" [{quantization}]"
    return f"{short} · {decoding.label()}{suffix}"


@dataclass(frozen=True)
class System:
    model: str  # preset key, hub id, local dir or .gguf
    decoding: DecodingConfig
    quantization: str = "none"  # none|8bit|4bit
    name: str = ""  # display label; default derived from model + decoding

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ValueError("a system needs a model (preset key, hub id, local directory or .gguf file)")
        if self.quantization not in QUANTIZATIONS:
            raise ValueError(f"quantization must be one of {', '.join(QUANTIZATIONS)} (got {self.quantization!r})")
        if not self.name:
            object.__setattr__(self, "name", default_name(self.model, self.decoding, self.quantization))

    def spec(self) -> ModelSpec:
        """The generator's ModelSpec (raises ModelUnavailableError for a preset of another task)."""
        from fairness_core.models import resolve_model

        return resolve_model(self.model, "causal-lm", quantization=self.quantization)

    def manifest(self) -> dict[str, Any]:
        """Model identity, decoding knobs and quantization; for an endpoint also every sampling field sent
        (sampling through an API is reproducible only from the store, so the record says what was asked)."""
        spec = self.spec()
        record = {"model": spec.to_manifest(), "decoding": decoding_record(self.decoding),
                  "quantization": self.quantization}
        if spec.is_endpoint:
            from fairness_core.models import load_model

            record["sent"] = load_model(spec).sent_manifest(self.decoding)  # type: ignore[attr-defined]
        return record

    def key(self) -> str:
        """Stable hash of model identity + decoding + quantization (not the display name)."""
        payload = json.dumps(self.manifest(), sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:20]
