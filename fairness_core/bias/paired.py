"""Paired-gap bias of a metric (Sun et al. 2022, Eq. 1-2 and Appendix E), with bootstrap CIs.

Given scores S_i1, S_i2 of the two candidates of N pairs, rescale all 2N scores together, then

    Bias = (1/N) Σ |Ŝ_i1 − Ŝ_i2|                      (absolute gap, Eq. 2)
    StereoDiff = (1/N) Σ (Ŝ_i,stereo − Ŝ_i,anti)       (signed, Appendix E)

Normalisations: `minmax` (the paper: Ŝ = 100 (S − min) / (max − min)), `zscore` (Ŝ = (S − mean) /
std, so a gap reads in standard deviations) and `raw` (the metric's own units).

The 95% CI resamples pairs with replacement and recomputes the rescaling on every resample: min,
max, mean and std are statistics of the sample, so holding them at their full-sample values would
understate the uncertainty (and a resample without the extreme pairs really would rescale).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fairness_core.bias.bootstrap import Estimate

NORMALISATIONS = ("minmax", "zscore", "raw")


@dataclass(frozen=True)
class PairedBias:
    bias: Estimate
    stereo_diff: Estimate | None
    normalisation: str

    @property
    def n_pairs(self) -> int:
        return self.bias.n

    def as_dict(self) -> dict[str, float | int | None]:
        out: dict[str, float | int | None] = {"bias": self.bias.value, "ci_low": self.bias.ci_low,
                                              "ci_high": self.bias.ci_high, "n_pairs": self.bias.n}
        if self.stereo_diff is not None:
            out |= {"stereo_diff": self.stereo_diff.value, "stereo_ci_low": self.stereo_diff.ci_low,
                    "stereo_ci_high": self.stereo_diff.ci_high}
        return out


def rescale(scores: np.ndarray | Sequence[float], normalisation: str = "minmax") -> np.ndarray:
    """Rescale a set of scores (all 2N together) as the bias formula does (Eq. 1 for min-max)."""
    scores = np.asarray(scores, dtype=float)
    scale = float(_scale(scores[None, :], normalisation)[0])
    if normalisation == "minmax":
        return (scores - scores.min()) * scale
    if normalisation == "zscore":
        return (scores - scores.mean()) * scale
    return scores.copy()


def _scale(pooled: np.ndarray, normalisation: str) -> np.ndarray:
    """Multiplier per row of `pooled` (resamples × 2N) that turns a raw gap into a rescaled gap."""
    if normalisation == "minmax":
        spread = pooled.max(axis=1) - pooled.min(axis=1)
        return np.divide(100.0, spread, out=np.zeros_like(spread), where=spread > 0)
    if normalisation == "zscore":
        spread = pooled.std(axis=1)
        return np.divide(1.0, spread, out=np.zeros_like(spread), where=spread > 0)
    if normalisation == "raw":
        return np.ones(pooled.shape[0])
    raise ValueError(f"unknown normalisation {normalisation!r}; choose from {', '.join(NORMALISATIONS)}")


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
    n = len(s1)
    if n == 0:
        nan = Estimate(float("nan"), float("nan"), float("nan"), 0, level)
        return PairedBias(nan, None, normalisation)
    rng = np.random.default_rng(seed)
    draws = np.vstack([np.arange(n), rng.integers(0, n, size=(n_resamples, n))])  # row 0 = the sample
    a, b = s1[draws], s2[draws]
    scale = _scale(np.hstack([a, b]), normalisation)
    bias = np.abs(a - b).mean(axis=1) * scale
    alpha = (1 - level) / 2

    def estimate(values: np.ndarray, count: int) -> Estimate:
        low, high = np.quantile(values[1:], [alpha, 1 - alpha])
        return Estimate(float(values[0]), float(low), float(high), count, level)

    stereo_estimate = None
    if stereotypical is not None:
        import pandas as pd  # pd.isna understands None, NaN and pandas' NA (from DuckDB's nullable ints)

        marks = np.array([0 if pd.isna(v) else int(v) for v in stereotypical])
        if len(marks) != n:
            raise ValueError("stereotypical must have one entry per pair")
        sign = np.where(marks == 1, 1.0, np.where(marks == 2, -1.0, 0.0))
        known = sign != 0
        if known.any():
            signed = (a - b) * sign[draws]
            counts = known[draws].sum(axis=1)
            diff = np.divide(signed.sum(axis=1), counts, out=np.zeros(len(counts)), where=counts > 0) * scale
            stereo_estimate = estimate(diff, int(known.sum()))
    return PairedBias(estimate(bias, n), stereo_estimate, normalisation)


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
