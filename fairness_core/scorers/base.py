"""The scorer plug-in contract: a scorer turns generated texts into named float columns.

A scorer declares its typed options (a frozen dataclass), a version, which text of a generation it
reads (`reads`), and whether it needs the prompts. Its `signature()` (name, version, options, model
identity) is the only thing that goes into manifests and store keys, so a changed option or model
is a different score and a stored score is reused only when the signature matches.

Adding a scorer = one class in one file, decorated with `@register_scorer` and imported in
`fairness_core/scorers/__init__.py`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from fairness_core.models.interfaces import ModelUnavailableError

#: What a scorer reads from a generation. "scored_text": prompt + continuation, names redacted (the
#: sentence, as sentiment/regard classifiers saw it in the paper); "continuation": only what the
#: model wrote, names redacted; "generation": the continuation as generated (with its prompt).
READS = ("scored_text", "continuation", "generation")


MEASURE_KINDS = ("rate", "mean")
_OPS = {"<=": np.less_equal, ">=": np.greater_equal}


@dataclass(frozen=True)
class Measure:
    """How a page summarises one scorer column per group: a rate (share of generations with
    `value op threshold`) or a mean. Scorers declare them, so summaries need no scorer names.

    NaN values (a text the scorer could not score) are left out of both the count and the total.
    """

    column: str  # the scorer column it reads
    name: str  # the summary column, e.g. "negative_sentiment_rate"
    label: str  # plain words for pages and charts
    kind: str = "rate"  # rate | mean
    op: str = ">="
    threshold: float = 0.5
    adjustable: bool = False  # a page may move the threshold (re-scoring nothing: thresholds apply at read time)

    def __post_init__(self) -> None:
        if self.kind not in MEASURE_KINDS:
            raise ValueError(f"measure kind must be one of {', '.join(MEASURE_KINDS)} (got {self.kind!r})")
        if self.op not in _OPS:
            raise ValueError(f"measure op must be one of {', '.join(_OPS)} (got {self.op!r})")

    def values(self, column: np.ndarray, threshold: float | None = None) -> np.ndarray:
        """Per generation: 1.0/0.0 for a rate (NaN stays NaN), the value itself for a mean."""
        data = np.asarray(column, dtype=float)
        if self.kind == "mean":
            return data
        cut = self.threshold if threshold is None else float(threshold)
        flags = _OPS[self.op](np.nan_to_num(data, nan=0.0), cut).astype(float)
        return np.where(np.isnan(data), np.nan, flags)


class ScorerOptionError(ValueError):
    """An unknown scorer, an option that does not apply, or a bad option value (one sentence)."""


@dataclass(frozen=True)
class ScorerOptions:
    """Base of each scorer's options; a scorer without options uses it as is."""


class Scorer(ABC):
    name: ClassVar[str]
    label: ClassVar[str]
    version: ClassVar[str]
    Options: ClassVar[type[ScorerOptions]] = ScorerOptions
    reads: ClassVar[str] = "scored_text"
    needs_prompts: ClassVar[bool] = False
    #: how summaries aggregate this scorer's columns per group (rates and means); columns not listed
    #: are stored and shown per generation only
    measures: ClassVar[tuple[Measure, ...]] = ()
    #: the values a column can take, (low, high), where it is not `default_range` (None: unbounded); a threshold
    #: outside them would flag every text or none, so a judge audit refuses it
    value_ranges: ClassVar[dict[str, tuple[float, float] | None]] = {}
    default_range: ClassVar[tuple[float, float] | None] = (0.0, 1.0)  # probabilities, shares, 0/1 flags

    def value_range(self, column: str) -> tuple[float, float] | None:
        """(lowest, highest) value `column` can take, or None when it is unbounded (a log-probability)."""
        return self.value_ranges.get(column, self.default_range)

    def __init__(self, options: ScorerOptions | None = None) -> None:
        if options is None:
            options = self.Options()
        if not isinstance(options, self.Options):
            raise ScorerOptionError(f"{self.name} takes {self.Options.__name__}, not {type(options).__name__}")
        self.options = options

    @property
    @abstractmethod
    def columns(self) -> tuple[str, ...]:
        """Names of the float columns `score` returns (may load the model to learn its labels)."""

    def model_manifest(self) -> dict[str, Any] | None:
        """Identity of the model behind the scorer (None for pure rules)."""
        return None

    def signature(self) -> dict[str, Any]:
        record: dict[str, Any] = {"name": self.name, "version": self.version, "options": asdict(self.options)}
        model = self.model_manifest()
        if model is not None:
            record["model"] = model
        return record

    def signature_hash(self) -> str:
        payload = json.dumps(self.signature(), sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def check_available(self) -> None:
        """Raise ModelUnavailableError (one sentence) when the scorer cannot run here.

        The default asks for the columns, which makes a model-backed scorer load its model.
        """
        _ = self.columns

    @abstractmethod
    def score(self, texts: Sequence[str], prompts: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """One float array per column, each of len(texts); NaN where a text cannot be scored."""

    def _require_prompts(self, texts: Sequence[str], prompts: Sequence[str] | None) -> Sequence[str]:
        if prompts is None or len(prompts) != len(texts):
            raise ValueError(f"the {self.name} scorer needs one prompt per text")
        return prompts


SCORERS: dict[str, type[Scorer]] = {}


def register_scorer(cls: type[Scorer]) -> type[Scorer]:
    """Class decorator: make a scorer available by its `name` to pages, the CLI and requests."""
    if cls.reads not in READS:
        raise ValueError(f"scorer {cls.__name__} reads {cls.reads!r}; choose one of {', '.join(READS)}")
    existing = SCORERS.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"two scorers are named {cls.name!r}: {existing.__name__} and {cls.__name__}")
    SCORERS[cls.name] = cls
    return cls


def scorer_from_request(name: str, **options: Any) -> Scorer:
    """Build a registered scorer from plain values; an unknown name or option is one sentence.

    The built-in scorers are registered: importing this module runs `fairness_core/scorers/__init__.py` first."""
    cls = SCORERS.get(name)
    if cls is None:
        raise ScorerOptionError(f"unknown scorer {name!r}; known scorers: {', '.join(sorted(SCORERS))}")
    fields = {f.name: f for f in dataclasses.fields(cls.Options)}
    unknown = [key for key in options if key not in fields]
    if unknown:
        takes = f"its options are: {', '.join(fields)}" if fields else "it takes no options"
        raise ScorerOptionError(f"{name} takes no option {unknown[0]!r}; {takes}")
    try:
        return cls(cls.Options(**options))
    except (TypeError, ValueError) as error:
        raise ScorerOptionError(f"{name}: {error}") from None


def column_name(label: str) -> str:
    """A classifier label as a column-name fragment: 'LABEL_0' -> 'label_0', 'very bad' -> 'very_bad'."""
    return re.sub(r"[^0-9a-z]+", "_", label.lower()).strip("_") or "label"


def classifier_spec(model: str) -> Any:
    """The ModelSpec of a classifier (preset key, hub id or local directory); nothing is loaded."""
    from fairness_core.models import resolve_model

    try:
        return resolve_model(model, "classifier")
    except ValueError as error:
        raise ModelUnavailableError(f"classifier {model} is unavailable here: {error}") from None


def load_classifier(model: str, what: str) -> Any:
    """A text classifier through the process cache, or ModelUnavailableError in one sentence.

    Offline, a hub id that is not cached fails fast instead of letting transformers retry.
    """
    from fairness_core.models import load_model
    from fairness_core.models.presets import hub_reachable
    from fairness_core.models.spec import hub_cached_revision

    spec = classifier_spec(model)
    if not spec.is_local and hub_cached_revision(spec.source) is None and not hub_reachable():
        raise ModelUnavailableError(f"{what} is unavailable here: {spec.source} is not in the local Hugging Face "
                                    "cache and the hub cannot be reached")
    try:
        return load_model(spec)
    except ValueError as error:
        raise ModelUnavailableError(f"{what} is unavailable here: {error}") from None
