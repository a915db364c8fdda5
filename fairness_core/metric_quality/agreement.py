"""Agreement of a metric with human scores: correlations under three rules, with intervals over items.

A judgments set has one candidate per (item, system); an item is a document (summarisation) or a source segment
(translation). The three rules people use, which give different numbers and must not be confused:

* **pooled** (`"pooled"`): one correlation over all (item, system) candidates — the released REALSumm
  analysis of Sun et al. 2022 (`analyse_pkls.py`: Spearman over all 2,400 summaries), behind Tables 4–5;
* **document** (`"document"`): the correlation over the systems within each item, averaged over items
  (an item whose scores or human scores are constant, or with fewer than 3 scored candidates, has no
  correlation: it is left out of the average and counted);
* **system** (`"system"`): each system's mean score and mean human score over the items, then one
  correlation over the systems.

Statistics: Spearman ρ (ties get average ranks, as scipy), Pearson r, Kendall τ-b.

Intervals (95% percentile bootstrap): the items are the unit the candidates share (24 summaries of one document
are not 24 independent draws), so a resample draws items with replacement and keeps all of a drawn item's
candidates, as many times as it was drawn; the statistic is recomputed under the same rule. For the pooled rule
this is the correlation over all candidates of the drawn items, computed without building the resampled table:
a row drawn k times is a row with weight k, ranks are weighted average ranks (a value's rank in the expanded
sample) and the correlation is the weighted Pearson correlation of those ranks — the same number as scipy on the
expanded sample (tested). A paired difference between two metrics uses the same resampled items for both, so the
interval is of the difference on the same candidates. A resample whose statistic is undefined (a constant within
it) is left out of the percentiles and counted.

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
RULE_LABELS = {
    "pooled": "pooled: one correlation over all candidates (the released REALSumm rule)",
    "document": "per document: correlation over systems within each item, averaged over items",
    "system": "system level: mean per system over items, then one correlation over systems",
}
LEVEL = 0.95
#: resampled values held at once (rows × resamples): bounds memory whatever the data size
CHUNK_CELLS = 4_000_000
MIN_PER_ITEM = 3


class AgreementError(ValueError):
    """A request the statistics cannot answer (unknown rule, misaligned scores); one sentence."""


def _check(rule: str, statistic: str, n_resamples: int) -> None:
    if rule not in RULES:
        raise AgreementError(f"unknown rule {rule!r}; choose from {', '.join(RULES)}")
    if statistic not in STATISTICS:
        raise AgreementError(f"unknown statistic {statistic!r}; choose from {', '.join(STATISTICS)}")
    if not isinstance(n_resamples, int | np.integer) or n_resamples < 0:
        raise AgreementError(f"n_resamples must be a whole number >= 0 (got {n_resamples!r})")


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
    total = weights.sum(axis=1, keepdims=True)
    mean_a = (weights * a).sum(axis=1, keepdims=True) / total
    mean_b = (weights * b).sum(axis=1, keepdims=True) / total
    da, db = a - mean_a, b - mean_b
    cov = (weights * da * db).sum(axis=1)
    var_a, var_b = (weights * da * da).sum(axis=1), (weights * db * db).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = cov / np.sqrt(var_a * var_b)
    # a constant in the resample (spread at rounding level relative to the values' size): undefined
    size_a, size_b = (weights * a * a).sum(axis=1), (weights * b * b).sum(axis=1)
    out[~((var_a > 1e-20 * size_a) & (var_b > 1e-20 * size_b))] = np.nan
    return out


# -- the three rules -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Data:
    """The finite candidates of one comparison: metric score(s), human score, item and system codes."""

    scores: tuple[np.ndarray, ...]
    human: np.ndarray
    item: np.ndarray  # codes 0..n_items-1 over the kept rows' items (the resampled unit)
    system: np.ndarray
    n_items: int
    n_systems: int
    n_excluded: int


def _data(judgments: Any, columns: Sequence[np.ndarray]) -> _Data:
    human = np.asarray(judgments.human, dtype=float)
    arrays = [np.asarray(c, dtype=float) for c in columns]
    for array in arrays:
        if array.shape != human.shape:
            raise AgreementError(f"got {array.size} scores for {human.size} candidates; score every candidate of "
                                 "the judgments, in their order")
    keep = np.isfinite(human)
    for array in arrays:
        keep &= np.isfinite(array)
    items_all, systems_all = judgments.item_codes[keep], judgments.system_codes[keep]
    item_ids, item = np.unique(items_all, return_inverse=True)
    system_ids, system = np.unique(systems_all, return_inverse=True)
    return _Data(tuple(a[keep] for a in arrays), human[keep], item, system, len(item_ids), len(system_ids),
                 int((~keep).sum()))


def _per_item(x: np.ndarray, human: np.ndarray, item: np.ndarray, n_items: int, statistic: str) -> np.ndarray:
    """The correlation within each item (NaN where undefined or fewer than 3 candidates)."""
    out = np.full(n_items, np.nan)
    sizes = np.bincount(item, minlength=n_items)
    order = np.argsort(item, kind="stable")
    if len(set(sizes.tolist())) == 1 and sizes[0] >= MIN_PER_ITEM:
        # every item has the same number of candidates (the usual case): one (items, systems) matrix
        return _rows_statistic(x[order].reshape(n_items, -1), human[order].reshape(n_items, -1), statistic)
    bounds = np.r_[0, np.cumsum(sizes)]
    for k in range(n_items):
        rows = order[bounds[k] : bounds[k + 1]]
        if len(rows) >= MIN_PER_ITEM:
            out[k] = correlation(x[rows], human[rows], statistic)
    return out


def _system_table(x: np.ndarray, item: np.ndarray, system: np.ndarray, n_items: int, n_systems: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(values, present) as item × system matrices."""
    values = np.zeros((n_items, n_systems))
    present = np.zeros((n_items, n_systems))
    values[item, system] = x
    present[item, system] = 1.0
    return values, present


def _system_means(values: np.ndarray, present: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(R, S) means per system over the items drawn `counts` (R, I) times."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts @ (values * present)) / (counts @ present)


def kendall_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's τ-b of each row of a with the same row of b ((R, S), finite, few columns): Σ sign(Δa)·sign(Δb)
    over pairs / √((pairs − ties in a)(pairs − ties in b)); NaN when a row is constant."""
    sa = np.sign(a[:, :, None] - a[:, None, :])
    sb = np.sign(b[:, :, None] - b[:, None, :])
    pairs = a.shape[1] * (a.shape[1] - 1)  # ordered pairs: every sum below counts each pair twice
    untied_a = pairs - ((sa == 0).sum(axis=(1, 2)) - a.shape[1])
    untied_b = pairs - ((sb == 0).sum(axis=(1, 2)) - b.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (sa * sb).sum(axis=(1, 2)) / np.sqrt(untied_a.astype(float) * untied_b)
    out[(untied_a == 0) | (untied_b == 0)] = np.nan
    return out


def _rows_statistic(a: np.ndarray, b: np.ndarray, statistic: str) -> np.ndarray:
    """The statistic of each row pair of two finite (R, S) matrices."""
    if statistic == "kendall":
        return kendall_rows(a, b)
    if statistic == "spearman":
        from scipy.stats import rankdata

        a, b = rankdata(a, axis=1), rankdata(b, axis=1)
    return weighted_pearson(a, b, np.ones_like(a))


def _row_correlations(a: np.ndarray, b: np.ndarray, statistic: str) -> np.ndarray:
    """Correlation of each row of a with the same row of b ((R, S) each, few columns), NaN where undefined."""
    out = np.full(a.shape[0], np.nan)
    finite = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    if finite.any():
        out[finite] = _rows_statistic(a[finite], b[finite], statistic)
    for r in np.flatnonzero(~finite):
        mask = np.isfinite(a[r]) & np.isfinite(b[r])
        out[r] = correlation(a[r][mask], b[r][mask], statistic)
    return out


def _point(d: _Data, x: np.ndarray, rule: str, statistic: str) -> tuple[float, int]:
    """The statistic under the rule, and the number of items it rests on."""
    if rule == "pooled":
        return correlation(x, d.human, statistic), d.n_items
    if rule == "document":
        per_item = _per_item(x, d.human, d.item, d.n_items, statistic)
        defined = np.isfinite(per_item)
        return (float(per_item[defined].mean()) if defined.any() else math.nan), int(defined.sum())
    values, present = _system_table(x, d.item, d.system, d.n_items, d.n_systems)
    human, _ = _system_table(d.human, d.item, d.system, d.n_items, d.n_systems)
    ones = np.ones((1, d.n_items))
    return float(_row_correlations(_system_means(values, present, ones), _system_means(human, present, ones),
                                   statistic)[0]), d.n_items


def _counts(n_items: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(R, I): how often each item is drawn in each resample (items drawn with replacement)."""
    draws = rng.integers(0, n_items, size=(n_resamples, n_items))
    offsets = (np.arange(n_resamples) * n_items)[:, None]
    return np.bincount((draws + offsets).ravel(), minlength=n_resamples * n_items).reshape(n_resamples, n_items)


def _resampled(d: _Data, x: np.ndarray, rule: str, statistic: str, counts: np.ndarray) -> np.ndarray:
    """The statistic under the rule for each resample of items (rows of `counts`)."""
    if rule == "document":
        per_item = _per_item(x, d.human, d.item, d.n_items, statistic)
        defined = np.isfinite(per_item)
        weights = counts * defined
        with np.errstate(invalid="ignore", divide="ignore"):
            return (weights @ np.where(defined, per_item, 0.0)) / weights.sum(axis=1)
    if rule == "system":
        values, present = _system_table(x, d.item, d.system, d.n_items, d.n_systems)
        human, _ = _system_table(d.human, d.item, d.system, d.n_items, d.n_systems)
        return _row_correlations(_system_means(values, present, counts), _system_means(human, present, counts),
                                 statistic)
    out = np.empty(len(counts))
    step = max(1, CHUNK_CELLS // max(len(x), 1))
    for start in range(0, len(counts), step):
        weights = counts[start : start + step][:, d.item].astype(float)  # (r, N): each row's item's draw count
        if statistic == "pearson":
            out[start : start + step] = weighted_pearson(x, d.human, weights)
        elif statistic == "spearman":
            out[start : start + step] = weighted_pearson(weighted_ranks(x, weights), weighted_ranks(d.human, weights),
                                                         weights)
        else:  # Kendall's tau-b has no cheap weighted form: expand each resample
            for r, row in enumerate(weights.astype(np.int64)):
                rows = np.repeat(np.arange(len(x)), row)
                out[start + r] = correlation(x[rows], d.human[rows], statistic)
    return out


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
    default), a 95% percentile bootstrap over items."""

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

    @property
    def value(self) -> float:
        """The statistic the interval belongs to."""
        return getattr(self, self.statistic)

    def to_json(self) -> dict[str, Any]:
        """The CLI's contract: NaN and ±inf are null, never NaN."""
        return {"spearman": _clean(self.spearman), "ci_low": _clean(self.ci_low), "ci_high": _clean(self.ci_high),
                "pearson": _clean(self.pearson), "kendall": _clean(self.kendall), "n": self.n,
                "n_documents": self.n_documents, "n_systems": self.n_systems, "rule": self.rule,
                "ci_of": self.statistic, "n_excluded": self.n_excluded, "n_resamples": self.n_resamples}


@dataclass(frozen=True)
class Difference:
    """b − a of one statistic on the same candidates, with a paired 95% interval (the same items resampled for
    both metrics)."""

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

    @property
    def excludes_zero(self) -> bool:
        return bool(self.ci_low > 0 or self.ci_high < 0)

    def to_json(self) -> dict[str, Any]:
        return {"a": _clean(self.a), "b": _clean(self.b), "difference": _clean(self.difference),
                "ci_low": _clean(self.ci_low), "ci_high": _clean(self.ci_high), "n": self.n,
                "n_documents": self.n_documents, "rule": self.rule, "statistic": self.statistic,
                "n_excluded": self.n_excluded, "n_resamples": self.n_resamples}


def _scores(judgments: Any, scores: Any) -> np.ndarray:
    """Scores aligned with the judgments' rows: an array, or the name of a frame column (a stored score)."""
    if isinstance(scores, str):
        if scores not in judgments.frame.columns or scores in ("item_id", "system", "candidate", "reference"):
            raise AgreementError(f"{judgments.name} has no score column {scores!r}; stored columns: "
                                 f"{', '.join(judgments.stored_columns) or 'none'}")
        return judgments.frame[scores].to_numpy(dtype=float)
    return np.asarray(scores, dtype=float)


def correlate(judgments: Any, scores: Any, rule: str = "pooled", n_resamples: int = 1000, seed: int = 0,
              statistic: str = "spearman", level: float = LEVEL) -> Correlation:
    """Agreement of `scores` (one per candidate, in the judgments' row order; or a stored column's name) with
    the human scores under `rule`, with a bootstrap interval over items for `statistic`."""
    _check(rule, statistic, n_resamples)
    d = _data(judgments, [_scores(judgments, scores)])
    x = d.scores[0]
    values = {s: _point(d, x, rule, s)[0] for s in STATISTICS}
    n_documents = _point(d, x, rule, statistic)[1]
    low = high = math.nan
    undefined = 0
    if n_resamples and d.n_items >= 2:
        counts = _counts(d.n_items, n_resamples, np.random.default_rng(seed))
        low, high, undefined = _interval(_resampled(d, x, rule, statistic, counts), level)
    return Correlation(values["spearman"], values["pearson"], values["kendall"], low, high, len(x), n_documents,
                       d.n_systems, rule, statistic, d.n_excluded, n_resamples, undefined, level)


def paired_difference(judgments: Any, scores_a: Any, scores_b: Any, rule: str = "pooled",
                      statistic: str = "spearman", n_resamples: int = 1000, seed: int = 0,
                      level: float = LEVEL) -> Difference:
    """statistic(b) − statistic(a) under `rule` on the candidates both scored, with the same items resampled for
    both (a paired interval: "is the variant still as good a metric?")."""
    _check(rule, statistic, n_resamples)
    d = _data(judgments, [_scores(judgments, scores_a), _scores(judgments, scores_b)])
    xa, xb = d.scores
    a, n_documents = _point(d, xa, rule, statistic)
    b = _point(d, xb, rule, statistic)[0]
    low = high = math.nan
    if n_resamples and d.n_items >= 2:
        counts = _counts(d.n_items, n_resamples, np.random.default_rng(seed))
        samples = _resampled(d, xb, rule, statistic, counts) - _resampled(d, xa, rule, statistic, counts)
        low, high, _ = _interval(samples, level)
    return Difference(a, b, b - a, low, high, len(xa), n_documents, rule, statistic, d.n_excluded, n_resamples,
                      level)
