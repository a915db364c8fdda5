"""Requests of the CAIRO page and CLI: the bias table (validated) and the `cairo run` pipeline request.

Bias table = CSV with columns `system,metric,prompt_set,bias[,n_prompts]` (extra columns ignored);
each metric has a set named `original`. Rules, each bad case one sentence naming the file, row and
field: a missing column, a non-numeric bias or prompt count, a duplicated (system, metric, prompt_set),
a metric without `original`, fewer than 2 metrics, fewer than 3 systems. Odd rows that are data:
an empty or NaN bias is skipped and counted; a system lacking some set of a metric is left out of that
metric's pairs and counted (a combination needs every system's value).

Optional column `subgroup_scores` (written by `cairo run`): JSON {subgroup: [mean score over its generations,
generations]} per row; the released code's pooled combination bias (`combination="released"`) needs it.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.cairo.data import ORIGINAL
from fairness_core.cairo.search import MetricSets, PooledSets

REQUIRED = ("system", "metric", "prompt_set", "bias")
COMBINATIONS = ("weighted", "released")
MIN_SYSTEMS = 3


class BiasTableError(ValueError):
    """A bias table that cannot be used; the message is one sentence naming the file, row and field."""


@dataclass
class BiasTable:
    systems: list[str]
    frame: pd.DataFrame  # validated rows (bias float, n_prompts float or NaN)
    weighted: bool
    skipped_rows: int = 0  # empty / NaN bias
    notes: list[str] = field(default_factory=list)

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(self.frame["metric"]))

    def sets_for(self, metric: str, systems: list[str] | None = None) -> tuple[MetricSets, list[str]]:
        """The metric's sets × systems matrix over the systems that have every set (original first)."""
        part = self.frame[self.frame["metric"] == metric]
        names = [ORIGINAL, *[s for s in dict.fromkeys(part["prompt_set"]) if s != ORIGINAL]]
        wide = part.pivot(index="prompt_set", columns="system", values="bias").reindex(names)
        pool = systems if systems is not None else self.systems
        complete = [s for s in pool if s in wide.columns and wide[s].notna().all()]
        values = wide[complete].to_numpy(dtype=float)
        counts = None
        if self.weighted:
            counts = part.pivot(index="prompt_set", columns="system", values="n_prompts").reindex(names)[complete]
            counts = counts.to_numpy(dtype=float)
        return MetricSets(tuple(names), values, counts), complete

    @property
    def pooled(self) -> bool:
        """Whether every row carries its per-subgroup scores (the released combination variant needs them)."""
        return "subgroup_scores" in self.frame and self.frame["subgroup_scores"].map(bool).all()

    def pooled_for(self, metric: str, systems: list[str]) -> PooledSets:
        """The metric's per-subgroup generation means and counts, sets (original first) × systems × subgroups."""
        part = self.frame[self.frame["metric"] == metric]
        names = [ORIGINAL, *[s for s in dict.fromkeys(part["prompt_set"]) if s != ORIGINAL]]
        subgroups = sorted({g for scores in part["subgroup_scores"] for g in scores})
        means = np.zeros((len(names), len(systems), len(subgroups)))
        counts = np.zeros_like(means)
        cells = {(r.prompt_set, r.system): r.subgroup_scores for r in part.itertuples()}
        for i, name in enumerate(names):
            for j, system in enumerate(systems):
                for k, group in enumerate(subgroups):
                    mean, count = cells[(name, system)].get(group, (0.0, 0))
                    means[i, j, k], counts[i, j, k] = mean, count
        return PooledSets(tuple(names), means, counts)

    def pair(self, a: str, b: str, combination: str = "weighted") -> tuple[Any, Any, list[str]]:
        """Both metrics' sets over the systems that have every set of both: `MetricSets` (weighted) or
        `PooledSets` (released)."""
        _, complete_a = self.sets_for(a)
        _, complete_b = self.sets_for(b)
        common = [s for s in self.systems if s in complete_a and s in complete_b]
        if len(common) < MIN_SYSTEMS:
            raise BiasTableError(f"metrics {a!r} and {b!r} have only {len(common)} system(s) with a bias for every "
                                 f"prompt set; a correlation needs at least {MIN_SYSTEMS}")
        if combination == "released":
            if not self.pooled:
                raise BiasTableError("the released combination recomputes Eq. 1 on pooled generations and needs each "
                                     "row's subgroup_scores (written by `cairo run`); this table has none")
            return self.pooled_for(a, common), self.pooled_for(b, common), common
        if combination != "weighted":
            raise BiasTableError(f"unknown combination {combination!r}; choose {' or '.join(COMBINATIONS)}")
        sets_a, _ = self.sets_for(a, common)
        sets_b, _ = self.sets_for(b, common)
        return sets_a, sets_b, common


#: a bias table is a few thousand rows; a bigger file is not one
MAX_TABLE_BYTES = 20_000_000


def read_bias_table_file(path: str | Path) -> BiasTable:
    """The bias table in the CSV file at `path` (the CLI's --bias-table); errors name the file."""
    path = Path(path)
    name = str(path)
    try:
        if path.is_dir():
            raise BiasTableError(f"{name} is a folder; give the bias table's CSV file")
        size = path.stat().st_size
        if size > MAX_TABLE_BYTES:
            raise BiasTableError(f"{name} is {size / 1e6:.0f} MB; a bias table is at most "
                                 f"{MAX_TABLE_BYTES / 1e6:.0f} MB")
        data = path.read_bytes()
    except FileNotFoundError:
        raise BiasTableError(f"{name} does not exist") from None
    except OSError as error:
        raise BiasTableError(f"{name} cannot be read ({error.strerror or type(error).__name__})") from None
    return read_bias_table(data, name)


def read_bias_table(source: str | bytes | pd.DataFrame, label: str = "the bias table") -> BiasTable:
    """Parse and validate a bias table: CSV text, CSV bytes (an upload) or a DataFrame.

    Never a path, whatever the text looks like: an upload holding one line `/etc/passwd` is a CSV without the
    needed columns. A file on disk goes through `read_bias_table_file`.
    """
    name = label
    if isinstance(source, pd.DataFrame):
        raw = source.astype(object).copy()
    else:
        if isinstance(source, bytes):
            if len(source) > MAX_TABLE_BYTES:
                raise BiasTableError(f"{name} is {len(source) / 1e6:.0f} MB; a bias table is at most "
                                     f"{MAX_TABLE_BYTES / 1e6:.0f} MB")
            try:
                source = source.decode("utf-8-sig")
            except UnicodeDecodeError as error:
                raise BiasTableError(f"{name} is not UTF-8 text (byte {error.start}); save it as a UTF-8 CSV") \
                    from None
        elif not isinstance(source, str):
            raise TypeError(f"read_bias_table takes CSV text, bytes or a DataFrame, not {type(source).__name__}; "
                            "use read_bias_table_file for a path")
        if not source.strip():
            raise BiasTableError(f"{name} is empty; it needs a header line system,metric,prompt_set,bias[,n_prompts] "
                                 "and one row per system, metric and prompt set")
        try:
            raw = pd.read_csv(io.StringIO(source), dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
            raise BiasTableError(f"{name} is not a readable CSV ({str(error).splitlines()[0]})") from None
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise BiasTableError(f"{name} lacks column(s) {', '.join(missing)}; it needs "
                             "system,metric,prompt_set,bias[,n_prompts]")
    weighted = "n_prompts" in raw.columns
    has_scores = "subgroup_scores" in raw.columns
    rows, seen, skipped = [], {}, 0
    for position, record in enumerate(raw.to_dict("records")):
        line = position + 2  # header is line 1
        system, metric, prompt_set = (str(record[c]).strip() for c in ("system", "metric", "prompt_set"))
        for column, value in (("system", system), ("metric", metric), ("prompt_set", prompt_set)):
            if not value or value.lower() == "nan":
                raise BiasTableError(f"{name} row {line}: {column} is empty")
        where = f"{name} row {line} (system {system}, metric {metric}, prompt_set {prompt_set})"
        text = str(record["bias"]).strip()
        if text == "" or text.lower() in ("nan", "na", "none"):
            skipped += 1
            continue
        try:
            bias = float(text)
        except ValueError:
            raise BiasTableError(f"{where}: bias {text!r} is not a number") from None
        if not math.isfinite(bias):
            raise BiasTableError(f"{where}: bias {text!r} is not a finite number")
        count = float("nan")
        if weighted:
            count_text = str(record["n_prompts"]).strip()
            try:
                count = float(count_text)
            except ValueError:
                raise BiasTableError(f"{where}: n_prompts {count_text!r} is not a number") from None
            if not (math.isfinite(count) and count > 0):
                raise BiasTableError(f"{where}: n_prompts must be a positive finite number (got {count_text})")
        scores = _subgroup_scores(str(record["subgroup_scores"]), where) if has_scores else {}
        key = (system, metric, prompt_set)
        if key in seen:
            raise BiasTableError(f"{name} rows {seen[key]} and {line} both give the bias of system {system} on "
                                 f"metric {metric}, prompt_set {prompt_set}; keep one")
        seen[key] = line
        rows.append({"system": system, "metric": metric, "prompt_set": prompt_set, "bias": bias, "n_prompts": count,
                     "subgroup_scores": scores})
    frame = pd.DataFrame(rows, columns=["system", "metric", "prompt_set", "bias", "n_prompts", "subgroup_scores"])
    if frame.empty:
        raise BiasTableError(f"{name} has no rows with a bias")
    metrics = list(dict.fromkeys(frame["metric"]))
    for metric in metrics:
        if ORIGINAL not in set(frame.loc[frame["metric"] == metric, "prompt_set"]):
            raise BiasTableError(f"{name}: metric {metric!r} has no prompt set named {ORIGINAL!r} (every metric needs "
                                 "its original prompts)")
    if len(metrics) < 2:
        raise BiasTableError(f"{name} has one metric ({metrics[0]}); CAIRO correlates two or more")
    systems = list(dict.fromkeys(frame["system"]))
    if len(systems) < MIN_SYSTEMS:
        raise BiasTableError(f"{name} has {len(systems)} system(s) ({', '.join(systems)}); a correlation across "
                             f"systems needs at least {MIN_SYSTEMS}")
    table = BiasTable(systems, frame, weighted, skipped)
    if skipped:
        table.notes.append(f"{skipped} row(s) with an empty or NaN bias were skipped")
    for metric in metrics:
        _, complete = table.sets_for(metric)
        left_out = [s for s in systems if s not in complete]
        if left_out:
            table.notes.append(f"metric {metric}: system(s) {', '.join(left_out)} lack a bias for some prompt set and "
                               "are left out of its pairs")
    return table


def _subgroup_scores(text: str, where: str) -> dict[str, tuple[float, int]]:
    """A row's `subgroup_scores` JSON ({subgroup: [mean, generations]}); {} when empty."""
    text = text.strip()
    if not text or text.lower() == "nan":
        return {}
    try:
        raw = json.loads(text)
        scores = {str(g): (float(v[0]), int(v[1])) for g, v in raw.items()}
    except (ValueError, TypeError, AttributeError, IndexError, KeyError):
        raise BiasTableError(f"{where}: subgroup_scores is not JSON {{subgroup: [mean, generations]}}") from None
    if any(not math.isfinite(m) or n < 0 for m, n in scores.values()):
        raise BiasTableError(f"{where}: subgroup_scores needs finite means and non-negative counts")
    return scores


def metric_pairs(table: BiasTable) -> list[tuple[str, str]]:
    metrics = table.metrics
    return [(a, b) for i, a in enumerate(metrics) for b in metrics[i + 1 :]]


def as_float(value: float) -> float | None:
    """JSON-safe float (NaN -> None)."""
    return None if value is None or not np.isfinite(value) else float(value)
