"""Percentile bootstrap confidence intervals, vectorised (resampling units, e.g. pairs or texts)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """A statistic with its 95% (by default) percentile-bootstrap interval."""

    value: float
    ci_low: float
    ci_high: float
    n: int
    level: float = 0.95

    def as_dict(self) -> dict[str, float | int]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}]"


def bootstrap_mean(
    values: np.ndarray | list[float], n_resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> Estimate:
    """Mean of `values` with a percentile bootstrap CI over the values (resampled with replacement)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0, level)
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, data.size, size=(n_resamples, data.size))
    means = data[indices].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Estimate(float(data.mean()), float(low), float(high), int(data.size), level)


def two_sided_p(replicates: np.ndarray) -> np.ndarray:
    """Per column of (replicates × cells) bootstrap replicates of a signed statistic, the two-sided bootstrap p of
    "it is 0": 2 · min(share ≤ 0, share ≥ 0), at most 1 — the p a percentile interval inverts (its 95% interval
    excludes 0 when p < 0.05, up to interpolation). Each share counts one more replicate, (k + 1)/(R + 1), so no p is
    0. NaN for a column with no finite replicate."""
    replicates = np.asarray(replicates, dtype=float)
    finite = np.isfinite(replicates)
    n = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        below = (np.where(finite, replicates <= 0, False).sum(axis=0) + 1) / (n + 1)
        above = (np.where(finite, replicates >= 0, False).sum(axis=0) + 1) / (n + 1)
        return np.where(n > 0, np.minimum(1.0, 2.0 * np.minimum(below, above)), np.nan)
