"""The permutation null of group labels over a cluster design: a test of "no difference between groups" that holds
its size.

A disparity (a mean of absolute differences between group rates) is positive whenever rates differ by noise, so its
plug-in estimate, and a bootstrap interval of it, sit above 0 even when the groups do not differ at all. A permutation
test asks instead how large the statistic would be if the group labels carried nothing: it recomputes the statistic
with the labels exchanged in the ways the design allows, and the p-value is the share of those arrangements whose
statistic is at least as large as the observed one.

What may be exchanged follows the design (the units a bootstrap resamples, `fairness_core.bias.cluster`). The thing
that moves is a **block**: one group's prompt with all its samples.

- A template shared by the groups of a family ("The {group} worked as") is one **exchange set**: its groups' prompts
  swap labels among themselves, never with another template's, so the template's own effect stays where it is (the
  test is paired, like the gap's bootstrap).
- Prompts that are not matched across groups (BOLD, a user's prompt file) form one exchange set per family: whole
  prompts, each with all its samples, move between the family's groups, and every group keeps its number of prompts.
- Nothing moves across families.

Under the null hypothesis that a block's group label does not change the distribution of its generations (the
blocks of an exchange set are exchangeable), every arrangement is equally likely, so the p-value
(1 + #{T* ≥ T}) / (1 + B) over B random arrangements rejects at most α of the time at any sample size (Phipson &
Smyth 2010, "Permutation p-values should never be zero", Eq. 2 with the +1 in numerator and denominator).

What the pages use is the **mid-p** (`p_values`), which counts ties half: it is not bounded by α the way the
ordinary p is. Its size is measured instead, by simulation (docs/statistics.md): 3.8% over the four regard
families at 10 templates × 2 samples, 4.9-5.0% at 40 × 2 and 30 × 4, 2.2-5.4% per family, 0-4.8% in small paired
designs of one family (5-6 templates); the review of issue 42 §3 found 6.0% in such a design. The ordinary p
would hold α there but rejected 0.7% of fair two-group designs of 10 templates × 2 samples (and so could hardly
detect anything): the mid-p is kept for that reason, its size shown.

What the null says: exchangeable blocks, not equal rates. Groups with equal rates but unequal spread and number of
prompts (unmatched prompts, 5 against 30, sd 0.25 against 0.04) are rejected too, 15-26% of the time: a rejection
says the groups' outputs differ, which the verdict's words say (`bias.disparity.verdict`).

Arrangements are index arrays (B × blocks), drawn at once; a statistic's group sums under all of them are one sparse
product, never a Python loop over rows or permutations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

#: 999 random arrangements: p-values are multiples of 1/1000, the smallest 0.001 (docs/decoding.md)
DEFAULT_PERMUTATIONS = 999


@dataclass(frozen=True)
class LabelBlocks:
    """The blocks of a design: each block's group label and the exchange set its label may move within.

    Blocks must be sorted by exchange set (non-decreasing ids), so one arrangement is a shuffle within each run of
    equal ids.
    """

    group: np.ndarray  # (n_blocks,) int: the block's group (an index into the caller's groups)
    exchange: np.ndarray  # (n_blocks,) int, non-decreasing: the exchange set

    def __post_init__(self) -> None:
        if len(self.group) != len(self.exchange):
            raise ValueError("every block needs a group and an exchange set")
        if len(self.exchange) and np.any(np.diff(self.exchange) < 0):
            raise ValueError("blocks must be sorted by exchange set")

    @property
    def n_blocks(self) -> int:
        return len(self.group)

    def arrangements(self, n_permutations: int, seed: int | tuple[int, ...] = 0) -> np.ndarray:
        """(n_permutations, n_blocks) group labels: in each row, the labels shuffled within every exchange set
        (uniformly: sorting by set id plus a uniform draw orders each set's blocks at random and no set mixes with
        another)."""
        rng = np.random.default_rng(seed)
        if n_permutations < 1 or self.n_blocks == 0:
            return np.zeros((max(n_permutations, 0), self.n_blocks), dtype=np.int64)
        keys = self.exchange[None, :] + rng.random((n_permutations, self.n_blocks))
        return self.group[np.argsort(keys, axis=1, kind="stable")]


def permuted_sums(labels: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """(B, K, n_groups): per arrangement (a row of `labels`, B × blocks) the sum of the blocks' `values`
    (blocks × K) per group. One sparse (B·groups × blocks) product."""
    n_arrangements, n_blocks = labels.shape
    values = np.asarray(values, dtype=float).reshape(n_blocks, -1)
    if n_arrangements == 0:
        return np.zeros((0, values.shape[1], n_groups))
    rows = (np.arange(n_arrangements)[:, None] * n_groups + labels).ravel()
    columns = np.broadcast_to(np.arange(n_blocks), labels.shape).ravel()
    assign = sparse.csr_matrix((np.ones(rows.size), (rows, columns)), shape=(n_arrangements * n_groups, n_blocks))
    return np.asarray(assign @ values).reshape(n_arrangements, n_groups, -1).transpose(0, 2, 1)


def _tolerance(observed: np.ndarray) -> np.ndarray:
    # the observed arrangement recomputed through another summation order may differ in the last bits: a tie
    return 1e-9 * np.maximum(1.0, np.abs(observed))


def p_values(observed: np.ndarray, null: np.ndarray) -> np.ndarray:
    """(K,) one-sided mid-p-values of `observed` (K,) against `null` (B, K): (#{T* > T} + ½(1 + #{T* = T})) / (1 + B).

    The observed arrangement is one of the 1 + B (Phipson & Smyth's +1), and ties with the observed statistic count
    half (Lancaster's mid-p; Lancaster 1961, JASA 56). Rates of a few samples per prompt take few values, so many
    arrangements tie: counting ties whole, the test of a two-group family of 10 templates × 2 samples rejected 0.7%
    of the time where nothing differs (α = 5%), i.e. it could hardly detect anything; with ties counted half, 2-6%
    (docs/decoding.md). Unlike the ordinary p the mid-p is not bounded by α: its size is measured, not promised
    (module docstring, docs/statistics.md). NaN
    arrangements are left out; a statistic without an estimate or without arrangements has no p-value (NaN)."""
    observed = np.asarray(observed, dtype=float)
    null = np.asarray(null, dtype=float)
    finite = np.isfinite(null)
    tolerance = _tolerance(observed)[None, :]
    greater = (finite & (null > observed[None, :] + tolerance)).sum(axis=0)
    tied = (finite & (np.abs(null - observed[None, :]) <= tolerance)).sum(axis=0)
    n = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isfinite(observed) & (n > 0), (greater + 0.5 * (1.0 + tied)) / (1.0 + n), np.nan)


def rejection_thresholds(null: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Per column of `null` (B, ...), the t such that a statistic that ties with no arrangement is rejected at level
    `alpha` (mid-p ≤ alpha) exactly when T > t: the m+1-th largest null value, m the most arrangements above T that
    (m + ½) / (1 + B) ≤ alpha allows. NaN where no value could be rejected: the null's largest value is shared by so
    many arrangements that even a statistic equal to it has a mid-p above alpha (a design with too few ways to
    arrange its labels, e.g. four templates of two groups), or there are too few arrangements."""
    null = np.asarray(null, dtype=float)
    if null.shape[0] == 0:
        return np.full(null.shape[1:], np.nan)
    finite = np.isfinite(null)
    n = finite.sum(axis=0)
    ordered = -np.sort(np.where(finite, -null, np.inf), axis=0)  # descending, NaN (as -inf) last
    allowed = np.floor(alpha * (1 + n) - 0.5 + 1e-9).astype(int)
    usable = (allowed >= 0) & (allowed < n)
    threshold = np.take_along_axis(ordered, np.clip(allowed, 0, max(null.shape[0] - 1, 0))[None], axis=0)[0]
    top = ordered[0]
    at_top = (finite & (null >= (top - _tolerance(top))[None])).sum(axis=0)
    reachable = 0.5 * (1 + at_top) <= alpha * (1 + n) + 1e-9
    return np.where(usable & reachable, threshold, np.nan)
