"""Run manifests: the canonical description of everything that determines a run's output.

The manifest plays the role of sacrebleu's signature: it is printed with results, stored with
every run, and its hash is the cache key. Two requests with the same manifest hash are the same
computation, so the second is answered from the store.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
from dataclasses import asdict, is_dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import fairness_core

# Bump when a change to the core alters results for an unchanged request.
RESULT_SCHEMA_VERSION = 1

_TRACKED_LIBRARIES = (
    "torch",
    "transformers",
    "tokenizers",
    "bitsandbytes",
    "sacrebleu",
    "nltk",
    "rouge-score",
    "vaderSentiment",
    "alt-profanity-check",
    "duckdb",
    "numpy",
)


def _normalise(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return _normalise(asdict(value))
    if isinstance(value, dict):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"manifest values must be finite numbers, got {value!r}")
        # 0.1 + 0.2 and 0.30000000000000004 must hash alike.
        return float(repr(round(value, 12)))
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _normalise(value.item())
    if value is None or isinstance(value, (str, int, bool)):
        return value
    raise TypeError(f"manifest values must be JSON-like, got {type(value).__name__}: {value!r}")


def canonical_json(manifest: dict[str, Any]) -> str:
    """Sorted keys, no whitespace, normalised floats: equal requests give equal strings."""
    return json.dumps(_normalise(manifest), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def manifest_hash(manifest: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON, hex."""
    return hashlib.sha256(canonical_json(manifest).encode("utf-8")).hexdigest()


def build_manifest(kind: str, request: dict[str, Any]) -> dict[str, Any]:
    """The manifest of one run: what kind of computation, with which request, under which schema."""
    return {"kind": kind, "request": _normalise(request), "result_schema": RESULT_SCHEMA_VERSION}


def library_versions() -> dict[str, str]:
    """Versions that may change numbers; recorded with each run (not part of the hash)."""
    versions = {"python": platform.python_version(), "fairness_core": fairness_core.__version__}
    for name in _TRACKED_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def signature(manifest: dict[str, Any], short: bool = True) -> str:
    """A one-line, human-readable reproducibility signature for printing beside a result."""
    digest = manifest_hash(manifest)
    request = manifest.get("request", {})
    parts = [f"kind:{manifest.get('kind')}", f"hash:{digest[:12] if short else digest}"]
    for key in sorted(request):
        value = request[key]
        if isinstance(value, (str, int, float, bool)):
            parts.append(f"{key}:{value}")
    parts.append(f"core:{fairness_core.__version__}")
    return "|".join(parts)


def file_fingerprint(path: Path, chunk_size: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes (used for dataset and GGUF identity)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def json_safe(value: Any) -> Any:
    """`value` with every NaN / ±inf float (Python, numpy or pandas) as None, numpy scalars and arrays as Python
    numbers and lists, tuples as lists: what strict JSON can hold (it has no NaN or Infinity)."""
    import math

    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else str(k)): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    import numpy as np

    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return json_safe(value.item())
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:  # pandas is a dependency; kept optional here so the CLI core stays light
        pass
    return str(value)


def strict_json(value: Any, **dumps_options: Any) -> str:
    """JSON text that any parser reads: NaN and ±inf written as null (`json.dumps` would write NaN/Infinity)."""
    return json.dumps(json_safe(value), allow_nan=False, ensure_ascii=False, **dumps_options)
