"""The paired difference of a decoding measure between the system and its baseline, with Compare's machinery.

Both sides are generation sets (one system each: what a decoding request, a stored run or an import holds). They
are summed per (family, group, unit) exactly as Compare reads a generation run (`reading.rows.read_generation`):
a regard-style template shared by a family's groups, or a counterfactual prompt's variants, is one unit with all
its groups' prompts and samples; any other prompt is a unit of its own, keyed by family, group and text, so the two
sides' prompts meet. One Poisson bootstrap over the union of both sides' units weights a unit alike on both sides
(`reading.intervals`): what is hard for both moves both together, and the difference's interval is paired where the
units are shared (unpaired where they are not). The disparity of a family is Dhamala et al.'s mean absolute pairwise
difference of its groups' rates (`reading.statistics`), computed on the same replicate's group rates on each side;
"all families" is its mean over the families with two or more groups. Difference = system − baseline.

With the same seed these are Compare's numbers for two runs of one system each (`compare_runs` draws its weights
with seed + 1 for the first pair; tests/check/test_paired.py holds them equal).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairness_core.reading import SEP, CellMatrix, family_mean, group_statistic, percentile_bounds, poisson_weights
from fairness_core.scorers.base import Measure

ALL_FAMILIES = "all families"
ALL_GROUPS = "all groups"


def unit_sums(frame: pd.DataFrame, measure: Measure, threshold: float | None = None) -> pd.DataFrame:
    """family, group, unit, total (Σ values), n (generations) of one side; NaN scores left out."""
    if measure.column not in frame.columns or frame.empty:
        return pd.DataFrame(columns=["family", "group", "unit", "total", "n"])
    values = measure.values(frame[measure.column].to_numpy(dtype=float), threshold)
    data = pd.DataFrame({"family": frame["family"].astype(str).to_numpy(),
                         "group": frame["group"].astype(str).to_numpy(),
                         "source": frame["source"].fillna("").astype(str).to_numpy(),
                         "prompt": frame["prompt"].astype(str).to_numpy(), "value": values})
    data = data[np.isfinite(data["value"])]
    templated = data[data["source"].str.contains("{group}", regex=False)]
    shared = templated.groupby(["family", "source"])["group"].nunique()
    shared = set(shared[shared > 1].index)
    is_template = [(f, s) in shared for f, s in zip(data["family"], data["source"], strict=True)]
    data["unit"] = np.where(is_template, "template" + SEP + data["family"] + SEP + data["source"],
                            "prompt" + SEP + data["family"] + SEP + data["group"] + SEP + data["prompt"])
    return data.groupby(["family", "group", "unit"], as_index=False).agg(total=("value", "sum"),
                                                                          n=("value", "size"))


@dataclass(frozen=True)
class PairedDifference:
    baseline: float | None
    system: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    pairing: str
    n_units: int  # units behind the compared cells, both sides together
    n_shared: int
    missing_interval: str = ""


def _number(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def paired_difference(system: pd.DataFrame, baseline: pd.DataFrame, measure: Measure, target: str,
                      disparity: bool, threshold: float | None = None, n_resamples: int = 1000,
                      seed: int = 0) -> PairedDifference:
    """system − baseline of a family's disparity (`disparity`, target a family or "all families") or of a group's
    rate or mean (target a group or "all groups"), with the paired bootstrap interval (module docstring)."""
    sums_b, sums_s = unit_sums(baseline, measure, threshold), unit_sums(system, measure, threshold)
    cells = sorted(set(zip(sums_b["family"], sums_b["group"], strict=True))
                   & set(zip(sums_s["family"], sums_s["group"], strict=True)))
    if not cells:
        return PairedDifference(None, None, None, None, None, "no (family, group) in common", 0, 0,
                                "the two sides share no group")
    keep_b = sums_b[[c in set(cells) for c in zip(sums_b["family"], sums_b["group"], strict=True)]]
    keep_s = sums_s[[c in set(cells) for c in zip(sums_s["family"], sums_s["group"], strict=True)]]
    units = pd.Index(sorted(set(keep_b["unit"]) | set(keep_s["unit"])))
    cell_index = {cell: i for i, cell in enumerate(cells)}

    def matrix(frame: pd.DataFrame) -> CellMatrix:
        return CellMatrix.build(units.get_indexer(frame["unit"]),
                                np.array([cell_index[c] for c in zip(frame["family"], frame["group"], strict=True)],
                                         dtype=int),
                                frame["total"].to_numpy(float), frame["n"].to_numpy(float), len(units), len(cells))

    weights = poisson_weights(len(units), n_resamples, np.random.default_rng(seed))
    matrix_b, matrix_s = matrix(keep_b), matrix(keep_s)
    est_b, est_s = matrix_b.estimates(), matrix_s.estimates()
    rep_b, rep_s = matrix_b.replicates(weights), matrix_s.replicates(weights)
    units_b = keep_b.groupby(["family", "group"])["unit"].agg(frozenset)
    units_s = keep_s.groupby(["family", "group"])["unit"].agg(frozenset)
    if disparity:
        families = [target] if target != ALL_FAMILIES else list(dict.fromkeys(f for f, _ in cells))
        per_family = []
        for family in families:
            index = [cell_index[c] for c in cells if c[0] == family]
            if len(index) < 2:
                continue
            sides = []
            for est, rep, held in ((est_b, rep_b, units_b), (est_s, rep_s, units_s)):
                present = np.isfinite(est[index])
                enough = all(len(held[cells[i]]) >= 2 for i in index)
                replicates = group_statistic(rep[:, index], "pairwise", present) if enough else \
                    np.full(rep.shape[0], np.nan)
                sides.append((float(group_statistic(est[index], "pairwise", present)), replicates))
            per_family.append((sides, [cells[i] for i in index]))
        if not per_family:
            return PairedDifference(None, None, None, None, None, "", 0, 0,
                                    f"{target} has fewer than two groups on both sides, so no disparity")
        points = np.array([[s[0][0] for s, _ in per_family], [s[1][0] for s, _ in per_family]])
        present = np.isfinite(points)
        point_b, point_s = float(family_mean(points[0], present[0])), float(family_mean(points[1], present[1]))
        reps_b = family_mean(np.stack([s[0][1] for s, _ in per_family], axis=-1), present[0])
        reps_s = family_mean(np.stack([s[1][1] for s, _ in per_family], axis=-1), present[1])
        used = [c for _, members in per_family for c in members]
    else:
        used = [c for c in cells if c[1] == target] if target != ALL_GROUPS else list(cells)
        if not used:
            return PairedDifference(None, None, None, None, None, "", 0, 0, f"group {target!r} is not on both sides")
        index = [cell_index[c] for c in used]
        present_b, present_s = np.isfinite(est_b[index]), np.isfinite(est_s[index])
        point_b = float(family_mean(est_b[index], present_b))
        point_s = float(family_mean(est_s[index], present_s))
        reps_b, reps_s = family_mean(rep_b[:, index], present_b), family_mean(rep_s[:, index], present_s)
        if not all(len(held[c]) >= 2 for held in (units_b, units_s) for c in used):
            reps_b = reps_s = np.full(weights.shape[0], np.nan)
    side_b = frozenset().union(*(units_b[c] for c in used))
    side_s = frozenset().union(*(units_s[c] for c in used))
    shared = len(side_b & side_s)
    low, high = percentile_bounds((reps_s - reps_b)[:, None])
    if shared == len(side_b) == len(side_s):
        pairing = f"paired by {shared} unit(s)"
    elif shared == 0:
        pairing = "unpaired: no unit in common"
    else:
        pairing = f"partly paired: {shared} unit(s) in common ({len(side_b)} and {len(side_s)} in all)"
    missing = "" if np.isfinite(low[0]) else "a group has fewer than two resampled units on a side"
    return PairedDifference(_number(point_b), _number(point_s), _number(point_s - point_b), _number(low[0]),
                            _number(high[0]), pairing, len(side_b | side_s), shared, missing)
