"""Eq. 1-5 on hand-computed values (no model)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairness_core.translation import weights as W


def test_eq4_entropy_of_full_distributions() -> None:
    steps = np.log(np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.25, 0.25, 0.5]]))
    np.testing.assert_allclose(W.step_entropies(steps), [math.log(2), 0.0, 1.5 * math.log(2)])


def test_eq1_uniform_is_the_mean_and_entropy_the_weighted_sum() -> None:
    assert W.direction_score([-1.0, -2.0], term_weighting="uniform") == pytest.approx(-1.5)
    assert W.direction_score([-1.0, -2.0], [0.5, 1.5], term_weighting="entropy") == pytest.approx(-3.5)
    assert math.isnan(W.direction_score([], term_weighting="uniform"))
    with pytest.raises(ValueError, match="entropies"):
        W.direction_score([-1.0], None, term_weighting="entropy")
    with pytest.raises(ValueError, match="term weighting"):
        W.direction_score([-1.0], term_weighting="idf")


def test_eq3_one_vs_rest_weights_by_hand() -> None:
    # r(A,B) = 4 / 5 = 0.8, r(A,C) = -1, r(B,C) = -0.8 (deviations worked out by hand)
    scores = np.array([[1, 1, 4], [2, 3, 3], [3, 2, 2], [4, 4, 1]], dtype=float)
    np.testing.assert_allclose(W.one_vs_rest_weights(scores), [-0.2, 0.0, -1.8], atol=1e-12)
    # Eq. 2 with those weights, segment by segment
    np.testing.assert_allclose(W.combine(scores, W.one_vs_rest_weights(scores)),
                               [-0.2 * 1 - 1.8 * 4, -0.2 * 2 - 1.8 * 3, -0.2 * 3 - 1.8 * 2, -0.2 * 4 - 1.8 * 1])


def test_eq3_rules_constant_direction_missing_scores_and_one_segment() -> None:
    scores = np.array([[1, 5, 2], [2, 5, 4], [3, 5, 6], [np.nan, 1, 1]])
    # the constant direction has no correlation (0); the row with a NaN does not enter the weights
    np.testing.assert_allclose(W.one_vs_rest_weights(scores), [1.0, 0.0, 1.0])
    assert np.isnan(W.combine(scores, [1.0, 0.0, 1.0])[3])
    with pytest.raises(ValueError, match="at least 2 segments"):
        W.one_vs_rest_weights(np.array([[1.0, 2.0], [np.nan, 1.0]]))
    np.testing.assert_allclose(W.direction_weights(scores, "uniform"), [1 / 3] * 3)


def test_eq5_tau_like_counts_metric_ties_as_discordant() -> None:
    metric = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}
    assert W.concordance(metric, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]) == (2, 2)
    assert W.kendall_tau_like(metric, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]) == 0.0
    five = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("a", "d")]
    assert W.kendall_tau_like(metric, five) == pytest.approx(0.2)
    assert W.kendall_tau_like(metric, [("b", "c")]) == -1.0  # a tie alone is all discordant
    assert math.isnan(W.kendall_tau_like({"a": float("nan"), "b": 1.0}, [("a", "b")]))


def test_pearson_abs() -> None:
    assert W.pearson_abs([1, 2, 3], [3, 2, 1]) == pytest.approx(1.0)
    assert W.pearson_abs([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
