"""Comparing bias vectors across template sets (Quiroga et al. 2025 Sec. 2.3 "Bias Comparison", Figs. 4–5).

Two VBCM vectors over the same groups are compared by the mean absolute error
``MAE(a, b) = 1/|G| Σ_g |VBCM_g(a) − VBCM_g(b)|`` and by Pearson's r across groups (Sec. 3.1: "lower MAE
and higher correlation indicate consistent bias measurements").

Intervals: percentile bootstrap that resamples the units the sets were drawn from — templates for a template
set, sentences for the NOEs — and the identity terms, which every set fills in (the same name lists): one draw
of each group's terms serves all sets (`vbcm.shared_term_weights`). Sets drawn independently (original or
adapted vs NOEs) have their templates resampled independently; the original and adapted sets share template
ids (an adapted template is the rewrite of an original one), so they are resampled *together*. Pearson r is
reported only with 3 or more groups (with 2 it is ±1 by construction).

Equal template sets (issue 30): MAE grows with noise, and an adapted set has only the templates whose rewrite
was accepted, so "adapted vs NOEs" rests on fewer templates than "original vs NOEs". Every comparison of
adapted with original (`compare(paired=True)`, `improvement`) therefore uses the *accepted templates'
originals*: the same templates on both sides, so what differs is the rewrite alone. Comparing all originals
with 8 accepted of 40 gave MAE(adapted, NOE) − MAE(original, NOE) = +0.0040 on average with adapted texts
identical to their originals, and 56% of the intervals lay entirely above 0 (`tests/adaptation/
test_rewrite_and_characteristics.py`); on equal sets it is 0 exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fairness_core.adaptation.vbcm import (
    TermScores,
    VBCMTable,
    resample_weights,
    shared_term_weights,
    vbcm_from_weights,
)

MIN_GROUPS_FOR_R = 3
#: differences this small are float rounding (sums taken in another order), never a change
ROUNDING = 1e-12


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
    """The table's columns for `groups` (in that order); β_j unchanged (it is over all the set's groups, and so
    are the per-term scores a resample recomputes it from)."""
    index = [table.groups.index(g) for g in groups]
    return VBCMTable(table.templates, list(groups), table.background, table.phi[:, index],
                     table.n_perturbations[:, index], table.n_skipped_nan, table.n_duplicates, table.terms)


def same_templates(table: VBCMTable, templates: Sequence[str]) -> VBCMTable:
    """The rows of `table` (in its order) whose template ids are in `templates`: e.g. the originals of the
    accepted rewrites, to compare with the adapted set on equal templates."""
    wanted = set(templates)
    rows = [j for j, t in enumerate(table.templates) if t in wanted]
    terms = table.terms
    if terms is not None:
        terms = TermScores(terms.groups, terms.term_group, terms.terms, terms.scores[rows], terms.background)
    return VBCMTable([table.templates[j] for j in rows], list(table.groups), table.background[rows],
                     table.phi[rows], table.n_perturbations[rows], table.n_skipped_nan, table.n_duplicates, terms)


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
    n_templates: tuple[int, int] = (0, 0)  # templates behind a and b
    #: paired only: whether some group's VBCM differs between a and b by more than the resampling moves it (a
    #: simultaneous 95% band over the groups); None for independent sets
    change_detected: bool | None = None
    change_band: float = float("nan")  # the band's half-width: the largest |b_g − a_g| that is not a change

    def as_dict(self) -> dict:
        return {"groups": self.groups, "mae": self.mae.as_dict(), "r": None if self.r is None else self.r.as_dict(),
                "n_templates": list(self.n_templates), "change_detected": self.change_detected,
                "change_band": self.change_band}


def _aligned_weights(reference: VBCMTable, other: VBCMTable, weights: np.ndarray) -> np.ndarray:
    """Weights drawn over `reference`'s templates, carried to `other`'s templates by id (0 if absent)."""
    position = {t: j for j, t in enumerate(reference.templates)}
    columns = [position[t] for t in other.templates]
    return weights[:, columns]


def simultaneous_change(point: np.ndarray, draws: np.ndarray, level: float = 0.95) -> tuple[bool, float]:
    """Is the per-group difference `point` (b − a) distinguishable from 0 anywhere? The band is the `level`
    quantile of max_g |draw_g − point_g| over the resamples (a max-type simultaneous band, so G groups do not give
    G chances of a false alarm); a change is detected when some |point_g| exceeds it. (detected, band)."""
    finite = np.isfinite(point)
    if not finite.any():
        return False, float("nan")
    with np.errstate(invalid="ignore"):
        deviation = np.nanmax(np.abs(draws[:, finite] - point[finite]), axis=1)
    deviation = deviation[np.isfinite(deviation)]
    if deviation.size == 0:
        return False, float("nan")
    band = float(np.quantile(deviation, level))
    return bool(np.max(np.abs(point[finite])) > band + ROUNDING), band


def compare(a: VBCMTable, b: VBCMTable, groups: Sequence[str], paired: bool = False, n_resamples: int = 1000,
            seed: int = 0, level: float = 0.95) -> Comparison:
    """MAE and Pearson r between the VBCM vectors of two sets over `groups`, with bootstrap CIs.

    `paired`: b's template ids are a subset of a's (b = the accepted rewrites of a's templates); a is taken on
    b's templates only (equal template sets), both are resampled with one draw of those templates, and the
    comparison says whether adapting changed any group's VBCM (`change_detected`). Identity terms are resampled
    with one draw for both sets either way (the same term lists fill both).
    """
    ta, tb = restrict(a, groups), restrict(b, groups)
    if paired:
        ta = same_templates(ta, tb.templates)
    va, vb = _point(ta), _point(tb)
    wa = resample_weights(len(ta.templates), n_resamples, seed)
    wb = _aligned_weights(ta, tb, wa) if paired else resample_weights(len(tb.templates), n_resamples, seed + 1)
    ua, ub = shared_term_weights([ta, tb], n_resamples, seed)
    da, db = vbcm_from_weights(ta, wa, ua), vbcm_from_weights(tb, wb, ub)
    mae_value = float(mae(va, vb))
    r = None
    if len(groups) >= MIN_GROUPS_FOR_R:
        r = _interval(float(pearson(va, vb)), pearson(da, db), level)
    detected, band = simultaneous_change(vb - va, db - da, level) if paired else (None, float("nan"))
    return Comparison(list(groups), va, vb, _interval(mae_value, mae(da, db), level), r,
                      (len(ta.templates), len(tb.templates)), detected, band)


@dataclass
class Improvement:
    """MAE(adapted, NOE) − MAE(original, NOE) and r(adapted, NOE) − r(original, NOE) with joint CIs, the original
    taken on the accepted templates (`n_templates` of them)."""

    mae_difference: Interval
    r_difference: Interval | None
    n_templates: int = 0

    def as_dict(self) -> dict:
        return {"mae_adapted_minus_original": self.mae_difference.as_dict(),
                "r_adapted_minus_original": None if self.r_difference is None else self.r_difference.as_dict(),
                "n_templates": self.n_templates}


def improvement(original: VBCMTable, adapted: VBCMTable, noe: VBCMTable, groups: Sequence[str],
                n_resamples: int = 1000, seed: int = 0, level: float = 0.95) -> Improvement:
    """Negative MAE difference / positive r difference = the adapted templates agree better with the NOEs.

    Equal template sets: the original side is the accepted templates' originals (the adapted set's template ids),
    so both MAEs rest on the same templates and the same noise. Original and adapted are resampled together
    (shared template ids), the NOEs independently, the identity terms with one draw for all three.
    """
    ta, tn = restrict(adapted, groups), restrict(noe, groups)
    to = same_templates(restrict(original, groups), ta.templates)
    wo = resample_weights(len(to.templates), n_resamples, seed)
    wa = _aligned_weights(to, ta, wo)
    wn = resample_weights(len(tn.templates), n_resamples, seed + 1)
    uo, ua, un = shared_term_weights([to, ta, tn], n_resamples, seed)
    vo, va, vn = _point(to), _point(ta), _point(tn)
    do, da, dn = vbcm_from_weights(to, wo, uo), vbcm_from_weights(ta, wa, ua), vbcm_from_weights(tn, wn, un)
    mae_diff = _interval(float(mae(va, vn) - mae(vo, vn)), mae(da, dn) - mae(do, dn), level)
    r_diff = None
    if len(groups) >= MIN_GROUPS_FOR_R:
        r_diff = _interval(float(pearson(va, vn) - pearson(vo, vn)), pearson(da, dn) - pearson(do, dn), level)
    return Improvement(mae_diff, r_diff, len(to.templates))
