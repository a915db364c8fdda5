"""Statistics of a family's group cells, on estimates and on bootstrap replicates alike.

- `pairwise`: the disparity of Dhamala et al. (2022, Sec. 3 and Fig. 5): the mean absolute pairwise difference
  of the groups' rates within a family of related groups (man/woman; Black/White/Asian; ...), the decoding page's
  `<measure>_disparity` (`bias.cluster.pairwise_disparity`);
- `eq1`: CAIRO's bias of a system on a prompt set (Zayed et al. 2024, Eq. 1): Σ_s |E_s' m_s' − m_s| over the
  subgroup means m_s.

A group whose cell has no replicate (fewer than two units: nothing to resample) leaves the statistic without an
interval, never with a narrower one over the other groups.
"""

from __future__ import annotations

import numpy as np

from fairness_core.bias.cluster import mean_over, pairwise_disparity


def eq1_sum(values: np.ndarray, present: np.ndarray | None = None) -> np.ndarray:
    """Σ_s |mean − v_s| over the last axis (the present groups); NaN with fewer than two, or a NaN among them."""
    values = np.asarray(values, dtype=float)
    shown = np.broadcast_to(np.ones(values.shape[-1], dtype=bool) if present is None else present, values.shape)
    n = shown.sum(axis=-1)
    mean = mean_over(values, shown)
    with np.errstate(invalid="ignore"):
        total = np.where(shown, np.abs(values - mean[..., None]), 0.0).sum(axis=-1)
    return np.where(n >= 2, total, np.nan)


def group_statistic(values: np.ndarray, how: str, present: np.ndarray | None = None) -> np.ndarray:
    """The statistic over the last axis (groups) of `values` (estimates, or replicates × groups)."""
    if how == "pairwise":
        return pairwise_disparity(values, present=present)
    if how == "eq1":
        return eq1_sum(values, present)
    raise ValueError(f"unknown group statistic {how!r}")


def family_mean(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """The mean over families (last axis) of a statistic, over the `present` families (those with an estimate), as
    the decoding page averages its families' disparities: a replicate averages the same families, and a NaN among
    them gives NaN."""
    return mean_over(np.asarray(values, dtype=float), present)
