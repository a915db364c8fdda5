"""Holm and Benjamini-Hochberg: the textbook values, NaNs left alone, and the error rates they promise."""

import numpy as np
import pytest

from fairness_core.bias.multiplicity import adjust, benjamini_hochberg, holm


def test_holm_matches_the_step_down_by_hand():
    # sorted 0.01, 0.02, 0.03, 0.04 -> ×4, ×3, ×2, ×1 = 0.04, 0.06, 0.06, 0.04 -> monotone 0.04, 0.06, 0.06, 0.06
    assert holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])


def test_bh_matches_the_step_up_by_hand():
    # sorted 0.01, 0.02, 0.03, 0.04 -> ×4/1, ×4/2, ×4/3, ×4/4 = 0.04, 0.04, 0.04, 0.04
    assert benjamini_hochberg([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.04] * 4)
    assert benjamini_hochberg([0.5, 0.001]) == pytest.approx([0.5, 0.002])


def test_nan_is_no_test_and_does_not_count():
    assert np.isnan(holm([np.nan, 0.02])[0])
    assert holm([np.nan, 0.02])[1] == pytest.approx(0.02)
    assert np.isnan(benjamini_hochberg([np.nan])).all()


def test_adjusted_never_below_raw_and_capped_at_one():
    p = np.random.default_rng(1).uniform(size=50)
    for rule in ("holm", "bh"):
        q = adjust(p, rule)
        assert (q >= p - 1e-15).all() and (q <= 1).all()
    with pytest.raises(ValueError, match="unknown multiplicity rule"):
        adjust(p, "bonferonni")


def test_holm_holds_the_familywise_rate_under_a_global_null():
    rng = np.random.default_rng(7)
    p = rng.uniform(size=(4000, 5))  # five independent true nulls per screen
    raw = (p <= 0.05).any(axis=1).mean()
    adjusted = np.mean([(holm(row) <= 0.05).any() for row in p])
    assert raw > 0.2  # uncorrected: 1 − 0.95^5 ≈ 0.23
    assert adjusted <= 0.055
