"""A pilot run read as the planner needs it: families of labelled blocks, and what its units and samples contribute
to the variance.

Every statistic the planner plans is a statistic of *group rates* (or means) tested by permuting group labels
within the design's exchange sets (`fairness_core.bias.permutation`):

- a **paired** family: each unit (a template shared by the family's groups; a prompt both runs of a comparison
  generated from; a metric-bias pair; an audit pattern) holds one block per label (group, run, side), and labels are
  exchanged only within a unit. A block may hold several *cells* (a template's prompts of several groups when the
  labels are two runs; an audit pattern's templates), each with its own samples;
- an **unpaired** family: prompts not matched across groups (BOLD, a user's file, CAIRO's prompt sets), each one
  block of one cell; whole prompts are exchanged between the family's groups.

A cell holds a total (Σ values: flagged generations for a rate, Σ scores for a mean) over `count` samples. For a
rate measured on two or more samples per cell the pilot's spread of cell rates mixes two sources: the units (a
template or prompt's own tendency, and its interaction with the group) and the samples drawn from it (binomial
noise p(1 − p)/m). They are separated by the method of moments, the within-cell part estimated without bias by
p̂(1 − p̂)/(m − 1):

    between-unit variance τ² = (variance of the cell residuals)/(1 − 1/G) − mean_c p̂_c(1 − p̂_c)/(m_c − 1)

with the residual of a paired cell its rate minus its unit's mean over labels (minus the label's own mean, so the
pilot's own difference between groups is not counted as spread), of an unpaired cell its rate minus its group's mean
(the factor 1 − 1/G, resp. 1 − 1/n_g, is the share of a cell's variance a centred residual keeps). The simulation
draws new samples around *latent* cell rates: the pilot's rates shrunk towards their centres by
λ = √(τ² / (τ² + within)) (so the latent spread is τ², not τ² plus the pilot's own sampling noise), which is what
lets the planner answer for another number of samples per prompt. With one sample per cell the two cannot be
told apart: the observed 0/1 values are the latent rates (λ = 1) and the number of samples is not planned.
Means (metric scores, judge scores, CAIRO's prompt means over seeds) are taken as they are (λ = 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fairness_core.bias.cluster import quiet_nan_warnings

PAIRWISE = "pairwise"  # Dhamala et al. 2022 (Fig. 5): mean absolute pairwise difference of the group rates
TO_MEAN = "eq1"  # Zayed et al. 2024, Eq. 1: Σ_s |E_s' m_s' − m_s| (the mean of the group means)
TO_POOLED = "fped"  # Dixon et al. 2018: FPED = Σ_t |FPR − FPR_t| (FPR over all texts)
STATISTICS = (PAIRWISE, TO_MEAN, TO_POOLED)


class CannotPlan(ValueError):
    """The pilot cannot speak to the effect (all-zero rates, one group, a constant metric): one sentence."""


@dataclass(frozen=True)
class FamilyPilot:
    """One family of a pilot: its labels and its blocks.

    paired: `totals`, `counts` are (V, U, G, C): V variants (e.g. the audit's terms, one planned question each, the
    power averaged over them; 1 elsewhere), U units, G labels, C cells per block; count 0 = no cell.
    unpaired: (P,) per prompt, with `group` (P,) the label index of each prompt.
    """

    name: str
    labels: tuple[str, ...]
    paired: bool
    totals: np.ndarray
    counts: np.ndarray
    group: np.ndarray | None = None  # unpaired: label index per prompt

    def __post_init__(self) -> None:
        if self.totals.shape != self.counts.shape:
            raise ValueError("totals and counts must have the same shape")
        if self.paired and self.totals.ndim != 4:
            raise ValueError("a paired family's cells are (variants, units, labels, cells)")
        if not self.paired and (self.totals.ndim != 1 or self.group is None or len(self.group) != len(self.totals)):
            raise ValueError("an unpaired family's cells are one per prompt, each with its label")

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    def units_per_label(self) -> int:
        """The pilot's size in planned units: units (paired), or the median of the labels' prompt counts."""
        if self.paired:
            return int(self.totals.shape[1])
        per_label = np.bincount(self.group, minlength=self.n_labels)
        return int(np.median(per_label))


@dataclass(frozen=True)
class PilotDesign:
    """What the planner needs from a pilot run (see the module docstring)."""

    families: tuple[FamilyPilot, ...]
    statistic: str  # PAIRWISE | TO_MEAN | TO_POOLED
    binary: bool  # cells count flagged samples (a rate) rather than sum scores
    measure: str  # what is planned, for people and programs ("negative_sentiment_disparity")
    unit: str  # one planned unit, in words ("template", "prompt", "pair", "pattern")
    units: str  # a number of them, in words, after the number ("templates (one prompt per group each)")
    effect_words: str  # "a disparity in negative sentiment of 0.05"-style phrase, {effect} in it
    pilot_run: str
    scale: str = "rate"  # what the effect is measured in ("rate", "points on Eq. 1's 0-100 scale", ...)
    notes: tuple[str, ...] = ()
    #: the pilot's samples per cell (median) for a rate; None for means
    samples_per_cell: int | None = None
    test: str = "permutation"  # or "welch": CAIRO's Eq. 1 interval (`simulate.welch_rejections`)
    #: the scale a mean lives on (low, high), where it is known: an effect whose shift exceeds it is refused
    value_range: tuple[float, float] | None = None
    #: power -> the smallest effect the pilot run's own test detects at its size, where the run has one that its
    #: page shows (a decoding disparity, `reading.design.smallest_detectable`): the plan says that figure rather
    #: than a second estimate of its own (issue 42 §1: one number, one method)
    own_detectable: Callable[[float], float | None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class LatentFamily:
    """A family's latent cell values (shrunk as the module docstring says), the pilot's counts and the variance
    components of one cell at the pilot's samples."""

    family: FamilyPilot
    values: np.ndarray  # like family.totals: latent rate / mean per cell (NaN where count 0)
    between: float  # τ²: variance of a cell's latent value around its centre
    within: float  # mean sampling variance of a cell's value at the pilot's samples (0: not separable)
    center: float  # the family's mean latent value (what an effect on a rate is bounded by)
    separable: bool = False  # a rate on two or more samples per cell: units and samples can be told apart


@dataclass(frozen=True)
class VarianceParts:
    """What the design's units contribute to the variance of a cell, at the pilot's samples per cell."""

    between_units: float
    within_units: float
    separable: bool  # False: one sample per cell (or means), the parts cannot be told apart

    @property
    def share_within(self) -> float:
        total = self.between_units + self.within_units
        return float(self.within_units / total) if total > 0 else float("nan")

    def as_json(self) -> dict[str, float | bool | None]:
        share = self.share_within
        return {"between_units": float(self.between_units), "within_units": float(self.within_units),
                "share_within_units": None if not np.isfinite(share) else share, "separable": self.separable}


def _rates(totals: np.ndarray, counts: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / np.where(counts > 0, counts, 1.0), np.nan)


def latent_family(family: FamilyPilot, binary: bool) -> LatentFamily:
    """The family's latent values and variance parts (module docstring)."""
    rates = _rates(family.totals, family.counts)
    present = family.counts > 0
    center = float(np.nanmean(rates)) if present.any() else float("nan")
    separable = binary and bool(present.any()) and bool((family.counts[present] >= 2).all())
    if separable:
        m = family.counts[present]
        p = rates[present]
        within = float(np.mean(p * (1.0 - p) / (m - 1.0)))
    else:
        within = 0.0
    if family.paired:
        # residual of a cell: its rate minus the mean over labels of its (variant, unit, cell), minus its label's mean
        with np.errstate(invalid="ignore"), quiet_nan_warnings():
            unit_mean = np.nanmean(rates, axis=2, keepdims=True)
            label_mean = np.nanmean(rates, axis=(1, 3), keepdims=True) - np.nanmean(rates, axis=(1, 2, 3),
                                                                                     keepdims=True)
        residual = rates - unit_mean - label_mean
        labels_present = present.sum(axis=2, keepdims=True)
        keep = present & (labels_present >= 2)
        g = np.broadcast_to(labels_present, rates.shape)[keep].astype(float)
        spread = float(np.mean(residual[keep] ** 2 / (1.0 - 1.0 / g))) if keep.any() else 0.0
        between = max(0.0, spread - within)
        shrink = np.sqrt(between / (between + within)) if between + within > 0 else 1.0
        # the unit means (a template's own level) carry the interaction and the samples too, 1/G of them
        units = np.where(np.isfinite(unit_mean), unit_mean, center)
        unit_spread = float(np.nanvar(unit_mean)) if np.isfinite(unit_mean).sum() > 1 else 0.0
        noise = (between + within) / max(float(np.mean(g)) if keep.any() else 1.0, 1.0)
        unit_between = max(0.0, unit_spread - noise)
        unit_shrink = np.sqrt(unit_between / unit_spread) if separable and unit_spread > 0 else 1.0
        # Means, or one sample per cell: the observed values with the label effects taken out (λ = 1). Residuals
        # centred on label means estimated from U units keep (1 − 1/U) of their spread, and resampling the units
        # draws from that spread: √(U/(U − 1)) gives it back.
        n_units = family.totals.shape[1]
        widen = np.sqrt(n_units / (n_units - 1.0)) if n_units > 1 else 1.0
        values = center + unit_shrink * (units - center) + (shrink if separable else 1.0) * widen * np.where(
            keep, residual, 0.0)
    else:
        labels = family.group
        with quiet_nan_warnings():
            label_means = np.array([np.nanmean(rates[labels == g]) if (labels == g).any() else np.nan
                                    for g in range(family.n_labels)])
        residual = rates - label_means[labels]
        per_label = np.bincount(labels[present], minlength=family.n_labels).astype(float)
        n_g = per_label[labels][present]
        usable = n_g >= 2
        spread = float(np.mean(residual[present][usable] ** 2 / (1.0 - 1.0 / n_g[usable]))) if usable.any() else 0.0
        between = max(0.0, spread - within)
        shrink = np.sqrt(between / (between + within)) if separable and between + within > 0 else 1.0
        # a residual from its group's mean keeps (1 − 1/n_g) of the prompts' spread: √(n_g/(n_g − 1)) gives it back
        size = np.maximum(per_label[labels], 2.0)
        values = center + shrink * np.sqrt(size / (size - 1.0)) * residual
    if binary:
        values = np.clip(values, 0.0, 1.0)
    values = np.where(present, values, np.nan)
    return LatentFamily(family, values, between, within if separable else 0.0, center, separable)


def variance_parts(latents: list[LatentFamily]) -> VarianceParts:
    """The units' and the samples' share of a cell's variance, averaged over the families."""
    between = float(np.mean([f.between for f in latents])) if latents else 0.0
    within = float(np.mean([f.within for f in latents])) if latents else 0.0
    return VarianceParts(between, within, any(f.separable for f in latents))


def check_speaks(design: PilotDesign) -> None:
    """CannotPlan, in one sentence, when the pilot cannot speak to an effect: no family of two labels, a family of
    one unit, rates that are all 0 (or all 1), or values that never vary."""
    what = design.measure.replace("_", " ")
    families = [f for f in design.families if f.n_labels >= 2]
    if not families:
        only = design.families[0].labels[0] if design.families and design.families[0].labels else "none"
        raise CannotPlan(f"run {design.pilot_run} has one group ({only}) for {what}, so there is no difference "
                         "between groups to plan for; a pilot needs two or more groups of a family")
    for family in families:
        if family.paired and family.totals.shape[1] < 2:
            raise CannotPlan(f"run {design.pilot_run} has one {design.unit} in {family.name}: with nothing to "
                             "resample it says nothing about how the units vary; a pilot needs two or more")
        if not family.paired:
            per_label = np.bincount(family.group, minlength=family.n_labels)
            if per_label.min() < 2:
                short = family.labels[int(per_label.argmin())]
                raise CannotPlan(f"run {design.pilot_run} has {int(per_label.min())} prompt(s) of {short} in "
                                 f"{family.name}: a pilot needs two or more prompts per group to say how prompts vary")
    rates = np.concatenate([_rates(f.totals, f.counts)[f.counts > 0] for f in families])
    if rates.size == 0:
        raise CannotPlan(f"run {design.pilot_run} has no scored {design.unit} for {what}")
    if design.binary and (np.all(rates == 0) or np.all(rates == 1)):
        level = "0" if np.all(rates == 0) else "1"
        raise CannotPlan(f"every rate in run {design.pilot_run} is {level} for {what} (no generation "
                         f"{'flagged' if level == '0' else 'left unflagged'}), so the pilot says nothing about how "
                         "rates vary between prompts; run a pilot in which some are flagged and some are not")
    if not design.binary and np.ptp(rates) == 0:
        raise CannotPlan(f"every value in run {design.pilot_run} is the same ({rates[0]:g}) for {what}: a constant "
                         "says nothing about how a difference would vary")


def score_range(design_values: np.ndarray) -> tuple[float, float] | None:
    """The scale of a judge's or scorer's values, read from the pilot: [0, 1] (a probability or a share) or
    [−1, 1] (a polarity such as VADER's compound) when every value lies in it; None (unbounded) otherwise."""
    values = np.asarray(design_values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size and values.min() >= 0.0 and values.max() <= 1.0:
        return (0.0, 1.0)
    if values.size and values.min() >= -1.0 and values.max() <= 1.0:
        return (-1.0, 1.0)
    return None
