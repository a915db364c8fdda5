"""Comparing bias vectors across template sets (Quiroga et al. 2025 Sec. 2.3 "Bias Comparison", Figs. 4–5).

Two VBCM vectors over the same groups are compared by the mean absolute error
``MAE(a, b) = 1/|G| Σ_g |VBCM_g(a) − VBCM_g(b)|`` and by Pearson's r across groups (Sec. 3.1: "lower MAE
and higher correlation indicate consistent bias measurements").

Intervals: percentile bootstrap that resamples each set's sampled unit — templates for a template set,
sentences for the NOEs. Sets drawn independently (original or adapted vs NOEs) are resampled
independently; the original and adapted sets share template ids (an adapted template is the rewrite of
an original one), so they are resampled *together*: one draw of original template ids, the adapted set
taking the same draw restricted to its accepted templates. Pearson r is reported only with 3 or more
groups (with 2 it is ±1 by construction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fairness_core.adaptation.vbcm import VBCMTable, resample_weights, vbcm_from_weights

MIN_GROUPS_FOR_R = 3


@dataclass(frozen=True)
class Interval:
    value: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high}


def mae(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MAE across groups (last axis), ignoring groups missing on either side (NaN if none is left)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample in which no group is on both sides
        return np.nanmean(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)), axis=-1)


def pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r across groups (last axis); NaN where a vector is constant."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    denominator = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (a * b).sum(axis=-1) / denominator, np.nan)


def restrict(table: VBCMTable, groups: Sequence[str]) -> VBCMTable:
    """The table's columns for `groups` (in that order); β_j unchanged (it is over all the set's groups)."""
    index = [table.groups.index(g) for g in groups]
    return VBCMTable(table.templates, list(groups), table.background, table.phi[:, index],
                     table.n_perturbations[:, index], table.n_skipped_nan)


def _point(table: VBCMTable) -> np.ndarray:
    return vbcm_from_weights(table, np.ones((1, len(table.templates))))[0]


def _interval(point: float, draws: np.ndarray, level: float) -> Interval:
    finite = draws[np.isfinite(draws)]
    if not np.isfinite(point) or finite.size == 0:
        return Interval(float(point), float("nan"), float("nan"))
    alpha = (1 - level) / 2
    low, high = np.quantile(finite, [alpha, 1 - alpha])
    return Interval(float(point), float(low), float(high))


@dataclass
class Comparison:
    groups: list[str]
    a: np.ndarray
    b: np.ndarray
    mae: Interval
    r: Interval | None

    def as_dict(self) -> dict:
        return {"groups": self.groups, "mae": self.mae.as_dict(), "r": None if self.r is None else self.r.as_dict()}


def _aligned_weights(reference: VBCMTable, other: VBCMTable, weights: np.ndarray) -> np.ndarray:
    """Weights drawn over `reference`'s templates, carried to `other`'s templates by id (0 if absent)."""
    position = {t: j for j, t in enumerate(reference.templates)}
    columns = [position[t] for t in other.templates]
    return weights[:, columns]


def compare(a: VBCMTable, b: VBCMTable, groups: Sequence[str], paired: bool = False, n_resamples: int = 1000,
            seed: int = 0, level: float = 0.95) -> Comparison:
    """MAE and Pearson r between the VBCM vectors of two sets over `groups`, with bootstrap CIs.

    `paired`: b's template ids are a subset of a's and both are resampled with one draw of a's templates.
    """
    ta, tb = restrict(a, groups), restrict(b, groups)
    va, vb = _point(ta), _point(tb)
    wa = resample_weights(len(ta.templates), n_resamples, seed)
    wb = _aligned_weights(ta, tb, wa) if paired else resample_weights(len(tb.templates), n_resamples, seed + 1)
    da, db = vbcm_from_weights(ta, wa), vbcm_from_weights(tb, wb)
    mae_value = float(mae(va, vb))
    r = None
    if len(groups) >= MIN_GROUPS_FOR_R:
        r = _interval(float(pearson(va, vb)), pearson(da, db), level)
    return Comparison(list(groups), va, vb, _interval(mae_value, mae(da, db), level), r)


@dataclass
class Improvement:
    """MAE(adapted, NOE) − MAE(original, NOE) and r(adapted, NOE) − r(original, NOE) with joint CIs."""

    mae_difference: Interval
    r_difference: Interval | None

    def as_dict(self) -> dict:
        return {"mae_adapted_minus_original": self.mae_difference.as_dict(),
                "r_adapted_minus_original": None if self.r_difference is None else self.r_difference.as_dict()}


def improvement(original: VBCMTable, adapted: VBCMTable, noe: VBCMTable, groups: Sequence[str],
                n_resamples: int = 1000, seed: int = 0, level: float = 0.95) -> Improvement:
    """Negative MAE difference / positive r difference = the adapted templates agree better with the NOEs.

    Original and adapted are resampled together (shared template ids), the NOEs independently.
    """
    to, ta, tn = restrict(original, groups), restrict(adapted, groups), restrict(noe, groups)
    wo = resample_weights(len(to.templates), n_resamples, seed)
    wa = _aligned_weights(to, ta, wo)
    wn = resample_weights(len(tn.templates), n_resamples, seed + 1)
    vo, va, vn = _point(to), _point(ta), _point(tn)
    do, da, dn = vbcm_from_weights(to, wo), vbcm_from_weights(ta, wa), vbcm_from_weights(tn, wn)
    mae_diff = _interval(float(mae(va, vn) - mae(vo, vn)), mae(da, dn) - mae(do, dn), level)
    r_diff = None
    if len(groups) >= MIN_GROUPS_FOR_R:
        r_diff = _interval(float(pearson(va, vn) - pearson(vo, vn)), pearson(da, dn) - pearson(do, dn), level)
    return Improvement(mae_diff, r_diff)
