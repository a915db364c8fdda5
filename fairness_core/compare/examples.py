"""Per-example rows across two runs: the same item's two scores (and texts) side by side, largest change first.

"The same item" is what the kind's rows share across runs: a decoding generation is (prompt × sample, decoding
setting) — the setting written as T/p/k, so two models' sweeps meet on equal settings; a metric-bias row is
(pair, side); other kinds use (item, variant). The group must match too. The join reads the typed views; the
texts are looked up in `results` for the rows shown only (they are most of the store's bytes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from fairness_core.compare.align import CompareError, field_sql, get_runs, plan_for, run_filter
from fairness_core.store import RunStore

DEFAULT_LIMIT = 50


def per_example(store: RunStore, run_a: str, run_b: str, metric: str | None = None,
                filters: Mapping[str, str | Sequence[str]] | None = None, search: str = "",
                limit: int = DEFAULT_LIMIT) -> pd.DataFrame:
    """Rows of both runs for the same examples: `value_a`, `value_b`, `change` (b − a), `text_a`, `text_b`.

    `filters` maps a field of the runs' view (see `fields`) to the value(s) kept, compared as text;
    `search` keeps examples whose text in either run contains every word (case-insensitive).
    """
    with store.reading():
        return _per_example(store, run_a, run_b, metric, filters, search, limit)


def _per_example(store: RunStore, run_a: str, run_b: str, metric: str | None,
                 filters: Mapping[str, str | Sequence[str]] | None, search: str, limit: int) -> pd.DataFrame:
    info_a, info_b = get_runs(store, [run_a, run_b])
    if info_a.kind != info_b.kind:
        raise CompareError(f"per-example rows need two runs of the same kind; {run_a} is {info_a.kind} and "
                           f"{run_b} is {info_b.kind}")
    plan = plan_for(info_a.kind)
    source = plan.view or "results"
    setting = dict(plan.keys).get("setting")
    extra = f", {setting} AS setting" if setting and setting != "variant" else ""
    conditions, params = [], {"a": run_a, "b": run_b, "limit": int(limit)}
    only_a, run_no_a = run_filter(store, info_a, "na")
    only_b, run_no_b = run_filter(store, info_b, "nb")
    params |= run_no_a | run_no_b
    if metric:
        conditions.append("metric = $metric")
        params["metric"] = metric
    for position, (name, wanted) in enumerate((filters or {}).items()):
        values = [wanted] if isinstance(wanted, str) else list(wanted)
        conditions.append(f"list_contains($f{position}, CAST({field_sql(info_a.kind, name)} AS VARCHAR))")
        params[f"f{position}"] = [str(v) for v in values]
    words = search.lower().split()
    for position, word in enumerate(words):
        conditions.append(f"item IN (SELECT item FROM results WHERE run_id IN ($a, $b) "
                          f"AND contains(lower(text), $w{position}))")
        params[f"w{position}"] = word
    where = "".join(f" AND {condition}" for condition in conditions)
    same = [f"a.{key} = b.{key}" for key in plan.example_keys]
    hidden = "run_id, shard, value, variant" + (", run_no" if plan.view else "")
    sql = f"""
        WITH a AS (SELECT *{extra} FROM {source} WHERE {only_a}{where}),
             b AS (SELECT item, variant, metric, grp, value{extra} FROM {source} WHERE {only_b}{where}),
             joined AS (
                SELECT a.* EXCLUDE ({hidden}), a.variant AS variant_a, b.variant AS variant_b,
                       a.value AS value_a, b.value AS value_b, b.value - a.value AS change
                FROM a JOIN b ON {' AND '.join(same)} AND a.metric = b.metric AND a.grp IS NOT DISTINCT FROM b.grp
                ORDER BY abs(b.value - a.value) DESC NULLS LAST, a.item, a.metric LIMIT $limit)
        SELECT j.*, ra.text AS text_a, rb.text AS text_b FROM joined j
        LEFT JOIN results ra ON ra.run_id = $a AND ra.item = j.item AND ra.variant = j.variant_a
                               AND ra.metric = j.metric
        LEFT JOIN results rb ON rb.run_id = $b AND rb.item = j.item AND rb.variant = j.variant_b
                               AND rb.metric = j.metric
        ORDER BY abs(j.change) DESC NULLS LAST, j.item, j.metric
    """
    return store.query(sql, params).reset_index(drop=True)


def fields(store: RunStore, run_id: str) -> list[str]:
    """The fields a run's rows can be filtered or grouped by."""
    from fairness_core.compare.align import field_names

    info = store.get_run(run_id) if store.path.exists() else None
    if info is None:
        raise CompareError(f"no run {run_id!r} in {store.path}")
    return field_names(info.kind)


def example_json(frame: pd.DataFrame) -> list[dict[str, Any]]:
    from fairness_core.compare.align import _json_value

    return [{k: _json_value(v) for k, v in record.items()} for record in frame.to_dict(orient="records")]
