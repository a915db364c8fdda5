"""Bootstrap intervals for ratio estimates over resampled units, paired or not, for many cells at once.

An estimate of a cell is a mean over rows, each row belonging to one unit (a prompt with its samples, a
pair, a text): estimate = Σ_u total_u / Σ_u n_u. The interval resamples units, never rows, so the samples
of one prompt move together (they share the prompt's effect).

The resampling is the Poisson bootstrap: each unit gets an independent Poisson(1) count per replicate
instead of a multinomial draw of exactly U units. The two agree as U grows (Chamandy et al. 2012); the
Poisson form lets one weight matrix serve every cell at once even when cells hold different units (the
prompts of "man" are not those of "woman"), so the whole comparison is one sparse product.

Paired: when two runs scored the same units in a cell, the SAME weights multiply both runs' totals, so a
unit that is hard for both moves both estimates together and the difference's interval is narrower.
Unpaired: the second run gets its own, independent weights. The percentile interval (2.5 %, 97.5 %) is
read from replicates where the cell's denominator is positive.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from fairness_core.bias.bootstrap import two_sided_p

DEFAULT_RESAMPLES = 1000
LEVEL = 0.95


@dataclass(frozen=True)
class CellMatrix:
    """Units × cells sums of one run: totals (Σ values) and counts (rows) per (unit, cell); zero where absent."""

    totals: sparse.csc_matrix
    counts: sparse.csc_matrix

    @classmethod
    def build(cls, unit_index: np.ndarray, cell_index: np.ndarray, totals: np.ndarray, counts: np.ndarray,
              n_units: int, n_cells: int) -> CellMatrix:
        shape = (n_units, n_cells)
        return cls(sparse.csc_matrix((totals, (unit_index, cell_index)), shape=shape),
                   sparse.csc_matrix((counts, (unit_index, cell_index)), shape=shape))

    def estimates(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self.totals.sum(axis=0)).ravel() / np.asarray(self.counts.sum(axis=0)).ravel()

    def replicates(self, weights: np.ndarray) -> np.ndarray:
        """(replicates × cells) estimates under unit weights (replicates × units); NaN where a cell got no rows."""
        numerator = np.asarray(self.totals.T @ weights.T).T  # sparse (cells × units) @ dense (units × reps)
        denominator = np.asarray(self.counts.T @ weights.T).T
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


# Poisson(1) cumulative probabilities for k = 0..17 (beyond: < 1e-16): inverting uniforms through this table
# is ~8x faster than Generator.poisson for the millions of draws a comparison needs.
_POISSON_CDF = np.cumsum([np.exp(-1.0) / np.prod(np.arange(1, k + 1, dtype=float)) for k in range(18)])


def poisson_weights(n_units: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(replicates × units) independent Poisson(1) counts, as float64."""
    return np.searchsorted(_POISSON_CDF, rng.random((n_resamples, n_units)), side="right").astype(np.float64)


def percentile_bounds(replicates: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Per column (cell) percentile interval of replicates, ignoring NaN; NaN for a column with none.

    Same as `np.nanquantile(..., method="linear")` per column, vectorised: nanquantile loops over columns
    once any NaN is present (a cell whose units all drew weight 0 in a replicate), ~100x slower.
    """
    alpha = (1 - level) / 2
    ordered = np.sort(replicates, axis=0)  # NaN sorts last
    counts = np.isfinite(replicates).sum(axis=0)
    bounds = []
    for probability in (alpha, 1 - alpha):
        position = probability * np.maximum(counts - 1, 0)
        below = np.floor(position).astype(int)
        above = np.minimum(below + 1, np.maximum(counts - 1, 0))
        fraction = position - below
        low_values = np.take_along_axis(ordered, below[None, :], axis=0)[0]
        high_values = np.take_along_axis(ordered, above[None, :], axis=0)[0]
        value = low_values + (high_values - low_values) * fraction
        bounds.append(np.where(counts > 0, value, np.nan))
    return bounds[0], bounds[1]


@dataclass(frozen=True)
class Difference:
    estimate_a: np.ndarray
    low_a: np.ndarray
    high_a: np.ndarray
    estimate_b: np.ndarray
    low_b: np.ndarray
    high_b: np.ndarray
    difference: np.ndarray  # b − a
    low: np.ndarray
    high: np.ndarray


def compare_cells(a: CellMatrix, b: CellMatrix, paired: np.ndarray, n_resamples: int = DEFAULT_RESAMPLES,
                  seed: int = 0, level: float = LEVEL) -> Difference:
    """Estimates of both runs and their difference (b − a) per cell, paired where `paired` is True.

    `a` and `b` index the same units (rows) and cells (columns). A paired cell's difference is read from
    replicates that weight each unit alike in both runs; an unpaired one from independent weights.
    """
    rng = np.random.default_rng(seed)
    n_units = a.totals.shape[0]
    shared = poisson_weights(n_units, n_resamples, rng)
    rep_a = a.replicates(shared)
    rep_b = b.replicates(shared)
    if not paired.all():  # unpaired cells: the second run gets weights of its own
        rep_b = np.where(paired[None, :], rep_b, b.replicates(poisson_weights(n_units, n_resamples, rng)))
    low_a, high_a = percentile_bounds(rep_a, level)
    low_b, high_b = percentile_bounds(rep_b, level)
    low, high = percentile_bounds(rep_b - rep_a, level)
    est_a, est_b = a.estimates(), b.estimates()
    return Difference(est_a, low_a, high_a, est_b, low_b, high_b, est_b - est_a, low, high)


def bootstrap_p(differences: np.ndarray) -> np.ndarray:
    """Per column of (replicates × cells) resampled differences, the two-sided bootstrap p of "no difference":
    2 · min(share ≤ 0, share ≥ 0), at most 1 — the p the percentile interval inverts (the 95% interval excludes 0
    when p < 0.05, up to the interpolation between replicates). Each share counts the observed difference's side as
    one more replicate, (k + 1)/(R + 1), so no p is 0: R replicates cannot say more than 2/(R + 1), and a p of 0
    would pass any Benjamini-Hochberg threshold. NaN for a column with no finite replicate
    (`bias.bootstrap.two_sided_p`, which the decoding page's gaps use too)."""
    return two_sided_p(differences)
