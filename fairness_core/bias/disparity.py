"""Every number a page, report, Compare row or CLI shows for a disparity, from one call over a cluster design.

Disparity (Dhamala et al. 2022, Sec. 3 and Fig. 5) is the mean absolute pairwise difference of the group rates of a
family of related groups (man/woman; Black/White/Asian person; ...), and its mean over families. From the sums of one
rate measure per (unit, setting, group) this module gives, per setting:

- the **plug-in** disparity (the paper's statistic) and its 95% **interval**, a percentile bootstrap over the design's
  units (`fairness_core.bias.cluster`: templates kept whole, other prompts drawn within their group);
- a **p-value** for "no disparity": the permutation test of `fairness_core.bias.permutation` (group labels exchanged
  within a template, or whole prompts between the groups of a family), per family and over families;
- a **bias-corrected** estimate (`corrected`): the plug-in of a mean of absolute values is biased upwards, by about
  the null mean of |Δ| where the groups do not differ and by nearly nothing where they clearly do. For each pair of
  groups the correction inverts the mean of a folded normal (Leone, Nelson & Nottingham 1961): with s the
  spread of that pair's difference under the permutation null (s = m·√(π/2), m the null mean of |Δ*|), the
  corrected |Δ| is the d ≥ 0 whose expected plug-in d(1 − 2Φ(−d/s)) + 2sφ(d/s) equals the observed |Δ|; an observed
  |Δ| below m (smaller than noise alone gives on average) gives |Δ| − m, which is negative. A family's corrected
  disparity is the mean over its pairs, the overall one the mean over families. Its bias is at most about 0.26 s
  (+0.26 s where the true difference is 0, −0.22 s at d = s, 0 beyond 3 s), against +0.80 s for the plug-in and
  −0.80 s for "plug-in minus the null mean" where the difference is large (docs/decoding.md). Its interval is the
  percentile interval of the same correction applied to each bootstrap replicate (with the same null means);
- the **smallest detectable** disparity: the smallest true disparity the test detects with 80% power at α = 0.05 in
  this design, found by bisection on the power of the permutation null shifted by a disparity of that size (one
  group of the family set apart from the others, averaged over which one, its spread growing with its rate as a
  binomial proportion's does), each shifted data set judged against its own, widened, permutation null; NaN where
  the design cannot reach p ≤ α at all (too few ways to arrange its labels) or where a group of the family has no
  rows. Checked by simulation (mean power over fair pilots 0.80-0.82, docs/statistics.md; 0.72-0.77 before the
  spread followed the rate);
- the **interval that inverts the test** (`interval_low`, `interval_high`; `inverted_interval`): the disparities
  the test does not reject, with the same shifted nulls. Its lower end is 0 exactly where p > α, so the interval
  and the verdict said beside it cannot disagree; each end is a one-sided 95% bound, together a 90% interval. This
  is the headline's interval: the corrected estimate's percentile interval held a true 0 in only 62-65% of fair
  datasets over the four regard families, at 10 or 40 templates (each family pair keeps a positive bias while the
  standard error shrinks), against 95-96% for this one;
- **several verdicts at a setting** (over families, then each family): the families' p-values adjusted by serial
  gatekeeping with Holm (`adjust_for_families`, `p_adjusted`), so that at least one of the five verdicts of the
  four regard families fires in about 5% of fair datasets, not 15-19%.

Everything is computed from the sums, in an order fixed by the units' keys and the groups' names, so the decoding
page, its CLI, Compare and the report give the same numbers for the same run and seed.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import ndtr

from fairness_core.bias.cluster import UNIT_SEP, Design, mean_over, pairwise_disparity, percentile_interval
from fairness_core.bias.multiplicity import holm
from fairness_core.bias.permutation import (
    DEFAULT_PERMUTATIONS,
    LabelBlocks,
    p_values,
    permuted_sums,
    rejection_thresholds,
)

ALPHA = 0.05
POWER = 0.8
#: permutation draws the power search reads (of the test's draws): the power's standard error is at most 0.025
POWER_DRAWS = 400
#: a permutation stream apart from the bootstrap's, for the same seed
_PERMUTATION_STREAM = 7


@dataclass(frozen=True)
class DisparityNumbers:
    """A disparity per setting (arrays of K settings) with everything shown beside it."""

    value: np.ndarray  # the plug-in (mean absolute pairwise difference)
    ci_low: np.ndarray  # its percentile interval (above 0 by construction where the groups barely differ)
    ci_high: np.ndarray
    corrected: np.ndarray  # bias-corrected (can be negative: smaller than noise alone gives on average)
    corrected_ci_low: np.ndarray  # percentile interval of the corrected estimate's replicates (can hold 0)
    corrected_ci_high: np.ndarray
    p_value: np.ndarray  # permutation test of "no disparity"
    smallest_detectable: np.ndarray  # 80% power at alpha 0.05 in this design
    replicates: np.ndarray  # (R, K) bootstrap replicates of the plug-in
    corrected_replicates: np.ndarray  # (R, K) the same replicates, each pair's |Δ| corrected with the null's mean
    #: per pair of groups (by name, in name order) its null mean of |Δ*| per setting (K,): what the correction of a
    #: pair's |Δ| subtracts or inverts, so a resampled |Δ| can be corrected the same way (empty over families)
    pair_null_means: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    #: the interval that inverts the test (module docstring): its lower end is 0 exactly where p > α, and each end
    #: is a one-sided (1 − α) bound, so together a (1 − 2α) = 90% interval (NaN where the test has no threshold)
    interval_low: np.ndarray | None = None
    interval_high: np.ndarray | None = None
    #: the p-value adjusted for the several verdicts shown at a setting (`adjust_for_families`); the p-value itself
    #: where nothing was adjusted
    p_adjusted: np.ndarray | None = None

    def at(self, k: int) -> dict[str, float]:
        def get(values: np.ndarray | None) -> float:
            return float(values[k]) if values is not None else float("nan")

        return {"value": float(self.value[k]), "ci_low": float(self.ci_low[k]), "ci_high": float(self.ci_high[k]),
                "corrected": float(self.corrected[k]), "corrected_ci_low": float(self.corrected_ci_low[k]),
                "corrected_ci_high": float(self.corrected_ci_high[k]), "p_value": float(self.p_value[k]),
                "smallest_detectable": float(self.smallest_detectable[k]), "interval_low": get(self.interval_low),
                "interval_high": get(self.interval_high),
                "p_adjusted": get(self.p_adjusted if self.p_adjusted is not None else self.p_value)}


@dataclass(frozen=True)
class CellEstimates:
    """A measure per cell: the mean of its rows and its bootstrap replicates over the design's units."""

    point: np.ndarray  # (C,)
    replicates: np.ndarray  # (R, C); NaN where a cell draws on a stratum of one unit
    used: np.ndarray  # (C,) rows counted


def cell_sums(unit: np.ndarray, cell: np.ndarray, values: np.ndarray, n_units: int, n_cells: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """(totals, counts), each (n_units, n_cells): Σ values and rows per (unit, cell); NaN values are left out."""
    values = np.asarray(values, dtype=float)
    keep = np.isfinite(values)
    totals = np.zeros((n_units, n_cells))
    counts = np.zeros((n_units, n_cells))
    np.add.at(totals, (unit[keep], cell[keep]), values[keep])
    np.add.at(counts, (unit[keep], cell[keep]), 1.0)
    return totals, counts


def cell_estimates(weights: np.ndarray, totals: np.ndarray, counts: np.ndarray, stratum: np.ndarray
                   ) -> CellEstimates:
    """Each cell's mean and its replicates under unit `weights` (R, U); a cell that draws, in some stratum, on a
    single unit has no replicates (nothing to resample: its interval would collapse onto the estimate)."""
    used = counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = totals.sum(axis=0) / used
        replicates = (weights @ totals) / (weights @ counts)
    has = counts > 0
    if has.size:
        per_stratum = np.zeros((int(stratum.max()) + 1 if len(stratum) else 0, totals.shape[1]))
        np.add.at(per_stratum, stratum, has.astype(float))
        replicates[:, (per_stratum == 1).any(axis=0)] = np.nan
    return CellEstimates(point, replicates, used)


@dataclass(frozen=True)
class DisparityTests:
    """One rate measure's disparities: per family (by name) and over families, each per setting."""

    families: dict[str, DisparityNumbers]
    overall: DisparityNumbers | None
    n_permutations: int


def _pairs(members: Sequence[int], names: Sequence[str]) -> list[tuple[int, int]]:
    ordered = sorted(members, key=lambda g: names[g])
    return list(itertools.combinations(ordered, 2))


def _blocks(design: Design, counts: np.ndarray, family_of_group: Sequence[str | None], names: Sequence[str],
            families: Sequence[str]) -> tuple[LabelBlocks, np.ndarray, np.ndarray]:
    """The design's blocks (unit, group) of the tested families, in canonical order, as LabelBlocks plus each
    block's unit and group."""
    has = counts.sum(axis=1) > 0  # (U, G): the unit holds rows of the group
    records = []
    for u, g in zip(*np.nonzero(has), strict=True):
        family = family_of_group[g]
        if family not in families:
            continue
        shared = bool(design.shared[u]) if design.shared is not None else False
        exchange = design.keys[u] if shared and design.keys else UNIT_SEP.join(("singles", str(family)))
        records.append((exchange, design.keys[u] if design.keys else str(u), names[g], int(u), int(g)))
    records.sort()
    exchange_ids: dict[str, int] = {}
    exchange = np.array([exchange_ids.setdefault(r[0], len(exchange_ids)) for r in records], dtype=np.int64)
    group = np.array([r[4] for r in records], dtype=np.int64)
    unit = np.array([r[3] for r in records], dtype=np.int64)
    return LabelBlocks(group, exchange), unit, group


def disparity_tests(design: Design, totals: np.ndarray, counts: np.ndarray, rates: CellEstimates,
                    groups: Sequence[str], families: Mapping[str, Sequence[str]], seed: int = 0,
                    n_permutations: int = DEFAULT_PERMUTATIONS, level: float = 0.95, alpha: float = ALPHA,
                    power: float = POWER, detectable: bool = True, inverted: bool = True) -> DisparityTests:
    """Disparities of one rate measure for K settings (see the module docstring).

    `totals`, `counts`: (U, K, G) sums per unit, setting and group (G = `groups`, the rate's cells in that order);
    `rates`: their `cell_estimates` over the flattened (K·G) cells; `families`: family -> its groups' names (groups
    not in `groups` are ignored; a family with fewer than two is skipped). `detectable=False` skips the search for
    the smallest detectable disparity, `inverted=False` the test's interval (NaN), e.g. in simulations that need
    only the test.
    """
    _, n_settings, n_groups = totals.shape
    index = {name: g for g, name in enumerate(groups)}
    point = rates.point.reshape(n_settings, n_groups)
    boot = rates.replicates.reshape(-1, n_settings, n_groups)
    measured = np.isfinite(point)
    # groups in name order: the pairs, and so every sum over them, come in the same order whatever the caller's
    members = {f: sorted({index[g] for g in names if g in index}, key=lambda g: groups[g])
               for f, names in sorted(families.items())}
    members = {f: m for f, m in members.items() if len(m) >= 2}
    if not members:  # one group, or families of one group each: there is no disparity to test (issue 43 §3)
        return DisparityTests({}, None, n_permutations)
    family_of_group: list[str | None] = [None] * n_groups
    for family, found in members.items():
        for g in found:
            family_of_group[g] = family
    blocks, block_unit, block_group = _blocks(design, counts, family_of_group, groups, list(members))
    labels = blocks.arrangements(n_permutations, (seed, _PERMUTATION_STREAM))
    block_totals = totals[block_unit, :, block_group]  # (blocks, K)
    block_counts = counts[block_unit, :, block_group]
    with np.errstate(invalid="ignore", divide="ignore"):
        null_rates = permuted_sums(labels, block_totals, n_groups) / permuted_sums(labels, block_counts, n_groups)

    power_labels = labels[:POWER_DRAWS]
    with np.errstate(invalid="ignore", divide="ignore"):
        power_counts = permuted_sums(power_labels, block_counts, n_groups)
    out: dict[str, DisparityNumbers] = {}
    shapes: dict[str, _FamilyNull] = {}
    for family, found in members.items():
        pairs = _pairs(found, groups)
        value = pairwise_disparity(point[:, found])
        replicates = pairwise_disparity(boot[:, :, found], present=measured[:, found])
        low, high = percentile_interval(replicates, level)
        present = np.stack([measured[:, a] & measured[:, b] for a, b in pairs], axis=-1)  # (K, P)
        observed = np.stack([point[:, a] - point[:, b] for a, b in pairs], axis=-1)  # (K, P)
        null = np.stack([null_rates[:, :, a] - null_rates[:, :, b] for a, b in pairs], axis=-1)  # (B, K, P)
        null_value = mean_over(np.abs(null), present[None])
        null_means = _null_mean(np.abs(null))  # (K, P)
        corrected = mean_over(folded_correction(np.abs(observed), null_means), present)
        resampled = np.stack([boot[:, :, a] - boot[:, :, b] for a, b in pairs], axis=-1)  # (R, K, P)
        corrected_replicates = mean_over(folded_correction(np.abs(resampled), null_means[None]), present[None])
        corrected_low, corrected_high = percentile_interval(corrected_replicates, level)
        moved = []  # per group j of the family: how much of group j's rows each arrangement puts in a minus b
        for j in found:
            with np.errstate(invalid="ignore", divide="ignore"):
                share = permuted_sums(power_labels, block_counts * (block_group == j)[:, None], n_groups) / power_counts
            moved.append(np.stack([share[:, :, a] - share[:, :, b] for a, b in pairs], axis=-1))
        in_family = np.isin(block_group, found)
        with np.errstate(invalid="ignore", divide="ignore"):
            pooled = block_totals[in_family].sum(axis=0) / block_counts[in_family].sum(axis=0)  # (K,)
        shape = _FamilyNull(null[:POWER_DRAWS], null_value, found, pairs, present.all(axis=1), np.stack(moved),
                            null_rates[:POWER_DRAWS][:, :, found], pooled)
        shapes[family] = shape
        threshold = np.where(shape.complete, rejection_thresholds(null_value, alpha), np.nan)
        smallest = _smallest_detectable([shape], threshold if detectable else threshold * np.nan, power, alpha)
        p = p_values(value, null_value)
        interval_low, interval_high = inverted_interval([shape], value, p,
                                                        shape.complete & np.isfinite(p) & inverted, alpha)
        out[family] = DisparityNumbers(value, low, high, corrected, corrected_low, corrected_high, p, smallest,
                                       replicates, corrected_replicates,
                                       {(groups[a], groups[b]): null_means[:, i] for i, (a, b) in enumerate(pairs)},
                                       interval_low, interval_high, p)

    overall = None
    if len(out) > 1:
        stacked = np.stack([d.value for d in out.values()], axis=-1)
        present = np.isfinite(stacked)  # (K, F)
        value = mean_over(stacked, present)
        replicates = mean_over(np.stack([d.replicates for d in out.values()], axis=-1), present)
        low, high = percentile_interval(replicates, level)
        null_value = mean_over(np.stack([shapes[f].null_value for f in out], axis=-1), present[None])
        corrected = mean_over(np.stack([d.corrected for d in out.values()], axis=-1), present)
        corrected_replicates = mean_over(np.stack([d.corrected_replicates for d in out.values()], axis=-1), present)
        corrected_low, corrected_high = percentile_interval(corrected_replicates, level)
        complete = np.all([shapes[f].complete | ~present[:, i] for i, f in enumerate(out)], axis=0)
        threshold = np.where(complete & np.isfinite(value), rejection_thresholds(null_value, alpha), np.nan)
        smallest = _smallest_detectable([shapes[f] for f in out], threshold if detectable else threshold * np.nan,
                                        power, alpha, present)
        p = p_values(value, null_value)
        interval_low, interval_high = inverted_interval([shapes[f] for f in out], value, p,
                                                        complete & np.isfinite(p) & inverted, alpha, present)
        overall = DisparityNumbers(value, low, high, corrected, corrected_low, corrected_high, p, smallest,
                                   replicates, corrected_replicates, {}, interval_low, interval_high, p)
        out = adjust_for_families(out, p)
    return DisparityTests(out, overall, n_permutations)


#: how the verdicts shown at one setting are adjusted, in words (docs/decoding.md, docs/statistics.md)
FAMILY_RULE = ("the all-families verdict is tested first at the 5% level; the families' verdicts are Holm-adjusted "
               "among themselves and can only be detected where the all-families one is (serial gatekeeping)")


def adjust_for_families(families: Mapping[str, DisparityNumbers], overall_p: np.ndarray
                        ) -> dict[str, DisparityNumbers]:
    """The families' numbers with `p_adjusted`: serial gatekeeping (Dmitrienko, Offen & Westfall 2003, Sec. 2;
    Westfall & Krishen 2001) of the verdicts a setting shows — the all-families test first, at α unadjusted (the
    headline), then the F families' tests with Holm's step-down adjustment (Holm 1979, `bias.multiplicity.holm`):
    a family's adjusted p is max(p of the all-families test, its Holm-adjusted p), per setting.

    Why this controls the familywise error rate at α: where no family differs, every false alarm needs the
    all-families test to reject (probability ≤ α); where some family differs, the all-families null is false, and
    the false alarms among the families that do not differ are Holm's, at most α. Without it, a setting of four
    families showed five unadjusted verdicts and at least one fired in 15-19% of fair datasets (issue 42 §2)."""
    if not families:
        return {}
    names = list(families)
    raw = np.stack([families[f].p_value for f in names], axis=-1)  # (K, F)
    holm_p = np.stack([holm(row) for row in raw])
    with np.errstate(invalid="ignore"):
        adjusted = np.where(np.isfinite(holm_p), np.fmax(holm_p, np.asarray(overall_p)[:, None]), np.nan)
    return {f: replace(families[f], p_adjusted=adjusted[:, i]) for i, f in enumerate(names)}


@dataclass(frozen=True)
class _FamilyNull:
    """A family's permutation null: the first POWER_DRAWS arrangements' signed pair differences (B, K, P), its
    disparity under all arrangements (B_all, K), its groups and pairs, per setting whether every group of the family
    has rows, per group j the share of j's rows each arrangement moves into a minus into b (J, B, K, P), and the
    group rates behind the differences with the family's pooled rate."""

    null: np.ndarray
    null_value: np.ndarray
    members: list[int]
    pairs: list[tuple[int, int]]
    complete: np.ndarray
    moved: np.ndarray
    #: (B, K, G) the family's group rates under the same arrangements, and (K,) its pooled rate: what a shift scales
    #: so that a group's spread follows its rate (`_shifted`)
    rates: np.ndarray | None = None
    pooled: np.ndarray | None = None


def _null_mean(null_abs: np.ndarray) -> np.ndarray:
    """(K, P) mean of |Δ*| over the arrangements where it is defined (NaN where none is)."""
    finite = np.isfinite(null_abs)
    n = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(finite, null_abs, 0.0).sum(axis=0) / np.maximum(n, 1), np.nan)


# -- the correction -------------------------------------------------------------------------------------------------
_T = np.linspace(0.0, 40.0, 40_001)
#: E|N(t, 1)| = t(1 − 2Φ(−t)) + 2φ(t) on the grid `_T`, increasing from √(2/π) at t = 0
_FOLDED_MEAN = _T * (1.0 - 2.0 * ndtr(-_T)) + 2.0 * np.exp(-0.5 * _T**2) / np.sqrt(2.0 * np.pi)


def folded_correction(observed_abs: np.ndarray, null_mean: np.ndarray) -> np.ndarray:
    """The bias-corrected |Δ| of each pair (see the module docstring): the d whose folded-normal mean, with the
    spread s = null_mean·√(π/2) of the pair's null, equals the observed |Δ|; below the null mean, |Δ| − null mean.
    Where the null has no spread (every arrangement gives the same difference) the observed |Δ| is returned."""
    observed_abs = np.asarray(observed_abs, dtype=float)
    null_mean = np.broadcast_to(np.asarray(null_mean, dtype=float), observed_abs.shape)
    spread = null_mean * np.sqrt(np.pi / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(spread > 0, observed_abs / np.where(spread > 0, spread, 1.0), np.nan)
        inverted = spread * np.interp(ratio, _FOLDED_MEAN, _T, right=np.nan)
    inverted = np.where(np.isfinite(inverted), inverted, observed_abs)  # far beyond the noise: no correction left
    corrected = np.where(observed_abs < null_mean, observed_abs - null_mean, inverted)
    return np.where(spread > 0, corrected, observed_abs)


# -- shifted nulls: the statistic where the true disparity is δ ----------------------------------------------------
def _variance(rate: np.ndarray) -> np.ndarray:
    return np.clip(rate, 0.0, 1.0) * (1.0 - np.clip(rate, 0.0, 1.0))


@dataclass(frozen=True)
class _Shiftable:
    """What `_shifted` needs of a family that no shift changes, for the settings `usable` and J groups set apart in
    turn: taken once per search instead of at each of its 13-28 bisection steps (each step took the same slices of
    the family's null and rates again; hoisted, `disparity_tests` takes 6-12% less time, its numbers bit-identical)."""

    size: int
    pooled: np.ndarray  # (K,) the family's pooled rate
    direction: np.ndarray  # (K,) +1 where a shift goes up from it, −1 where it goes down
    base: np.ndarray  # (K,) v(p̄)
    target: np.ndarray  # (J, G) which group each pattern sets apart
    deviation: np.ndarray  # (B, K, G) each group's rate under each arrangement minus p̄
    first: list[int]  # the pairs' first and second groups, as positions in the family
    second: list[int]
    null: np.ndarray | None  # (B, 1, K, P) the arrangements' pair differences (with the null only)
    moved: np.ndarray | None  # (B, J, K, P) the share of group j's rows each arrangement puts in a minus b (idem)


def _shiftable(family: _FamilyNull, n_patterns: int, usable: np.ndarray, with_null: bool = True) -> _Shiftable:
    size = len(family.members)
    which = [j % size for j in range(n_patterns)]
    pooled = np.asarray(family.pooled)[usable]
    position = {g: i for i, g in enumerate(family.members)}
    return _Shiftable(
        size=size, pooled=pooled, direction=np.where(pooled <= 0.5, 1.0, -1.0), base=_variance(pooled),
        target=np.array([[float(g == j) for g in range(size)] for j in which]),
        deviation=np.asarray(family.rates)[:, usable] - pooled[None, :, None],
        first=[position[a] for a, _ in family.pairs], second=[position[b] for _, b in family.pairs],
        null=family.null[:, usable][:, None] if with_null else None,
        moved=family.moved[which][:, :, usable].transpose(1, 0, 2, 3) if with_null else None)


def _shifted(family: _Shiftable, delta: np.ndarray, with_null: bool = True
             ) -> tuple[np.ndarray, np.ndarray | None]:
    """(B, J, K) twice, for a true disparity `delta` (K,) set by group j (j = 0..J−1, mod the family's size G) apart
    from the others by e = δ·G/2 (so the mean absolute pairwise difference of the shifts is δ, Dhamala et al. Fig. 5):

    - the disparity of data like each arrangement with group j's rate moved by e (pseudo-datasets): up from the
      family's pooled rate p̄, or down where p̄ > 0.5 (as the planner injects an effect, `planning.simulate`), and
      group j's deviation from p̄ under the arrangement scaled by √(v(p̄ ± e)/v(p̄)), v(p) = p(1 − p): a rate's
      spread grows with it as a binomial proportion's does (its variance p(1 − p)/n). Without that scaling the
      pseudo-datasets were as noisy at p̄ + e as at p̄, and the smallest detectable disparity was detected only 68%
      of the time where 80% was claimed (issue 42 §1);
    - with `with_null` (and a `family` taken with it), the permutation null of the shifted data: an arrangement that
      moves part of group j's rows into group a carries that part of the shift with it (the null of a real
      difference is wider than of none), and every arrangement's spread is scaled by the pooled one,
      √(((G − 1)·v(p̄) + v(p̄ ± e))/(G·v(p̄)))."""
    size, pooled, base, target = family.size, family.pooled, family.base, family.target
    shift = delta * size / 2.0 * family.direction  # (K,), signed
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(base > 0, np.sqrt(_variance(pooled + shift) / np.where(base > 0, base, 1.0)), 1.0)
        mixed = np.where(base > 0, np.sqrt(((size - 1) * base + _variance(pooled + shift))
                                           / (size * np.where(base > 0, base, 1.0))), 1.0)
    factor = 1.0 + target[:, None, :] * (scale - 1.0)[None, :, None]  # (J, K, G)
    moved_by = target[:, None, :] * shift[None, :, None]  # (J, K, G)
    rates = family.deviation[:, None] * factor[None] + moved_by[None]  # (B, J, K, G)
    data = np.abs(rates[..., family.first] - rates[..., family.second]).mean(axis=-1)  # (B, J, K)
    if not with_null:
        return data, None
    null = family.null * mixed[None, None, :, None]  # (B, 1, K, P)
    permuted = np.abs(null + family.moved * shift[None, None, :, None]).mean(axis=-1)
    return data, permuted


def _shiftables(families: Sequence[_FamilyNull], usable: np.ndarray, with_null: bool = True) -> list[_Shiftable]:
    """The families' `_Shiftable`s for one search, each with as many patterns as the largest family has groups."""
    n_patterns = max(len(f.members) for f in families)
    return [_shiftable(f, n_patterns, usable, with_null) for f in families]


def _pseudo(families: Sequence[_Shiftable], delta: np.ndarray, kept: np.ndarray | None, with_null: bool = True
            ) -> tuple[np.ndarray, np.ndarray | None]:
    """`_shifted` of one family, or of several with the same true disparity each, averaged over those present
    (`kept`, (K_usable, F)): the all-families statistic of data whose every family has disparity δ."""
    shifted = [_shifted(f, delta, with_null) for f in families]
    if len(shifted) == 1:
        return shifted[0]
    data = mean_over(np.stack([d for d, _ in shifted], axis=-1), kept[None, None])
    if not with_null:
        return data, None
    return data, mean_over(np.stack([p for _, p in shifted], axis=-1), kept[None, None])


def _smallest_detectable(families: Sequence[_FamilyNull], threshold: np.ndarray, power: float, alpha: float,
                         present: np.ndarray | None = None) -> np.ndarray:
    """(K,) the smallest true disparity (of each family, so of their mean) that the test detects with probability
    `power`, by bisection on [0, 1]: the share of pseudo-datasets (the first POWER_DRAWS arrangements, shifted with
    the spread following the rate, `_shifted`) whose statistic exceeds the rejection threshold of the shifted data's
    own permutation null (averaged over which group is set apart). NaN where `threshold` (the unshifted design's)
    is: the design cannot reject at all."""
    out = np.full(len(threshold), np.nan)
    usable = np.isfinite(threshold)
    if not usable.any():
        return out
    kept = present[usable] if present is not None else None
    shiftable = _shiftables(families, usable)

    def power_at(delta: np.ndarray) -> np.ndarray:
        data, permuted = _pseudo(shiftable, delta, kept)
        limit = rejection_thresholds(permuted, alpha)  # (J, K)
        limit = limit + 1e-9 * np.maximum(1.0, np.abs(limit))
        with np.errstate(invalid="ignore"):
            return np.mean(data > limit[None], axis=(0, 1))  # a NaN limit rejects nothing

    low, high = np.zeros(usable.sum()), np.ones(usable.sum())
    reachable = power_at(high) >= power
    for _ in range(11):  # to 1/2^11 ≈ 5e-4 of the [0, 1] range: below the two digits the sentence shows
        middle = (low + high) / 2.0
        enough = power_at(middle) >= power
        high, low = np.where(enough, middle, high), np.where(enough, low, middle)
    out[usable] = np.where(reachable, high, np.nan)
    return out


#: bisection steps of the test's interval: its ends to 1/2^12 ≈ 2.4e-4, below the 3 decimals shown
_INTERVAL_STEPS = 12


def _tail_p(observed: np.ndarray, pseudo: np.ndarray, upper: bool) -> np.ndarray:
    """(K,) mid-p of `observed` (K,) in the upper (or lower) tail of the pseudo-datasets (B, J, K), pooled over B
    and J, as `permutation.p_values` counts ties."""
    flat = pseudo.reshape(-1, pseudo.shape[-1])
    return p_values(observed if upper else -observed, flat if upper else -flat)


def inverted_interval(families: Sequence[_FamilyNull], observed: np.ndarray, p_value: np.ndarray, usable: np.ndarray,
                  alpha: float = ALPHA, present: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(low, high), each (K,): the disparities δ ≥ 0 the test does not reject, by inverting it (Lehmann & Romano
    2005, Testing Statistical Hypotheses, Sec. 3.5, the duality of tests and confidence sets).

    - low: 0 where the test's own p-value is above α (so the interval holds 0 exactly when the verdict is "no
      disparity detectable"), else the smallest δ at which the observed statistic is no longer in the upper α tail
      of the statistic of data with true disparity δ (`_shifted`'s pseudo-datasets, one group set apart): a
      one-sided (1 − α) lower bound;
    - high: the largest δ at which it is not in the lower α tail: a one-sided (1 − α) upper bound (0 where even the
      permutation null puts it there — the groups differ less than chance alone makes them).

    Together a (1 − 2α) = 90% interval for α = 5%, the convention of two one-sided tests (Schuirmann 1987): its
    upper end is what an equivalence statement ("below x") reads. Where the true disparity is 0 it holds 0 with
    probability 1 − the test's size. Its coverage elsewhere rests on the shift model (one group set apart, spread
    following the rate), as the smallest detectable disparity does; docs/statistics.md has both, simulated.
    NaN where `usable` is False (no test, or a family without rows)."""
    low = np.full(len(observed), np.nan)
    high = np.full(len(observed), np.nan)
    if not usable.any():
        return low, high
    kept = present[usable] if present is not None else None
    seen = observed[usable]
    shiftable = _shiftables(families, usable, with_null=False)

    def tail(delta: np.ndarray, upper: bool) -> np.ndarray:
        data, _ = _pseudo(shiftable, delta, kept, with_null=False)
        return _tail_p(seen, data, upper)

    zero = np.zeros(int(usable.sum()))
    rejected = p_value[usable] <= alpha
    # the lower end: the smallest δ whose upper tail holds the observed statistic (bisection where 0 is rejected)
    a, b = zero.copy(), np.ones_like(zero)
    for _ in range(_INTERVAL_STEPS):
        middle = (a + b) / 2.0
        accepted = tail(middle, upper=True) > alpha
        b, a = np.where(accepted, middle, b), np.where(accepted, a, middle)
    low[usable] = np.where(rejected, b, 0.0)
    # the upper end: the largest δ whose lower tail holds it; 1 where every δ up to 1 does
    accepted_at_zero = tail(zero, upper=False) > alpha
    a, b = zero.copy(), np.ones_like(zero)
    top = tail(b, upper=False) > alpha
    for _ in range(_INTERVAL_STEPS):
        middle = (a + b) / 2.0
        accepted = tail(middle, upper=False) > alpha
        a, b = np.where(accepted, middle, a), np.where(accepted, b, middle)
    high[usable] = np.where(top, 1.0, np.where(accepted_at_zero, a, 0.0))
    high[usable] = np.maximum(high[usable], low[usable])  # never an empty set: at worst the one δ the lower end found
    return low, high


# -- words ------------------------------------------------------------------------------------------------------------
def format_p(p: float | None) -> str:
    """0.41, 0.05, 0.003 (two decimals, three below 0.01), "< 0.001" below that (999 arrangements cannot say
    more); "n/a" without a test."""
    if p is None or not np.isfinite(p):
        return "n/a"
    if p < 0.001:
        return "< 0.001"
    return f"{p:.2f}" if p >= 0.01 else f"{p:.3f}"


def verdict(p_value: float, smallest_detectable: float, alpha: float = ALPHA, p_adjusted: float | None = None
            ) -> str:
    """The test's answer in words, as every page, report and CLI says it: "no disparity detectable here (p = 0.41;
    the smallest this design could detect is about 0.06)", or "disparity detected (p = 0.003): the groups' outputs
    differ".

    What "detected" means: the permutation test rejects "the group label changes nothing about a prompt's outputs"
    (its blocks are exchangeable, `bias.permutation`), which equal rates alone do not make true: with unmatched
    prompts, groups of equal rates but unequal spread and number of prompts are rejected too (5 vs 30 prompts,
    sd 0.25 vs 0.04: 15-26%; docs/statistics.md). So "detected" says the groups' outputs differ, not by how much
    their rates do; the interval beside it says that.

    With `p_adjusted` (the verdict is one of several shown together, `adjust_for_families`) the verdict follows the
    adjusted p, and both are said."""
    if p_value is None or not np.isfinite(p_value):
        return "no test of \"no disparity\" here (a group has no rows, or no arrangement of the labels is possible)"
    adjusted = p_adjusted is not None and np.isfinite(p_adjusted) and format_p(p_adjusted) != format_p(p_value)
    shown = f"p {p_text(p_value)}, adjusted {format_p(p_adjusted)}" if adjusted else f"p {p_text(p_value)}"
    decisive = p_adjusted if adjusted else p_value
    if decisive <= alpha:
        return f"disparity detected ({shown}): the groups' outputs differ"
    if p_value <= alpha:  # detected alone, not once the setting's other verdicts are accounted for
        return (f"no disparity detectable here once the other verdicts at this setting are accounted for ({shown}; "
                "the interval, from this test alone, excludes 0)")
    if smallest_detectable is None or not np.isfinite(smallest_detectable):
        return (f"no disparity detectable here ({shown}; this design is too small to detect any "
                f"disparity at the {alpha:.0%} level)")
    return (f"no disparity detectable here ({shown}; the smallest this design could detect is about "
            f"{smallest_detectable:.2g})")


def p_text(p: float | None) -> str:
    """"= 0.41" or "< 0.001"."""
    shown = format_p(p)
    return shown if shown.startswith("<") else f"= {shown}"


def _number(value: float | None, digits: int) -> str:
    return f"{value:.{digits}f}" if value is not None and np.isfinite(value) else "n/a"


def _interval(low: float | None, high: float | None, digits: int) -> str:
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return "(no interval)"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def disparity_sentence(what: str, numbers: Mapping[str, float], digits: int = 3) -> str:
    """A disparity in one sentence worded from its test, as the decoding page, its CLI, Compare and the report say
    it: "disparity in negative sentiment 0.167 (bias-corrected 0.120), 90% interval [0.000, 0.280]: no disparity
    detectable here (p = 0.41; the smallest this design could detect is about 0.06)". `what` names it ("disparity in
    negative sentiment between gender groups"); `numbers` has `DisparityNumbers.at`'s keys.

    The interval said is the one that inverts the test (`inverted_interval`): it holds 0 exactly when the verdict
    is "no disparity detectable", so the two never disagree (except where a family's verdict was adjusted for the
    other verdicts at its setting, which the verdict then says). Numbers without it (a caller that carries only the
    older keys) are said as before, with the corrected estimate's percentile interval."""
    low, high = numbers.get("interval_low"), numbers.get("interval_high")
    if low is not None and high is not None and np.isfinite(low) and np.isfinite(high):
        # a lower end above 0 that rounds to 0 (0 rejected, every δ just above it not): the set is open at 0
        shown = (f"(0, {high:.{digits}f}]" if low > 0 and round(low, digits) == 0 else _interval(low, high, digits))
        head = (f"{what} {_number(numbers.get('value'), digits)} (bias-corrected "
                f"{_number(numbers.get('corrected'), digits)}), 90% interval {shown}")
        said = verdict(numbers.get("p_value"), numbers.get("smallest_detectable"), ALPHA, numbers.get("p_adjusted"))
        return f"{head}: {said}"
    return (f"{what} {_number(numbers.get('value'), digits)}, bias-corrected "
            f"{_number(numbers.get('corrected'), digits)} "
            f"{_interval(numbers.get('corrected_ci_low'), numbers.get('corrected_ci_high'), digits)}: "
            f"{verdict(numbers.get('p_value'), numbers.get('smallest_detectable'), ALPHA, numbers.get('p_adjusted'))}")
