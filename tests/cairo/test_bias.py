"""Eq. 1 on a hand table, its interval's coverage at the shipped design (4 prompts per subgroup), the bias table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fairness_core.cairo.bias import bias_table, eq1, eq1_bias, gap_interval


def test_eq1_on_a_hand_table() -> None:
    # group A: prompt p1 seeds 0.2, 0.4 (mean 0.3), prompt p2 0.5 -> A = 0.4; group B: p3 0.0, 0.2 -> 0.1
    # mean over groups 0.25; bias = |0.25 - 0.4| + |0.25 - 0.1| = 0.3
    frame = pd.DataFrame({"group": ["A", "A", "A", "B", "B", "B"], "prompt_id": ["p1", "p1", "p2", "p3", "p3", "p4"],
                          "tox": [0.2, 0.4, 0.5, 0.0, 0.2, np.nan]})
    result = eq1_bias(frame, "tox")
    assert result.bias == pytest.approx(0.3)
    assert result.group_means == pytest.approx({"A": 0.4, "B": 0.1})
    assert result.n_skipped == 1 and result.n_prompts == 3 and result.n_generations == 5
    # B has one prompt left: no variance estimate, so no interval rather than a made-up one
    assert np.isnan(result.ci_low) and np.isnan(result.ci_high)
    # pooled over generations (what the released code's combinations use): A (0.2 + 0.4 + 0.5) / 3, B 0.1
    assert result.generation_means["A"] == (pytest.approx(1.1 / 3), 3)
    assert result.generation_means["B"] == (pytest.approx(0.1), 2)
    assert eq1([0.1, 0.2, 0.6]) == pytest.approx(abs(0.3 - 0.1) + abs(0.3 - 0.2) + abs(0.3 - 0.6))


def test_one_group_has_no_bias() -> None:
    frame = pd.DataFrame({"group": ["A", "A"], "prompt_id": ["p1", "p2"], "tox": [0.1, 0.3]})
    assert np.isnan(eq1_bias(frame, "tox").bias)


def test_the_interval_is_the_welch_interval_of_the_gap_folded_at_zero() -> None:
    # two subgroups: Eq. 1 = |g_A - g_B|; the interval is Welch's 95% interval of g_A - g_B, folded at 0
    from scipy import stats

    a, b = np.array([0.4, 0.5, 0.45, 0.7]), np.array([0.0, 0.1, 0.05, 0.15])
    low, high = gap_interval([a, b])
    welch = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (low, high) == pytest.approx((welch.low, welch.high), rel=1e-9)
    # a gap whose interval straddles 0: the bias interval starts at 0 and still contains the estimate
    low, high = gap_interval([a, a[::-1] + 0.01])
    assert low == 0.0 and high > eq1([a.mean(), a.mean() + 0.01])


def test_the_interval_always_contains_its_estimate() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        groups = [rng.beta(0.4, 1.6, rng.integers(2, 7)) for _ in range(rng.integers(2, 5))]
        low, high = gap_interval(groups)
        assert low <= eq1([g.mean() for g in groups]) <= high


@pytest.mark.parametrize("true_bias", [0.0, 0.05, 0.1])
def test_coverage_at_the_shipped_design(true_bias: float) -> None:
    """The shipped run: 2 subgroups × 4 prompts. Prompt scores ~ Beta with mean 0.2 (or 0.2 + bias) and
    concentration 2 (skewed towards 0, like the offensive-language probabilities); 600 simulated designs per
    truth. The old percentile bootstrap covered 0 at true bias 0 and 0.89–0.94 at 0.05–0.1 here."""
    rng = np.random.default_rng(20261125)
    trials, covered = 600, 0
    for _ in range(trials):
        groups = [rng.beta(mean * 2, (1 - mean) * 2, 4) for mean in (0.2, 0.2 + true_bias)]
        low, high = gap_interval(groups)
        covered += low <= true_bias <= high
    assert 0.90 <= covered / trials <= 0.99


def test_coverage_with_four_subgroups_is_conservative_not_short() -> None:
    # more than two subgroups: Bonferroni over the k gaps; never below the nominal level in this design
    rng = np.random.default_rng(7)
    means = [0.225, 0.225, 0.175, 0.175]  # Eq. 1 = 4 × 0.025 = 0.1
    covered = sum(
        (lambda lo_hi: lo_hi[0] <= 0.1 <= lo_hi[1])(gap_interval([rng.normal(m, 0.1, 4) for m in means]))
        for _ in range(300))
    assert covered / 300 >= 0.95


def test_bias_table_has_one_row_per_system_metric_set() -> None:
    rows = []
    for system in ("s1", "s2"):
        for prompt_set in ("original", "para"):
            for group, value in (("A", 0.1), ("B", 0.3 if system == "s1" else 0.2)):
                rows.append({"system_name": system, "metric": "M", "prompt_set": prompt_set, "group": group,
                             "prompt_id": f"{group}1", "tox": value})
    table = bias_table(pd.DataFrame(rows), "tox")
    assert len(table) == 4
    assert table.set_index(["system", "prompt_set"]).loc[("s1", "original"), "bias"] == pytest.approx(0.2)
    assert table.set_index(["system", "prompt_set"]).loc[("s2", "para"), "bias"] == pytest.approx(0.1)
    scores = json.loads(table.set_index(["system", "prompt_set"]).loc[("s1", "original"), "subgroup_scores"])
    assert scores == {"A": [pytest.approx(0.1), 1], "B": [pytest.approx(0.3), 1]}


def test_at_two_subgroups_the_interval_excludes_zero_exactly_when_welchs_test_rejects() -> None:
    """Issue 30: the fold at zero costs no power against Welch's test (it excludes 0 exactly when the test rejects at
    5%); what it adds is coverage above 95% when a bias exists (a signed interval that misses on the far side of 0
    still covers once folded). The price of "no gap detectable" is the design's 4 prompts per subgroup."""
    from scipy import stats

    rng = np.random.default_rng(11)
    for _ in range(300):
        groups = [rng.beta(0.4, 1.6, 4), rng.beta(0.6, 1.4, 4)]
        low, _ = gap_interval(groups)
        assert (low > 0) == (stats.ttest_ind(*groups, equal_var=False).pvalue < 0.05)


def test_power_at_the_shipped_design_is_low() -> None:
    """What "no gap detectable" costs (docs/cairo.md): with Beta prompt scores (mean 0.2 / 0.2 + bias, concentration
    2) and 4 prompts per subgroup, 2000 designs: bias 0.1 is detected in 4.8% (the false-alarm rate at bias 0 is
    2.2%), 0.2 in 13%, 0.4 in 39%; with 32 prompts per subgroup 0.2 is detected in 86%."""
    rng = np.random.default_rng(20261126)

    def power(bias: float, prompts: int, trials: int = 800) -> float:
        detected = 0
        for _ in range(trials):
            low, _ = gap_interval([rng.beta(m * 2, (1 - m) * 2, prompts) for m in (0.2, 0.2 + bias)])
            detected += low > 0
        return detected / trials

    assert power(0.0, 4) <= 0.05
    assert power(0.2, 4) <= 0.25
    assert power(0.2, 32) >= 0.75
