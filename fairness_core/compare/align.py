"""Line stored runs up on what they share and compare their estimates, paired where they scored the same units.

Every run is read through its kind's typed view (`fairness_core.store.typed`) as unit sums per cell:

    cell  = (metric, then the kind's keys: group/attribute, decoding setting, system — or the fields asked for)
    unit  = what is resampled: a prompt (all its samples) for decoding and generation runs, a pair for
            metric-bias runs, an item (text, segment) otherwise
    estimate of a cell = Σ values / Σ rows over its units (a mean over rows)

Two runs line up on the cells both have. A cell is *paired* when both runs scored exactly the same units
in it (same prompts, same pairs): then one resample of those units weights both runs alike; otherwise the
runs are resampled independently (`fairness_core.compare.intervals`), and the row says which.

Kind-specific readings, each the paper's statistic:
- metric-bias: a pair's value is |Ŝ1 − Ŝ2| with Ŝ = 100 (S − min) / (max − min) over all scores of the run's
  metric and attribute (Sun et al. 2022, Eq. 1-2), so a cell's estimate is the paper's Bias. The rescaling
  is fixed per run (as in `bias.paired`), not re-derived inside each resample.
- decoding: besides every stored metric, `negative_sentiment` = share of generations with VADER compound
  ≤ −0.25 (Dhamala et al. 2022, Sec. 3); the setting is the decoding configuration itself (T, p, k), not the
  run's config key, so two models' sweeps line up on equal settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.compare.intervals import DEFAULT_RESAMPLES, CellMatrix, compare_cells
from fairness_core.store import RunInfo, RunStore
from fairness_core.store.typed import KEY_COLUMNS, TYPED_KINDS

NEGATIVE_SENTIMENT_THRESHOLD = -0.25  # Dhamala et al. 2022, Sec. 3 (the decoding page's default)
_SETTING_SQL = ("concat_ws(' ', 'T=' || config.temperature, CASE WHEN config.top_p IS NOT NULL THEN 'p=' || "
                "config.top_p END, CASE WHEN config.top_k IS NOT NULL THEN 'k=' || config.top_k END)")


class CompareError(ValueError):
    """A comparison that cannot be made; one sentence naming the run or field."""


@dataclass(frozen=True)
class KindPlan:
    """How one kind's rows become cells and units."""

    view: str | None  # typed view, or None: read `results`
    unit: str  # the unit's name in the output
    unit_sql: str
    keys: tuple[tuple[str, str], ...]  # default cell keys: (output name, SQL expression)
    example_keys: tuple[str, ...] = ("item", "variant")  # what makes two runs' rows the same example
    metric_bias: bool = False
    extra_metrics: tuple[tuple[str, str, str], ...] = field(default_factory=tuple)  # (name, from metric, SQL)


PLANS: dict[str, KindPlan] = {
    "decoding": KindPlan("decoding", "prompt", "prompt_id", (("prompt_set", "source"), ("group", "grp"),
                                                             ("setting", _SETTING_SQL)),
                         ("item", "setting"),
                         extra_metrics=(("negative_sentiment", "vader_compound",
                                         f"CAST(value <= {NEGATIVE_SENTIMENT_THRESHOLD} AS DOUBLE)"),)),
    "generation": KindPlan("generation", "prompt", "prompt_id", (("prompt_set", "source"), ("group", "grp"),
                                                                 ("system", "system_name"))),
    "metric-bias": KindPlan("metric_bias", "pair", "item", (("attribute", "grp"),), ("item", "variant"),
                            metric_bias=True),
    "adaptation-measures": KindPlan("adaptation_measures", "text", "item", (("group", "grp"),)),
    "datscore-directions": KindPlan("datscore_directions", "segment", "item", (("direction", "grp"),)),
}
_DEFAULT_PLAN = KindPlan(None, "item", "item", (("group", "grp"), ("setting", "variant")))


def plan_for(kind: str) -> KindPlan:
    if kind in PLANS:
        return PLANS[kind]
    typed = TYPED_KINDS.get(kind)
    return KindPlan(typed.view, "item", "item", _DEFAULT_PLAN.keys) if typed else _DEFAULT_PLAN


def field_names(kind: str) -> list[str]:
    """The fields a run of this kind can be grouped or filtered by (typed view columns, aliases, setting)."""
    plan = plan_for(kind)
    names = [name for name, _ in KEY_COLUMNS if name not in ("run_id", "shard", "value")]
    typed = TYPED_KINDS.get(kind)
    if typed is not None:
        names += list(typed.aliases.values()) + [spec.name for spec in typed.fields]
    names += [name for name, _ in plan.keys]
    return list(dict.fromkeys(names))


def field_sql(kind: str, name: str) -> str:
    """SQL for a field of a kind's view, checked against the known names (never user text in SQL)."""
    plan = plan_for(kind)
    for key, expression in plan.keys:
        if key == name:
            return expression
    if name not in field_names(kind):
        raise CompareError(f"runs of kind {kind!r} have no field {name!r}; choose one of: "
                           + ", ".join(field_names(kind)))
    if "." in name:
        parent, child = name.split(".", 1)
        return f'struct_extract("{parent}", \'{child}\')'
    return f'"{name}"'


def _source(plan: KindPlan) -> str:
    return plan.view or "results"


def run_filter(store: RunStore, info: RunInfo, name: str) -> tuple[str, dict[str, Any]]:
    """SQL keeping one run's rows of its kind's source, and its parameter.

    A typed view is filtered on the run's number (`run_no`): rows arrive run by run, so DuckDB skips every block
    of other runs by its min/max; on the hash-like `run_id` the same filter reads nearly every block.
    """
    if plan_for(info.kind).view is None:
        return f"run_id = ${name}", {name: info.run_id}
    found = store.query("SELECT run_no FROM typed_runs WHERE run_id = ?", [info.run_id])
    if found.empty:  # nothing of this run has been typed (no rows yet)
        return f"run_id = ${name}", {name: info.run_id}
    return f"run_no = ${name}", {name: int(found["run_no"].iloc[0])}


def unit_sums(store: RunStore, info: RunInfo, by: Sequence[str] | None = None,
              metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (cell, unit) of a run: metric, the cell keys, `unit`, `total` (Σ values), `n` (rows)."""
    plan = plan_for(info.kind)
    keys = [(name, field_sql(info.kind, name)) for name in by] if by else list(plan.keys)
    key_select = "".join(f", {expression} AS \"{name}\"" for name, expression in keys)
    key_names = "".join(f', "{name}"' for name, _ in keys)
    source = _source(plan)
    this_run, params = run_filter(store, info, "run")
    base = f"SELECT * FROM {source} WHERE {this_run} AND isfinite(value)"
    for name, from_metric, expression in plan.extra_metrics:
        base += (f" UNION ALL SELECT * REPLACE ('{name}' AS metric, {expression} AS value) FROM {source} "
                 f"WHERE {this_run} AND metric = '{from_metric}' AND isfinite(value)")
    metric_filter = "WHERE list_contains($metrics, metric)" if metrics else ""
    if plan.metric_bias:
        sql = f"""
            WITH rows AS (SELECT *{key_select}, {plan.unit_sql} AS unit FROM ({base}) {metric_filter}),
            scaled AS (SELECT *, 100 * (value - min(value) OVER w) / nullif(max(value) OVER w - min(value) OVER w, 0)
                              AS s FROM rows WINDOW w AS (PARTITION BY metric{key_names}))
            SELECT metric{key_names}, unit,
                   abs(max(s) FILTER (WHERE variant = '1') - max(s) FILTER (WHERE variant = '2')) AS total,
                   1.0 AS n
            FROM scaled GROUP BY metric{key_names}, unit
            HAVING count(*) FILTER (WHERE variant = '1') = 1 AND count(*) FILTER (WHERE variant = '2') = 1
        """
    else:
        sql = f"""
            SELECT metric{key_names}, unit, sum(value) AS total, count(*)::DOUBLE AS n
            FROM (SELECT *{key_select}, {plan.unit_sql} AS unit FROM ({base}) {metric_filter})
            GROUP BY ALL
        """
    if metrics:
        params["metrics"] = list(metrics)
    frame = store.query(sql, params)  # type: ignore[arg-type]
    frame = frame[np.isfinite(frame["total"].to_numpy(dtype=float))]
    return frame.reset_index(drop=True)


@dataclass
class Comparison:
    runs: list[dict[str, Any]]
    rows: pd.DataFrame
    keys: list[str]  # the cell key columns (after `metric`)
    message: str = ""  # a sentence when runs share nothing

    def as_json(self) -> dict[str, Any]:
        records = []
        for record in self.rows.to_dict(orient="records"):
            records.append({k: _json_value(v) for k, v in record.items()})
        out: dict[str, Any] = {"runs": self.runs, "rows": records}
        if self.message:
            out["message"] = self.message
        return out


def _json_value(value: Any) -> Any:
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def _run_record(info: RunInfo) -> dict[str, Any]:
    from fairness_core.store.catalog import describe_run

    described = describe_run(info)
    return {"run_id": info.run_id, "kind": info.kind, "status": info.status, "dataset": described["dataset"],
            "version": described["version"], "what": described["what"], "model": described["model"],
            "unit": plan_for(info.kind).unit, "rows": info.n_rows}


def get_runs(store: RunStore, run_ids: Sequence[str], minimum: int = 2) -> list[RunInfo]:
    """The runs named, in order; one sentence for a missing run or too few ids."""
    if len(run_ids) < minimum:
        raise CompareError("compare needs at least two run ids")
    infos = []
    for run_id in run_ids:
        info = store.get_run(run_id) if store.path.exists() else None
        if info is None:
            raise CompareError(f"no run {run_id!r} in {store.path}")
        infos.append(info)
    return infos


def compare_runs(store: RunStore, run_ids: Sequence[str], by: Sequence[str] | None = None,
                 metrics: Sequence[str] | None = None, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = 0) -> Comparison:
    """The first run against each of the others, on every cell they share; differences are other − first."""
    with store.reading():  # one connection for the look-ups and sums
        infos = get_runs(store, run_ids)
        sums = [unit_sums(store, info, by, metrics) for info in infos]
    keys = ["metric", *[c for c in sums[0].columns if c not in ("metric", "unit", "total", "n")]]
    for info, frame in zip(infos[1:], sums[1:], strict=True):
        other_keys = ["metric", *[c for c in frame.columns if c not in ("metric", "unit", "total", "n")]]
        if other_keys != keys:
            raise CompareError(f"run {info.run_id} ({info.kind}) is described by {', '.join(other_keys)} and run "
                               f"{infos[0].run_id} ({infos[0].kind}) by {', '.join(keys)}; group by fields "
                               "both kinds have (e.g. grp; --by on the command line)")
    records = [_run_record(info) for info in infos]
    parts, silent = [], []
    for index in range(1, len(infos)):
        table = _compare_pair(infos[0], infos[index], sums[0], sums[index], keys, n_resamples, seed + index)
        if table.empty:
            silent.append(infos[index])
        parts.append(table)
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    message = ""
    if silent:
        message = " ".join(_nothing_shared(infos[0], other, sums[0], sums[infos.index(other)], keys)
                           for other in silent)
    return Comparison(records, rows, keys[1:], message)


def _nothing_shared(a: RunInfo, b: RunInfo, sums_a: pd.DataFrame, sums_b: pd.DataFrame, keys: list[str]) -> str:
    def listed(frame: pd.DataFrame) -> str:
        names = sorted({str(m) for m in frame["metric"]}) if not frame.empty else []
        return ", ".join(names[:6]) + (" …" if len(names) > 6 else "") if names else "no finite values"

    return (f"Runs {a.run_id} ({a.kind}) and {b.run_id} ({b.kind}) share no {' / '.join(keys)} cell, so there is "
            f"nothing to line up: the first has metrics {listed(sums_a)}, the second {listed(sums_b)}.")


def _cell_labels(frame: pd.DataFrame, keys: list[str]) -> pd.Series:
    """One text per cell (its keys joined), column-wise: a row-wise join costs seconds at 100k cells × units."""
    if frame.empty:
        return pd.Series(dtype=str)
    text = [frame[key].astype(str) for key in keys]
    return text[0].str.cat(text[1:], sep="\u241f") if len(text) > 1 else text[0]


def _compare_pair(a: RunInfo, b: RunInfo, sums_a: pd.DataFrame, sums_b: pd.DataFrame, keys: list[str],
                  n_resamples: int, seed: int) -> pd.DataFrame:
    if sums_a.empty or sums_b.empty:
        return pd.DataFrame()
    sums_a = sums_a.assign(cell=_cell_labels(sums_a, keys), unit=sums_a["unit"].astype(str))
    sums_b = sums_b.assign(cell=_cell_labels(sums_b, keys), unit=sums_b["unit"].astype(str))
    cells = sorted(set(sums_a["cell"]) & set(sums_b["cell"]))
    if not cells:
        return pd.DataFrame()
    sums_a, sums_b = sums_a[sums_a["cell"].isin(cells)], sums_b[sums_b["cell"].isin(cells)]
    units = pd.Index(sorted(set(sums_a["unit"]) | set(sums_b["unit"])))
    cell_index = pd.Index(cells)
    units_a = sums_a.groupby("cell")["unit"].agg(frozenset)
    units_b = sums_b.groupby("cell")["unit"].agg(frozenset)
    paired = np.array([units_a[c] == units_b[c] for c in cells])

    def matrix(frame: pd.DataFrame) -> CellMatrix:
        return CellMatrix.build(units.get_indexer(frame["unit"]), cell_index.get_indexer(frame["cell"]),
                                frame["total"].to_numpy(float), frame["n"].to_numpy(float), len(units), len(cells))

    result = compare_cells(matrix(sums_a), matrix(sums_b), paired, n_resamples, seed)
    first = sums_a.drop_duplicates("cell").set_index("cell").loc[cells, keys].reset_index(drop=True)
    n_a = np.array([len(units_a[c]) for c in cells])
    n_b = np.array([len(units_b[c]) for c in cells])
    n_shared = np.array([len(units_a[c] & units_b[c]) for c in cells])
    # One unit carries no spread to resample: its interval would collapse onto the estimate.
    few_a, few_b = n_a < 2, n_b < 2
    table = first.assign(
        run_a_id=a.run_id, run_b_id=b.run_id,
        run_a=result.estimate_a, run_a_low=np.where(few_a, np.nan, result.low_a),
        run_a_high=np.where(few_a, np.nan, result.high_a),
        run_b=result.estimate_b, run_b_low=np.where(few_b, np.nan, result.low_b),
        run_b_high=np.where(few_b, np.nan, result.high_b),
        difference=result.difference, ci_low=np.where(few_a | few_b, np.nan, result.low),
        ci_high=np.where(few_a | few_b, np.nan, result.high),
        paired=paired, unit=plan_for(a.kind).unit if a.kind == b.kind else "item",
        n_units_a=n_a, n_units_b=n_b, n_shared=n_shared)
    return table


def run_estimates(store: RunStore, info: RunInfo, by: Sequence[str] | None = None,
                  metrics: Sequence[str] | None = None, n_resamples: int = DEFAULT_RESAMPLES,
                  seed: int = 0) -> pd.DataFrame:
    """One run's estimate per cell with its 95% bootstrap interval over units (none for a one-unit cell)."""
    from fairness_core.compare.intervals import percentile_bounds, poisson_weights

    sums = unit_sums(store, info, by, metrics)
    keys = ["metric", *[c for c in sums.columns if c not in ("metric", "unit", "total", "n")]]
    if sums.empty:
        return pd.DataFrame(columns=[*keys, "estimate", "ci_low", "ci_high", "n_units", "unit"])
    sums = sums.assign(cell=_cell_labels(sums, keys), unit=sums["unit"].astype(str))
    cells = pd.Index(sorted(set(sums["cell"])))
    units = pd.Index(sorted(set(sums["unit"])))
    matrix = CellMatrix.build(units.get_indexer(sums["unit"]), cells.get_indexer(sums["cell"]),
                              sums["total"].to_numpy(float), sums["n"].to_numpy(float), len(units), len(cells))
    replicates = matrix.replicates(poisson_weights(len(units), n_resamples, np.random.default_rng(seed)))
    low, high = percentile_bounds(replicates)
    n_units = sums.groupby("cell")["unit"].nunique().loc[cells].to_numpy()
    first = sums.drop_duplicates("cell").set_index("cell").loc[cells, keys].reset_index(drop=True)
    return first.assign(estimate=matrix.estimates(), ci_low=np.where(n_units < 2, np.nan, low),
                        ci_high=np.where(n_units < 2, np.nan, high), n_units=n_units, unit=plan_for(info.kind).unit)
