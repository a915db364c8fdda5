"""A run's own numbers as its study page computes them: the design's estimator and interval for each cell, and each
disparity's test, bias-corrected estimate and smallest detectable disparity (`fairness_core.bias.disparity`).

One number, one interval: the decoding page, its CLI, Compare's per-run columns and the report all show a decoding
run's rates and disparities from the same call on the same sums — units keyed by text and drawn in sorted order
(`bias.cluster.design_from_keys`), the study's bootstrap (templates whole, other prompts within their group;
as many resamples as the run's settings say — `reading.settings`: recorded with the run by the sweep that made it,
else 1,000 — seeded with the run's own seed, as the page seeds its summary), its rates at the run's thresholds, the
same permutation draws. A comparison's *differences* keep their own paired Poisson bootstrap (`reading.intervals`):
that is what lets two runs that share only some prompts be resampled together.

Runs read here: generation runs of the decoding page (sweeps and live moves) grouped by the default keys (family,
group). Other kinds, CAIRO runs (Eq. 1 has its own design-based interval on CAIRO's page) and a comparison grouped by
other fields keep the comparison's bootstrap for their per-run columns.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairness_core.bias.cluster import design_from_keys, percentile_interval
from fairness_core.bias.disparity import POWER, cell_estimates, disparity_tests
from fairness_core.reading.rows import RunRows, is_cairo
from fairness_core.reading.settings import run_seed as seed_of

ALL_FAMILIES = "all families"
#: the per-run columns the design adds to a disparity row (NaN elsewhere)
TEST_COLUMNS = ("corrected", "corrected_ci_low", "corrected_ci_high", "p_value", "smallest_detectable", "interval_low",
                "interval_high", "p_adjusted")
COLUMNS = ["arm", "metric", "family", "group", "estimate", "ci_low", "ci_high", *TEST_COLUMNS]


def run_seed(rows: RunRows) -> int:
    """The seed the run was generated with (its page seeds the summary's bootstrap with it), 0 if none is recorded."""
    return seed_of(rows.info)


def reads_by_design(rows: RunRows) -> bool:
    """Whether the run's per-run numbers come from its study's design (see the module docstring)."""
    return (rows.info.kind == "generation" and not is_cairo(rows.info) and list(rows.keys) == ["family", "group"]
            and not rows.sums.empty)


def design_numbers(rows: RunRows, power: float = POWER) -> pd.DataFrame | None:
    """One row per (arm, metric, family, group) cell and per (arm, disparity, family) — family "all families" for
    the mean over families — with the estimate and interval the study page shows, and for a disparity its
    bias-corrected estimate, permutation p-value and smallest detectable disparity (at `power`; the page's is at
    80%); None for a run not read by its design. Computed once per read run and power, with the resamples its
    settings say (`rows.settings`)."""
    found: dict[float, pd.DataFrame] = getattr(rows, "_design_numbers", {})
    cached = found.get(float(power))
    if cached is not None:
        return cached if not cached.empty or reads_by_design(rows) else None
    if not reads_by_design(rows):
        return None
    seed = run_seed(rows)
    sums = rows.sums
    design = design_from_keys(sums["unit"].astype(str).tolist())
    weights = design.weights(rows.settings.n_resamples, seed)
    arms = [arm.key for arm in rows.arms if arm.key in set(sums["arm"])]
    arm_index = {key: k for k, key in enumerate(arms)}
    labels = {arm.key: arm.label for arm in rows.arms}
    unit = design.unit
    records: list[dict[str, Any]] = []
    null_means: dict[tuple[str, str, str], dict[tuple[str, str], float]] = {}
    for metric, part in sums.groupby("metric", sort=True):
        index = part.index.to_numpy()
        cells = (part["family"].astype("string").fillna("\u2205") + "\u241f"
                 + part["group"].astype("string").fillna("\u2205")).to_numpy(dtype=object)
        order = sorted(set(cells))
        position = {c: i for i, c in enumerate(order)}
        cell = np.array([position[c] for c in cells], dtype=np.int64)
        groups = [c.split("\u241f", 1)[1] for c in order]
        family_of = [c.split("\u241f", 1)[0] for c in order]
        shape = (design.n_units, len(arms), len(order))
        totals, counts = np.zeros(shape), np.zeros(shape)
        k = part["arm"].map(arm_index).to_numpy()
        np.add.at(totals, (unit[index], k, cell), part["total"].to_numpy(float))
        np.add.at(counts, (unit[index], k, cell), part["n"].to_numpy(float))
        estimates = cell_estimates(weights, totals.reshape(design.n_units, -1), counts.reshape(design.n_units, -1),
                                   design.stratum)
        low, high = percentile_interval(estimates.replicates)
        point = estimates.point.reshape(len(arms), len(order))
        low, high = low.reshape(point.shape), high.reshape(point.shape)
        for a, arm in enumerate(arms):
            for c in range(len(order)):
                if counts[:, a, c].sum() > 0:
                    records.append({"arm": arm, "metric": metric, "family": family_of[c], "group": groups[c],
                                    "estimate": point[a, c], "ci_low": low[a, c], "ci_high": high[a, c]})
        statistic = next((s for s in rows.statistics if s.metric == metric and s.how == "pairwise"), None)
        if statistic is None:
            continue
        families: dict[str, list[str]] = {}
        for family, group in zip(family_of, groups, strict=True):
            if family != "\u2205":
                families.setdefault(family, []).append(group)
        # a group name may recur in two families: the disparity's cells are (family, group), named uniquely
        tests = disparity_tests(design, totals, counts, estimates, order,
                                {f: [f"{f}\u241f{g}" for g in members] for f, members in families.items()}, seed=seed,
                                power=power)
        found = dict(tests.families)
        if tests.overall is not None:
            found[ALL_FAMILIES] = tests.overall
        for family, numbers in tests.families.items():
            for a, arm in enumerate(arms):
                null_means[(arm, statistic.name, family)] = {
                    (x.split("\u241f", 1)[1], y.split("\u241f", 1)[1]): float(m[a])
                    for (x, y), m in numbers.pair_null_means.items()}
        for family, numbers in found.items():
            for a, arm in enumerate(arms):
                values = numbers.at(a)
                records.append({"arm": arm, "metric": statistic.name, "family": family, "group": None,
                                "estimate": values["value"], "ci_low": values["ci_low"], "ci_high": values["ci_high"],
                                **{c: values[c] for c in TEST_COLUMNS}})
    out = pd.DataFrame(records, columns=COLUMNS)
    out["arm_label"] = out["arm"].map(labels)
    rows._design_numbers = {**found, float(power): out}  # type: ignore[attr-defined]
    rows._pair_null_means = null_means  # type: ignore[attr-defined]
    return out


def smallest_detectable(rows: RunRows, arm: str, statistic: str, family: str | None, power: float = POWER
                        ) -> float | None:
    """The smallest true disparity of `statistic` the run's own permutation test detects with `power` at its size
    (for `family`, or over its families: None or "all families"), as its page computes it
    (`bias.disparity`): the one figure the page, its CLI, Compare, the report and the planner show for it (issue
    42 §1: one number, one method). None where the run is not read by its design, the disparity is not tested
    there, or no disparity up to 1 is detected with that power."""
    numbers = design_numbers(rows, power)
    if numbers is None:
        return None
    tested = numbers[(numbers["arm"] == arm) & (numbers["metric"] == statistic) & numbers["group"].isna()]
    wanted = ALL_FAMILIES if family in (None, ALL_FAMILIES) else family
    if wanted == ALL_FAMILIES and len(tested) == 1:  # one family of two or more groups: its figure is the run's
        wanted = str(tested["family"].iloc[0])
    row = tested[tested["family"] == wanted]
    if row.empty:
        return None
    value = float(row["smallest_detectable"].iloc[0])
    return value if np.isfinite(value) else None


def pair_null_means(rows: RunRows, arm: str, statistic: str, family: str) -> dict[tuple[str, str], float]:
    """Per pair of groups (names in name order) of a family, the null mean of |Δ*| the arm's correction used
    (`bias.disparity.folded_correction`); empty where the run is not read by its design."""
    if design_numbers(rows) is None:
        return {}
    return getattr(rows, "_pair_null_means", {}).get((arm, statistic, family), {})
