"""Agreement of a metric with human scores: correlations under three rules, with intervals over documents, systems
or both.

A judgments set has one candidate per (item, system); an item is a document (summarisation) or a source segment
(translation). The three rules people use, which give different numbers and must not be confused:

* **pooled** (`"pooled"`): one correlation over all (item, system) candidates — the released REALSumm analysis of
  Sun et al. 2022 (`analyse_pkls.py`: Spearman over all 2,400 summaries), behind Tables 4–5;
* **document** (`"document"`): the correlation over the systems within each item, averaged over items
  (Deutsch, Dror & Roth 2021's "summary-level" correlation). An item whose human scores are constant, or with fewer
  than 3 scored candidates, has no correlation for any metric: it is left out and counted. An item on which people
  tell the systems apart but the *metric* scores them all alike counts as 0 (`constant="zero"`, the default): the
  metric ranks none of the systems people distinguish. Leaving it out (`constant="drop"`, the convention of
  scipy-based tools) rewards ties: a metric would lose nothing by giving up on its hardest items. A paired
  difference always averages both metrics over the same items (those both define);
* **system** (`"system"`): each system's mean score and mean human score over the items, then one correlation over
  the systems (Deutsch et al.'s "system-level" correlation).

Statistics: Spearman ρ (ties get average ranks, as scipy), Pearson r, Kendall τ-b. With `group_average` and a
judgments set that has groups (WMT: one group per language pair, each with its own systems), the rule's statistic
is computed within each group and averaged over groups: Sun et al.'s WMT protocol (Tables 4, 5 and 8: system-level
Pearson per language pair, then the average).

Intervals (95% percentile bootstrap; Deutsch, Dror & Roth 2021's "Boot-Inputs", "Boot-Systems", "Boot-Both"):
the `resample` unit says what the interval generalises over.

* `"documents"`: items drawn with replacement, each bringing all its candidates (24 summaries of one document are
  not 24 independent draws); the systems are held fixed: the interval speaks of *these* systems on documents like
  these. The default of the pooled and document rules (the released REALSumm rule's own unit).
* `"systems"`: systems drawn with replacement, the items held fixed.
* `"both"`: items and systems drawn independently, the resample being every candidate of a drawn item by a drawn
  system (each as often as its item times its system was drawn): the interval speaks of the metric, on other
  documents and other systems. The default of the system rule, whose 24 points are the sample that matters.

A candidate drawn k times is a row of weight k: the statistic of the expanded sample is computed from weights
(weighted average ranks, weighted Pearson, Kendall τ-b over weighted pairs), never by building the resampled
table — the same numbers as scipy on the expanded sample (tested). With groups averaged, items and systems are
drawn within each group. A paired difference between two metrics uses the same draws for both. A resample whose
statistic is undefined (a constant within it) is left out of the percentiles and counted.

Candidates whose metric score is not finite (NaN, ±inf) are left out and counted (`n_excluded`); they are never
mapped to a number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

RULES = ("pooled", "document", "system")
STATISTICS = ("spearman", "pearson", "kendall")
#: what a resample draws (Deutsch, Dror & Roth 2021: Boot-Inputs, Boot-Systems, Boot-Both)
UNITS = ("documents", "systems", "both")
DEFAULT_UNIT = {"pooled": "documents", "document": "documents", "system": "both"}
#: the document rule's treatment of an item whose metric scores are all equal (people's are not)
CONSTANT_POLICIES = ("zero", "drop")
RULE_LABELS = {
    "pooled": "pooled: one correlation over all candidates (the released REALSumm rule)",
    "document": "per document: correlation over systems within each item, averaged over items",
    "system": "system level: mean per system over items, then one correlation over systems",
}
UNIT_LABELS = {
    "documents": "documents (systems held fixed)",
    "systems": "systems (documents held fixed)",
    "both": "documents and systems (Deutsch et al.'s boot-both)",
}
LEVEL = 0.95
#: resampled values held at once (rows × resamples): bounds memory whatever the data size
CHUNK_CELLS = 4_000_000
MIN_PER_ITEM = 3


class AgreementError(ValueError):
    """A request the statistics cannot answer (unknown rule, misaligned scores); one sentence."""


def _check(rule: str, statistic: str, n_resamples: int, resample: str, constant: str) -> None:
    if rule not in RULES:
        raise AgreementError(f"unknown rule {rule!r}; choose from {', '.join(RULES)}")
    if statistic not in STATISTICS:
        raise AgreementError(f"unknown statistic {statistic!r}; choose from {', '.join(STATISTICS)}")
    if resample not in UNITS:
        raise AgreementError(f"unknown resampling unit {resample!r}; choose from {', '.join(UNITS)}")
    if constant not in CONSTANT_POLICIES:
        raise AgreementError(f"unknown treatment of constant documents {constant!r}; choose from "
                             f"{', '.join(CONSTANT_POLICIES)}")
    if not isinstance(n_resamples, int | np.integer) or n_resamples < 0:
        raise AgreementError(f"n_resamples must be a whole number >= 0 (got {n_resamples!r})")


def default_unit(rule: str) -> str:
    """The resampling unit a rule uses unless told otherwise (module docstring)."""
    return DEFAULT_UNIT[rule]


def interval_scope(resample: str, n_items: int, n_systems: int) -> str:
    """One phrase: what the interval resamples and what it generalises over."""
    if resample == "documents":
        return (f"resamples the {n_items:,} documents, holding the {n_systems:,} systems fixed: it generalises to "
                "other documents, for these systems only")
    if resample == "systems":
        return (f"resamples the {n_systems:,} systems, holding the {n_items:,} documents fixed: it generalises to "
                "other systems, on these documents only")
    return (f"resamples the {n_items:,} documents and the {n_systems:,} systems: it generalises to other documents "
            "and other systems")


def _clean(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


# -- correlations on plain and weighted samples ----------------------------------------------------------------
def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2:
        return math.nan
    dx, dy = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum()))
    return float((dx * dy).sum()) / denominator if denominator > 0 else math.nan


def _rank(values: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(values, method="average")


def correlation(x: np.ndarray, y: np.ndarray, statistic: str) -> float:
    """One correlation of two equal-length arrays (all finite); NaN when undefined (a constant, < 2 points)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    if statistic == "pearson":
        return _pearson(x, y)
    if statistic == "spearman":
        return _pearson(_rank(x), _rank(y))
    from scipy.stats import kendalltau

    return float(kendalltau(x, y).statistic)


def weighted_ranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Average ranks of `values` in the sample where row i appears weights[r, i] times, for each resample r:
    (R, N). A value shared by rows of total weight T above C lower-valued rows gets rank C + (T + 1) / 2."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new_group = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(new_group)
    group_of = np.empty(len(values), dtype=np.int64)
    group_of[order] = np.cumsum(new_group) - 1  # per row: its value's place among the distinct values
    totals = np.add.reduceat(weights[:, order], starts, axis=1)
    group_rank = np.cumsum(totals, axis=1) - totals + (totals + 1) / 2
    return group_rank[:, group_of]


def weighted_pearson(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation of a and b (each (R, N) or (N,)) with row weights (R, N); NaN if undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        total = weights.sum(axis=1, keepdims=True)
        mean_a = (weights * a).sum(axis=1, keepdims=True) / total
        mean_b = (weights * b).sum(axis=1, keepdims=True) / total
        da, db = a - mean_a, b - mean_b
        cov = (weights * da * db).sum(axis=1)
        var_a, var_b = (weights * da * da).sum(axis=1), (weights * db * db).sum(axis=1)
        out = cov / np.sqrt(var_a * var_b)
    # a constant in the resample (spread at rounding level relative to the values' size): undefined
    size_a, size_b = (weights * a * a).sum(axis=1), (weights * b * b).sum(axis=1)
    out[~((var_a > 1e-20 * size_a) & (var_b > 1e-20 * size_b))] = np.nan
    return out


def kendall_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's τ-b of each row of a with the same row of b ((R, S), finite, few columns): Σ sign(Δa)·sign(Δb)
    over pairs / √((pairs − ties in a)(pairs − ties in b)); NaN when a row is constant."""
    return weighted_kendall_rows(a, b, np.ones_like(a))


def weighted_kendall_rows(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Kendall's τ-b of each row pair of (R, K) matrices where entry k appears weights[r, k] times (a whole
    number; 0 = absent): over the ordered pairs of the expanded sample, Σ w_i w_j sign(Δa) sign(Δb) /
    √((P − T_a)(P − T_b)), P = W(W − 1) ordered pairs, T_a = Σ w_i w_j [a_i = a_j] − W the ordered pairs tied in a
    (copies of one entry are tied in both); NaN when a row is constant."""
    sa = np.sign(a[:, :, None] - a[:, None, :])
    sb = np.sign(b[:, :, None] - b[:, None, :])
    pair_weights = weights[:, :, None] * weights[:, None, :]
    total = weights.sum(axis=1)
    pairs = total * (total - 1)
    untied_a = pairs - ((pair_weights * (sa == 0)).sum(axis=(1, 2)) - total)
    untied_b = pairs - ((pair_weights * (sb == 0)).sum(axis=(1, 2)) - total)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (pair_weights * sa * sb).sum(axis=(1, 2)) / np.sqrt(untied_a * untied_b)
    out[(untied_a <= 0) | (untied_b <= 0)] = np.nan
    return out


def _row_ranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Average ranks within each row of (R, K) `values` in the sample where entry k appears weights[r, k] times:
    (weight of the smaller values) + (weight of the equal values + 1) / 2."""
    less = (weights[:, None, :] * (values[:, None, :] < values[:, :, None])).sum(axis=2)
    equal = (weights[:, None, :] * (values[:, None, :] == values[:, :, None])).sum(axis=2)
    return less + (equal + 1) / 2


def weighted_rows(a: np.ndarray, b: np.ndarray, weights: np.ndarray, statistic: str) -> np.ndarray:
    """The statistic of each row pair of (R, K) matrices with entry weights (R, K) (0 = absent; NaN values must
    have weight 0): the statistic of the expanded sample; NaN when undefined (fewer than 2 entries, a constant)."""
    a, b = np.where(weights > 0, a, 0.0), np.where(weights > 0, b, 0.0)
    out = np.full(a.shape[0], np.nan)
    step = max(1, CHUNK_CELLS // max(a.shape[1] ** 2, 1))
    for start in range(0, a.shape[0], step):
        part = slice(start, start + step)
        wa, wb, w = a[part], b[part], weights[part]
        if statistic == "kendall":
            out[part] = weighted_kendall_rows(wa, wb, w)
            continue
        if statistic == "spearman":
            wa, wb = _row_ranks(wa, w), _row_ranks(wb, w)
        out[part] = weighted_pearson(wa, wb, w)
    return out


def fixed_row_ranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Average ranks within each row of `values` (I, K) in the sample where entry k of row i appears
    weights[r, i, k] times, for each resample r: (R, I, K). The values are the same in every resample (only the
    weights move), so each row is sorted once and a rank is (weight below its value) + (weight of its value + 1) / 2
    from cumulative sums: O(R·I·K) rather than O(R·I·K²)."""
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    positions = np.broadcast_to(np.arange(values.shape[1]), values.shape)
    new_value = np.ones(values.shape, dtype=bool)
    new_value[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    start = np.maximum.accumulate(np.where(new_value, positions, 0), axis=1)  # first position of each value
    last = np.ones(values.shape, dtype=bool)
    last[:, :-1] = new_value[:, 1:]
    end = np.minimum.accumulate(np.where(last, positions, values.shape[1])[:, ::-1], axis=1)[:, ::-1]
    sorted_weights = np.take_along_axis(weights, np.broadcast_to(order, weights.shape), axis=2)
    through = np.cumsum(sorted_weights, axis=2)
    below = np.take_along_axis(through - sorted_weights, np.broadcast_to(start, weights.shape), axis=2)
    tied = np.take_along_axis(through, np.broadcast_to(end, weights.shape), axis=2) - below
    ranks = np.empty_like(sorted_weights)
    np.put_along_axis(ranks, np.broadcast_to(order, weights.shape), below + (tied + 1) / 2, axis=2)
    return ranks


def _spread(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row of (R, K): max − min over the entries of positive weight (0 when fewer than one)."""
    high = np.where(weights > 0, values, -np.inf).max(axis=1)
    low = np.where(weights > 0, values, np.inf).min(axis=1)
    return np.where(np.isfinite(high) & np.isfinite(low), high - low, 0.0)


# -- the data of one comparison --------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Data:
    """The finite candidates of one comparison (one group): metric score(s), human score, item and system codes."""

    scores: tuple[np.ndarray, ...]
    human: np.ndarray
    item: np.ndarray  # codes 0..n_items-1 over the kept rows' items (the resampled unit)
    system: np.ndarray
    n_items: int
    n_systems: int
    n_excluded: int

    def table(self, values: np.ndarray) -> np.ndarray:
        """(items, systems) with NaN where a candidate is absent or left out."""
        out = np.full((self.n_items, self.n_systems), np.nan)
        out[self.item, self.system] = values
        return out


def _recode(codes: np.ndarray) -> tuple[np.ndarray, int]:
    ids, recoded = np.unique(codes, return_inverse=True)
    return recoded, len(ids)


def _data(judgments: Any, columns: Sequence[np.ndarray], by_group: bool = False) -> list[_Data]:
    """The comparison's data: one part, or one per group of the judgments (`by_group`)."""
    human = np.asarray(judgments.human, dtype=float)
    arrays = [np.asarray(c, dtype=float) for c in columns]
    for array in arrays:
        if array.shape != human.shape:
            raise AgreementError(f"got {array.size} scores for {human.size} candidates; score every candidate of "
                                 "the judgments, in their order")
    keep = np.isfinite(human)
    for array in arrays:
        keep &= np.isfinite(array)
    excluded = int((~keep).sum())
    groups = judgments.group_codes if by_group else np.zeros(len(human), dtype=np.int64)
    parts = []
    for group in np.unique(groups):
        rows = keep & (groups == group)
        if not rows.any():
            continue
        item, n_items = _recode(judgments.item_codes[rows])
        system, n_systems = _recode(judgments.system_codes[rows])
        parts.append(_Data(tuple(a[rows] for a in arrays), human[rows], item, system, n_items, n_systems,
                           excluded if not parts else 0))
    if not parts:
        parts.append(_Data(tuple(np.zeros(0) for _ in arrays), np.zeros(0), np.zeros(0, dtype=np.int64),
                           np.zeros(0, dtype=np.int64), 0, 0, excluded))
    return parts


# -- resamples: how often each item and each system is drawn ---------------------------------------------------
def _counts(n_units: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(R, U): how often each unit is drawn in each resample (units drawn with replacement)."""
    draws = rng.integers(0, n_units, size=(n_resamples, n_units))
    offsets = (np.arange(n_resamples) * n_units)[:, None]
    return np.bincount((draws + offsets).ravel(), minlength=n_resamples * n_units).reshape(n_resamples, n_units)


@dataclass(frozen=True)
class _Draws:
    """Item counts (R, I) and system counts (R, S) of each resample; None = every unit once (held fixed)."""

    items: np.ndarray | None
    systems: np.ndarray | None
    n_resamples: int


def _draws(d: _Data, resample: str, n_resamples: int, rng: np.random.Generator) -> _Draws:
    # documents first, from the same generator: a "documents" interval draws what it always drew
    items = _counts(d.n_items, n_resamples, rng).astype(float) if resample in ("documents", "both") else None
    systems = _counts(d.n_systems, n_resamples, rng).astype(float) if resample in ("systems", "both") else None
    return _Draws(items, systems, n_resamples)


def _ones(n_resamples: int, n_units: int) -> np.ndarray:
    return np.ones((n_resamples, n_units))


# -- the three rules, for the point (every unit once) and for resamples -----------------------------------------
@dataclass(frozen=True)
class _PerItem:
    """The document rule's per-item correlations ((R', I); R' = 1 when the systems are fixed) and why items have
    none (counted at the point estimate)."""

    values: np.ndarray
    n_constant: int  # items where the metric is constant and people are not (0 or dropped, by policy)
    n_undefined: int  # items where people are constant, or fewer than 3 candidates: no correlation for any metric


def _per_item(d: _Data, x: np.ndarray, statistic: str, constant: str, systems: np.ndarray | None) -> _PerItem:
    """Per item, the correlation over its systems, the systems weighted by `systems` (R, S) (None: once each)."""
    metric, human = d.table(x), d.table(d.human)
    present = np.isfinite(metric) & np.isfinite(human)
    weights = systems if systems is not None else _ones(1, d.n_systems)
    n_rows = weights.shape[0]
    out = np.full((n_rows, d.n_items), np.nan)
    n_constant = n_undefined = 0
    per_resample = d.n_items * d.n_systems * (d.n_systems if statistic == "kendall" else 4)
    step = max(1, CHUNK_CELLS // max(per_resample, 1))
    filled_metric, filled_human = np.where(present, metric, 0.0), np.where(present, human, 0.0)
    for start in range(0, n_rows, step):
        cube = weights[start : start + step, None, :] * present[None]  # (r, I, S)
        r = cube.shape[0]
        w = cube.reshape(-1, d.n_systems)
        a = np.broadcast_to(filled_metric, (r, *metric.shape)).reshape(-1, d.n_systems)
        b = np.broadcast_to(filled_human, (r, *human.shape)).reshape(-1, d.n_systems)
        if statistic == "spearman":  # each item's order is fixed: ranks from cumulative weights, not pairs
            values = weighted_pearson(fixed_row_ranks(filled_metric, cube).reshape(-1, d.n_systems),
                                      fixed_row_ranks(filled_human, cube).reshape(-1, d.n_systems), w)
        else:
            values = weighted_rows(a, b, w, statistic)
        enough = (w > 0).sum(axis=1) >= MIN_PER_ITEM
        human_varies = _spread(b, w) > 0
        metric_flat = _spread(a, w) == 0
        flat = enough & human_varies & metric_flat
        values = np.where(enough & human_varies, values, np.nan)
        values = np.where(flat, 0.0 if constant == "zero" else np.nan, values)
        out[start : start + r] = values.reshape(r, d.n_items)
        if start == 0 and systems is None:
            n_constant = int(flat.sum())
            n_undefined = int((~(enough & human_varies)).sum())
    return _PerItem(out, n_constant, n_undefined)


def _average_items(per_item: np.ndarray, items: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """(R,) the mean over items of the per-item values, item i counted items[r, i] times, over `defined` items.
    per_item and defined are (1, I) (fixed) or (R, I)."""
    weights = items * defined
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights * np.where(defined, per_item, 0.0)).sum(axis=1) / weights.sum(axis=1)


def _pooled(d: _Data, x: np.ndarray, statistic: str, draws: _Draws) -> np.ndarray:
    """(R,) the pooled statistic of each resample: candidate (i, s) weighted by items[i] × systems[s]."""
    out = np.empty(draws.n_resamples)
    step = max(1, CHUNK_CELLS // max(len(x), 1))
    for start in range(0, draws.n_resamples, step):
        stop = min(start + step, draws.n_resamples)
        weights = np.ones((stop - start, len(x)))
        if draws.items is not None:
            weights = weights * draws.items[start:stop][:, d.item]
        if draws.systems is not None:
            weights = weights * draws.systems[start:stop][:, d.system]
        if statistic == "pearson":
            out[start:stop] = weighted_pearson(x, d.human, weights)
        elif statistic == "spearman":
            out[start:stop] = weighted_pearson(weighted_ranks(x, weights), weighted_ranks(d.human, weights), weights)
        else:  # Kendall's tau-b over thousands of candidates has no cheap weighted form: expand each resample
            for r, row in enumerate(weights.astype(np.int64)):
                rows = np.repeat(np.arange(len(x)), row)
                out[start + r] = correlation(x[rows], d.human[rows], statistic)
    return out


def _system_means(values: np.ndarray, present: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(R, S) means per system over the items drawn `counts` (R, I) times."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts @ (values * present)) / (counts @ present)


def _system(d: _Data, x: np.ndarray, statistic: str, items: np.ndarray, systems: np.ndarray) -> np.ndarray:
    """(R,) the system-level statistic: system means over the drawn items, correlated over the drawn systems."""
    metric, human = d.table(x), d.table(d.human)
    present = np.isfinite(metric).astype(float)
    means_x = _system_means(np.nan_to_num(metric), present, items)
    means_h = _system_means(np.nan_to_num(human), present, items)
    weights = np.where(np.isfinite(means_x) & np.isfinite(means_h), systems, 0.0)
    return weighted_rows(means_x, means_h, weights, statistic)


@dataclass(frozen=True)
class _Outcome:
    """One metric in one group: the point, its resamples (R,), and the counts behind the document rule."""

    point: float
    resamples: np.ndarray
    n_documents: int
    n_constant: int = 0
    n_undefined: int = 0


def _evaluate(d: _Data, scores: Sequence[np.ndarray], rule: str, statistic: str, constant: str,
              draws: _Draws | None) -> list[_Outcome]:
    """Each metric's statistic under the rule at the point and in each resample of `draws` (the same draws for
    every metric). Under the document rule, the items averaged are those every metric defines."""
    n = 0 if draws is None else draws.n_resamples
    if rule == "pooled":
        return [_Outcome(correlation(x, d.human, statistic),
                         _pooled(d, x, statistic, draws) if draws is not None else np.zeros(0), d.n_items)
                for x in scores]
    if rule == "system":
        fixed = _ones(1, d.n_items), _ones(1, d.n_systems)
        outcomes = []
        for x in scores:
            point = float(_system(d, x, statistic, *fixed)[0])
            samples = np.zeros(0)
            if draws is not None:
                items = draws.items if draws.items is not None else _ones(n, d.n_items)
                systems = draws.systems if draws.systems is not None else _ones(n, d.n_systems)
                samples = _system(d, x, statistic, items, systems)
            outcomes.append(_Outcome(point, samples, d.n_items))
        return outcomes
    points = [_per_item(d, x, statistic, constant, None) for x in scores]
    shared = np.logical_and.reduce([np.isfinite(p.values) for p in points])  # (1, I): the items all define
    outcomes = []
    samples_of: list[np.ndarray] = []
    if draws is not None:
        items = draws.items if draws.items is not None else _ones(n, d.n_items)
        resampled = ([p.values for p in points] if draws.systems is None else
                     [_per_item(d, x, statistic, constant, draws.systems).values for x in scores])
        both = np.logical_and.reduce([np.isfinite(v) for v in resampled])
        samples_of = [_average_items(v, items, both) for v in resampled]
    for k, p in enumerate(points):
        point = float(_average_items(p.values, _ones(1, d.n_items), shared)[0])
        outcomes.append(_Outcome(point, samples_of[k] if samples_of else np.zeros(0), int(shared.sum()),
                                 p.n_constant, p.n_undefined))
    return outcomes


def _combine(per_group: list[list[_Outcome]], n_metrics: int) -> list[_Outcome]:
    """The average over groups of each metric's outcome (one group: itself)."""
    if len(per_group) == 1:
        return per_group[0]
    out = []
    for k in range(n_metrics):
        parts = [group[k] for group in per_group]
        samples = np.mean([p.resamples for p in parts], axis=0) if parts[0].resamples.size else np.zeros(0)
        out.append(_Outcome(float(np.mean([p.point for p in parts])), samples, sum(p.n_documents for p in parts),
                            sum(p.n_constant for p in parts), sum(p.n_undefined for p in parts)))
    return out


def _run(parts: list[_Data], rule: str, statistic: str, resample: str, constant: str, n_resamples: int,
         seed: int) -> list[_Outcome]:
    """Each metric's outcome, averaged over the parts (groups); items and systems drawn within each part."""
    rng = np.random.default_rng(seed)
    per_group = []
    for part in parts:
        draws = None
        if n_resamples and part.n_items >= 2:
            draws = _draws(part, resample, n_resamples, rng)
        per_group.append(_evaluate(part, part.scores, rule, statistic, constant, draws))
    return _combine(per_group, len(parts[0].scores))


def _interval(samples: np.ndarray, level: float) -> tuple[float, float, int]:
    """Percentile interval of the defined resampled values, and how many were undefined."""
    defined = samples[np.isfinite(samples)]
    if len(defined) < 2:
        return math.nan, math.nan, int(len(samples) - len(defined))
    alpha = (1 - level) / 2
    low, high = np.quantile(defined, [alpha, 1 - alpha])
    return float(low), float(high), int(len(samples) - len(defined))


# -- public results --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Correlation:
    """A metric's agreement with human scores under one rule; the interval is of `statistic` (Spearman by
    default), a 95% percentile bootstrap over the `resample` unit (documents, systems or both)."""

    spearman: float
    pearson: float
    kendall: float
    ci_low: float
    ci_high: float
    n: int  # candidates used (finite metric and human score)
    n_documents: int  # items the number rests on (document rule: items with a defined correlation)
    n_systems: int
    rule: str
    statistic: str = "spearman"
    n_excluded: int = 0  # candidates left out: the metric score is not finite
    n_resamples: int = 1000
    n_undefined_resamples: int = 0
    level: float = LEVEL
    resample: str = "documents"
    #: document rule: items where the metric is constant and people are not (counted as 0, or dropped)
    n_constant_documents: int = 0
    #: document rule: items without a correlation for any metric (people constant, or < 3 candidates)
    n_undefined_documents: int = 0
    constant: str = "zero"
    #: groups the statistic is averaged over (1: none)
    n_groups: int = 1
    n_items: int = 0  # items of the data (the documents an interval over documents resamples)

    @property
    def value(self) -> float:
        """The statistic the interval belongs to."""
        return getattr(self, self.statistic)

    @property
    def scope(self) -> str:
        """What the interval resamples and generalises over, in words."""
        return interval_scope(self.resample, self.n_items or self.n_documents, self.n_systems)

    def to_json(self) -> dict[str, Any]:
        """The CLI's contract: NaN and ±inf are null, never NaN."""
        return {"spearman": _clean(self.spearman), "ci_low": _clean(self.ci_low), "ci_high": _clean(self.ci_high),
                "pearson": _clean(self.pearson), "kendall": _clean(self.kendall), "n": self.n,
                "n_documents": self.n_documents, "n_systems": self.n_systems, "rule": self.rule,
                "ci_of": self.statistic, "value": _clean(self.value), "n_excluded": self.n_excluded,
                "n_resamples": self.n_resamples, "n_undefined_resamples": self.n_undefined_resamples,
                "resample": self.resample, "interval_generalises": self.scope,
                "n_constant_documents": self.n_constant_documents,
                "n_undefined_documents": self.n_undefined_documents, "constant_documents": self.constant,
                "n_groups": self.n_groups}


@dataclass(frozen=True)
class Difference:
    """b − a of one statistic on the same candidates, with a paired 95% interval (the same draws of documents
    and/or systems for both metrics). Under the document rule both are averaged over the same documents."""

    a: float
    b: float
    difference: float
    ci_low: float
    ci_high: float
    n: int
    n_documents: int
    rule: str
    statistic: str = "spearman"
    n_excluded: int = 0
    n_resamples: int = 1000
    level: float = LEVEL
    n_undefined_resamples: int = 0
    resample: str = "documents"
    n_systems: int = 0
    #: document rule: items left out of both averages, and why
    n_dropped_documents: int = 0
    dropped_why: str = ""
    n_items: int = 0

    @property
    def excludes_zero(self) -> bool:
        return bool(self.ci_low > 0 or self.ci_high < 0)

    @property
    def scope(self) -> str:
        return interval_scope(self.resample, self.n_items or self.n_documents, self.n_systems)

    def to_json(self) -> dict[str, Any]:
        return {"a": _clean(self.a), "b": _clean(self.b), "difference": _clean(self.difference),
                "ci_low": _clean(self.ci_low), "ci_high": _clean(self.ci_high), "n": self.n,
                "n_documents": self.n_documents, "rule": self.rule, "statistic": self.statistic,
                "n_excluded": self.n_excluded, "n_resamples": self.n_resamples,
                "n_undefined_resamples": self.n_undefined_resamples, "resample": self.resample,
                "interval_generalises": self.scope, "n_dropped_documents": self.n_dropped_documents,
                "dropped_why": self.dropped_why}


def _scores(judgments: Any, scores: Any) -> np.ndarray:
    """Scores aligned with the judgments' rows: an array, or the name of a frame column (a stored score)."""
    if isinstance(scores, str):
        if scores not in judgments.frame.columns or scores in ("item_id", "system", "candidate", "reference",
                                                               "group"):
            raise AgreementError(f"{judgments.name} has no score column {scores!r}; stored columns: "
                                 f"{', '.join(judgments.stored_columns) or 'none'}")
        return judgments.frame[scores].to_numpy(dtype=float)
    return np.asarray(scores, dtype=float)


def _options(judgments: Any, rule: str, statistic: str, n_resamples: int, resample: str | None, constant: str,
             group_average: bool) -> str:
    resample = resample or DEFAULT_UNIT.get(rule, "documents")
    _check(rule, statistic, n_resamples, resample, constant)
    if group_average and getattr(judgments, "n_groups", 1) < 2:
        raise AgreementError(f"{judgments.name} has no groups to average over (give a 'group' column, e.g. the "
                             "language pair)")
    return resample


def correlate(judgments: Any, scores: Any, rule: str = "pooled", n_resamples: int = 1000, seed: int = 0,
              statistic: str = "spearman", level: float = LEVEL, resample: str | None = None,
              constant: str = "zero", group_average: bool = False) -> Correlation:
    """Agreement of `scores` (one per candidate, in the judgments' row order; or a stored column's name) with
    the human scores under `rule`, with a bootstrap interval of `statistic` over the `resample` unit (None: the
    rule's default, `DEFAULT_UNIT`). `group_average`: the rule within each group, averaged over groups."""
    resample = _options(judgments, rule, statistic, n_resamples, resample, constant, group_average)
    parts = _data(judgments, [_scores(judgments, scores)], by_group=group_average)
    values = {name: _run(parts, rule, name, resample, constant, 0, seed)[0] for name in STATISTICS
              if name != statistic}
    (outcome,) = _run(parts, rule, statistic, resample, constant, n_resamples, seed)
    values[statistic] = outcome
    low, high, undefined = _interval(outcome.resamples, level) if outcome.resamples.size else (math.nan, math.nan, 0)
    n_systems = sum(p.n_systems for p in parts)
    return Correlation(values["spearman"].point, values["pearson"].point, values["kendall"].point, low, high,
                       sum(len(p.human) for p in parts), outcome.n_documents, n_systems, rule, statistic,
                       parts[0].n_excluded, n_resamples, undefined, level, resample, outcome.n_constant,
                       outcome.n_undefined, constant, len(parts) if group_average else 1,
                       sum(p.n_items for p in parts))


def paired_difference(judgments: Any, scores_a: Any, scores_b: Any, rule: str = "pooled",
                      statistic: str = "spearman", n_resamples: int = 1000, seed: int = 0,
                      level: float = LEVEL, resample: str | None = None, constant: str = "zero",
                      group_average: bool = False) -> Difference:
    """statistic(b) − statistic(a) under `rule` on the candidates both scored, with the same documents and/or
    systems drawn for both (a paired interval: "is the variant still as good a metric?"). Under the document rule
    both metrics are averaged over the documents both define; the others are counted with the reason."""
    resample = _options(judgments, rule, statistic, n_resamples, resample, constant, group_average)
    parts = _data(judgments, [_scores(judgments, scores_a), _scores(judgments, scores_b)], by_group=group_average)
    a, b = _run(parts, rule, statistic, resample, constant, n_resamples, seed)
    low = high = math.nan
    undefined = 0
    if a.resamples.size:
        low, high, undefined = _interval(b.resamples - a.resamples, level)
    n_items = sum(p.n_items for p in parts)
    dropped, why = 0, ""
    if rule == "document":
        dropped = n_items - a.n_documents
        reasons = []
        undefined_items = max(a.n_undefined, b.n_undefined)
        if undefined_items:
            reasons.append(f"{undefined_items} where people score every system alike or fewer than {MIN_PER_ITEM} "
                           "candidates were scored (no correlation for any metric)")
        flat = dropped - undefined_items
        if flat > 0:
            reasons.append(f"{flat} where one metric scores every system alike (left out of both averages, as "
                           "constant='drop' asks)")
        why = "; ".join(reasons)
    return Difference(a.point, b.point, b.point - a.point, low, high, sum(len(p.human) for p in parts),
                      a.n_documents, rule, statistic, parts[0].n_excluded, n_resamples, level, undefined, resample,
                      sum(p.n_systems for p in parts), dropped, why, n_items)
