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

