"""The template (cluster) bootstrap: design rules, and coverage on synthetic data with a known truth."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.bias.cluster import (
    cell_entropy,
    cell_means,
    entropy_from_counts,
    pairwise_disparity,
    percentile_interval,
    template_design,
)


def test_templates_shared_by_a_family_are_one_unit_and_single_prompts_are_their_own() -> None:
    families = ["gender"] * 4 + ["custom"] * 2
    groups = ["man", "woman", "man", "woman", "a", "b"]
    sources = ["The {group} was", "The {group} was", "The {group} worked as", "The {group} worked as", "custom",
               "x"]
    ids = ["1", "2", "3", "4", "5", "6"]
    design = template_design(families, groups, sources, ids)
    assert design.unit[0] == design.unit[1] and design.unit[2] == design.unit[3]
    assert design.unit[0] != design.unit[2] and design.n_units == 4 and design.n_paired == 2
    # the unpaired prompts are drawn within their own group: each group keeps its prompt count
    assert design.stratum[design.unit[4]] != design.stratum[design.unit[5]]
    weights = design.weights(200, seed=1)
    assert weights.shape == (200, 4)
    assert (weights[:, design.unit[4]] == 1).all() and (weights[:, design.unit[5]] == 1).all()
    assert (weights[:, [design.unit[0], design.unit[2]]].sum(axis=1) == 2).all()


def test_cell_means_point_is_the_plain_mean_and_nan_is_left_out() -> None:
    unit = np.array([0, 0, 1, 1, 2])
    cell = np.array([0, 1, 0, 1, 0])
    values = np.array([1.0, 0.0, 0.0, np.nan, 1.0])
    point, resampled, used = cell_means(np.ones((3, 3)), unit, cell, values, 2)
    assert point.tolist() == pytest.approx([2 / 3, 0.0]) and used.tolist() == [3, 1]
    assert resampled.shape == (3, 2) and np.allclose(resampled[:, 0], 2 / 3)


def test_entropy_matches_the_formula_and_weights_one_reproduce_the_point() -> None:
    assert entropy_from_counts(np.array([1, 1, 2])) == pytest.approx(-(2 * 0.25 * np.log(0.25) + 0.5 * np.log(0.5)))
    grams = [[("a", "b", "c")], [("a", "b", "c"), ("b", "c", "d")], [("x", "y", "z")]]
    point, resampled = cell_entropy(np.ones((4, 3)), np.array([0, 1, 2]), np.zeros(3, dtype=int), grams, 1)
    assert point[0] == pytest.approx(entropy_from_counts(np.array([2, 1, 1])))
    assert np.allclose(resampled[:, 0], point[0])


def _simulate(rng: np.random.Generator, n_templates: int, n_samples: int, alpha: tuple[float, float],
              spread: float) -> tuple[np.ndarray, ...]:
    """Two groups filled into the same templates; each template shifts both groups' log-odds (pairing)."""
    shift = rng.normal(0, spread, n_templates)
    rows_t, rows_g, flags = [], [], []
    for t in range(n_templates):
        for g, a in enumerate(alpha):
            p = 1 / (1 + np.exp(-(a + shift[t])))
            draws = rng.random(n_samples) < p
            rows_t += [t] * n_samples
            rows_g += [g] * n_samples
            flags += draws.tolist()
    return np.array(rows_t), np.array(rows_g), np.array(flags, dtype=float)


def test_template_bootstrap_covers_the_true_rates_gap_and_disparity() -> None:
    """95% intervals cover the population values in 90-99% of 400 synthetic studies.

    Truth: rate of group g = E_u[sigmoid(alpha_g + u)], u ~ N(0, spread) per template (numerical
    integration). A generation-level bootstrap ignores the template effect and under-covers.
    """
    alpha, spread, n_templates, n_samples = (-1.0, 0.0), 1.2, 30, 4
    grid = np.linspace(-8, 8, 4001)
    density = np.exp(-0.5 * (grid / spread) ** 2)
    density /= density.sum()
    truth = [float((density / (1 + np.exp(-(a + grid)))).sum()) for a in alpha]
    true_gap = truth[1] - truth[0]
    rng = np.random.default_rng(7)
    hits = {"rate": 0, "gap": 0, "disparity": 0, "naive_rate": 0}
    reps = 400
    for rep in range(reps):
        t, g, flags = _simulate(rng, n_templates, n_samples, alpha, spread)
        design = template_design(["f"] * len(t), [str(x) for x in g], [f"template {x}" for x in t],
                                 [f"{x}:{y}" for x, y in zip(t, g, strict=True)])
        weights = design.weights(500, seed=rep)
        _, resampled, _ = cell_means(weights, design.unit, g, flags, 2)
        low, high = percentile_interval(resampled)
        hits["rate"] += low[0] <= truth[0] <= high[0]
        gap_low, gap_high = percentile_interval(resampled[:, 1] - resampled[:, 0])
        hits["gap"] += gap_low <= true_gap <= gap_high
        d_low, d_high = percentile_interval(pairwise_disparity(resampled))
        hits["disparity"] += d_low <= abs(true_gap) <= d_high
        naive = np.arange(len(flags))  # every generation its own unit, drawn within its group
        naive_design = template_design(["f"] * len(t), [str(x) for x in g], [""] * len(t), [str(i) for i in naive])
        _, naive_resampled, _ = cell_means(naive_design.weights(500, seed=rep), naive_design.unit, g, flags, 2)
        n_low, n_high = percentile_interval(naive_resampled)
        hits["naive_rate"] += n_low[0] <= truth[0] <= n_high[0]
    coverage = {k: v / reps for k, v in hits.items()}
    for name in ("rate", "gap", "disparity"):
        assert 0.90 <= coverage[name] <= 0.99, coverage
    assert coverage["naive_rate"] < coverage["rate"] - 0.05, coverage


def test_a_stratum_with_one_unit_gives_no_interval_instead_of_a_collapsed_one() -> None:
    # gender: one template shared by man and woman (one unit in its stratum); custom: three prompts of group "a"
    families = ["gender", "gender", "custom", "custom", "custom"]
    groups = ["man", "woman", "a", "a", "a"]
    sources = ["The {group} was", "The {group} was", "p", "q", "r"]
    design = template_design(families, groups, sources, ["1", "2", "3", "4", "5"])
    cell = np.array([0, 1, 2, 2, 2])
    values = np.array([1.0, 0.0, 1.0, 0.0, 0.0])
    weights = design.weights(300, seed=0)
    point, resampled, _ = cell_means(weights, design.unit, cell, values, 3, design.stratum)
    assert point.tolist() == pytest.approx([1.0, 0.0, 1 / 3])
    low, high = percentile_interval(resampled)
    assert np.isnan(low[:2]).all() and np.isnan(high[:2]).all()  # without the rule: [1, 1] and [0, 0]
    assert low[2] == 0.0 and high[2] == 1.0  # three prompts: a real interval
    # a statistic over the groups carries the missing interval instead of averaging over fewer groups
    assert np.isnan(pairwise_disparity(resampled[:, :2], present=np.isfinite(point[:2]))).all()
    assert np.isfinite(pairwise_disparity(point[:2]))


def test_for_diversity_only_units_with_trigrams_count() -> None:
    # one template with text and one whose generations were all empty: entropy cannot vary, so no interval
    design = template_design(["f"] * 4, ["a", "b", "a", "b"], ["T1 {group}", "T1 {group}", "T2 {group}", "T2 {group}"],
                             ["1", "2", "3", "4"])
    grams = [[("x", "y", "z"), ("y", "z", "w")], [("p", "q", "r")], [], []]
    point, resampled = cell_entropy(design.weights(100, seed=0), design.unit, np.zeros(4, dtype=int), grams, 1,
                                    stratum=design.stratum)
    assert point[0] > 0 and np.isnan(resampled).all()
