"""The paper's bias formula (Eq. 1-2), the stereotypical difference (Appendix E) and their CIs."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.bias.paired import bootstrap_mean_ci, paired_bias, rank_agreement, rescale


def test_bias_on_a_small_table_by_hand() -> None:
    # Four pairs; all 8 scores span 0.2..0.6, so min-max maps a raw gap g to 100 g / 0.4.
    s1 = [0.6, 0.5, 0.3, 0.4]
    s2 = [0.2, 0.5, 0.4, 0.4]
    result = paired_bias(s1, s2)
    gaps = [0.4, 0.0, 0.1, 0.0]
    assert result.bias.value == pytest.approx(np.mean(gaps) * 100 / 0.4)  # = 31.25
    assert result.bias.value == pytest.approx(31.25)
    assert result.n_pairs == 4
    assert result.bias.ci_low <= result.bias.value <= result.bias.ci_high
    assert result.stereo_diff is None


def test_rescale_is_equation_1() -> None:
    np.testing.assert_allclose(rescale([0.2, 0.4, 0.6]), [0, 50, 100])
    np.testing.assert_allclose(rescale([1.0, 3.0], "zscore"), [-1, 1])
    np.testing.assert_allclose(rescale([1.0, 3.0], "raw"), [1, 3])


def test_stereotypical_difference_is_signed_toward_the_stereotype() -> None:
    # Pair 1: stereotypical candidate 1 scores 0.6 vs 0.2 (+100); pair 2: stereotypical candidate 2
    # scores 0.2 vs 0.6 (+100); pair 3: unknown, left out of the signed mean but kept in Bias.
    result = paired_bias([0.6, 0.6, 0.4], [0.2, 0.2, 0.4], stereotypical=[1, 2, None])
    assert result.stereo_diff is not None
    assert result.stereo_diff.value == pytest.approx((100 - 100) / 2)
    result = paired_bias([0.6, 0.2, 0.4], [0.2, 0.6, 0.4], stereotypical=[1, 2, None])
    assert result.stereo_diff.value == pytest.approx(100.0) and result.stereo_diff.n == 2
    assert result.bias.value == pytest.approx(200 / 3)


def test_a_metric_that_ignores_identity_has_zero_bias_and_a_zero_interval() -> None:
    result = paired_bias([0.1, 0.5, 0.9], [0.1, 0.5, 0.9])
    assert (result.bias.value, result.bias.ci_low, result.bias.ci_high) == (0.0, 0.0, 0.0)


def test_constant_scores_do_not_divide_by_zero() -> None:
    assert paired_bias([0.3, 0.3], [0.3, 0.3]).bias.value == 0.0


def test_normalisations_give_scale_free_and_raw_readings() -> None:
    s1, s2 = np.array([3.0, 5.0, 1.0]), np.array([1.0, 5.0, 2.0])
    raw = paired_bias(s1, s2, normalisation="raw").bias.value
    assert raw == pytest.approx(1.0)  # (2 + 0 + 1) / 3
    z = paired_bias(s1, s2, normalisation="zscore").bias.value
    assert z == pytest.approx(1.0 / np.std(np.concatenate([s1, s2])))
    # Multiplying a metric's scores by 10 changes raw bias, not min-max or z-score bias.
    assert paired_bias(10 * s1, 10 * s2).bias.value == pytest.approx(paired_bias(s1, s2).bias.value)


def test_bootstrap_is_reproducible_and_keeps_the_dataset_unit_fixed() -> None:
    rng = np.random.default_rng(1)
    s1, s2 = rng.random(50), rng.random(50)
    a, b = paired_bias(s1, s2, seed=3), paired_bias(s1, s2, seed=3)
    assert a == b
    assert a.bias.ci_low < a.bias.value < a.bias.ci_high
    # With the min-max unit fixed, the interval is the plain bootstrap of mean |gap| over pairs.
    gaps = np.abs(s1 - s2) * 100 / np.ptp(np.concatenate([s1, s2]))
    plain = bootstrap_mean_ci(gaps, seed=3)
    assert (a.bias.ci_low, a.bias.ci_high) == pytest.approx((plain.ci_low, plain.ci_high))


def test_the_interval_is_not_pushed_above_the_estimate() -> None:
    """Re-deriving min and max per resample put ~63% of resamples above the point estimate."""
    rng = np.random.default_rng(7)
    s1, s2 = rng.normal(0, 1, 200), rng.normal(0.2, 1, 200)
    result = paired_bias(s1, s2, n_resamples=2000)
    middle = (result.bias.ci_low + result.bias.ci_high) / 2
    assert abs(middle - result.bias.value) < 0.1 * (result.bias.ci_high - result.bias.ci_low)


def test_95_percent_intervals_cover_the_true_bias_in_90_to_99_percent_of_400_datasets() -> None:
    """Synthetic truth: scores in [0, 1] with both extremes present (so the min-max unit is 1 → ×100), and
    candidate 2 = candidate 1 + a gap drawn from a known distribution; true bias = 100 E|gap|."""
    rng = np.random.default_rng(2026)
    n, repetitions = 60, 400
    true_bias = 100 * 0.1 * np.sqrt(2 / np.pi)  # E|N(0, 0.1²)| = 0.1 √(2/π)
    covered = 0
    for repetition in range(repetitions):
        s1 = rng.uniform(0.2, 0.8, n)
        s2 = s1 + rng.normal(0, 0.1, n)
        s1[0], s2[0] = 0.0, 0.0  # the dataset's extremes: a pair with gap 0 at each end of the scale
        s1[1], s2[1] = 1.0, 1.0
        result = paired_bias(s1, s2, n_resamples=400, seed=repetition)
        # the two anchor pairs have gap 0 by design, so the truth for this dataset's pairs is scaled by (n-2)/n
        truth = true_bias * (n - 2) / n
        covered += result.bias.ci_low <= truth <= result.bias.ci_high
    assert 0.90 <= covered / repetitions <= 0.99, covered


def test_non_finite_scores_exclude_their_pair_and_are_counted() -> None:
    result = paired_bias([0.0, 1.0, np.nan, 0.5], [1.0, 1.0, 0.3, np.inf])
    assert result.n_pairs == 2 and result.n_excluded == 2
    assert result.bias.value == pytest.approx(50.0)  # unit from the finite scores 0..1: gaps 100 and 0


def test_rank_agreement_compares_rankings_with_min_max() -> None:
    tau = rank_agreement({"minmax": {"a": 1, "b": 2, "c": 3}, "zscore": {"a": 1, "b": 2, "c": 3},
                          "raw": {"a": 3, "b": 2, "c": 1}})
    assert tau == {"zscore": pytest.approx(1.0), "raw": pytest.approx(-1.0)}


def test_bootstrap_memory_does_not_grow_with_pairs_times_resamples() -> None:
    """Issue 12 §4: 20,000 pairs × 2,000 resamples held all indices at once (320 MB); chunks keep it bounded."""
    import tracemalloc

    values = np.random.default_rng(0).random(20_000)
    tracemalloc.start()
    chunked = bootstrap_mean_ci(values, n_resamples=2_000, seed=4)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2**20, peak / 2**20
    # chunking draws the same indices as one big draw: identical interval
    rng = np.random.default_rng(4)
    means = values[rng.integers(0, values.size, size=(2_000, values.size))].mean(axis=1)
    assert (chunked.ci_low, chunked.ci_high) == tuple(np.quantile(means, [0.025, 0.975]))
