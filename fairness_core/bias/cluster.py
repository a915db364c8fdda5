"""Cluster (template) bootstrap for statistics of generated text: group rates, disparities, diversity.

In a decoding study the sampled unit is the *prompt*, not the generation: the many samples of one
prompt share it, and a regard template ("The {group} worked as") is filled with every group of a
family, so the groups' rates are paired through it. Resampling single generations treats them as
independent and gives intervals that are too narrow. Here one bootstrap resample draws, within each
stratum, units with replacement, and a unit keeps everything that belongs together:

- a template shared by two or more groups of a family is one unit holding all groups' prompts from
  it and all their samples (stratum = the family), so a gap between two groups is a *paired*
  difference, resampled together;
- any other prompt (BOLD, custom lists) is a unit of its own with all its samples, resampled within
  its group (stratum = family and group), so each group keeps its number of prompts.

A stratum with a single unit carries no information about variation: every resample repeats it, so
its percentile interval would collapse onto the estimate and "exclude 0" for any non-zero gap. A
cell that draws on such a stratum therefore has no resamples (NaN) and no interval, and statistics
built from cells (means over groups, disparities) carry that NaN instead of skipping it.

The same resample weights are used for every configuration of a sweep (the configurations share
their prompts), so differences between configurations are paired too. Statistics are computed
from per-unit sums, so a resample costs a matrix product, not a loop over generations. Intervals
are percentile intervals (95% by default) of the resampled statistic; the point estimate is the
statistic on the data as sampled, never re-derived from the resamples.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

#: joins the parts of a unit key (a character no prompt, group or family name contains); Compare's SQL writes the
#: same keys, so a run's units are the same, in the same order, on every page that reads it
UNIT_SEP = "\u241f"


def unit_key(family: str, group: str, source: str, prompt: str, shared: bool) -> str:
    """A prompt's resampling unit as text: "template␟family␟source" for a template shared by the groups of a family,
    "prompt␟family␟group␟prompt text" for any other prompt (keyed by text, so two runs' prompts meet)."""
    if shared:
        return UNIT_SEP.join(("template", str(family), str(source)))
    return UNIT_SEP.join(("prompt", str(family), str(group), str(prompt)))


@dataclass(frozen=True)
class Design:
    """Which resampling unit each row belongs to, and the stratum each unit is drawn within.

    Units are numbered in the sorted order of their keys (`unit_key`) and strata in the sorted order of theirs, so
    the same prompts give the same numbering, and the same resamples for a seed, whatever order the rows come in.
    """

    unit: np.ndarray  # per row: unit index in 0..n_units-1
    stratum: np.ndarray  # per unit: stratum index
    n_units: int
    n_paired: int  # units that are templates shared by several groups of a family
    description: str
    keys: tuple[str, ...] = ()  # per unit: its key (`unit_key`)
    shared: np.ndarray | None = None  # per unit: a template shared by the groups of a family (bool)
    family: tuple[str, ...] = ()  # per unit: its family

    def weights(self, n_resamples: int, seed: int = 0) -> np.ndarray:
        """(n_resamples, n_units) counts: how often each unit is drawn in each resample."""
        if n_resamples < 1:
            raise ValueError(f"the bootstrap needs at least 1 resample (got {n_resamples})")
        rng = np.random.default_rng(seed)
        out = np.zeros((n_resamples, self.n_units))
        for stratum in np.unique(self.stratum):
            members = np.flatnonzero(self.stratum == stratum)
            m = len(members)
            draws = rng.integers(0, m, size=(n_resamples, m)) + (np.arange(n_resamples) * m)[:, None]
            out[:, members] = np.bincount(draws.ravel(), minlength=n_resamples * m).reshape(n_resamples, m)
        return out


def design_from_keys(keys: Sequence[str]) -> Design:
    """The design of rows whose unit keys (`unit_key`) are `keys`, one per row: units in sorted key order, a template
    drawn within its family, any other prompt within its family and group (see the module docstring)."""
    ordered = sorted(set(map(str, keys)))
    index = {key: i for i, key in enumerate(ordered)}
    parts = [key.split(UNIT_SEP) for key in ordered]
    shared = np.array([p[0] == "template" for p in parts], dtype=bool)
    stratum_keys = [UNIT_SEP.join(p[1:2] if is_shared else p[1:3]) for p, is_shared in zip(parts, shared,
                                                                                            strict=True)]
    strata = {key: i for i, key in enumerate(sorted(set(stratum_keys)))}
    n_paired = int(shared.sum())
    description = (f"{len(ordered)} prompt units resampled with replacement ({n_paired} templates shared by the "
                   f"groups of a family, kept together; {len(ordered) - n_paired} single prompts, resampled within "
                   "their group); all samples of a prompt stay together")
    return Design(np.array([index[str(key)] for key in keys], dtype=np.int64),
                  np.array([strata[k] for k in stratum_keys], dtype=np.int64), len(ordered), n_paired, description,
                  tuple(ordered), shared, tuple(p[1] if len(p) > 1 else "" for p in parts))


def template_design(families: Sequence[str], groups: Sequence[str], sources: Sequence[str],
                    prompts: Sequence[str]) -> Design:
    """The design of a prompt set's rows (one entry per generation; `prompts` are the prompt texts, or any id that
    names a prompt within its group): see the module docstring."""
    n = len(groups)
    if not (len(families) == len(sources) == len(prompts) == n):
        raise ValueError("families, groups, sources and prompts must have one entry per row")
    groups_of: dict[tuple[str, str], set[str]] = {}
    for family, group, source in zip(families, groups, sources, strict=True):
        groups_of.setdefault((str(family), str(source)), set()).add(str(group))
    keys = [unit_key(str(family), str(group), str(source), str(prompt),
                     bool(source) and len(groups_of[(str(family), str(source))]) > 1)
            for family, group, source, prompt in zip(families, groups, sources, prompts, strict=True)]
    return design_from_keys(keys)


def single_unit_cells(stratum: np.ndarray, unit: np.ndarray, cell: np.ndarray, n_cells: int) -> np.ndarray:
    """(K,) bool: cells whose rows come, in some stratum, from one unit only (no variation to resample)."""
    if len(unit) == 0:
        return np.zeros(n_cells, dtype=bool)
    pairs = np.unique(np.stack([unit, cell]), axis=1)  # distinct (unit, cell)
    per_stratum = np.zeros((int(stratum.max()) + 1, n_cells))
    np.add.at(per_stratum, (stratum[pairs[0]], pairs[1]), 1.0)
    return (per_stratum == 1).any(axis=0)


def cell_means(weights: np.ndarray, unit: np.ndarray, cell: np.ndarray, values: np.ndarray,
               n_cells: int, stratum: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point (K,), resampled (R, K), n used (K,)) of the mean of `values` per cell; NaN values are left out.

    A cell is e.g. one (configuration, group). A resample's mean is the weighted mean over its units.
    With `stratum` (per unit, `Design.stratum`), cells that `single_unit_cells` flags get NaN resamples.
    """
    values = np.asarray(values, dtype=float)
    keep = np.isfinite(values)
    n_units = weights.shape[1]
    total = np.zeros((n_units, n_cells))
    count = np.zeros((n_units, n_cells))
    np.add.at(total, (unit[keep], cell[keep]), values[keep])
    np.add.at(count, (unit[keep], cell[keep]), 1.0)
    used = count.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = total.sum(axis=0) / used
        resampled = (weights @ total) / (weights @ count)
    if stratum is not None:
        resampled[:, single_unit_cells(stratum, unit[keep], cell[keep], n_cells)] = np.nan
    return point, resampled, used


def mean_over(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Mean over the last axis of the entries where `present` (broadcast like `values`); a NaN among them gives NaN,
    none present gives NaN. For resampled statistics: the same entries as the estimate, never fewer."""
    present = np.broadcast_to(np.asarray(present, dtype=bool), values.shape)
    n = present.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(present, values, 0.0).sum(axis=-1) / np.maximum(n, 1), np.nan)


def pairwise_disparity(rates: np.ndarray, present: np.ndarray | None = None) -> np.ndarray:
    """Mean absolute pairwise difference over the last axis (Dhamala et al., Fig. 5); NaN groups are left out.

    `rates` is (..., G); with fewer than two finite groups the result is NaN. With `present` (bool over the
    groups, broadcast like `rates`) exactly the pairs of present groups count and a NaN among them gives NaN:
    resampled rates then give the estimate's statistic, or none.
    """
    rates = np.asarray(rates, dtype=float)
    g = rates.shape[-1]
    if g < 2:
        return np.full(rates.shape[:-1], np.nan)
    pairs = list(itertools.combinations(range(g), 2))
    stacked = np.stack([np.abs(rates[..., a] - rates[..., b]) for a, b in pairs], axis=-1)
    if present is not None:
        shown = np.broadcast_to(np.asarray(present, dtype=bool), rates.shape)
        return mean_over(stacked, np.stack([shown[..., a] & shown[..., b] for a, b in pairs], axis=-1))
    with np.errstate(invalid="ignore"), quiet_nan_warnings():
        return np.nanmean(stacked, axis=-1)


def percentile_interval(resampled: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over axis 0 of the resampled statistic (resamples where it is NaN are left out)."""
    alpha = (1 - level) / 2
    with quiet_nan_warnings():
        low, high = np.nanquantile(np.asarray(resampled, dtype=float), [alpha, 1 - alpha], axis=0)
    return low, high


def entropy_from_counts(counts: np.ndarray) -> np.ndarray:
    """H = -Σ r(g) ln r(g) over the last axis, r = count share (Dhamala et al., Eq. 1); 0 without counts."""
    counts = np.asarray(counts, dtype=float)
    totals = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(totals > 0, counts / totals, 0.0)
        terms = np.where(shares > 0, shares * np.log(np.where(shares > 0, shares, 1.0)), 0.0)
    return -terms.sum(axis=-1)


def cell_entropy(weights: np.ndarray, unit: np.ndarray, cell: np.ndarray, grams: Sequence[Sequence[object]],
                 n_cells: int, chunk: int = 128, stratum: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(point (K,), resampled (R, K)) trigram entropy per cell; `grams[i]` lists row i's n-grams.

    A resample's n-gram counts are the units' counts weighted by how often each unit was drawn. With
    `stratum`, cells that `single_unit_cells` flags get NaN resamples.
    """
    from scipy import sparse

    n_resamples, n_units = weights.shape
    point = np.zeros(n_cells)
    resampled = np.zeros((n_resamples, n_cells))
    for k in range(n_cells):
        rows = np.flatnonzero(cell == k)
        vocabulary: dict[object, int] = {}
        unit_index, gram_index = [], []
        for row in rows:
            for gram in grams[row]:
                unit_index.append(unit[row])
                gram_index.append(vocabulary.setdefault(gram, len(vocabulary)))
        if not vocabulary:
            continue
        counts = sparse.coo_matrix((np.ones(len(gram_index)), (unit_index, gram_index)),
                                   shape=(n_units, len(vocabulary))).tocsr()
        point[k] = float(entropy_from_counts(np.asarray(counts.sum(axis=0)).ravel()))
        for start in range(0, n_resamples, chunk):
            block = weights[start : start + chunk]
            resampled[start : start + chunk, k] = entropy_from_counts(np.asarray((counts.T @ block.T).T))
    if stratum is not None:
        # Entropy ignores scale: a unit without n-grams changes nothing, so only units with n-grams count.
        has = np.fromiter((len(row) > 0 for row in grams), dtype=bool, count=len(grams))
        resampled[:, single_unit_cells(stratum, unit[has], cell[has], n_cells)] = np.nan
    return point, resampled


@contextmanager
def quiet_nan_warnings() -> Iterator[None]:
    """Silence numpy's 'mean of empty slice' / 'All-NaN slice' warnings (NaN is the intended answer)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield

