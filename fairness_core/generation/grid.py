"""Decoding grids: parsing `"top_p=0.5,0.9;temperature=0.7"`, the paper's presets, config labels."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from fairness_core.data.quoting import quoted
from fairness_core.models.interfaces import DecodingConfig

#: The paper's grids (Dhamala et al., Sec. 3): each varies one knob, the others off.
GRID_PRESETS: dict[str, str] = {
    "top-p (paper)": "top_p=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9",
    "top-k (paper)": "top_k=10,25,50,75,100,250,500,1000,1500,2000",
    "temperature (paper)": "temperature=0.4,0.5,0.6,0.7,0.8,0.9",
    "top-p, quick (0.5, 0.7, 0.9)": "top_p=0.5,0.7,0.9",
}

#: transformers' long-standing sampling default the paper calls "the library default".
LIBRARY_DEFAULT = {"top_p": 0.9}

_ALIASES = {"p": "top_p", "top_p": "top_p", "topp": "top_p", "k": "top_k", "top_k": "top_k", "topk": "top_k",
            "t": "temperature", "temp": "temperature", "temperature": "temperature"}


class GridError(ValueError):
    """A grid string that cannot be parsed or contains an invalid value; the message says which."""


def parse_grid(text: str) -> dict[str, list[float | int]]:
    """`"top_p=0.5,0.9;temperature=0.7"` -> {"top_p": [0.5, 0.9], "temperature": [0.7]} (validated)."""
    axes: dict[str, list[float | int]] = {}
    for part in filter(None, (piece.strip() for piece in text.split(";"))):
        if "=" not in part:
            raise GridError(f"grid part {quoted(part)} is not of the form name=v1,v2 (e.g. top_p=0.5,0.9)")
        name, values_text = (s.strip() for s in part.split("=", 1))
        key = _ALIASES.get(name.lower())
        if key is None:
            raise GridError(f"unknown decoding knob {quoted(name)} in the grid; use top_p, top_k or temperature")
        if key in axes:
            raise GridError(f"{key} appears twice in the grid")
        values: list[float | int] = []
        for raw in filter(None, (v.strip() for v in values_text.split(","))):
            try:
                value: float | int = int(raw) if key == "top_k" else float(raw)
            except (ValueError, OverflowError):
                kind = "an integer" if key == "top_k" else "a number"
                raise GridError(f"{key} value {quoted(raw)} is not {kind}") from None
            values.append(value)
        if not values:
            raise GridError(f"{key} has no values in the grid")
        axes[key] = values
    if not axes:
        raise GridError("the grid is empty; give e.g. top_p=0.5,0.9")
    for key, values in axes.items():
        for value in values:
            problem = _problem(key, value)
            if problem:
                raise GridError(problem)
    return axes


def _problem(key: str, value: float) -> str | None:
    if not math.isfinite(value):
        return f"{key} must be a finite number; got {value}"
    if key == "top_p" and not 0 < value <= 1:
        return f"top_p must be in (0, 1]; got {value:g}"
    if key == "top_k" and value <= 0:
        return f"top_k must be a positive integer; got {value}"
    if key == "temperature" and value <= 0:
        return f"temperature must be > 0; got {value:g}"
    return None


def expand_grid(axes: dict[str, list[float | int]], max_new_tokens: int) -> list[DecodingConfig]:
    """Cartesian product of the axes as DecodingConfigs (knobs not in the grid are off)."""
    keys = list(axes)
    configs = []
    for combo in itertools.product(*(axes[k] for k in keys)):
        values = dict(zip(keys, combo, strict=True))
        configs.append(DecodingConfig(temperature=float(values.get("temperature", 1.0)),
                                      top_k=int(values["top_k"]) if "top_k" in values else None,
                                      top_p=float(values["top_p"]) if "top_p" in values else None,
                                      max_new_tokens=max_new_tokens))
    return list(dict.fromkeys(configs))  # duplicates (e.g. "0.5,0.50") are one config


def config_dict(config: DecodingConfig) -> dict[str, Any]:
    """The knobs that are set, as the CLI prints them: e.g. {"top_p": 0.9, "temperature": 1.0}."""
    record: dict[str, Any] = {"temperature": config.temperature}
    if config.top_p is not None:
        record["top_p"] = config.top_p
    if config.top_k is not None:
        record["top_k"] = config.top_k
    return record


def config_from_dict(record: dict[str, Any], max_new_tokens: int) -> DecodingConfig:
    return DecodingConfig(temperature=float(record.get("temperature", 1.0)),
                          top_k=int(record["top_k"]) if record.get("top_k") is not None else None,
                          top_p=float(record["top_p"]) if record.get("top_p") is not None else None,
                          max_new_tokens=max_new_tokens)


def varying_knob(configs: Sequence[DecodingConfig]) -> str | None:
    """The one knob that changes across configs (for the x axis), or None when several or none do."""
    changing = [k for k in ("top_p", "top_k", "temperature")
                if len({config_dict(c).get(k) for c in configs}) > 1]
    return changing[0] if len(changing) == 1 else None


def is_library_default(config: DecodingConfig) -> bool:
    return config.top_p == LIBRARY_DEFAULT["top_p"] and config.top_k is None and config.temperature == 1.0
