"""The metric registry: `@register_metric` on a class, `METRICS` (name -> class), and
`metric_from_request(name, **options)` that builds one from plain values.

Options that a metric does not take are an error with one sentence ("bleu takes no option 'idf';
its options are: config"), never silently ignored. The built-in metrics register when
`fairness_core.metrics` is imported; a metric elsewhere registers when its module is imported.
"""

from __future__ import annotations

import types
import typing
from dataclasses import fields
from typing import Any

from fairness_core.metrics.base import FAMILIES, Metric, MetricOptionError, MetricOptions, option_names

METRICS: dict[str, type[Metric]] = {}


def register_metric(cls: type[Metric]) -> type[Metric]:
    """Class decorator: add a metric to `METRICS` under `cls.name` (checks the class contract)."""
    for attribute in ("name", "label", "family", "version", "outputs", "Options"):
        if not hasattr(cls, attribute):
            raise TypeError(f"metric class {cls.__name__} lacks the class attribute {attribute!r}")
    if cls.family not in FAMILIES:
        raise TypeError(f"metric {cls.name}: family must be one of {', '.join(FAMILIES)} (got {cls.family!r})")
    if not cls.outputs:
        raise TypeError(f"metric {cls.name}: outputs must name at least one output")
    if not (isinstance(cls.Options, type) and issubclass(cls.Options, MetricOptions)):
        raise TypeError(f"metric {cls.name}: Options must subclass MetricOptions")
    existing = METRICS.get(cls.name)
    if existing is not None and existing.__qualname__ != cls.__qualname__:
        raise TypeError(f"metric name {cls.name!r} is already registered by {existing.__module__}.{existing.__name__}")
    METRICS[cls.name] = cls
    return cls


def _coerce(name: str, field_name: str, annotation: Any, value: Any) -> Any:
    """Plain values (CLI strings, JSON) to the option's declared type; one sentence when impossible."""
    hint = annotation
    allowed = typing.get_args(hint) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union \
        else (hint,)
    if value is None:
        if type(None) in allowed:
            return None
        raise MetricOptionError(f"{name} option {field_name!r} needs a value")
    for kind in allowed:
        if kind is type(None):
            continue
        if kind is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "false", "0", "no"):
                return value.strip().lower() in ("true", "1", "yes")
            continue
        if kind is int:
            if isinstance(value, bool):
                continue
            if isinstance(value, int):
                return value
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                return int(value)
            continue
        if kind is float:
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
            try:
                return float(value) if isinstance(value, str) else value
            except ValueError:
                continue
        if kind is str and isinstance(value, str):
            return value
    raise MetricOptionError(f"{name} option {field_name!r} cannot be {value!r}")


def metric_options(name: str, **options: Any) -> MetricOptions:
    """Validate plain option values for metric `name` and return its typed options (loads nothing)."""
    cls = metric_class(name)
    known = {f.name: f for f in fields(cls.Options)}
    hints = typing.get_type_hints(cls.Options)
    for key in options:
        if key not in known:
            listed = ", ".join(known) or "none"
            raise MetricOptionError(f"{name} takes no option {key!r}; its options are: {listed}")
    values = {key: _coerce(name, key, hints[key], value) for key, value in options.items()}
    built = cls.Options(**values)
    problems = built.problems()
    if problems:
        raise MetricOptionError(f"{name}: {problems[0]}")
    return built


def metric_class(name: str) -> type[Metric]:
    if name not in METRICS:
        raise MetricOptionError(f"unknown metric {name!r}; choose from {', '.join(METRICS)}")
    return METRICS[name]


def metric_from_request(name: str, **options: Any) -> Metric:
    """Build metric `name` from plain option values (models load lazily, on first use)."""
    return metric_class(name)(metric_options(name, **options))


def metric_from_signature(signature: dict[str, Any]) -> Metric:
    """Rebuild a metric from its `signature()` (what a job shard carries)."""
    return metric_from_request(signature["name"], **signature.get("options", {}))


def metric_names() -> list[str]:
    """Registered names, n-gram metrics first, then matching, regression, generation, translation."""
    return sorted(METRICS, key=lambda n: (FAMILIES.index(METRICS[n].family), list(METRICS).index(n)))


def options_help(name: str) -> str:
    cls = metric_class(name)
    return ", ".join(option_names(cls.Options)) or "none"


def parse_metric_list(text: str) -> list[str]:
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise MetricOptionError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(METRICS)}")
    if not names:
        raise MetricOptionError("no metric given")
    return list(dict.fromkeys(names))
