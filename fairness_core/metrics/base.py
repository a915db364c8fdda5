"""The plug-in interface every text-generation metric implements (docs/FOUNDATION.md, "Metrics").

A metric turns parallel lists of candidates and references into per-example *statistics* (one
array per output, e.g. BERTScore's F, P and R; the first output is the primary one). Aggregation —
rescaling, gaps, bias, confidence intervals — lives in `fairness_core.bias.paired`, so every metric
is aggregated the same way.

A metric's identity is its `signature()`: name, version, options (and the model's manifest for
model-based metrics). That is the only metric information that goes into a run manifest. A metric
that needs corpus statistics (idf, weights) computes them in `prepare()` once over the whole corpus;
the state is passed to every `score()` call and its hash goes into the manifest too.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

import numpy as np

FAMILIES = ("n-gram", "matching", "regression", "generation", "translation")


class MetricOptionError(ValueError):
    """An option a metric does not take, or a value it cannot use; the message is one sentence."""


@dataclass(frozen=True)
class MetricOptions:
    """Base of every metric's options; subclasses add typed fields with defaults."""

    def problems(self) -> list[str]:
        """Values that are the right type but unusable (one sentence each)."""
        return []


class Metric(ABC):
    """Scores candidates against references; higher = more similar/better."""

    name: ClassVar[str]
    label: ClassVar[str]
    family: ClassVar[str]
    version: ClassVar[str] = "1"
    outputs: ClassVar[tuple[str, ...]] = ("score",)
    Options: ClassVar[type[MetricOptions]] = MetricOptions
    needs_sources: ClassVar[bool] = False
    #: one sentence for the picker and the CLI help (what this metric is, which implementation)
    description: ClassVar[str] = ""

    def __init__(self, options: MetricOptions | None = None) -> None:
        options = self.Options() if options is None else options
        if not isinstance(options, self.Options):
            raise MetricOptionError(f"{self.name} takes {self.Options.__name__}, not {type(options).__name__}")
        problems = options.problems()
        if problems:
            raise MetricOptionError(f"{self.name}: {problems[0]}")
        self.options = options

    @property
    def primary(self) -> str:
        return self.outputs[0]

    def output_name(self, output: str) -> str:
        """The metric column a stored row carries: the name for the primary output, name.output else."""
        return self.name if output == self.primary else f"{self.name}.{output}"

    def signature(self) -> dict[str, Any]:
        """Everything that determines the scores (the metric's part of a run manifest; loads no model)."""
        return {"name": self.name, "version": self.version, "options": asdict(self.options)}

    def check_available(self) -> None:  # noqa: B027  (most metrics need nothing; model metrics override)
        """Raise ModelUnavailableError (one sentence) when this metric cannot run on this machine."""

    def validate(self) -> None:  # noqa: B027  (most metrics have nothing to check against a model)
        """Raise MetricOptionError (one sentence) for an option value the chosen model cannot use (a layer
        it does not have, a baseline without that layer). Called for every metric before any run starts."""

    def prepare(self, candidates: Sequence[str], references: Sequence[str],
                sources: Sequence[str] | None = None) -> dict[str, Any] | None:
        """Corpus state (idf, weights) computed once over the whole corpus; JSON-able. None = none needed."""
        return None

    @abstractmethod
    def score(self, candidates: Sequence[str], references: Sequence[str], sources: Sequence[str] | None = None,
              state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        """{output: array of len(candidates)}; candidates[i] is scored against references[i]."""


def option_names(options_class: type[MetricOptions]) -> list[str]:
    return [f.name for f in fields(options_class)]


def state_hash(state: dict[str, Any] | None) -> str | None:
    """SHA-256 of a prepare() state's canonical JSON (None when the metric has no corpus state)."""
    if state is None:
        return None
    payload = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def check_parallel(candidates: Sequence[str], references: Sequence[str]) -> None:
    if len(candidates) != len(references):
        raise ValueError(f"got {len(candidates)} candidates but {len(references)} references")
