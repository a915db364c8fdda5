"""A plan from a pilot design: the units (and samples per unit) that detect an effect with the asked power at
α = 0.05, the smallest effect detectable at the pilot's own size, and the simulated power curve behind both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairness_core.planning.pilot import (
    CannotPlan,
    PilotDesign,
    VarianceParts,
    check_speaks,
    latent_family,
    variance_parts,
)
from fairness_core.planning.search import Curve, crossing
from fairness_core.planning.simulate import (
    ALPHA,
    PERMUTATION,
    PERMUTATIONS,
    SIMULATIONS,
    largest_effect,
    power,
    shift_factor,
)

#: the most blocks (units × labels) one simulated study may hold: beyond it an answer is only a bound
MAX_BLOCKS = 20_000
MAX_UNITS = 10_000
POWER_RANGE = (ALPHA, 0.99)
#: the highest power a test at α reaches by chance among SIMULATIONS studies (α + 3 standard errors): a curve that
#: never rises above it has not left chance, so no trend can be read from it (issue 43: an effect of 1e-9 was
#: "extrapolated" to about 139,268 units from powers of 0.01-0.08)
CHANCE_CEILING = ALPHA + 3.0 * math.sqrt(ALPHA * (1.0 - ALPHA) / SIMULATIONS)


class PlanError(ValueError):
    """A plan that cannot be made from what was given (bad effect or power, unknown run or kind); one sentence."""


@dataclass(frozen=True)
class Plan:
    """The planner's answer (see the module docstring); `why` is set, and the numbers None, when the pilot cannot
    speak to the effect."""

    measure: str
    effect: float
    power: float
    n_units: int | None
    n_samples: int | None
    mde_at_pilot_size: float | None
    method: str
    pilot_run: str
    unit: str = ""
    pilot_units: int | None = None
    pilot_samples: int | None = None
    alpha: float = ALPHA
    curve: tuple[tuple[int, float], ...] = ()  # simulated (units, power) at the planned samples
    variance: VarianceParts | None = None
    answer: str = ""
    notes: tuple[str, ...] = ()
    why: str = ""
    beyond: int | None = None  # the most units simulated, when even they fall short
    undetectable: bool = False  # even the most units simulated detect it no more often than chance
    extrapolated: int | None = None  # where the curve's trend crosses the target beyond them
    extra: dict[str, Any] = field(default_factory=dict)  # what was planned: arm, family, runs

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"measure": self.measure, "effect": self.effect, "power": self.power,
                               "n_units": self.n_units, "n_samples": self.n_samples,
                               "mde_at_pilot_size": self.mde_at_pilot_size, "method": self.method,
                               "pilot_run": self.pilot_run,
                               # extras (docs/planning.md)
                               "answer": self.answer, "unit": self.unit, "alpha": self.alpha,
                               "pilot_units": self.pilot_units, "pilot_samples": self.pilot_samples,
                               "curve": [{"n_units": n, "power": p} for n, p in self.curve],
                               "variance": self.variance.as_json() if self.variance is not None else None,
                               "notes": list(self.notes)}
        if self.why:
            out["why"] = self.why
        if self.beyond is not None:
            out["more_than"] = self.beyond
            out["extrapolated_n_units"] = self.extrapolated
            out["undetectable"] = self.undetectable
        return out | self.extra


def check_target(effect: float, target: float) -> None:
    """PlanError for an effect that is not a positive number or a power outside (α, 0.99]."""
    if not isinstance(effect, (int, float)) or not math.isfinite(effect) or effect <= 0:
        raise PlanError(f"the effect must be a positive number (got {effect!r}): the size of the difference the "
                        "study should be able to detect, e.g. 0.05")
    low, high = POWER_RANGE
    if not isinstance(target, (int, float)) or not math.isfinite(target) or not low < target <= high:
        raise PlanError(f"the power must be above {low:g} (α: a study with no effect is already rejected that often) "
                        f"and at most {high:g} (got {target!r}), e.g. 0.8")


def check_seed(seed: int) -> None:
    """PlanError for a seed the simulation's generator cannot take (it needs a whole number 0 or above)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise PlanError(f"the seed must be a whole number, 0 or above (got {seed!r}): it fixes the simulated studies, "
                        "so the same seed gives the same plan")


def _method(design: PilotDesign, samples: int | None) -> str:
    tested = (f"each study tested by the design's permutation test ({PERMUTATIONS} arrangements of the labels, "
              f"mid-p, α = {ALPHA:g})" if design.test == PERMUTATION else
              f"each study tested as CAIRO's page does: does its Eq. 1 interval (Welch intervals of the subgroup "
              f"gaps, Bonferroni over them) exclude 0 at α = {ALPHA:g}")
    sampled = ("resampling its units with replacement (each with all its groups' blocks: a paired design)"
               if any(f.paired for f in design.families) else
               "resampling its prompts within each family, whatever their group (an unpaired design)")
    drawn = (f", drawing {samples} new samples per cell around the pilot's shrunk rates" if samples is not None
             and design.binary and design.samples_per_cell is not None else "")
    return (f"simulation from pilot run {design.pilot_run}: {SIMULATIONS} studies per size, {sampled}{drawn}, "
            f"the effect set on one group at a time; {tested}; the size where the simulated power crosses the "
            "target fitted on the probit scale (docs/planning.md)")


def _number(value: float) -> str:
    return f"{value:.2g}" if value < 1 else f"{value:.3g}"


def plan_design(design: PilotDesign, effect: float, target: float, samples: int | None = None, seed: int = 0,
                extra: dict[str, Any] | None = None) -> Plan:
    """The plan for `design` (a pilot read by `planning.runs`): PlanError for a bad effect, power or samples; a
    Plan whose `why` says so when the pilot cannot speak to the effect."""
    check_target(effect, target)
    check_seed(seed)
    extra = {"effect_units": design.scale, **(extra or {})}
    planned_samples = _samples(design, samples)
    try:
        check_speaks(design)
    except CannotPlan as reason:
        return Plan(design.measure, effect, target, None, planned_samples, None, "", design.pilot_run, design.unit,
                    answer=str(reason), why=str(reason), notes=design.notes, extra=extra)
    families = [f for f in design.families if f.n_labels >= 2]
    latents = [latent_family(f, design.binary) for f in families]
    biggest = largest_effect(latents, design.statistic, design.binary)
    if effect > biggest:
        raise PlanError(f"an effect of {effect:g} on {design.measure} cannot happen here: a rate stays between 0 and 1,"
                        f" so with this pilot's rates the largest is about {biggest:.2f}")
    if design.value_range is not None:
        low, high = design.value_range
        biggest = min((high - low) / shift_factor(design.statistic, f.n_labels) for f in families)
        if effect > biggest:
            raise PlanError(f"an effect of {effect:g} on {design.measure} cannot happen here: its values lie between "
                            f"{low:g} and {high:g}, so the largest is {biggest:.3g}")
    span = _value_span(design)
    labels = sum(f.n_labels for f in families)
    high = int(min(MAX_UNITS, max(2, MAX_BLOCKS // labels)))
    pilot_units = int(np.median([f.units_per_label() for f in families]))
    start = int(min(max(2, pilot_units), high))

    def at_units(n: float) -> float:
        return power(latents, design.statistic, design.binary, int(n), planned_samples, effect, seed=seed,
                     test=design.test)

    needed, curve = crossing(at_units, start, target, ALPHA, 2, high, True, SIMULATIONS)
    beyond = extrapolated = None
    undetectable = False
    if needed is None:
        beyond = high
        # powers at chance level carry no trend: a line through their noise crosses the target anywhere
        undetectable = max(curve.points.values(), default=0.0) <= CHANCE_CEILING
        extrapolated = None if undetectable else _extrapolate(curve, target)
    _fill_curve(curve, needed, at_units, high)
    pilot_samples = design.samples_per_cell

    def at_effect(delta: float) -> float:
        return power(latents, design.statistic, design.binary, max(2, pilot_units), pilot_samples
                     if design.binary and design.samples_per_cell is not None else None, delta, seed=seed + 1,
                     test=design.test)

    if design.own_detectable is not None:
        # the run's own test at its own size has a figure its page shows: say that one, not a second estimate
        smallest = design.own_detectable(target)
    else:
        top = biggest * 0.999 if np.isfinite(biggest) else max(4.0 * span, 4.0 * effect)
        smallest, _ = crossing(at_effect, min(effect, top), target, ALPHA, top / 1000.0, top, False, SIMULATIONS)
    variance = variance_parts(latents)
    n_units = int(needed) if needed is not None else None
    plan = Plan(design.measure, effect, target, n_units, planned_samples, smallest, _method(design, planned_samples),
                design.pilot_run, design.unit, pilot_units, pilot_samples, ALPHA,
                tuple((int(n), float(p)) for n, p in curve.sorted()), variance, "", _notes(design, variance),
                beyond=beyond, undetectable=undetectable, extrapolated=extrapolated, extra=extra)
    return _with_answer(plan, design)


def _samples(design: PilotDesign, samples: int | None) -> int | None:
    """The samples per cell the plan uses: the asked number where the pilot can speak to it, else the pilot's."""
    pilot = design.samples_per_cell
    if samples is None:
        return pilot if design.binary else None
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1 or samples > 10_000:
        raise PlanError(f"samples per prompt must be a whole number from 1 to 10,000 (got {samples!r})")
    if not design.binary or pilot is None:
        raise PlanError(f"{design.measure} has no samples per {design.unit} to plan: each of its units is measured "
                        "once")
    if samples == pilot:
        # what the pilot has needs no split of its variance: planned as the pilot ran (the page's default live view
        # asks for its own 1 sample per prompt, and was refused with a sentence asking for just that; issue 43)
        return samples
    if pilot < 2:
        raise PlanError(f"run {design.pilot_run} has one sample per prompt, so it cannot tell the prompts' own "
                        "variation from the samples' and cannot say what another number of samples would do; plan "
                        "with its one sample per prompt, or run a pilot with two or more")
    return samples


def _value_span(design: PilotDesign) -> float:
    values = []
    for family in design.families:
        present = family.counts > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            values.append((family.totals[present] / family.counts[present]).ravel())
    joined = np.concatenate(values) if values else np.zeros(1)
    return float(np.ptp(joined)) if joined.size else 0.0


def _extrapolate(curve: Curve, target: float) -> int | None:
    """Where a probit line through the simulated points (in √n) crosses the target; None if the points do not
    rise."""
    from scipy.stats import norm

    points = [(n, p) for n, p in curve.sorted() if 0 < p < 1]
    if len(points) < 2:
        return None
    h = np.sqrt([n for n, _ in points])
    z = norm.ppf([p for _, p in points])
    slope, intercept = np.polyfit(h, z, 1)
    if slope <= 0:
        return None
    return math.ceil(((norm.ppf(target) - intercept) / slope) ** 2)


def _fill_curve(curve: Curve, needed: float | None, evaluate: Any, high: int) -> None:
    """Points either side of the answer, so the power curve shows where it comes from."""
    if needed is None or len(curve.points) >= 5:
        return
    for n in (max(2, round(needed / 2)), min(high, round(needed * 2))):
        if n not in curve.points and all(abs(n - x) > 0.1 * n for x in curve.points):
            curve.points[float(n)] = evaluate(n)


def _notes(design: PilotDesign, variance: VarianceParts) -> tuple[str, ...]:
    notes = list(design.notes)
    if design.binary and design.samples_per_cell is not None:
        if variance.separable and math.isfinite(variance.share_within):  # no spread at all: no share to give
            share = variance.share_within
            notes.append(f"at the pilot's {design.samples_per_cell} samples per prompt, sampling makes up {share:.0%} "
                         f"of the variance of a prompt's rate and the {design.unit}s themselves {1 - share:.0%}: more "
                         "samples per prompt shrink only the first part")
        elif design.samples_per_cell == 1:
            notes.append("the pilot has one sample per prompt: the prompts' own variation and the samples' cannot be "
                         "told apart, so the plan keeps one sample per prompt")
    return tuple(notes)


def _with_answer(plan: Plan, design: PilotDesign) -> Plan:
    from dataclasses import replace

    what = design.effect_words.format(effect=_number(plan.effect))
    goal = f"To detect {what} with {plan.power:.0%} power (α = {plan.alpha:g})"
    samples = (f" with {plan.n_samples} sample{'s' if plan.n_samples != 1 else ''} per prompt"
               if design.binary and plan.n_samples is not None else "")
    if plan.n_units is not None:
        size = f"plan about {plan.n_units:,} {design.units}{samples}"
    elif plan.extrapolated is not None:
        size = (f"plan more than {plan.beyond:,} {design.units}{samples} (the most the planner simulates; the curve's "
                f"trend suggests about {plan.extrapolated:,})")
    else:
        size = f"plan more than {plan.beyond:,} {design.units}{samples} (the most the planner simulates)"
    if plan.mde_at_pilot_size is not None:
        pilot = (f"this pilot has {plan.pilot_units:,}; at its size the smallest effect detectable with "
                 f"{plan.power:.0%} power is about {_number(plan.mde_at_pilot_size)}")
    else:
        pilot = (f"this pilot has {plan.pilot_units:,}; at its size no possible effect is detected with "
                 f"{plan.power:.0%} power")
    if plan.undetectable:
        # no size to give: the largest simulated study detects it no more often than a study of no effect
        best = max((p for _, p in plan.curve), default=0.0)
        reached = "0 at every simulated size" if best == 0 else f"at most {best:.2f}"
        return replace(plan, answer=(
            f"{goal}: an effect of {_number(plan.effect)} is below what any simulated size can detect — with up to "
            f"{plan.beyond:,} {design.units}{samples} (the most the planner simulates) the simulated power is "
            f"{reached}, no better than chance (α = {plan.alpha:g}), so no number of units can be planned "
            f"({pilot})."))
    return replace(plan, answer=f"{goal}, {size} ({pilot}).")
