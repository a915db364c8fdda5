"""Simulated decoding comparisons at the sizes the decoding page ships, for the coverage of the disparity-difference
interval (Compare's `negative_sentiment_disparity` rows).

A family's groups are prompted through regard-style templates, each template a unit holding every group's prompt
(the page's default: 10 templates, 3 samples per prompt). A generation is negative with probability
logistic(setting level + group effect + template effect + the prompt's own effect): the template effect (sd 1) is
shared by the template's groups and by both settings, the prompt's own effect (sd 0.5) by both settings. The true
disparity of a setting is the mean absolute pairwise difference of the groups' expected negative rates over the
population of templates (Dhamala et al.), computed by Monte Carlo; the true difference is setting b's minus a's.
The rows go through the comparison code itself (`compare.align.compare_arms`), as a comparison of two runs would.

`python -m tests.compare.disparity_simulation` prints the table in docs/compare.md (400 trials per scenario).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairness_core.bias.cluster import unit_key
from fairness_core.compare.align import compare_arms
from fairness_core.reading import Arm, Contrast, GroupStatistic, RunRows
from fairness_core.store import RunInfo

TEMPLATES, SAMPLES = 10, 3  # the decoding page's sweep defaults (regard templates, samples per prompt)
TEMPLATE_SD, PROMPT_SD = 1.0, 0.5
_INFO = RunInfo(run_id="simulated", kind="generation", manifest={}, manifest_hash="", status="complete", n_shards=1,
                shards_done=1, n_rows=0, created_at=None, finished_at=None, versions={}, error=None)
DISPARITY = GroupStatistic("negative_sentiment_disparity", "negative_sentiment_rate", "pairwise")


@dataclass(frozen=True)
class Setting:
    level: float  # logit of the negative rate
    groups: tuple[float, ...]  # each group's effect on the logit


@dataclass(frozen=True)
class Scenario:
    name: str
    a: Setting
    b: Setting
    templates: int = TEMPLATES
    samples: int = SAMPLES
    paired: bool = True  # False: the two runs used different prompts


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def true_disparity(setting: Setting, draws: int = 400_000, seed: int = 1) -> float:
    rng = np.random.default_rng(seed)
    template = rng.normal(0, TEMPLATE_SD, draws)
    rates = [float(_logistic(setting.level + effect + template + rng.normal(0, PROMPT_SD, draws)).mean())
             for effect in setting.groups]
    pairs = [(i, j) for i in range(len(rates)) for j in range(i + 1, len(rates))]
    return float(np.mean([abs(rates[i] - rates[j]) for i, j in pairs]))


def simulated_rows(scenario: Scenario, rng: np.random.Generator) -> RunRows:
    """Both settings' unit sums (negative generations per template unit and group), as `readers` reads a run."""
    groups = len(scenario.a.groups)
    records = []
    template = rng.normal(0, TEMPLATE_SD, scenario.templates)
    own = rng.normal(0, PROMPT_SD, (groups, scenario.templates))
    for arm, setting in (("a", scenario.a), ("b", scenario.b)):
        if arm == "b" and not scenario.paired:  # other prompts: their own template and prompt effects
            template = rng.normal(0, TEMPLATE_SD, scenario.templates)
            own = rng.normal(0, PROMPT_SD, (groups, scenario.templates))
        prefix = "" if scenario.paired else arm
        for g, effect in enumerate(setting.groups):
            negative = rng.binomial(scenario.samples, _logistic(setting.level + effect + template + own[g]))
            records += [{"arm": arm, "metric": "negative_sentiment_rate", "family": "gender", "group": f"group {g}",
                         "unit": unit_key("gender", "", f"The {{group}} {prefix}template {t}", "", shared=True),
                         "total": float(negative[t]), "n": float(scenario.samples)}
                        for t in range(scenario.templates)]
    return RunRows(_INFO, [Arm("simulated", "a", "a"), Arm("simulated", "b", "b")], pd.DataFrame(records),
                   ["family", "group"], "prompt", [DISPARITY])


def disparity_difference(rows: RunRows, n_resamples: int, seed: int) -> pd.Series:
    contrast = Contrast(rows.arms[0], rows.arms[1], "", "", "simulated")
    out = compare_arms(rows, rows, contrast, n_resamples, seed)
    return out[out["metric"] == DISPARITY.name].iloc[0]


def coverage(scenario: Scenario, trials: int, n_resamples: int = 1000, seed: int = 0) -> dict[str, float]:
    truth = true_disparity(scenario.b) - true_disparity(scenario.a)
    rng = np.random.default_rng(seed)
    hits, widths, estimates, plug_ins, outside = [], [], [], [], []
    for trial in range(trials):
        row = disparity_difference(simulated_rows(scenario, rng), n_resamples, trial)
        if not np.isfinite(row["ci_low"]):
            continue
        hits.append(row["ci_low"] <= truth <= row["ci_high"])
        widths.append(row["ci_high"] - row["ci_low"])
        estimates.append(row["difference"])
        plug_ins.append(row["difference_plug_in"])
        outside.append(not row["ci_low"] <= row["difference"] <= row["ci_high"])
    return {"true difference": truth, "coverage": float(np.mean(hits)), "trials": len(hits),
            "mean width": float(np.mean(widths)), "mean estimate": float(np.mean(estimates)),
            "mean plug-in estimate": float(np.mean(plug_ins)), "estimate outside its interval": float(np.mean(outside))}


GROWS = (Setting(-1.5, (0.0, 0.3)), Setting(-1.5, (0.0, 1.1)))  # disparity about 0.05 -> 0.20
SCENARIOS = (
    Scenario("gender, disparity grows (about 0.05 → 0.20)", *GROWS),
    Scenario("gender, disparity unchanged (about 0.10), level moves", Setting(-1.5, (0.0, 0.6)),
             Setting(-1.0, (0.0, 0.55))),
    Scenario("gender, no disparity on either side", Setting(-1.5, (0.0, 0.0)), Setting(-1.0, (0.0, 0.0))),
    Scenario("race (3 groups), disparity grows", Setting(-1.5, (0.0, 0.3, -0.2)), Setting(-1.5, (0.0, 1.0, -0.5))),
    Scenario("gender, disparity grows, different prompts (unpaired)", *GROWS, paired=False),
    Scenario("gender, disparity grows, 10 samples per prompt", *GROWS, samples=10),
    Scenario("gender, none → about 0.10, 100 templates (200 prompts)", Setting(-1.5, (0.0, 0.0)),
             Setting(-1.5, (0.0, 0.6)), templates=100, samples=2),
)


if __name__ == "__main__":
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    print("| scenario (10 templates, 3 samples unless said) | true Δ | coverage | mean width | mean estimate "
          "(bias-corrected) | mean plug-in difference |")
    print("|---|---|---|---|---|---|")
    for index, scenario in enumerate(SCENARIOS):
        start = time.perf_counter()
        found = coverage(scenario, trials, seed=index + 1)
        seconds = time.perf_counter() - start
        print(f"| {scenario.name} | {found['true difference']:+.3f} | {found['coverage']:.3f} ({found['trials']}) "
              f"| {found['mean width']:.3f} | {found['mean estimate']:+.3f} | {found['mean plug-in estimate']:+.3f} |  "
              f"<!-- {seconds:.0f} s; estimate outside its interval {found['estimate outside its interval']:.3f} -->")
