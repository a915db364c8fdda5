"""Prompt-bootstrap intervals for what the search reports without one: Fig. 6's baseline (the mean r over
combinations, per size) and the rank agreement between the two metrics before/after CAIRO (Fig. 8's Kendall τ and
Spearman ρ of the systems' bias under the originals and under the size's chosen combinations).

Resampled as the design was sampled: per metric, the original prompt indices are redrawn with replacement within
each subgroup (the prompts were a seeded sample per subgroup), and one draw serves every prompt set (paraphrase i
rewrites original i) and every system (all systems saw the same prompts); each prompt keeps all its generations.
Per replicate the bias table is recomputed (Eq. 1 per system × set, or the pooled subgroup scores of the released
variant), then the baseline and τ/ρ; the chosen combinations stay those of the full data (the interval is for the
reported combination, not for the selection). 95% percentile intervals over the finite replicates.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.cairo.request import BiasTable, as_float
from fairness_core.cairo.search import (
    MetricSets,
    PooledSets,
    combination_vectors,
    combo_vector,
    indicator,
    pooled_vector,
    released_size,
    znormalise,
)

BOOTSTRAP = 200


@dataclass(frozen=True)
class PromptScores:
    """One metric's generation scores per prompt: sets × systems × original prompts (sum and count of scores)."""

    names: tuple[str, ...]
    systems: tuple[str, ...]
    groups: np.ndarray  # (n_prompts,) subgroup of each original prompt
    sums: np.ndarray  # (n_sets, n_systems, n_prompts)
    counts: np.ndarray  # (n_sets, n_systems, n_prompts); 0 where a prompt has no scored generation

    def replicate(self, draw: np.ndarray, pooled: bool) -> MetricSets | PooledSets:
        """The bias values of the resampled prompts `draw` (indices into the prompts, repeats allowed)."""
        subgroups = sorted(set(self.groups[draw]))
        sums, counts = self.sums[:, :, draw], self.counts[:, :, draw]
        if pooled:
            group_sums = np.stack([sums[:, :, self.groups[draw] == g].sum(axis=2) for g in subgroups], axis=2)
            group_counts = np.stack([counts[:, :, self.groups[draw] == g].sum(axis=2) for g in subgroups], axis=2)
            means = np.divide(group_sums, group_counts, out=np.zeros_like(group_sums), where=group_counts > 0)
            return PooledSets(self.names, means, group_counts)
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a cell with no scored prompt is NaN, as in the table
            prompt_means = sums / counts  # NaN where a prompt has no scored generation
            group_means = np.stack([np.nanmean(prompt_means[:, :, self.groups[draw] == g], axis=2)
                                    for g in subgroups], axis=2)
        values = np.abs(group_means.mean(axis=2, keepdims=True) - group_means).sum(axis=2)
        return MetricSets(self.names, values, np.isfinite(prompt_means).sum(axis=2).astype(float))


def prompt_scores(generations: pd.DataFrame, value: str, metric: str, names: tuple[str, ...],
                  systems: list[str]) -> PromptScores:
    """A metric's per-prompt score sums and counts from annotated generations (`task.annotate`)."""
    part = generations[generations["metric"] == metric].copy()
    part[value] = pd.to_numeric(part[value], errors="coerce")
    part = part.dropna(subset=[value])
    indices = sorted(part["orig_index"].unique())
    position = {index: i for i, index in enumerate(indices)}
    groups = part.drop_duplicates("orig_index").set_index("orig_index")["group"].reindex(indices).astype(str)
    sums = np.zeros((len(names), len(systems), len(indices)))
    counts = np.zeros_like(sums)
    set_index = {name: i for i, name in enumerate(names)}
    system_index = {name: i for i, name in enumerate(systems)}
    cells = part.groupby(["prompt_set", "system_name", "orig_index"])[value].agg(["sum", "count"])
    for (prompt_set, system, index), row in cells.iterrows():
        if prompt_set in set_index and system in system_index:
            sums[set_index[prompt_set], system_index[system], position[index]] = row["sum"]
            counts[set_index[prompt_set], system_index[system], position[index]] = row["count"]
    return PromptScores(names, tuple(systems), groups.to_numpy(), sums, counts)


def within_groups(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One bootstrap draw of prompt indices, with replacement within each subgroup."""
    return np.concatenate([rng.choice(np.flatnonzero(groups == g), size=int((groups == g).sum()))
                           for g in sorted(set(groups))])


def mean_r(a: MetricSets | PooledSets, b: MetricSets | PooledSets, size: int) -> float:
    """Fig. 6's baseline at one size: the mean r over the combinations the search considers."""
    if isinstance(a, PooledSets):
        return released_size(a, b, size).mean_r
    za, da = znormalise(combination_vectors(a, indicator(a.n_others, size)))
    zb, db = znormalise(combination_vectors(b, indicator(b.n_others, size)))
    defined = int(da.sum()) * int(db.sum())
    return float(za.sum(axis=0) @ zb.sum(axis=0)) / defined if defined else float("nan")


def _agreement(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from scipy import stats

    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    return float(stats.kendalltau(x, y).statistic), float(stats.spearmanr(x, y).statistic)


def _interval(values: list[float]) -> tuple[float | None, float | None]:
    finite = np.asarray([v for v in values if np.isfinite(v)])
    if len(finite) < 2:
        return None, None
    low, high = np.quantile(finite, [0.025, 0.975])
    return as_float(low), as_float(high)


def pair_uncertainty(table: BiasTable, generations: pd.DataFrame, value: str, pair: dict[str, Any],
                     combination: str = "weighted", n_boot: int = BOOTSTRAP, seed: int = 0) -> dict[str, Any]:
    """Intervals for one pair of the search output (`summary.pair_json`): per size the mean r and the τ/ρ of the
    chosen combinations, and τ/ρ of the originals."""
    sets_a, sets_b, systems = table.pair(pair["metric_a"], pair["metric_b"], combination)
    pooled = combination == "released"
    vector = pooled_vector if pooled else combo_vector
    scores_a = prompt_scores(generations, value, pair["metric_a"], sets_a.names, systems)
    scores_b = prompt_scores(generations, value, pair["metric_b"], sets_b.names, systems)
    combos = {row["size"]: ([sets_a.names.index(n) for n in row["combo_a"]],
                            [sets_b.names.index(n) for n in row["combo_b"]]) for row in pair["by_size"]}
    rng = np.random.default_rng(seed)
    means: dict[int, list[float]] = {size: [] for size in combos}
    after: dict[int, list[tuple[float, float]]] = {size: [] for size in combos}
    before: list[tuple[float, float]] = []
    for _ in range(n_boot):
        a = scores_a.replicate(within_groups(scores_a.groups, rng), pooled)
        b = scores_b.replicate(within_groups(scores_b.groups, rng), pooled)
        before.append(_agreement(vector(a, (0,)), vector(b, (0,))))
        for size, (combo_a, combo_b) in combos.items():
            means[size].append(mean_r(a, b, size))
            after[size].append(_agreement(vector(a, combo_a), vector(b, combo_b)))
    tau_before, rho_before = _interval([t for t, _ in before]), _interval([r for _, r in before])
    rows = []
    for size in combos:
        mean_low, mean_high = _interval(means[size])
        tau_low, tau_high = _interval([t for t, _ in after[size]])
        rho_low, rho_high = _interval([r for _, r in after[size]])
        rows.append({"size": size, "mean_r_low": mean_low, "mean_r_high": mean_high,
                     "kendall_tau_CAIRO_low": tau_low, "kendall_tau_CAIRO_high": tau_high,
                     "spearman_rho_CAIRO_low": rho_low, "spearman_rho_CAIRO_high": rho_high})
    return {"n_boot": n_boot, "combination": combination, "resampled": "original prompts within subgroups",
            "kendall_tau_original_low": tau_before[0], "kendall_tau_original_high": tau_before[1],
            "spearman_rho_original_low": rho_before[0], "spearman_rho_original_high": rho_before[1],
            "by_size": rows}


def add_uncertainty(payload: dict[str, Any], table: BiasTable, generations: pd.DataFrame, value: str,
                    combination: str = "weighted", n_boot: int = BOOTSTRAP, seed: int = 0) -> dict[str, Any]:
    """Attach `pair_uncertainty` to every pair of a search payload (key "uncertainty")."""
    for pair in payload["pairs"]:
        pair["uncertainty"] = pair_uncertainty(table, generations, value, pair, combination, n_boot, seed)
    return payload

