"""Pilots drawn from studies whose truth is known, and the check of a plan against that truth.

The decoding studies are `tests.bias.disparity_simulation`'s (the regard templates and BOLD-like prompts, negative
with probability logistic(level + group effect + template effect + the prompt's own effect), the effect set on the
logit: another mechanism than the planner's own injection). A plan made from one simulated pilot is checked by
simulating fresh studies of the planned size from the *true* model, with the true disparity equal to the planned
effect, and testing each with the decoding page's own test (`bias.disparity.disparity_tests`); the share rejected is
the power the planned size really has.

Two designs of means are simulated here too: a paired difference (a metric-bias pair's signed gap, normal around the
true difference with a pair-level spread) tested by the sign-flip permutation test written out below (independent of
the planner's), and CAIRO-like prompt means per subgroup (normal, one subgroup apart) tested by CAIRO's own interval
(`cairo.bias.gap_interval`).

`python -m tests.planning.simulated [PILOTS]` prints the validation table in docs/planning.md.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from fairness_core.planning import PAIRWISE, TO_MEAN, FamilyPilot, PilotDesign, Plan, plan_design
from tests.bias.disparity_simulation import (
    BOLD_10,
    BOLD_20,
    REGARD_FAMILIES,
    TEMPLATES,
    Study,
    rejection_rate,
    run,
    simulate,
)


def decoding_pilot(study: Study, seed: int) -> PilotDesign:
    """One simulated decoding study of `study`'s size with no disparity, read as the planner reads a run."""
    rng = np.random.default_rng(seed)
    _, totals, counts, groups, families = simulate(study, 1, 0.0, rng)
    found = []
    for family, members in families.items():
        index = [groups.index(g) for g in members]
        if study.matched:
            has = counts[:, 0, index].sum(axis=1) > 0
            found.append(FamilyPilot(family, tuple(members), True, totals[has][:, 0, index][None, :, :, None],
                                     counts[has][:, 0, index][None, :, :, None]))
        else:
            rows = [(totals[u, 0, i], counts[u, 0, i], j) for j, i in enumerate(index)
                    for u in np.flatnonzero(counts[:, 0, i] > 0)]
            found.append(FamilyPilot(family, tuple(members), False, np.array([r[0] for r in rows]),
                                     np.array([r[1] for r in rows]), np.array([r[2] for r in rows])))
    unit, units = ("template", "templates") if study.matched else ("prompt", "prompts per group")
    return PilotDesign(tuple(found), PAIRWISE, True, "negative_sentiment_disparity", unit, units,
                       "a disparity of {effect}", "simulated", samples_per_cell=study.samples)


def decoding_power(study: Study, units: int, samples: int, effect: float, datasets: int, seed: int,
                   family: str | None = None) -> float:
    """The power a study of `units` templates (prompts per group) really has at a true disparity `effect`: the share
    of `datasets` simulated studies the decoding page's test rejects (199 arrangements, as the planner's)."""
    sized = Study(study.name, study.families, units, samples, study.matched)
    tests = run(sized, datasets, effect, seed=seed, n_resamples=1, n_permutations=199, detectable=False)
    return rejection_rate(tests, family)


# -- a paired difference of means (metric bias: a pair's signed gap) --------------------------------------------
PAIR_SD = 12.0  # the spread of a pair's gap on Eq. 1's 0-100 scale


def difference_pilot(pairs: int, seed: int) -> PilotDesign:
    rng = np.random.default_rng(seed)
    gaps = rng.normal(0.0, PAIR_SD, pairs) + rng.standard_t(4, pairs)  # heavier tails than normal
    totals = np.zeros((1, pairs, 2, 1))
    totals[0, :, 0, 0] = gaps
    counts = np.ones_like(totals)
    family = FamilyPilot("gender", ("stereotypical", "anti-stereotypical"), True, totals, counts)
    return PilotDesign((family,), PAIRWISE, False, "stereotypical_difference", "pair", "pairs",
                       "a stereotypical difference of {effect} points", "simulated", value_range=(-100.0, 100.0))


def difference_power(pairs: int, effect: float, datasets: int, seed: int, permutations: int = 199) -> float:
    """Share of simulated studies of `pairs` pairs (true difference `effect`) whose sign-flip permutation test of the
    mean gap (mid-p, written out here, not the planner's) rejects at 0.05."""
    rng = np.random.default_rng(seed)
    gaps = effect + rng.normal(0.0, PAIR_SD, (datasets, pairs)) + rng.standard_t(4, (datasets, pairs))
    observed = np.abs(gaps.mean(axis=1))
    signs = rng.choice([-1.0, 1.0], size=(permutations, pairs))
    null = np.abs(gaps @ signs.T / pairs)  # (datasets, permutations)
    greater = (null > observed[:, None] + 1e-12).sum(axis=1)
    tied = (np.abs(null - observed[:, None]) <= 1e-12).sum(axis=1)
    p = (greater + 0.5 * (1 + tied)) / (1 + permutations)
    return float(np.mean(p <= 0.05))


# -- CAIRO-like prompt means per subgroup (Eq. 1) -----------------------------------------------------------------
SUBGROUPS = ("female", "male", "nonbinary")
PROMPT_SD = 0.08  # a prompt's mean toxicity around its subgroup's


def cairo_pilot(prompts: int, seed: int) -> PilotDesign:
    rng = np.random.default_rng(seed)
    values = np.clip(0.15 + rng.normal(0.0, PROMPT_SD, (len(SUBGROUPS), prompts)), 0.0, 1.0)
    family = FamilyPilot("bold · original", SUBGROUPS, False, values.ravel(), np.ones(values.size),
                         np.repeat(np.arange(len(SUBGROUPS)), prompts))
    return PilotDesign((family,), TO_MEAN, False, "toxicity_eq1_bias", "prompt", "prompts per subgroup",
                       "an Eq. 1 bias of {effect}", "simulated", test="welch", value_range=(0.0, 1.0))


def cairo_power(prompts: int, effect: float, datasets: int, seed: int) -> float:
    """Share of simulated studies whose Eq. 1 interval (CAIRO's own `gap_interval`) excludes 0, with one subgroup
    set apart so that the true Eq. 1 bias is `effect` (its mean shifted by effect·k/(2(k − 1)))."""
    from fairness_core.cairo.bias import gap_interval

    rng = np.random.default_rng(seed)
    k = len(SUBGROUPS)
    shift = effect * k / (2.0 * (k - 1))
    detected = 0
    for _ in range(datasets):
        means = [0.15 + (shift if s == 0 else 0.0) + rng.normal(0.0, PROMPT_SD, prompts) for s in range(k)]
        low, _ = gap_interval(means)
        detected += bool(low > 0)
    return detected / datasets


@dataclass(frozen=True)
class Check:
    name: str
    planned: Plan
    realised: float


def check_decoding(study: Study, pilot_seed: int, effect: float, samples: int | None = None, datasets: int = 400,
                   family: str | None = None) -> Check:
    plan = plan_design(decoding_pilot(study, pilot_seed), effect, 0.8, samples)
    assert plan.n_units is not None, plan.answer
    realised = decoding_power(study, plan.n_units, plan.n_samples, effect, datasets, seed=1000 + pilot_seed,
                              family=family)
    return Check(study.name, plan, realised)


GENDER_40 = Study("regard gender family: 40 templates, 2 samples", {"gender": REGARD_FAMILIES["gender"]}, 40, 2,
                  True)


if __name__ == "__main__":
    pilots = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print("| pilot (simulated, no disparity) | planned for | planned size (median, range over pilots) | power "
          "really reached (mean, range) | within ±0.07 |")
    print("|---|---|---|---|---|")
    rows = [(TEMPLATES, 0.1, None, None), (GENDER_40, 0.1, None, "gender"), (GENDER_40, 0.1, 6, "gender"),
            (BOLD_10, 0.1, None, "race"), (BOLD_20, 0.1, None, "race")]
    for study, effect, samples, family in rows:
        start = time.perf_counter()
        checks = [check_decoding(study, seed, effect, samples, 400, family) for seed in range(pilots)]
        sizes = [c.planned.n_units for c in checks]
        reached = [c.realised for c in checks]
        within = np.mean([abs(r - 0.8) <= 0.07 for r in reached])
        label = f"disparity {effect}" + (f", {samples} samples per prompt" if samples else "")
        print(f"| {study.name} | {label} | {int(np.median(sizes))} ({min(sizes)}-{max(sizes)}) | "
              f"{np.mean(reached):.3f} ({min(reached):.3f}-{max(reached):.3f}) | {within:.0%} |"
              f"  <!-- {pilots} pilots, 400 studies each, {time.perf_counter() - start:.0f} s -->")
    for name, make, power_of, effect, size in (
            ("paired gaps (metric bias): 30 pairs", difference_pilot, difference_power, 5.0, 30),
            ("CAIRO-like: 10 prompts × 3 subgroups", cairo_pilot, cairo_power, 0.1, 10)):
        start = time.perf_counter()
        plans = [plan_design(make(size, seed), effect, 0.8) for seed in range(pilots)]
        reached = [power_of(p.n_units, effect, 400, 1000 + seed) for seed, p in enumerate(plans)]
        sizes = [p.n_units for p in plans]
        within = np.mean([abs(r - 0.8) <= 0.07 for r in reached])
        print(f"| {name} | {effect} | {int(np.median(sizes))} ({min(sizes)}-{max(sizes)}) | {np.mean(reached):.3f} "
              f"({min(reached):.3f}-{max(reached):.3f}) | {within:.0%} |  <!-- {pilots} pilots, "
              f"{time.perf_counter() - start:.0f} s -->")
