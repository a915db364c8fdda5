"""The paired bias change (Eq. 1-2 on each side's own min-max unit, pairs resampled once for both sides): exact
values on a hand-checked example, and 95% coverage of a known difference at the size the page ships (396 pairs)."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.mitigation.summary import bias_change, changed_pairs, gaps


def test_each_side_is_eq_2_on_its_own_min_max_unit():
    before1, before2 = np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.5])  # unit 1: gaps 100, 100, 0
    after1, after2 = np.array([10.0, 12.0, 11.0]), np.array([12.0, 11.0, 11.0])  # unit 2: gaps 100, 50, 0
    np.testing.assert_allclose(gaps(before1, before2), [100, 100, 0])
    change = bias_change(before1, before2, after1, after2, n_resamples=200)
    assert change.before == pytest.approx(200 / 3) and change.after == pytest.approx(50)
    assert change.difference == pytest.approx(50 - 200 / 3)
    assert change.relative == pytest.approx((50 - 200 / 3) / (200 / 3))
    assert change.ci_low <= change.difference <= change.ci_high and change.n_pairs == 3


def test_a_pair_with_a_non_finite_score_on_either_side_is_left_out_of_both_and_counted():
    change = bias_change([0.0, 1.0, np.nan, 0.2], [1.0, 0.0, 0.3, 0.4], [0.0, 1.0, 0.5, 0.1], [1.0, 0.0, 0.5, np.inf],
                         n_resamples=50)
    assert change.n_pairs == 2 and change.n_excluded == 2


def test_the_paired_interval_covers_the_true_difference_at_396_pairs():
    """Simulated datasets whose true difference of mean |gap| is known; ~95% of intervals must contain it."""
    rng = np.random.default_rng(7)
    n, covered, trials = 396, 0, 300
    for _ in range(trials):
        base = rng.uniform(0, 1, n)
        gap_before = rng.gamma(2.0, 0.02, n)
        gap_after = gap_before * rng.uniform(0.2, 0.8, n)  # the adapter shrinks gaps, pair by pair (paired)
        before1, before2 = base + gap_before, base
        after1, after2 = base + gap_after, base
        # two pairs with gap 0 at scores 0 and 2 fix each side's min-max unit to 100 / 2 = 50 per score point
        before1[:2], before2[:2], after1[:2], after2[:2] = [0, 2], [0, 2], [0, 2], [0, 2]
        truth = 50 * (0.5 * 0.04 - 0.04) * (n - 2) / n  # gamma(2, 0.02) gaps have mean 0.04; after: half of it
        change = bias_change(before1, before2, after1, after2, n_resamples=400, seed=int(rng.integers(1 << 30)))
        covered += change.ci_low <= truth <= change.ci_high
    assert 0.90 <= covered / trials <= 0.99, covered / trials


def test_changed_pairs_lists_the_largest_changes_first():
    pairs = [{"item": f"p{i}", "attribute": "gender", "candidate1": "a", "candidate2": "b", "reference": "r"}
             for i in range(4)]
    rows = changed_pairs(pairs, [0, 1, 0, 0.5], [1, 0, 0.1, 0.5], [0, 1, 0, 0.5], [1, 1, 0.05, 0.5], limit=3)
    assert [r["item"] for r in rows] == ["p1", "p2", "p0"] and rows[0]["change"] == pytest.approx(-100)


def test_no_resamples_is_one_sentence_not_an_index_error():
    with pytest.raises(ValueError, match=r"^the paired bootstrap needs at least 1 resample \(got 0\)"):
        bias_change([1.0, 2.0, 3.0], [2.0, 3.0, 1.0], [1.0, 2.0, 3.0], [1.0, 2.5, 3.0], n_resamples=0)


def test_the_interval_of_the_change_holds_across_winobias_occupations():
    """Issue 42 §3: WinoBias pairs share occupations. Here the adapter shrinks each pair's gap by a factor that
    depends on the pair's two occupations (k = 0.5 + a_male + b_female + e, σ_a = σ_b = 0.1), so pairs about one
    occupation move together. The pair bootstrap (round 5) covers the true change 0.71 of the time; with the
    occupations (`factors`) the two-way interval covers 0.95 (the goal: >= 0.93), 1.9x as wide (2,000 datasets,
    docs/statistics.md). Here 200 datasets (s.e. ~0.016: the bound is the goal less one s.e.), the 396 type-1 dev
    pairs' own occupations."""
    from fairness_core.data import winobias
    from fairness_core.metric_bias import occupation_factors

    pairs = winobias.build("type1-dev").pairs
    factors = occupation_factors([p.item for p in pairs], [p.candidate1 for p in pairs])
    rng = np.random.default_rng(12)
    n, trials = len(pairs), 200
    covered = {"pairs": 0, "occupations": 0}
    widths = {"pairs": [], "occupations": []}
    truth = 50 * (0.5 * 0.04 - 0.04) * (n - 2) / n  # as above: the after side keeps half of the 0.04 mean gap
    for _ in range(trials):
        base = rng.uniform(0, 1, n)
        gap_before = rng.gamma(2.0, 0.02, n)
        shrink = 0.5 + rng.normal(0, 0.1, 20)[factors[0]] + rng.normal(0, 0.1, 20)[factors[1]] + rng.uniform(
            -0.2, 0.2, n)
        before1, before2, after1, after2 = base + gap_before, base.copy(), base + gap_before * shrink, base.copy()
        before1[:2], before2[:2], after1[:2], after2[:2] = [0, 2], [0, 2], [0, 2], [0, 2]
        for unit, given in (("pairs", None), ("occupations", factors)):
            change = bias_change(before1, before2, after1, after2, n_resamples=200, seed=1, factors=given)
            covered[unit] += change.ci_low <= truth <= change.ci_high
            widths[unit].append(change.ci_high - change.ci_low)
    print({k: v / trials for k, v in covered.items()}, np.mean(widths["occupations"]) / np.mean(widths["pairs"]))
    assert covered["occupations"] / trials >= 0.92, covered
    assert covered["pairs"] / trials <= 0.85, covered
    assert change.before_ci[0] <= change.before <= change.before_ci[1]
    assert change.to_json()["interval_unit"] == "the 20 + 20 WinoBias occupations (two-way clusters)"
