"""Aggregates of stored metric-bias runs: the per-pair gap table (DuckDB), the bias table with 95%
bootstrap intervals, the CLI's JSON contract, and the per-example agreement of two metrics (a
recomputed metric beside the authors' stored one).

Every aggregate checks that it counts each pair once and that its pairs are the pairs it was given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.bias.paired import paired_bias
from fairness_core.data.pairs import PairDataset
from fairness_core.store import RunStore


class AggregateCountError(RuntimeError):
    """An aggregate saw a different number of pairs than it was given (a bug, never a user error)."""


_PAIR_SQL = """
WITH scored AS (
    SELECT r.run_id, r.item, r.grp, r.metric, r.variant, r.value, r.text, r.attrs,
           min(CASE WHEN isfinite(r.value) THEN r.value END) OVER w AS lo,
           max(CASE WHEN isfinite(r.value) THEN r.value END) OVER w AS hi
    FROM results r
    WHERE r.run_id IN ({ids})
    WINDOW w AS (PARTITION BY r.run_id, r.grp, r.metric)
), joined AS (
    SELECT a.run_id, a.item, a.grp AS attribute, a.metric,
           a.text AS candidate1, b.text AS candidate2,
           json_extract_string(a.attrs, '$.reference') AS reference,
           json_extract_string(b.attrs, '$.reference') AS reference2,
           a.value AS score1, b.value AS score2,
           CASE WHEN NOT (isfinite(a.value) AND isfinite(b.value)) THEN NULL
                WHEN a.hi > a.lo THEN 100 * (a.value - b.value) / (a.hi - a.lo) ELSE 0 END AS gap,
           CASE WHEN json_extract(a.attrs, '$.stereotypical')::BOOLEAN THEN 1
                WHEN json_extract(b.attrs, '$.stereotypical')::BOOLEAN THEN 2 END AS stereotypical
    FROM scored a JOIN scored b
      ON a.run_id = b.run_id AND a.item = b.item AND a.grp = b.grp AND a.metric = b.metric
     AND a.variant = '1' AND b.variant = '2'
)
SELECT * FROM joined WHERE 1 = 1 {filters}
ORDER BY abs(gap) DESC NULLS LAST, item
"""


def pair_table(store: RunStore, run_ids: Sequence[str], attributes: Sequence[str] | None = None,
               metrics: Sequence[str] | None = None, min_gap: float = 0.0, limit: int | None = None) -> pd.DataFrame:
    """Pairs with both scores and the gap rescaled by the min-max unit of all 2N finite scores (0-100,
    per attribute and metric), largest first; `gap` is empty for a pair with a non-finite score."""
    if not run_ids:
        return pd.DataFrame()
    params: list[Any] = list(run_ids)
    filters = ""
    if attributes:
        filters += f" AND attribute IN ({', '.join('?' * len(attributes))})"
        params += list(attributes)
    if metrics:
        filters += f" AND metric IN ({', '.join('?' * len(metrics))})"
        params += list(metrics)
    if min_gap > 0:
        filters += " AND abs(gap) >= ?"
        params.append(min_gap)
    sql = _PAIR_SQL.format(ids=", ".join("?" * len(run_ids)), filters=filters)
    if limit:
        sql += f" LIMIT {int(limit)}"
    table = store.query(sql, params)
    repeated = table.duplicated(["run_id", "attribute", "metric", "item"])
    if repeated.any():
        first = table[repeated].iloc[0]
        raise AggregateCountError(f"pair {first['item']!r} appears {int(repeated.sum()) + 1} times for "
                                  f"{first['metric']} in run {first['run_id']}")
    return table


def expected_pairs(dataset: PairDataset) -> dict[str, int]:
    """{attribute: number of pairs}: what every per-attribute aggregate must count."""
    counts: dict[str, int] = {}
    for pair in dataset.pairs:
        counts[pair.attribute] = counts.get(pair.attribute, 0) + 1
    return counts


def bias_table(pairs: pd.DataFrame, normalisation: str = "minmax", n_resamples: int = 1000, seed: int = 0,
               expected: Mapping[str, int] | None = None) -> pd.DataFrame:
    """One row per (attribute, metric): bias with its 95% CI, the pairs used and excluded (non-finite
    scores), and the stereotypical difference. With `expected` ({attribute: pairs}), a group whose
    pairs used + excluded differ from the pairs given raises AggregateCountError."""
    columns = ["attribute", "metric", "bias", "ci_low", "ci_high", "n_pairs", "n_excluded", "stereo_diff",
               "stereo_ci_low", "stereo_ci_high", "n_stereo"]
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (attribute, metric), group in pairs.groupby(["attribute", "metric"], sort=True):
        group = group.sort_values("item")
        if group["item"].duplicated().any():
            raise AggregateCountError(f"{attribute}/{metric}: a pair id occurs more than once")
        result = paired_bias(group["score1"].to_numpy(dtype=float), group["score2"].to_numpy(dtype=float),
                             group["stereotypical"].tolist(), normalisation=normalisation,
                             n_resamples=n_resamples, seed=seed)
        counted = result.n_pairs + result.n_excluded
        if counted != len(group) or (expected is not None and counted != expected.get(attribute)):
            raise AggregateCountError(f"{attribute}/{metric}: counted {counted} pairs but was given "
                                      f"{expected.get(attribute) if expected is not None else len(group)}")
        rows.append({"attribute": attribute, "metric": metric} | result.as_dict())
    return pd.DataFrame(rows).reindex(columns=columns)


def summary_json(table: pd.DataFrame, metrics: Sequence[str] | None = None) -> dict[str, dict[str, dict]]:
    """The CLI contract: {attribute: {metric: {bias, ci_low, ci_high, n_pairs, n_excluded}}}."""
    out: dict[str, dict[str, dict]] = {}

    def number(value: Any) -> float | None:
        return None if value is None or not np.isfinite(value) else round(float(value), 6)

    for row in table.itertuples(index=False):
        if metrics is not None and row.metric not in metrics:
            continue
        out.setdefault(row.attribute, {})[row.metric] = {
            "bias": number(row.bias), "ci_low": number(row.ci_low), "ci_high": number(row.ci_high),
            "n_pairs": int(row.n_pairs), "n_excluded": int(row.n_excluded)}
    return out


def notes(table: pd.DataFrame) -> list[str]:
    """One sentence per (attribute, metric) that excluded pairs with non-finite scores."""
    return [f"{row.metric} on {row.attribute}: {int(row.n_excluded)} pair(s) excluded because a score is not a "
            "finite number" for row in table.itertuples(index=False) if row.n_excluded]


def agreement(pairs: pd.DataFrame, first: str, second: str) -> tuple[pd.DataFrame, dict[str, float]]:
    """Per-example comparison of two metrics on the same pairs (e.g. recomputed bleu vs stored BLEU):
    both scores and both gaps side by side, and summary agreement (Pearson r of the 2N scores, share of
    pairs whose gap has the same sign, largest |difference| of rescaled gaps)."""
    keys = ["attribute", "item"]
    a = pairs[pairs["metric"] == first].set_index(keys)
    b = pairs[pairs["metric"] == second].set_index(keys)
    joined = a[["candidate1", "candidate2", "score1", "score2", "gap"]].join(
        b[["score1", "score2", "gap"]], how="inner", lsuffix=f" ({first})", rsuffix=f" ({second})").reset_index()
    if joined.empty:
        return joined, {"n_pairs": 0}
    s_a = np.concatenate([joined[f"score1 ({first})"], joined[f"score2 ({first})"]]).astype(float)
    s_b = np.concatenate([joined[f"score1 ({second})"], joined[f"score2 ({second})"]]).astype(float)
    finite = np.isfinite(s_a) & np.isfinite(s_b)
    g_a, g_b = joined[f"gap ({first})"].to_numpy(dtype=float), joined[f"gap ({second})"].to_numpy(dtype=float)
    both = np.isfinite(g_a) & np.isfinite(g_b)
    joined["gap difference"] = g_a - g_b
    r = float(np.corrcoef(s_a[finite], s_b[finite])[0, 1]) if finite.sum() > 2 and s_a[finite].std() > 0 \
        and s_b[finite].std() > 0 else float("nan")
    nan = float("nan")
    summary = {"n_pairs": len(joined), "pearson_r_scores": r,
               "same_gap_sign": float((np.sign(g_a[both]) == np.sign(g_b[both])).mean()) if both.any() else nan,
               "max_abs_gap_difference": float(np.abs(g_a[both] - g_b[both]).max()) if both.any() else nan}
    return joined, summary


def rank_agreement_interval(pairs: pd.DataFrame, metrics: Sequence[str], normalisations: Sequence[str],
                            n_resamples: int = 500, level: float = 0.95, seed: int = 0) -> dict[str, dict[str, float]]:
    """Kendall τ between the metrics' ranking (bias averaged over attributes) under min-max and under each other
    normalisation, with a percentile bootstrap interval that resamples pairs as the design sampled them: within
    each attribute, the same resampled pairs for every metric (every metric scored the same pairs). Each
    metric's unit (Eq. 1's min-max range, the z-score's standard deviation) is recomputed from the resampled
    pairs' 2N scores: the rankings under two normalisations differ *only* through those units, so holding them
    fixed would leave out the part of τ's sampling spread that the normalisation itself brings (issue 30: mean
    width 0.53 against a spread of 0.93 in `tests/metric_bias/test_rank_agreement.py`'s simulation).
    {normalisation: {tau, ci_low, ci_high}}."""
    from scipy.stats import kendalltau

    metrics = sorted(m for m in metrics if m in set(pairs["metric"])) if not pairs.empty else []
    others = [n for n in normalisations if n != "minmax"]
    if len(metrics) < 2 or not others:
        return {}
    rng = np.random.default_rng(seed)
    norms = ["minmax", *others]
    # replicate biases: (normalisations, metrics, 1 + n_resamples), column 0 the estimate; averaged over attributes
    total = np.zeros((len(norms), len(metrics), 1 + n_resamples))
    attributes = sorted(pairs["attribute"].unique())
    for attribute in attributes:
        part = pairs[(pairs["attribute"] == attribute) & pairs["metric"].isin(metrics)]
        wide1 = part.pivot(index="item", columns="metric", values="score1").reindex(columns=metrics)
        wide2 = part.pivot(index="item", columns="metric", values="score2").reindex(columns=metrics)
        s1, s2 = wide1.to_numpy(dtype=float), wide2.to_numpy(dtype=float)  # (items, metrics)
        draws = np.concatenate([np.arange(len(s1))[None, :],
                                rng.integers(0, len(s1), size=(n_resamples, len(s1)))])
        total += resampled_biases(s1, s2, draws, norms).transpose(2, 1, 0)
    biases = total / len(attributes)
    out = {}
    for i, name in enumerate(norms[1:], start=1):
        taus = np.array([kendalltau(biases[0, :, b], biases[i, :, b]).statistic for b in range(biases.shape[2])])
        finite = taus[1:][np.isfinite(taus[1:])]
        alpha = (1 - level) / 2
        low, high = (np.quantile(finite, [alpha, 1 - alpha]) if len(finite) else (np.nan, np.nan))
        out[name] = {"tau": float(taus[0]), "ci_low": float(low), "ci_high": float(high)}
    return out


def resampled_biases(s1: np.ndarray, s2: np.ndarray, draws: np.ndarray, normalisations: Sequence[str],
                     chunk: int = 64) -> np.ndarray:
    """Eq. 2's bias of each metric (column of `s1`/`s2`, one row per pair) under each normalisation, for each row of
    `draws` (pair indices, repeats allowed): (draws, metrics, normalisations). The unit of each normalisation is
    that of the drawn pairs' 2N finite scores (`bias.paired.unit_scale`), so a row of `draws` that is every pair
    once gives exactly the bias table's value."""
    both = np.isfinite(s1) & np.isfinite(s2)  # a pair counts for a metric when both its scores are finite
    gaps = np.where(both, np.abs(s1 - s2), 0.0)
    top = np.where(both, np.fmax(s1, s2), -np.inf)
    bottom = np.where(both, np.fmin(s1, s2), np.inf)
    centre = np.array([np.mean(np.concatenate([s1[both[:, j], j], s2[both[:, j], j]])) if both[:, j].any()
                       else 0.0 for j in range(s1.shape[1])])
    c1, c2 = np.where(both, s1 - centre, 0.0), np.where(both, s2 - centre, 0.0)  # shifted: a stable variance
    out = np.empty((len(draws), s1.shape[1], len(normalisations)))
    for start in range(0, len(draws), chunk):
        rows = draws[start:start + chunk]
        counts = np.zeros((len(rows), len(s1)))
        np.add.at(counts, (np.arange(len(rows))[:, None], rows), 1.0)
        used = counts @ both  # (rows, metrics) pairs counted
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_gap = np.where(used > 0, (counts @ gaps) / used, np.nan)
            for k, name in enumerate(normalisations):
                if name == "minmax":
                    drawn = counts[:, :, None] > 0
                    spread = np.where(drawn, top[None], -np.inf).max(axis=1) - \
                        np.where(drawn, bottom[None], np.inf).min(axis=1)
                    scale = np.where(np.isfinite(spread) & (spread > 0), 100.0 / spread, 0.0)
                elif name == "zscore":
                    mean = (counts @ (c1 + c2)) / (2 * used)
                    variance = (counts @ (c1 * c1 + c2 * c2)) / (2 * used) - mean * mean
                    sd = np.sqrt(np.maximum(variance, 0.0))
                    scale = np.where(sd > 0, 1.0 / sd, 0.0)
                elif name == "raw":
                    scale = np.ones_like(mean_gap)
                else:
                    raise ValueError(f"unknown normalisation {name!r}")
                out[start:start + len(rows), :, k] = scale * mean_gap
    return out


def alignment_tables(metric: Any, row: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, list[str] | None]:
    """Paper Fig. 3 for one pair: each candidate's tokens and the reference token each one matches (a matching
    metric's `alignment`), and, when both candidates tokenise to the same length, the differing tokens side by
    side as lines "she -> reference token nurse;  he -> the" (None otherwise: tokens cannot be paired up)."""
    one = pd.DataFrame(metric.alignment(row["candidate1"], row["reference"]))
    two = pd.DataFrame(metric.alignment(row["candidate2"], row["reference2"] or row["reference"]))
    if len(one) != len(two):
        return one, two, None
    differs = ~one["token"].reset_index(drop=True).eq(two["token"].reset_index(drop=True))
    one["differs"] = two["differs"] = differs.to_numpy()
    lines = [f"{a['token']} → reference token {a['matches']};  {b['token']} → {b['matches']}"
             for (_, a), (_, b) in zip(one[one["differs"]].iterrows(), two[two["differs"]].iterrows(), strict=True)]
    return one, two, lines


def partial_warning(runs: Sequence[Any], metrics: Sequence[Any], skipped: Sequence[str], pairs: pd.DataFrame,
                    n_pairs: int) -> str:
    """The sentence above partial results: pairs done per cancelled metric, metrics not started."""
    counts = pairs.groupby("metric")["item"].nunique() if not pairs.empty else pd.Series(dtype=int)
    done = ", ".join(f"{r.name}: {int(counts.get(r.name, 0))} of {n_pairs} pairs" for r in runs if r.partial)
    names = [r.name for r in runs]
    missing = [m.name for m in metrics if m.name not in names and not any(m.label in s for s in skipped)]
    return ("Partial results (the run was cancelled): "
            + "; ".join(filter(None, [done, f"not started: {', '.join(missing)}" if missing else ""]))
            + ". Press Run to resume; finished batches are kept.")


def backbone_points(model_runs: Sequence[tuple[str, str, str, str]], identities: Mapping[str, str],
                    params_m: Mapping[str, int], bias_of: Any) -> pd.DataFrame:
    """Paper Fig. 4's points: for each stored model-based run whose backbone size is known (by weights identity,
    else by a known key in its source), the bias per attribute from `bias_of(run_id, metric)` (a bias table)."""
    points = []
    for run_id, metric, source, identity in model_runs:
        key = identities.get(identity) or next((k for k in params_m if k in source.lower()), None)
        if key in params_m:
            points += [{"metric": metric, "model": key, "params_m": params_m[key], "attribute": row.attribute,
                        "bias": row.bias, "ci_low": row.ci_low, "ci_high": row.ci_high}
                       for row in bias_of(run_id, metric).itertuples(index=False)]
    return pd.DataFrame(points)
