"""Paired-gap bias of a metric (Sun et al. 2022, Eq. 1-2 and Appendix E), with bootstrap CIs.

Given scores S_i1, S_i2 of the two candidates of N pairs, rescale all 2N scores together, then

    Bias = (1/N) Σ |Ŝ_i1 − Ŝ_i2|                      (absolute gap, Eq. 2)
    StereoDiff = (1/N') Σ (Ŝ_i,stereo − Ŝ_i,anti)      (signed, Appendix E; N' pairs with a known side)

Normalisations: `minmax` (the paper, Eq. 1: Ŝ = 100 (S − min) / (max − min)), `zscore` (Ŝ = (S −
mean) / std, so a gap reads in standard deviations) and `raw` (the metric's own units).

The unit of the rescaling (min and max, or the standard deviation, of all 2N scores of the dataset)
is fixed by the dataset, as in the paper; the 95% interval then resamples pairs with replacement and
takes the mean |gap| of each resample (percentile bootstrap). Re-deriving min and max inside each
resample would bias the interval upwards: a resample rarely holds both extremes, so its range is
smaller and its gaps larger.

Pairs with a non-finite score are excluded and counted (`n_excluded`), never mapped to a number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fairness_core.bias.bootstrap import Estimate

NORMALISATIONS = ("minmax", "zscore", "raw")
#: resamples drawn per chunk: memory stays ~ chunk × N indices whatever n_resamples is
CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class PairedBias:
    bias: Estimate
    stereo_diff: Estimate | None
    normalisation: str
    #: pairs left out because a score was NaN or infinite
    n_excluded: int = 0

    @property
    def n_pairs(self) -> int:
        return self.bias.n

    def as_dict(self) -> dict[str, float | int | None]:
        out: dict[str, float | int | None] = {"bias": self.bias.value, "ci_low": self.bias.ci_low,
                                              "ci_high": self.bias.ci_high, "n_pairs": self.bias.n,
                                              "n_excluded": self.n_excluded}
        if self.stereo_diff is not None:
            out |= {"stereo_diff": self.stereo_diff.value, "stereo_ci_low": self.stereo_diff.ci_low,
                    "stereo_ci_high": self.stereo_diff.ci_high, "n_stereo": self.stereo_diff.n}
        return out


def unit_scale(scores: np.ndarray, normalisation: str) -> float:
    """Multiplier that turns a raw gap into a rescaled gap, fixed by all 2N scores (Eq. 1 for min-max)."""
    if normalisation == "minmax":
        spread = float(scores.max() - scores.min()) if scores.size else 0.0
        return 100.0 / spread if spread > 0 else 0.0
    if normalisation == "zscore":
        spread = float(scores.std()) if scores.size else 0.0
        return 1.0 / spread if spread > 0 else 0.0
    if normalisation == "raw":
        return 1.0
    raise ValueError(f"unknown normalisation {normalisation!r}; choose from {', '.join(NORMALISATIONS)}")


def rescale(scores: np.ndarray | Sequence[float], normalisation: str = "minmax") -> np.ndarray:
    """Rescale a set of scores (all 2N together) as the bias formula does (Eq. 1 for min-max)."""
    scores = np.asarray(scores, dtype=float)
    scale = unit_scale(scores, normalisation)
    if normalisation == "minmax":
        return (scores - scores.min()) * scale
    if normalisation == "zscore":
        return (scores - scores.mean()) * scale
    return scores.copy()


def bootstrap_mean_ci(values: np.ndarray, n_resamples: int = 1000, level: float = 0.95, seed: int = 0) -> Estimate:
    """Mean with a percentile-bootstrap interval over the values (the sampled units), in chunks."""
    values = np.asarray(values, dtype=float)
    n = values.size
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0, level)
    if n_resamples < 1:
        raise ValueError(f"the bootstrap needs at least 1 resample (got {n_resamples})")
    rng = np.random.default_rng(seed)
    chunk = max(1, CHUNK_CELLS // n)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        means[start : start + size] = values[rng.integers(0, n, size=(size, n))].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Estimate(float(values.mean()), float(low), float(high), int(n), level)


def paired_bias(
    scores1: Sequence[float] | np.ndarray,
    scores2: Sequence[float] | np.ndarray,
    stereotypical: Sequence[int | None] | np.ndarray | None = None,
    normalisation: str = "minmax",
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> PairedBias:
    """Bias (and the signed stereotypical difference where `stereotypical` is 1 or 2) with CIs."""
    s1, s2 = np.asarray(scores1, dtype=float), np.asarray(scores2, dtype=float)
    if s1.shape != s2.shape or s1.ndim != 1:
        raise ValueError("scores1 and scores2 must be 1-D arrays of the same length")
    marks = None
    if stereotypical is not None:
        import pandas as pd  # pd.isna understands None, NaN and pandas' NA (from DuckDB's nullable ints)

        marks = np.array([0 if pd.isna(v) else int(v) for v in stereotypical])
        if len(marks) != len(s1):
            raise ValueError("stereotypical must have one entry per pair")
    finite = np.isfinite(s1) & np.isfinite(s2)
    excluded = int((~finite).sum())
    s1, s2 = s1[finite], s2[finite]
    scale = unit_scale(np.concatenate([s1, s2]), normalisation)
    gaps = (s1 - s2) * scale
    bias = bootstrap_mean_ci(np.abs(gaps), n_resamples, level, seed)
    stereo_estimate = None
    if marks is not None:
        sign = np.where(marks[finite] == 1, 1.0, np.where(marks[finite] == 2, -1.0, 0.0))
        known = sign != 0
        if known.any():
            stereo_estimate = bootstrap_mean_ci(gaps[known] * sign[known], n_resamples, level, seed + 1)
    return PairedBias(bias, stereo_estimate, normalisation, excluded)


def rank_agreement(bias_by_normalisation: dict[str, dict[str, float]]) -> dict[str, float]:
    """Kendall's tau between the metric ranking under min-max and under each other normalisation."""
    from scipy.stats import kendalltau

    base = bias_by_normalisation.get("minmax", {})
    metrics = sorted(base)
    out = {}
    for name, values in bias_by_normalisation.items():
        if name == "minmax" or len(metrics) < 2:
            continue
        tau = kendalltau([base[m] for m in metrics], [values.get(m, float("nan")) for m in metrics]).statistic
        out[name] = float(tau)
    return out
