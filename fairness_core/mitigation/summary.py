"""Before/after numbers of a mitigation: bias (Eq. 1-2) on both sides with a paired interval of the difference,
per attribute, and the pairs whose gap changed most.

Each side is its own metric (the backbone, then the backbone with its adapter, or another backbone), so each side's
min-max unit is fixed by its own 2N scores (Eq. 1): Bias = (1/N) Σ |Ŝ_i1 − Ŝ_i2| (Eq. 2) with Ŝ = 100 (S − min) /
(max − min) over that side's scores. The difference after − before is paired: both sides scored the same pairs, so
each bootstrap resample draws pairs once and takes both sides' mean |gap| over the same draw (the units stay fixed,
as in `bias.paired`). relative = difference / before. A pair with a non-finite score on either side is left out of
both and counted.

WinoBias pairs share occupations (issue 42 §3; `metric_bias.summary`): given each pair's two occupations
(`factors`), the three intervals are the metric-bias study's two-way cluster-robust ones over the occupations
(Cameron, Gelbach & Miller 2011) instead of the pair bootstrap — for the difference on d_i = |gap_i after| −
|gap_i before|, whose mean is after − before — so each side's interval is the one the metric-bias page shows, and
they hold for other occupations like these, not only other sentences about these 40.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairness_core.bias.paired import CHUNK_CELLS, unit_scale

DEFAULT_RESAMPLES = 1000
LEVEL = 0.95


@dataclass(frozen=True)
class BiasChange:
    """Bias before and after (each Eq. 2 on its own min-max unit) and the paired difference after − before."""

    before: float
    after: float
    difference: float
    ci_low: float
    ci_high: float
    before_ci: tuple[float, float]
    after_ci: tuple[float, float]
    n_pairs: int
    n_excluded: int = 0
    #: what the intervals resample, in words (the metric-bias study's `UNITS`)
    interval_unit: str = "pairs"

    @property
    def relative(self) -> float:
        return self.difference / self.before if self.before else float("nan")

    def to_json(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "difference": self.difference, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "relative": self.relative, "before_ci": list(self.before_ci),
                "after_ci": list(self.after_ci), "n_pairs": self.n_pairs, "n_excluded": self.n_excluded,
                "interval_unit": self.interval_unit}


def gaps(scores1: np.ndarray, scores2: np.ndarray) -> np.ndarray:
    """|Ŝ1 − Ŝ2| per pair on the min-max unit of all 2N scores (Eq. 1-2)."""
    scale = unit_scale(np.concatenate([scores1, scores2]), "minmax")
    return np.abs(scores1 - scores2) * scale


def bias_change(before1: Sequence[float], before2: Sequence[float], after1: Sequence[float],
                after2: Sequence[float], n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                level: float = LEVEL, factors: tuple[np.ndarray, np.ndarray] | None = None) -> BiasChange:
    """The bias difference after − before with its interval: the paired bootstrap over pairs, or with `factors`
    (each pair's male and female occupation index, `metric_bias.occupation_factors`) the two-way interval over
    the occupations (module docstring)."""
    if not isinstance(n_resamples, int | np.integer) or n_resamples < 1:
        raise ValueError(f"the paired bootstrap needs at least 1 resample (got {n_resamples!r}); 1000 is the "
                         "default and enough for a 95% interval")
    b1, b2, a1, a2 = (np.asarray(x, dtype=float) for x in (before1, before2, after1, after2))
    if not (b1.shape == b2.shape == a1.shape == a2.shape) or b1.ndim != 1:
        raise ValueError("the four score arrays must be 1-D and of one length (the same pairs on both sides)")
    finite = np.isfinite(b1) & np.isfinite(b2) & np.isfinite(a1) & np.isfinite(a2)
    excluded = int((~finite).sum())
    gap_before, gap_after = gaps(b1[finite], b2[finite]), gaps(a1[finite], a2[finite])
    n = int(finite.sum())
    if n == 0:
        nan = float("nan")
        return BiasChange(nan, nan, nan, nan, nan, (nan, nan), (nan, nan), 0, excluded)
    rng = np.random.default_rng(seed)
    chunk = max(1, CHUNK_CELLS // n)
    means_before, means_after = np.empty(n_resamples), np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        draw = rng.integers(0, n, size=(size, n))  # one draw of pairs for both sides
        means_before[start : start + size] = gap_before[draw].mean(axis=1)
        means_after[start : start + size] = gap_after[draw].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(means_after - means_before, [alpha, 1 - alpha])
    before_ci = tuple(float(v) for v in np.quantile(means_before, [alpha, 1 - alpha]))
    after_ci = tuple(float(v) for v in np.quantile(means_after, [alpha, 1 - alpha]))
    before, after = float(gap_before.mean()), float(gap_after.mean())
    unit = "pairs"
    if factors is not None and level == LEVEL:  # the metric-bias study's two-way intervals (95%)
        from fairness_core.metric_bias import OCCUPATION_UNIT, mean_interval

        unit = OCCUPATION_UNIT

        kept = (np.asarray(factors[0])[finite], np.asarray(factors[1])[finite])
        found = [mean_interval(values, kept, bounds) for values, bounds in
                 ((gap_after - gap_before, (-np.inf, np.inf)), (gap_before, (0.0, np.inf)),
                  (gap_after, (0.0, np.inf)))]
        low, high = found[0]["low"], found[0]["high"]
        before_ci, after_ci = (found[1]["low"], found[1]["high"]), (found[2]["low"], found[2]["high"])
    return BiasChange(before, after, after - before, float(low), float(high), before_ci, after_ci,  # type: ignore[arg-type]
                      n, excluded, unit)


def changed_pairs(pairs: Sequence[dict[str, Any]], before1: Sequence[float], before2: Sequence[float],
                  after1: Sequence[float], after2: Sequence[float], limit: int = 20) -> list[dict[str, Any]]:
    """The pairs whose rescaled gap changed most (largest |change| first), with both gaps and the texts."""
    b1, b2, a1, a2 = (np.asarray(x, dtype=float) for x in (before1, before2, after1, after2))
    finite = np.isfinite(b1) & np.isfinite(b2) & np.isfinite(a1) & np.isfinite(a2)
    gap_before, gap_after = np.full(len(b1), np.nan), np.full(len(b1), np.nan)
    gap_before[finite], gap_after[finite] = gaps(b1[finite], b2[finite]), gaps(a1[finite], a2[finite])
    change = gap_after - gap_before
    order = [int(i) for i in np.argsort(-np.abs(np.nan_to_num(change, nan=-1.0)), kind="stable") if finite[i]]
    rows = []
    for i in order[:limit]:
        pair = pairs[i]
        rows.append({"item": pair["item"], "attribute": pair["attribute"], "candidate1": pair["candidate1"],
                     "candidate2": pair["candidate2"], "reference": pair["reference"],
                     "gap_before": float(gap_before[i]), "gap_after": float(gap_after[i]),
                     "change": float(change[i])})
    return rows
