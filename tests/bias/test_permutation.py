"""The permutation null of group labels: arrangements stay within their exchange sets, sums and mid-p-values by
hand, and the threshold that says when a design cannot reject at all."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.bias.permutation import LabelBlocks, p_values, permuted_sums, rejection_thresholds


def test_labels_move_only_within_their_exchange_set_and_every_arrangement_is_a_shuffle() -> None:
    # a template of 3 groups (set 0), a template of 2 (set 1), and four unmatched prompts of two groups (set 2)
    blocks = LabelBlocks(np.array([0, 1, 2, 0, 1, 0, 0, 1, 1]), np.array([0, 0, 0, 1, 1, 2, 2, 2, 2]))
    labels = blocks.arrangements(2000, seed=3)
    assert labels.shape == (2000, 9)
    for start, stop in ((0, 3), (3, 5), (5, 9)):
        assert (np.sort(labels[:, start:stop], axis=1) == np.sort(blocks.group[start:stop])).all()
    # uniform within a set: each of the 3! orders of the first template about 1/6 of the time (sd ~0.008)
    orders, frequency = np.unique(labels[:, :3], axis=0, return_counts=True)
    assert len(orders) == 6 and np.allclose(frequency / 2000, 1 / 6, atol=0.035)
    assert np.isclose((labels[:, 3] == 1).mean(), 0.5, atol=0.04)
    assert (blocks.arrangements(5, seed=1) == blocks.arrangements(5, seed=1)).all()  # a seed gives the same draws


def test_blocks_out_of_set_order_are_refused() -> None:
    with pytest.raises(ValueError, match="sorted by exchange set"):
        LabelBlocks(np.array([0, 1]), np.array([1, 0]))


def test_permuted_sums_add_each_blocks_values_to_its_new_group() -> None:
    labels = np.array([[0, 1, 1], [1, 0, 1]])
    values = np.array([[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]])  # 3 blocks, 2 settings
    sums = permuted_sums(labels, values, 2)
    assert sums.shape == (2, 2, 2)
    assert sums[0].tolist() == [[1.0, 6.0], [10.0, 60.0]]  # arrangement 0: group 0 has block 0, group 1 blocks 1, 2
    assert sums[1].tolist() == [[2.0, 5.0], [20.0, 50.0]]


def test_the_mid_p_value_counts_ties_half_and_the_observed_arrangement_once() -> None:
    null = np.array([[0.1], [0.3], [0.3], [0.5], [np.nan]])
    # T = 0.3: one arrangement above, two tied, the observed one: (1 + (1 + 2) / 2) / (1 + 4)
    assert p_values(np.array([0.3]), null)[0] == pytest.approx(2.5 / 5)
    assert p_values(np.array([0.6]), null)[0] == pytest.approx(0.5 / 5)  # above every arrangement
    assert np.isnan(p_values(np.array([np.nan]), null)[0])


def test_a_design_with_too_few_arrangements_has_no_rejection_threshold() -> None:
    rng = np.random.default_rng(0)
    # two groups in n templates: 2^n sign patterns, the largest |sum| shared by 2 of them (itself and its mirror)
    for n_templates, reachable in ((4, False), (5, True), (10, True)):
        differences = rng.uniform(0.5, 1.5, n_templates)  # no ties among other patterns
        signs = rng.choice([-1.0, 1.0], size=(999, n_templates))
        null = np.abs(signs @ differences)[:, None]
        assert np.isfinite(rejection_thresholds(null)[0]) == reachable, n_templates
    assert np.isnan(rejection_thresholds(np.full((999, 1), 0.2))[0])  # every arrangement gives the same value
    # a continuous null: T just above the threshold has mid-p <= 0.05, just below it > 0.05
    null = rng.normal(size=(999, 1))
    threshold = rejection_thresholds(null)[0]
    assert p_values(np.array([threshold + 1e-6]), null)[0] <= 0.05 < p_values(np.array([threshold - 1e-6]), null)[0]
