"""Per-example rows across two runs (or two arms of one run): the same example's two values and texts, largest
change first.

"The same example" is what the two sides share:

- generation runs: the same prompt and sample number, under the two matched systems (`align.match_arms`: two
  settings, two models, ...), for the same scorer column; the texts are what the scorer read;
- metric-bias runs: the same pair; its value is the pair's rescaled gap |Ŝ1 − Ŝ2| (0-100, Sun et al. 2022,
  Eq. 1-2), the quantity the Bias averages, so two runs are on one scale even when their metrics are not: chrF
  under the library defaults scores 0-100 and under `metric-fairness-2022` 0-1, and subtracting those raw scores
  would report a change of −90 for the same texts. The raw scores are shown beside it, and `raw_change` is filled
  only when both sides ran the same metric with the same options and model (the same scale);
- CrowS-Pairs runs (stereotype-scores): the same pair, its gap log p(sent_more) − log p(sent_less) on each side
  (the quantity pct_stereotype and likelihood_diff are read from) with both sentences;
- other kinds: (item, variant, metric, group).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from fairness_core.compare.align import CompareError, _json_value, get_runs
from fairness_core.reading import Arm, RunRows, field_names, field_sql, match_arms, metric_label, run_filter
from fairness_core.reading.rows import STEREOTYPE_SCORES, crows_pairs_run, generation_arms, generation_rows, view_of
from fairness_core.store import RunInfo, RunStore

DEFAULT_LIMIT = 50


def per_example(store: RunStore, run_a: str, run_b: str | None = None, metric: str | None = None,
                filters: Mapping[str, str | Sequence[str]] | None = None, search: str = "",
                limit: int = DEFAULT_LIMIT) -> pd.DataFrame:
    """Both sides' values of the same examples: `value_a`, `value_b`, `change` (b − a), `text_a`, `text_b`.

    `run_b` None (or equal to `run_a`): the run's first system against each of its others. `filters` maps a field
    of the runs' view (see `fields`) to the value(s) kept, compared as text; `search` keeps examples whose text on
    either side contains every word (case-insensitive).
    """
    with store.reading():
        ids = [run_a] if run_b is None or run_b == run_a else [run_a, run_b]
        infos = get_runs(store, ids, minimum=1)
        if len(infos) == 2 and infos[0].kind != infos[1].kind:
            raise CompareError(f"per-example rows need two runs of the same kind; {run_a} is {infos[0].kind} and "
                               f"{run_b} is {infos[1].kind}")
        info_a, info_b = infos[0], infos[-1]
        conditions, params = _conditions(info_a, filters, search, [info_a.run_id, info_b.run_id])
        if info_a.kind == "generation":
            return _generation(store, info_a, info_b, metric, conditions, params, limit)
        if info_a.kind == "metric-bias":
            return _metric_bias(store, info_a, info_b, metric, conditions, params, limit)
        if info_a.run_id == info_b.run_id:
            raise CompareError(f"run {info_a.run_id} ({info_a.kind}) measured one thing; per-example rows need a "
                               "second run")
        if all(crows_pairs_run(info) for info in (info_a, info_b)):
            return _crows_pairs(store, info_a, info_b, conditions, params, limit)
        return _generic(store, info_a, info_b, metric, conditions, params, limit)


def _conditions(info: RunInfo, filters: Mapping[str, str | Sequence[str]] | None, search: str,
                run_ids: list[str]) -> tuple[list[str], dict[str, Any]]:
    conditions, params = [], {}
    for position, (name, wanted) in enumerate((filters or {}).items()):
        values = [wanted] if isinstance(wanted, str) else list(wanted)
        conditions.append(f"list_contains($f{position}, CAST({field_sql(info.kind, name)} AS VARCHAR))")
        params[f"f{position}"] = [str(v) for v in values]
    for position, word in enumerate(search.lower().split()):
        conditions.append(f"item IN (SELECT item FROM results WHERE list_contains($ids, run_id) "
                          f"AND contains(lower(text), $w{position}))")
        params[f"w{position}"] = word
        params["ids"] = run_ids
    return conditions, params


def _where(conditions: list[str]) -> str:
    return "".join(f" AND {condition}" for condition in conditions)


def _arm_pairs(rows_a: RunRows, rows_b: RunRows | None) -> pd.DataFrame:
    contrasts = match_arms(rows_a, rows_b)
    return pd.DataFrame({"key_a": [c.arm_a.key for c in contrasts], "key_b": [c.arm_b.key for c in contrasts],
                         "arm_a": [c.arm_a.label for c in contrasts], "arm_b": [c.arm_b.label for c in contrasts]})


def _measure_column(info: RunInfo, metric: str | None) -> str | None:
    """A rate or disparity names the scorer column it is read from (negative_sentiment_disparity -> vader_compound)."""
    if not metric:
        return None
    from fairness_core.reading import run_measures

    for measure in run_measures(info):
        stem = measure.name[: -len("_rate")] if measure.name.endswith("_rate") else measure.name
        if metric in (measure.name, f"{stem}_disparity", f"{measure.column}_eq1_bias"):
            return measure.column
    return metric


def _generation(store: RunStore, info_a: RunInfo, info_b: RunInfo, metric: str | None, conditions: list[str],
                params: dict[str, Any], limit: int) -> pd.DataFrame:
    empty = pd.DataFrame()
    same = info_a.run_id == info_b.run_id
    pairs = _arm_pairs(RunRows(info_a, generation_arms(info_a), empty, [], "prompt"),
                       None if same else RunRows(info_b, generation_arms(info_b), empty, [], "prompt"))
    rows_a, params_a, *_ = generation_rows(store, info_a, "ra")
    rows_b, params_b, *_ = generation_rows(store, info_b, "rb")
    params |= params_a | params_b | {"limit": int(limit)}
    column = _measure_column(info_a, metric)
    where = _where(conditions)
    if column:
        where += " AND metric = $metric"
        params["metric"] = column
    params |= _pair_params(pairs) | {"same": [True] * len(pairs)}
    sql = f"""
        WITH a AS (SELECT * FROM ({rows_a}) WHERE 1 = 1{where}),
             b AS (SELECT * FROM ({rows_b}) WHERE 1 = 1{where}),
             pairs AS ({_PAIRS_SQL}),
             joined AS (
                SELECT a.prompt, a.grp, a.family, a.sample, a.metric, p.arm_a, p.arm_b,
                       a.value AS value_a, b.value AS value_b, b.value - a.value AS change,
                       a.run_id AS run_a_id, a.item AS item_a, a.variant AS variant_a,
                       b.run_id AS run_b_id, b.item AS item_b, b.variant AS variant_b
                FROM a JOIN pairs p ON a.system = p.key_a
                JOIN b ON b.system = p.key_b AND b.prompt = a.prompt AND b.sample = a.sample
                          AND b.metric = a.metric AND b.grp IS NOT DISTINCT FROM a.grp
                ORDER BY abs(b.value - a.value) DESC NULLS LAST, a.prompt, a.sample, a.metric LIMIT $limit)
        SELECT j.* EXCLUDE (run_a_id, item_a, variant_a, run_b_id, item_b, variant_b), ra.text AS text_a,
               rb.text AS text_b
        FROM joined j
        LEFT JOIN results ra ON ra.run_id = j.run_a_id AND ra.item = j.item_a AND ra.variant = j.variant_a
                               AND ra.metric = j.metric
        LEFT JOIN results rb ON rb.run_id = j.run_b_id AND rb.item = j.item_b AND rb.variant = j.variant_b
                               AND rb.metric = j.metric
        ORDER BY abs(j.change) DESC NULLS LAST, j.prompt, j.sample, j.metric
    """
    return store.query(sql, params).rename(columns={"grp": "group"}).reset_index(drop=True)


def _metric_bias(store: RunStore, info_a: RunInfo, info_b: RunInfo, metric: str | None, conditions: list[str],
                 params: dict[str, Any], limit: int) -> pd.DataFrame:
    outputs = {}
    for info in {info_a.run_id: info_a, info_b.run_id: info_b}.values():
        this_run, run_params = run_filter(store, info, "x")
        found = store.query(f"SELECT DISTINCT metric FROM metric_bias WHERE {this_run} ORDER BY metric", run_params)
        outputs[info.run_id] = [Arm(info.run_id, m, *metric_label(info, m), primary="." not in m)
                                for m in found["metric"]]
    empty = pd.DataFrame()
    same = info_a.run_id == info_b.run_id
    pairs = _arm_pairs(RunRows(info_a, outputs[info_a.run_id], empty, [], "pair"),
                       None if same else RunRows(info_b, outputs[info_b.run_id], empty, [], "pair"))
    if metric and metric not in ("bias", "stereotypical_difference"):
        pairs = pairs[pairs["key_a"] == metric]
    fields_a = {a.key: a.fields for a in outputs[info_a.run_id]}
    fields_b = {a.key: a.fields for a in outputs[info_b.run_id]}
    same_scale = [fields_a.get(x) == fields_b.get(y) and _signature(info_a) == _signature(info_b)
                  for x, y in zip(pairs["key_a"], pairs["key_b"], strict=True)]
    filter_a, params_a = run_filter(store, info_a, "na")
    filter_b, params_b = run_filter(store, info_b, "nb")
    params |= params_a | params_b | _pair_params(pairs) | {"same": same_scale, "limit": int(limit),
                                                          "a": info_a.run_id, "b": info_b.run_id}

    def scaled(this_run: str, run: str) -> str:
        # the rescaling is fixed by every pair the Bias uses (both scores finite), before any filter
        return f"""
            SELECT s.*, t.t1, t.t2,
                   abs(s1 - s2) * coalesce(100.0 / nullif(max(greatest(s1, s2)) OVER w - min(least(s1, s2)) OVER w,
                                                          0), 0) AS gap
            FROM (SELECT metric, attribute, pair, max(value) FILTER (WHERE side = '1') AS s1,
                         max(value) FILTER (WHERE side = '2') AS s2, count(*) FILTER (WHERE side = '1') AS c1,
                         count(*) FILTER (WHERE side = '2') AS c2
                  FROM metric_bias WHERE {this_run} GROUP BY ALL) s
            LEFT JOIN (SELECT item AS t_pair, metric AS t_metric, any_value(text) FILTER (WHERE variant = '1') AS t1,
                              any_value(text) FILTER (WHERE variant = '2') AS t2
                       FROM results WHERE run_id = ${run} GROUP BY ALL) t ON t.t_pair = s.pair AND t.t_metric = s.metric
            WHERE c1 = 1 AND c2 = 1 AND isfinite(s1) AND isfinite(s2)
            WINDOW w AS (PARTITION BY s.metric, s.attribute)"""

    kept = f"SELECT pair FROM metric_bias WHERE {filter_a}{_where(conditions)}" if conditions else ""
    sql = f"""
        WITH a AS ({scaled(filter_a, "a")}), b AS ({scaled(filter_b, "b")}), pairs AS ({_PAIRS_SQL})
        SELECT a.pair, a.attribute, p.arm_a, p.arm_b, a.gap AS value_a, b.gap AS value_b, b.gap - a.gap AS change,
               a.s1 AS score1_a, a.s2 AS score2_a, b.s1 AS score1_b, b.s2 AS score2_b,
               CASE WHEN p.same THEN (b.s1 - b.s2) - (a.s1 - a.s2) END AS raw_change, a.t1 AS text_1, a.t2 AS text_2
        FROM a JOIN pairs p ON a.metric = p.key_a JOIN b ON b.metric = p.key_b AND b.pair = a.pair
                                                         AND b.attribute = a.attribute
        {f"WHERE a.pair IN ({kept})" if kept else ""}
        ORDER BY abs(b.gap - a.gap) DESC NULLS LAST, a.pair, p.arm_a LIMIT $limit
    """
    return store.query(sql, params).reset_index(drop=True)


_PAIRS_SQL = "SELECT unnest($ka) AS key_a, unnest($kb) AS key_b, unnest($la) AS arm_a, unnest($lb) AS arm_b" \
             ", unnest($same) AS same"


def _pair_params(pairs: pd.DataFrame) -> dict[str, list[Any]]:
    return {"ka": list(pairs["key_a"]), "kb": list(pairs["key_b"]), "la": list(pairs["arm_a"]),
            "lb": list(pairs["arm_b"])}


def _signature(info: RunInfo) -> Any:
    request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
    metric = request.get("metric") if isinstance(request, dict) else None
    return {k: v for k, v in metric.items() if k != "version"} if isinstance(metric, dict) else None


def _generic(store: RunStore, info_a: RunInfo, info_b: RunInfo, metric: str | None, conditions: list[str],
             params: dict[str, Any], limit: int) -> pd.DataFrame:
    source = view_of(info_a.kind) or "results"
    only_a, run_a = run_filter(store, info_a, "na")
    only_b, run_b = run_filter(store, info_b, "nb")
    params |= run_a | run_b | {"a": info_a.run_id, "b": info_b.run_id, "limit": int(limit)}
    where = _where(conditions)
    if metric:
        where += " AND metric = $metric"
        params["metric"] = metric
    hidden = "run_id, shard, value, variant" + (", run_no" if source != "results" else "")
    # a retired decoding run's variant is its own config key: two runs' rows of one example meet on the setting
    same = "a.config = b.config" if info_a.kind == "decoding" else "a.variant IS NOT DISTINCT FROM b.variant"
    extra = ", config" if info_a.kind == "decoding" else ""
    sql = f"""
        WITH a AS (SELECT * FROM {source} WHERE {only_a}{where}),
             b AS (SELECT item, variant, metric, grp, value{extra} FROM {source} WHERE {only_b}{where}),
             joined AS (
                SELECT a.* EXCLUDE ({hidden}), a.variant AS variant_a, b.variant AS variant_b,
                       a.value AS value_a, b.value AS value_b, b.value - a.value AS change
                FROM a JOIN b ON a.item = b.item AND {same} AND a.metric = b.metric
                                 AND a.grp IS NOT DISTINCT FROM b.grp
                ORDER BY abs(b.value - a.value) DESC NULLS LAST, a.item, a.metric LIMIT $limit)
        SELECT j.*, ra.text AS text_a, rb.text AS text_b FROM joined j
        LEFT JOIN results ra ON ra.run_id = $a AND ra.item = j.item AND ra.variant IS NOT DISTINCT FROM j.variant_a
                               AND ra.metric = j.metric AND ra.grp IS NOT DISTINCT FROM j.grp
        LEFT JOIN results rb ON rb.run_id = $b AND rb.item = j.item AND rb.variant IS NOT DISTINCT FROM j.variant_b
                               AND rb.metric = j.metric AND rb.grp IS NOT DISTINCT FROM j.grp
        ORDER BY abs(j.change) DESC NULLS LAST, j.item, j.metric
    """
    return store.query(sql, params).reset_index(drop=True)


def _crows_pairs(store: RunStore, info_a: RunInfo, info_b: RunInfo, conditions: list[str], params: dict[str, Any],
                 limit: int) -> pd.DataFrame:
    """Two CrowS-Pairs runs' pairs both scored, one row per pair: each side's gap d = score(sent_more) −
    score(sent_less) (`value_a`, `value_b`; > 0: the stereotype is the more likely sentence, what pct_stereotype
    counts, and |d| is what likelihood_diff averages), and the two sentences as scored. Largest change first."""
    only_a, run_a = run_filter(store, info_a, "na")
    only_b, run_b = run_filter(store, info_b, "nb")
    params |= run_a | run_b | {"limit": int(limit), "scores": list(STEREOTYPE_SCORES)}
    where = _where(conditions)

    def pairs(this_run: str) -> str:
        return f"""
            SELECT item, max(value) FILTER (WHERE variant = 'more') - max(value) FILTER (WHERE variant = 'less') AS d,
                   any_value(text) FILTER (WHERE variant = 'more') AS sent_more,
                   any_value(text) FILTER (WHERE variant = 'less') AS sent_less
            FROM results WHERE {this_run} AND list_contains($scores, metric) AND isfinite(value){where}
            GROUP BY item
            HAVING count(*) FILTER (WHERE variant = 'more') = 1 AND count(*) FILTER (WHERE variant = 'less') = 1"""

    sql = f"""
        WITH a AS ({pairs(only_a)}), b AS ({pairs(only_b)})
        SELECT a.item, a.d AS value_a, b.d AS value_b, b.d - a.d AS change, a.d > 0 AS stereotype_more_likely_a,
               b.d > 0 AS stereotype_more_likely_b, coalesce(a.sent_more, b.sent_more) AS sent_more,
               coalesce(a.sent_less, b.sent_less) AS sent_less
        FROM a JOIN b ON a.item = b.item
        ORDER BY abs(b.d - a.d) DESC NULLS LAST, a.item LIMIT $limit
    """
    return store.query(sql, params).reset_index(drop=True)


def fields(store: RunStore, run_id: str) -> list[str]:
    """The fields a run's rows can be filtered or grouped by."""
    info = store.get_run(run_id) if store.path.exists() else None
    if info is None:
        raise CompareError(f"no run {run_id!r} in {store.path}")
    return field_names(info.kind)


def example_json(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _json_value(v) for k, v in record.items()} for record in frame.to_dict(orient="records")]
