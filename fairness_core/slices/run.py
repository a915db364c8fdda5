"""Slices of a stored generation run: its per-unit sums read through the seam every view reads runs with
(`fairness_core.reading`), its attributes, its examples.

The attributes a generation run carries are the prompt's family, group and template (`source`) and the system that
wrote it (`setting`: a model under one decoding setting). The measure is read exactly as the decoding page and
Compare read it (`reading.read_run`: a rate at the run's own threshold — recorded beside the run by the sweep that
made it, `reading.settings` — NaN scores left out), with the design's units and the run's resamples unless others are
given, so a cell's value here is the page's value of the same cell.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from fairness_core.reading import read_run, settings_of
from fairness_core.slices.cells import (
    DEFAULT_FDR,
    DEFAULT_MIN_UNITS,
    DEFAULT_PERMUTATIONS,
    SlicesError,
    SliceTable,
    check_options,
    slice_cells,
)
from fairness_core.store import RunInfo, RunStore

ATTRIBUTES = ("family", "group", "source", "setting")
#: other names people use for the same attributes: a system is what `setting` names (a model under one decoding
#: setting), a template is the prompt's `source`
ALIASES = {"system": "setting", "template": "source"}
DEFAULT_MEASURE = "negative_sentiment_rate"
#: measures where a lower value is the worse one (a mean sentiment, a fluency proxy); every declared rate counts
#: something bad (negative sentiment, toxicity, negative regard, hurtful words), so higher is worse there
LOWER_IS_WORSE = frozenset({"vader_compound", "quality_logprob", "quality_mean_logprob"})
N_EXAMPLES = 5


def parse_by(text: str | Sequence[str] | None, known: Sequence[str] = ATTRIBUTES) -> list[list[str]] | None:
    """`--by family,group` (one set) or several `--by` (several sets) -> attribute sets; None for the default.
    `known`: the attributes there are (a run's own, e.g. gender and race, besides `ATTRIBUTES`)."""
    if text is None:
        return None
    items = [text] if isinstance(text, str) else list(text)
    sets = []
    for item in items:
        names = [ALIASES.get(name.strip(), name.strip()) for name in str(item).split(",")]
        if not item.strip() or any(not name for name in names):
            raise SlicesError(f"--by takes attribute names separated by commas, e.g. family,group (got {item!r})")
        unknown = [name for name in names if name not in known]
        if unknown:
            raise SlicesError(f"this run has no attribute {unknown[0]!r}; choose among: " + ", ".join(known))
        sets.append(names)
    return sets or None


def own_attributes(sums: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The per-unit sums with one column per attribute of prompts about several at once (their `attributes`
    JSON: {"gender": "woman", "race": "Black"}), and those attributes' names in first-seen order; a prompt without
    a value of one reads "(none)". A name that is already a column (family, group, ...) is prefixed "attribute "."""
    if "attributes" not in sums or sums["attributes"].isna().all():
        return sums.drop(columns=["attributes"], errors="ignore"), []
    parsed = [json.loads(text) if isinstance(text, str) else {} for text in sums["attributes"]]
    names = list(dict.fromkeys(str(name) for record in parsed for name in record))
    taken = {*ATTRIBUTES, *sums.columns}
    columns = {name: (f"attribute {name}" if name in taken else name) for name in names}
    out = sums.drop(columns=["attributes"]).assign(**{
        column: [str(record.get(name, "(none)")) for record in parsed] for name, column in columns.items()})
    return out, list(columns.values())


def slice_run(store: RunStore, run_id: str, by: str | Sequence[str] | None = None, measure: str = DEFAULT_MEASURE,
              min_units: int = DEFAULT_MIN_UNITS, fdr: float = DEFAULT_FDR, n_resamples: int | None = None,
              n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0, n_examples: int = 3,
              thresholds: dict[str, float] | None = None) -> tuple[SliceTable, dict[str, Any]]:
    """The slice table of a stored generation run and a record of the run (id, what it is, examples of the top
    cells: up to `n_examples` tested cells, each with its worst generations and their scores) and the settings it was
    read with (`reading.settings`: the run's own thresholds unless `thresholds` are given — a check reads at its
    spec's — and its resamples unless `n_resamples` is given)."""
    check_options(min_units, fdr)
    parse_by(by, [*ATTRIBUTES, *_named(by)])  # the form of --by, before reading (its names are checked below)
    info = store.get_run(run_id.strip()) if store.path.exists() else None
    if info is None:
        raise SlicesError(f"no run {run_id!r} in {store.path}")
    if info.kind != "generation":
        raise SlicesError(f"run {info.run_id} is a {info.kind} run; slices reads generation runs (the decoding page, "
                          "`decoding`, `runs import generations`)")
    try:
        settings = settings_of(store, info, thresholds, n_resamples=n_resamples)
        sums = read_run(store, info, ["family", "group", "source", "attributes"], [measure], settings).sums
    except ValueError as error:  # a run the readers cannot read as asked (ReadError), resamples below 1
        raise SlicesError(str(error)) from None
    sums = sums[sums["metric"] == measure] if not sums.empty else sums
    if sums.empty:
        available = sorted(set(read_run(store, info, ["family"], settings=settings).sums["metric"]) - {"generation"})
        raise SlicesError(f"run {info.run_id} has no measure {measure!r}; choose one of: "
                          + (", ".join(available) or "(none: the run has no scores)"))
    labels = setting_labels(info)
    sums = sums.assign(setting=sums["arm"].map(lambda key: labels.get(str(key), str(key))))
    sums, crossed = own_attributes(sums)
    known = [*ATTRIBUTES, *crossed]
    sets = parse_by(by, known)
    default_sets = None
    if crossed and not sums[crossed].eq("(none)").any().any():
        # every prompt carries its attributes: its group is their combination and its family their names, so the
        # cells are the marginals (each attribute) and the intersections (each pair of them), then the template
        # and the setting (`group` would list each intersection a second time, under its joined name)
        rest = [name for name in ("source", "setting") if name in known]
        default_sets = ([[name] for name in (*crossed, *rest)]
                        + [list(pair) for pair in itertools.combinations(crossed, 2)]
                        + [[a, b] for a in crossed for b in rest])
    table = slice_cells(sums, known, sets, measure, rate=measure.endswith("_rate"),
                        worse="lower" if measure in LOWER_IS_WORSE else "higher", min_units=min_units, fdr=fdr,
                        n_resamples=settings.n_resamples, n_permutations=n_permutations, seed=seed,
                        crossed=crossed, default_sets=default_sets)
    record = {"run_id": info.run_id, "unit": "prompt (a template shared by a family's groups is one unit)",
              "settings": labels, "read_with": settings.as_json(), "read_with_words": settings.words(),
              "attributes": crossed}
    top = table.cells[table.cells["p_value"].notna()].head(n_examples)
    record["examples"] = [{"attributes": cell["attributes"],
                           "rows": examples(store, info, measure, cell["attributes"], labels)}
                          for _, cell in top.iterrows()]
    return table, record


def _named(by: str | Sequence[str] | None) -> list[str]:
    """Every name `--by` gives (their form is checked before the run is read, their existence after)."""
    items = [] if by is None else [by] if isinstance(by, str) else list(by)
    return [ALIASES.get(n.strip(), n.strip()) for item in items for n in str(item).split(",") if n.strip()]


def setting_labels(info: RunInfo) -> dict[str, str]:
    """System key -> the system's name as the run recorded it (model and decoding setting)."""
    request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
    out = {}
    for system in (request.get("systems") or []) if isinstance(request, dict) else []:
        if isinstance(system, dict) and system.get("key"):
            out[str(system["key"])] = str(system.get("name") or system["key"])
    return out


def measure_column(info: RunInfo, measure: str) -> tuple[str, bool]:
    """The scorer column a measure is read from (negative_sentiment_rate -> vader_compound; a column is itself), and
    whether a low score is the bad one there (a rate of `score <= threshold` counts low scores)."""
    from fairness_core.scorers import SCORERS

    request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
    for scorer in (request.get("scorers") or []) if isinstance(request, dict) else []:
        cls = SCORERS.get(scorer.get("name")) if isinstance(scorer, dict) else None
        for declared in getattr(cls, "measures", ()):
            if declared.name == measure:
                return declared.column, declared.kind == "rate" and declared.op in ("<=", "<")
    return measure, measure in LOWER_IS_WORSE


def examples(store: RunStore, info: RunInfo, measure: str, attributes: dict[str, str], labels: dict[str, str],
             limit: int = N_EXAMPLES) -> list[dict[str, Any]]:
    """A cell's generations with their scores, the worst first: what a reader opens to see why the cell stands out.
    Rows this run stored itself (a generation reused from an earlier run is counted in the cell, not shown here)."""
    column, low_is_bad = measure_column(info, measure)
    conditions, params = ["g.run_id = $run", "g.metric = $column"], {"run": info.run_id, "column": column}
    for position, (name, value) in enumerate(attributes.items()):
        if name == "setting":
            params[f"a{position}"] = [key for key, label in labels.items() if label == value] or [value]
            conditions.append(f"list_contains($a{position}, g.system)")
        elif name in ("group", "family", "source"):
            column = {"group": "g.grp", "family": "g.family", "source": "g.source"}[name]
            params[f"a{position}"] = value
            conditions.append(f"coalesce(CAST({column} AS VARCHAR), '(none)') = $a{position}")
        else:  # one of the prompt's several attributes (`own_attributes`), read from its JSON by a bound path
            own = name[len("attribute "):] if name.startswith("attribute ") else name
            params[f"a{position}"], params[f"p{position}"] = value, '$."' + own.replace('"', '\\"') + '"'
            conditions.append(f"coalesce(json_extract_string(g.attributes, $p{position}), '(none)') = $a{position}")
    # the generations that make the cell bad first: for negative sentiment the lowest compound scores
    order = "ASC" if low_is_bad else "DESC"
    params["limit"] = int(limit)
    sql = f"""
        SELECT g.family, g.grp AS "group", g.source, g.system, g.prompt, g.sample, g.value AS score, r.text
        FROM generation g
        LEFT JOIN results r ON r.item = g.item AND r.metric = 'generation'
        WHERE {' AND '.join(conditions)} AND isfinite(g.value)
        QUALIFY row_number() OVER (PARTITION BY g.item ORDER BY r.run_id = g.run_id DESC) = 1
        ORDER BY g.value {order}, g.prompt, g.sample LIMIT $limit
    """
    found = store.query(sql, params)
    out = []
    for row in found.to_dict(orient="records"):
        row["setting"] = labels.get(str(row.pop("system")), "")
        row["score"] = None if row["score"] is None or not math.isfinite(float(row["score"])) else float(row["score"])
        row["sample"] = int(row["sample"]) if pd.notna(row["sample"]) else None
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return out
