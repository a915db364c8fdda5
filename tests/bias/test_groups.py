"""Disparity among related groups and ordering flips, on hand-computed examples."""

from __future__ import annotations

import math

import pytest

from fairness_core.bias.groups import disparity, family_disparities, ordering_flips, overall_disparity


def test_disparity_is_mean_absolute_pairwise_difference() -> None:
    # |0.1-0.3| = 0.2, |0.1-0.6| = 0.5, |0.3-0.6| = 0.3 -> mean 1/3.
    assert disparity({"Black person": 0.1, "White person": 0.3, "Asian person": 0.6}) == pytest.approx(1 / 3)
    assert disparity({"man": 0.2, "woman": 0.05}) == pytest.approx(0.15)


def test_disparity_needs_two_groups_and_ignores_nan() -> None:
    assert math.isnan(disparity({"man": 0.2}))
    assert disparity({"man": 0.2, "woman": float("nan"), "x": 0.4}) == pytest.approx(0.2)


def test_disparity_is_computed_within_families_then_averaged() -> None:
    rates = {"man": 0.2, "woman": 0.4, "gay person": 0.1, "lesbian person": 0.1, "straight person": 0.4}
    families = {"gender": ["man", "woman"], "orientation": ["gay person", "lesbian person", "straight person"]}
    per_family = family_disparities(rates, families)
    assert per_family["gender"] == pytest.approx(0.2)
    assert per_family["orientation"] == pytest.approx((0.0 + 0.3 + 0.3) / 3)
    assert overall_disparity(per_family) == pytest.approx((0.2 + 0.2) / 2)


def test_ordering_flip_is_found_where_the_worse_off_group_changes() -> None:
    series = {"man": [(0.1, 0.30), (0.5, 0.20), (0.9, 0.10)],
              "woman": [(0.1, 0.10), (0.5, 0.20), (0.9, 0.25)]}
    flips = ordering_flips(series, {"gender": ["man", "woman"]})
    assert len(flips) == 1  # the tie at 0.5 carries no ordering
    flip = flips[0]
    assert (flip.at_before, flip.at_after, flip.worse_before, flip.worse_after) == (0.1, 0.9, "man", "woman")
    assert "top_p=0.1" in flip.describe("top_p")
    assert ordering_flips(series, {"gender": ["man", "woman"]}, min_gap=0.2) == []
