"""Simulated per-unit sums of a generation run where the truth is known (imported by the slices tests and by the
figures of docs/slices.md).

A run of `families` families × `groups` groups, each family with `templates` regard-style templates shared by its
groups (one unit each: every group's prompt from it and all samples), under `settings` decoding settings, `samples`
generations per (prompt, setting). A generation is "negative" with probability expit(base + template effect +
planted shift of its (group, setting)); template effects make units differ, as real templates do. With
`shared=False` each group has its own prompts instead (a unit per prompt: the permutation path)."""

from __future__ import annotations

import numpy as np
import pandas as pd

SEP = "\u241f"  # the unit key separator of fairness_core.bias.cluster (unit keys are text)


def simulated_sums(seed: int, families: int = 2, groups: int = 3, templates: int = 12, settings: int = 2,
                   samples: int = 4, base: float = -1.0, spread: float = 0.5,
                   shift: dict[tuple[str, str], float] | None = None, shared: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for f in range(families):
        family = f"family{f}"
        for t in range(templates):
            source = f"The {{group}} template {t}"
            template_effect = rng.normal(0.0, spread)
            for g in range(groups):
                group = f"{family}-group{g}"
                effect = template_effect if shared else rng.normal(0.0, spread)
                unit = SEP.join(("template", family, source)) if shared else \
                    SEP.join(("prompt", family, group, f"prompt {t}"))
                for s in range(settings):
                    setting = f"setting{s}"
                    logit = base + effect + (shift or {}).get((group, setting), 0.0)
                    negative = rng.binomial(samples, 1.0 / (1.0 + np.exp(-logit)))
                    rows.append((family, group, source if shared else "custom", setting, unit, float(negative),
                                 float(samples)))
    return pd.DataFrame(rows, columns=["family", "group", "source", "setting", "unit", "total", "n"])


def figures(runs: int = 400, planted_runs: int = 200) -> list[str]:
    """The figures of docs/slices.md ("Validated where the truth is known"): `python -m tests.slices.simulate`
    (a few minutes on one core)."""
    from fairness_core.slices import slice_cells, wilson

    attributes = ("family", "group", "source", "setting")
    out = []
    for name, shared, templates, start in (("fair data, shared templates", True, 12, 10_000),
                                           ("fair data, a unit per prompt", False, 8, 30_000)):
        flagged = tested = 0
        for seed in range(runs):
            sums = simulated_sums(start + seed, families=2, groups=3, templates=templates, settings=2, samples=4,
                                  shared=shared)
            table = slice_cells(sums, attributes, fdr=0.1, seed=seed, n_resamples=0, n_permutations=499)
            flagged += bool(table.cells["flagged"].any())
            tested += int(table.cells["p_value"].notna().sum())
        low, high = wilson(flagged / runs, runs)
        out.append(f"{name}: a cell flagged in {flagged} of {runs} runs = {flagged / runs:.2%} (95% {low:.1%}-"
                   f"{high:.1%}); {tested / runs:.0f} tested cells a run")
    planted = (("an intersection, marginal fair", {"group": "family0-group1", "setting": "setting0"},
                {("family0-group1", "setting0"): 1.2, ("family0-group1", "setting1"): -1.2},
                {"groups": 4, "templates": 16, "settings": 2}, ("group", "setting"), True, 20_000),
               ("a group with prompts of its own", {"group": "family0-group2"},
                {("family0-group2", "setting0"): 1.2}, {"groups": 4, "templates": 20, "settings": 1}, attributes,
                False, 40_000))
    for name, target, shift, shape, by, shared, start in planted:
        flagged = first = 0
        for seed in range(planted_runs):
            sums = simulated_sums(start + seed, families=1, samples=4, shift=shift, shared=shared, **shape)
            table = slice_cells(sums, by, fdr=0.1, seed=seed, n_resamples=200, n_permutations=499)
            cell = table.cells[table.cells["attributes"] == target].iloc[0]
            flagged += bool(cell["flagged"])
            first += bool(table.cells.iloc[0]["attributes"] == target and cell["flagged"])
        out.append(f"{name}: flagged in {flagged} of {planted_runs} runs ({flagged / planted_runs:.1%}), flagged and "
                   f"ranked first in {first} ({first / planted_runs:.1%})")
    return out


if __name__ == "__main__":
    print("\n".join(figures()))
