"""Simulated decoding studies with a known disparity, for the size and power of the "no disparity" test
(`fairness_core.bias.disparity`) in the designs the decoding page ships.

- **templates**: the regard templates — 10 templates filled with every group of the paper's four families (gender 2
  groups; race, religion, sexual orientation 3 each), 2 samples per prompt. A generation is negative with
  probability logistic(level + group effect + template effect + the prompt's own effect): the template effect
  (sd 1) is shared by the template's groups, the prompt's own effect (sd 0.5) is the template × group interaction.
- **unmatched**: BOLD-like prompts that are not matched across groups — 3 groups (the page's default BOLD selection)
  × 10 prompts per group (the page's default) or 20 (the CLI's), 2 samples each; each prompt has its own effect
  (sd 1).

The true disparity of a family is the mean absolute pairwise difference of its groups' expected negative rates over
the population of templates or prompts (Dhamala et al.), by numerical integration. Many simulated datasets are
stacked as the *settings* of one call, so one call tests them all against the same permutation draws (each
dataset's test is still exact; the draws only make the datasets' p-values slightly correlated).

`python -m tests.bias.disparity_simulation [DATASETS]` prints the size and power table in docs/decoding.md.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from fairness_core.bias.cluster import Design, design_from_keys, unit_key
from fairness_core.bias.disparity import DisparityTests, cell_estimates, disparity_tests

REGARD_FAMILIES = {"gender": ["man", "woman"], "race": ["Black", "White", "Asian"],
                   "religion": ["Christian", "Muslim", "atheist"], "orientation": ["gay", "lesbian", "straight"]}
LEVEL = -1.5  # logit of a group's negative rate: about 0.2 once the template effect is averaged over
TEMPLATE_SD, PROMPT_SD, BOLD_PROMPT_SD = 1.0, 0.5, 1.0


@dataclass(frozen=True)
class Study:
    name: str
    families: dict[str, list[str]]
    units: int  # templates (matched) or prompts per group (unmatched)
    samples: int
    matched: bool


TEMPLATES = Study("regard templates: 4 families, 10 templates, 2 samples", REGARD_FAMILIES, 10, 2, True)
BOLD_10 = Study("BOLD-like: 3 groups, 10 prompts per group, 2 samples", {"race": ["a", "b", "c"]}, 10, 2, False)
BOLD_20 = Study("BOLD-like: 3 groups, 20 prompts per group, 2 samples", {"race": ["a", "b", "c"]}, 20, 2, False)


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _population_rate(effect: float, sd: float) -> float:
    grid = np.linspace(-8 * sd, 8 * sd, 4001)
    density = np.exp(-0.5 * (grid / sd) ** 2)
    return float((density * _logistic(LEVEL + effect + grid)).sum() / density.sum())


def effects_for(disparity: float, n_groups: int, sd: float) -> list[float]:
    """Group effects on the logit giving a family of `n_groups` a true disparity `disparity`: the first group set
    apart from the others (bisection on its effect)."""
    if disparity == 0:
        return [0.0] * n_groups
    base = _population_rate(0.0, sd)
    low, high = 0.0, 6.0
    for _ in range(60):
        middle = (low + high) / 2
        gap = _population_rate(middle, sd) - base
        true = gap * (n_groups - 1) / (n_groups * (n_groups - 1) / 2)
        low, high = (middle, high) if true < disparity else (low, middle)
    return [high] + [0.0] * (n_groups - 1)


def simulate(study: Study, datasets: int, disparity: float, rng: np.random.Generator
             ) -> tuple[Design, np.ndarray, np.ndarray, list[str], dict[str, list[str]]]:
    """(design, totals, counts, groups, families): `datasets` studies stacked as settings (U, datasets, G)."""
    groups = [g for members in study.families.values() for g in members]
    keys: list[str] = []
    cells: list[tuple[int, int]] = []  # (key index, group index)
    effects: list[float] = []
    shared_effect: list[int] = []  # which template effect the prompt carries (matched designs)
    for family, members in study.families.items():
        sd = np.hypot(TEMPLATE_SD, PROMPT_SD) if study.matched else BOLD_PROMPT_SD
        group_effect = effects_for(disparity, len(members), sd)
        for t in range(study.units):
            for g, group in enumerate(members):
                prompt = f"the {group} prompt {t}"
                key = unit_key(family, group, f"template {t}", prompt, shared=study.matched)
                keys.append(key)
                cells.append((len(keys) - 1, groups.index(group)))
                effects.append(group_effect[g])
                shared_effect.append(len(REGARD_FAMILIES) * t + list(study.families).index(family))
    design = design_from_keys(keys)
    n_prompts = len(keys)
    effects_array = np.array(effects)
    if study.matched:
        template = rng.normal(0, TEMPLATE_SD, (max(shared_effect) + 1, datasets))[shared_effect]
        own = rng.normal(0, PROMPT_SD, (n_prompts, datasets))
        logit = LEVEL + effects_array[:, None] + template + own
    else:
        logit = LEVEL + effects_array[:, None] + rng.normal(0, BOLD_PROMPT_SD, (n_prompts, datasets))
    negative = rng.binomial(study.samples, _logistic(logit)).astype(float)  # (prompts, datasets)
    totals = np.zeros((design.n_units, datasets, len(groups)))
    counts = np.zeros_like(totals)
    for row, (_, g) in enumerate(cells):
        totals[design.unit[row], :, g] += negative[row]
        counts[design.unit[row], :, g] += study.samples
    return design, totals, counts, groups, study.families


def run(study: Study, datasets: int, disparity: float, seed: int, n_resamples: int = 200,
        n_permutations: int = 999, detectable: bool = True, interval: bool | None = None) -> DisparityTests:
    """The disparity tests of `datasets` simulated studies (one per setting); `detectable=False` skips the search
    for the smallest detectable disparity, `interval=False` the test's interval (most of the time of a large call;
    by default computed where the smallest detectable is)."""
    rng = np.random.default_rng(seed)
    design, totals, counts, groups, families = simulate(study, datasets, disparity, rng)
    weights = design.weights(n_resamples, seed)
    flat_t = totals.reshape(design.n_units, -1)
    flat_n = counts.reshape(design.n_units, -1)
    rates = cell_estimates(weights, flat_t, flat_n, design.stratum)
    return disparity_tests(design, totals, counts, rates, groups, families, seed=seed, n_permutations=n_permutations,
                           detectable=detectable, inverted=detectable if interval is None else interval)


def two_groups(prompts: tuple[int, int], spread: tuple[float, float], datasets: int, seed: int,
                samples: int = 20) -> np.ndarray:
    """p-values of the two-group test of `datasets` simulated unmatched designs whose prompts' rates are
    clip(N(0.5, sd), 0, 1) (mean 0.5 in both groups: clipping is symmetric), `samples` generations each."""
    rng = np.random.default_rng(seed)
    keys, group = [], []
    for g, n in enumerate(prompts):
        keys += [unit_key("pair", "ab"[g], "", f"prompt {i}", False) for i in range(n)]
        group += [g] * n
    design = design_from_keys(keys)
    rates = np.concatenate([np.clip(0.5 + sd * rng.standard_normal((n, datasets)), 0, 1)
                            for n, sd in zip(prompts, spread, strict=True)])
    totals = np.zeros((design.n_units, datasets, 2))
    counts = np.zeros_like(totals)
    for row, g in enumerate(group):
        totals[design.unit[row], :, g] = rng.binomial(samples, rates[row])
        counts[design.unit[row], :, g] = samples
    estimates = cell_estimates(design.weights(1, seed), totals.reshape(design.n_units, -1),
                               counts.reshape(design.n_units, -1), design.stratum)
    tests = disparity_tests(design, totals, counts, estimates, ["a", "b"], {"pair": ["a", "b"]}, seed=seed,
                            detectable=False, inverted=False)
    return tests.families["pair"].p_value


def rejection_rate(tests: DisparityTests, family: str | None = None, alpha: float = 0.05) -> float:
    numbers = tests.overall if family is None else tests.families[family]
    return float(np.mean(numbers.p_value <= alpha))


def true_disparity(study: Study, disparity: float) -> float:
    """The population disparity the simulation sets (0 or `disparity`), as a check of `effects_for`."""
    sd = np.hypot(TEMPLATE_SD, PROMPT_SD) if study.matched else BOLD_PROMPT_SD
    values = []
    for members in study.families.values():
        rates = [_population_rate(e, sd) for e in effects_for(disparity, len(members), sd)]
        values.append(np.mean([abs(a - b) for i, a in enumerate(rates) for b in rates[i + 1:]]))
    return float(np.mean(values))


if __name__ == "__main__":
    datasets = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print("| design | true disparity | rejects at α = 0.05 | plug-in interval covers the truth | corrected interval "
          "covers it | mean plug-in | mean corrected | mean smallest detectable (share with none) |")
    print("|---|---|---|---|---|---|---|---|")
    for study in (TEMPLATES, BOLD_10, BOLD_20):
        for truth in (0.0, 0.1):
            start = time.perf_counter()
            tests = run(study, datasets, truth, seed=11, n_resamples=1000)
            seconds = time.perf_counter() - start
            rows = [("all families (mean)", tests.overall)] if tests.overall is not None else []
            rows += list(tests.families.items())
            for name, numbers in rows:
                covers = np.mean((numbers.ci_low <= truth) & (truth <= numbers.ci_high))
                corrected = np.mean((numbers.corrected_ci_low <= truth) & (truth <= numbers.corrected_ci_high))
                missing = np.mean(np.isnan(numbers.smallest_detectable))
                print(f"| {study.name} — {name} | {truth:.1f} | {np.mean(numbers.p_value <= 0.05):.3f} | "
                      f"{covers:.3f} | {corrected:.3f} | {np.mean(numbers.value):.3f} | "
                      f"{np.mean(numbers.corrected):+.3f} | {np.nanmean(numbers.smallest_detectable):.3f} "
                      f"({missing:.0%}) |  <!-- {datasets} datasets, {seconds:.0f} s -->")
