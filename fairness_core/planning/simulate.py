"""The power of a design's permutation test, by simulation from the pilot's own units.

One simulated study of `n` units per label (and `m` samples per cell, for a rate whose samples can be planned):

1. **Resample** the pilot: a paired family draws n of its units with replacement (each with all its labels' blocks
   and cells); an unpaired family draws, for each label, n prompts from the family's pooled prompts.
2. **Make the null true**: in a paired unit the labels' blocks are shuffled (the unit's own level stays, what the
   label did is gone); an unpaired family's prompts were drawn from the pool whatever their label. The pilot's own
   difference between labels was taken out of the latent values before (`pilot.latent_family`), so it is not
   counted as spread.
3. **Inject the effect**: one label of each family set apart from the others by a shift e whose statistic is the
   planned effect δ (the smallest-detectable disparity of `bias.disparity` sets a group apart the same way; which
   label rotates over the simulated studies): e = δ·G/2 for the mean absolute pairwise difference of G groups
   (Dhamala et al.), e = δ·G/(2(G − 1)) for Eq. 1 (Zayed et al.) and FPED (Dixon et al.), e = δ for a difference
   between two runs or sides. A mean moves by e; a rate moves without leaving [0, 1]: each cell's latent rate p
   becomes p + q(1 − p) with q = e/(1 − p̄) (p̄ the family's mean rate, so the rates rise by e on average), or
   p(1 − q) with q = e/p̄ where p̄ > 0.5.
4. **Draw** each cell's samples: Binomial(m, p) flagged for a rate, the latent mean for a mean.
5. **Test** it as the study page does: group sums under B random arrangements of the labels within the design's
   exchange sets (`bias.permutation.LabelBlocks`, one sparse product for all simulated studies at once), the
   statistic per family and its mean over families, the mid-p-value, reject at p ≤ α.

The power is the share of simulated studies rejected. Every simulated study is tested against the same B
arrangements (the studies' p-values are then slightly correlated; each test is still exact).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fairness_core.bias.cluster import mean_over
from fairness_core.bias.permutation import LabelBlocks, p_values, permuted_sums
from fairness_core.planning.pilot import PAIRWISE, TO_MEAN, TO_POOLED, LatentFamily

ALPHA = 0.05
#: arrangements per simulated test: the mid-p moves in steps of 1/400, and the power lost against the pages' 999 is
#: below the simulation's own error (docs/planning.md)
PERMUTATIONS = 199
#: simulated studies per evaluated size: the power's standard error is at most 0.029 (0.023 at a power of 0.8)
SIMULATIONS = 300
#: blocks × simulated studies handled in one sparse product (memory: about 8 bytes × this × B / blocks)
CHUNK_CELLS = 400_000
PERMUTATION = "permutation"  # the design's permutation test of the labels (decoding, Compare, metric bias, audit)
WELCH = "welch"  # CAIRO's Eq. 1 interval: Welch intervals of the subgroup gaps (cairo.bias.gap_interval)


def shift_factor(statistic: str, n_labels: int) -> float:
    """k such that setting one of `n_labels` groups apart by e = δ·k gives the statistic δ (module docstring)."""
    if statistic == PAIRWISE:
        return n_labels / 2.0
    return n_labels / (2.0 * (n_labels - 1.0))


def largest_effect(latents: Sequence[LatentFamily], statistic: str, binary: bool) -> float:
    """The largest effect a rate can carry (its shift stays inside [0, 1] in every family); inf for means."""
    if not binary:
        return float("inf")
    room = [max(f.center, 1.0 - f.center) / shift_factor(statistic, f.family.n_labels) for f in latents]
    return float(min(room))


@dataclass
class _Blocks:
    totals: list[np.ndarray]  # per family (S, blocks)
    counts: list[np.ndarray]
    group: list[np.ndarray]  # per family (blocks,) global label index
    exchange: list[np.ndarray]  # per family (blocks,) exchange set id (global, non-decreasing)


def _inject(values: np.ndarray, target: np.ndarray, shift: float, center: float, binary: bool) -> np.ndarray:
    """`values` with the effect added to the cells of `target` (same shape, bool)."""
    if shift == 0:
        return values
    if not binary:
        return np.where(target, values + shift, values)
    if center <= 0.5:
        q = min(1.0, shift / max(1.0 - center, 1e-12))
        moved = values + q * (1.0 - values)
    else:
        q = min(1.0, shift / max(center, 1e-12))
        moved = values * (1.0 - q)
    return np.where(target, moved, values)


def _draw(values: np.ndarray, counts: np.ndarray, binary: bool, rng: np.random.Generator) -> np.ndarray:
    present = counts > 0
    if binary:
        probability = np.where(present, np.clip(np.nan_to_num(values), 0.0, 1.0), 0.0)
        return rng.binomial(counts.astype(np.int64), probability).astype(float)
    return np.where(present, np.nan_to_num(values) * counts, 0.0)


def _family_blocks(latent: LatentFamily, n: int, samples: int | None, delta: float, statistic: str, binary: bool,
                   n_sims: int, offset: int, exchange_start: int, rng: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """(totals (S, blocks), counts (S, blocks), label (blocks,), exchange (blocks,), next exchange id)."""
    family = latent.family
    n_labels = family.n_labels
    shift = delta * shift_factor(statistic, n_labels)
    sims = np.arange(n_sims)
    target = sims % n_labels
    if family.paired:
        n_variants, n_units = family.totals.shape[:2]
        variant = (sims // n_labels) % n_variants
        units = rng.integers(0, n_units, size=(n_sims, n))
        values = latent.values[variant[:, None], units]  # (S, n, G, C)
        counts = family.counts[variant[:, None], units].astype(float)
        if samples is not None:
            counts = np.where(counts > 0, float(samples), 0.0)
        order = np.argsort(rng.random((n_sims, n, n_labels)), axis=2)  # the null: a unit's labels shuffled
        values = np.take_along_axis(values, order[..., None], axis=2)
        counts = np.take_along_axis(counts, order[..., None], axis=2)
        chosen = (np.arange(n_labels)[None, None, :, None] == target[:, None, None, None])
        values = _inject(values, np.broadcast_to(chosen, values.shape), shift, latent.center, binary)
        drawn = _draw(values, counts, binary, rng)
        totals = drawn.sum(axis=3).reshape(n_sims, n * n_labels)  # blocks unit-major: (unit i, label g)
        block_counts = counts.sum(axis=3).reshape(n_sims, n * n_labels)
        label = np.tile(np.arange(n_labels), n) + offset
        exchange = np.repeat(np.arange(n), n_labels) + exchange_start
        return totals, block_counts, label, exchange, exchange_start + n
    pool = len(family.totals)
    prompts = rng.integers(0, pool, size=(n_sims, n_labels, n))  # the null: every label draws from the pool
    values = latent.values[prompts]
    counts = family.counts[prompts].astype(float)
    if samples is not None:
        counts = np.where(counts > 0, float(samples), 0.0)
    chosen = np.arange(n_labels)[None, :, None] == target[:, None, None]
    values = _inject(values, np.broadcast_to(chosen, values.shape), shift, latent.center, binary)
    drawn = _draw(values, counts, binary, rng)
    label = np.repeat(np.arange(n_labels), n) + offset  # blocks label-major: (label g, prompt i)
    exchange = np.full(n_labels * n, exchange_start)
    return (drawn.reshape(n_sims, n_labels * n), counts.reshape(n_sims, n_labels * n), label, exchange,
            exchange_start + 1)


def family_statistics(rates: np.ndarray, totals: np.ndarray, counts: np.ndarray, members: Sequence[np.ndarray],
                      statistic: str) -> np.ndarray:
    """(..., F): each family's statistic from the group rates (..., G) (and sums, for FPED's pooled rate)."""
    out = []
    for index in members:
        family = rates[..., index]
        if statistic == PAIRWISE:
            pairs = list(itertools.combinations(range(len(index)), 2))
            out.append(np.mean([np.abs(family[..., a] - family[..., b]) for a, b in pairs], axis=0))
        elif statistic == TO_MEAN:
            out.append(np.abs(family.mean(axis=-1, keepdims=True) - family).sum(axis=-1))
        elif statistic == TO_POOLED:
            with np.errstate(invalid="ignore", divide="ignore"):
                pooled = totals[..., index].sum(axis=-1) / counts[..., index].sum(axis=-1)
            out.append(np.abs(pooled[..., None] - family).sum(axis=-1))
        else:
            raise ValueError(f"unknown statistic {statistic!r}")
    return np.stack(out, axis=-1)


def _invariant_counts(counts: np.ndarray, exchange: np.ndarray) -> bool:
    """Whether every block of each exchange set has the same count in every simulated study (then no arrangement
    changes a group's count and the counts need no permuting)."""
    starts = np.flatnonzero(np.r_[True, np.diff(exchange) != 0])
    low = np.minimum.reduceat(counts, starts, axis=1)
    high = np.maximum.reduceat(counts, starts, axis=1)
    return bool(np.array_equal(low, high))


def welch_rejections(values: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """(S,) bool: whether CAIRO's Eq. 1 interval (`cairo.bias.gap_interval`) of each simulated study excludes 0, i.e.
    some subgroup's signed gap d_s = E_s' m_s' − m_s has a Welch interval (level 1 − α/k over k > 2 gaps, Bonferroni)
    without 0. `values`: (S, G, n) prompt means per subgroup."""
    from scipy.stats import t as student

    n_sims, k, n = values.shape
    means = values.mean(axis=-1)
    variances = values.var(axis=-1, ddof=1) if n > 1 else np.full((n_sims, k), np.nan)
    tests = 1 if k == 2 else k
    excluded = np.zeros(n_sims, dtype=bool)
    for s in range(k):
        contrast = np.full(k, 1.0 / k)
        contrast[s] -= 1.0
        gap = means @ contrast
        parts = contrast**2 * variances / n
        variance = parts.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            df = variance**2 / (parts**2 / (n - 1)).sum(axis=-1)
            half = np.where(variance > 0, student.ppf(1 - alpha / (2 * tests), df) * np.sqrt(variance), 0.0)
        excluded |= np.isfinite(half) & (np.abs(gap) > half)
    return excluded


def rejections(latents: Sequence[LatentFamily], statistic: str, binary: bool, n: int, samples: int | None,
               delta: float, n_sims: int = SIMULATIONS, n_permutations: int = PERMUTATIONS, alpha: float = ALPHA,
               seed: int = 0, test: str = PERMUTATION) -> np.ndarray:
    """(n_sims,) bool: which simulated studies of `n` units per label (module docstring) the test rejects: the
    design's permutation test, or (`test="welch"`, one unpaired family of means) CAIRO's Eq. 1 interval."""
    rng = np.random.default_rng((seed, n, 0 if samples is None else samples))
    if test == WELCH:
        (latent,) = latents
        totals, counts, _, _, _ = _family_blocks(latent, n, samples, delta, statistic, binary, n_sims, 0, 0, rng)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (totals / counts).reshape(n_sims, latent.family.n_labels, n)
        return welch_rejections(means, alpha)
    parts = _Blocks([], [], [], [])
    offset, exchange_start, members = 0, 0, []
    for latent in latents:
        totals, counts, label, exchange, exchange_start = _family_blocks(
            latent, n, samples, delta, statistic, binary, n_sims, offset, exchange_start, rng)
        parts.totals.append(totals)
        parts.counts.append(counts)
        parts.group.append(label)
        parts.exchange.append(exchange)
        members.append(np.arange(latent.family.n_labels) + offset)
        offset += latent.family.n_labels
    totals = np.concatenate(parts.totals, axis=1)
    counts = np.concatenate(parts.counts, axis=1)
    blocks = LabelBlocks(np.concatenate(parts.group), np.concatenate(parts.exchange))
    p = permutation_p_values(totals, counts, blocks, members, statistic, n_permutations, (seed, blocks.n_blocks, 11))
    return np.isfinite(p) & (p <= alpha)


def permutation_p_values(totals: np.ndarray, counts: np.ndarray, blocks: LabelBlocks,
                         members: Sequence[np.ndarray], statistic: str, n_permutations: int = PERMUTATIONS,
                         seed: int | tuple[int, ...] = 0) -> np.ndarray:
    """(S,) mid-p-values of S studies sharing one block layout (`totals`, `counts`: (S, blocks); `members`: each
    family's label indices): the statistic per family and its mean over families, under the labels as given and
    under `n_permutations` arrangements within the exchange sets (the same for every study)."""
    n_sims = totals.shape[0]
    n_labels = int(max(int(m.max()) for m in members)) + 1
    arrangements = blocks.arrangements(n_permutations, seed)
    labels = np.vstack([blocks.group[None, :], arrangements])  # row 0: the labels as drawn (the observed statistic)
    fixed_counts = _invariant_counts(counts, blocks.exchange)
    out = np.full(n_sims, np.nan)
    chunk = max(1, CHUNK_CELLS // max(blocks.n_blocks, 1))
    for start in range(0, n_sims, chunk):
        part = slice(start, min(n_sims, start + chunk))
        sums = permuted_sums(labels, totals[part].T, n_labels)  # (B + 1, S', G)
        if fixed_counts:
            group_counts = np.broadcast_to(permuted_sums(labels[:1], counts[part].T, n_labels), sums.shape)
        else:
            group_counts = permuted_sums(labels, counts[part].T, n_labels)
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = sums / group_counts
        per_family = family_statistics(rates, sums, group_counts, members, statistic)  # (B + 1, S', F)
        value = mean_over(per_family, np.ones(per_family.shape[-1], dtype=bool))
        out[part] = p_values(value[0], value[1:])
    return out


def power(latents: Sequence[LatentFamily], statistic: str, binary: bool, n: int, samples: int | None,
          delta: float, n_sims: int = SIMULATIONS, n_permutations: int = PERMUTATIONS, alpha: float = ALPHA,
          seed: int = 0, test: str = PERMUTATION) -> float:
    """The share of simulated studies rejected (see `rejections`)."""
    return float(np.mean(rejections(latents, statistic, binary, n, samples, delta, n_sims, n_permutations, alpha,
                                    seed, test)))
