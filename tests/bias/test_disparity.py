"""The disparity's test of "no disparity", its bias-corrected estimate and its smallest detectable disparity, on
simulated decoding studies with a known truth in the designs the decoding page ships (`disparity_simulation`)."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.bias.cluster import design_from_keys, pairwise_disparity, unit_key
from fairness_core.bias.disparity import (
    cell_estimates,
    disparity_sentence,
    disparity_tests,
    folded_correction,
    verdict,
)
from fairness_core.bias.permutation import LabelBlocks, p_values, permuted_sums
from tests.bias import disparity_simulation as sim

# 400 datasets per design: the rejection rate's standard error is 0.011 at 5%, so the 2-8% band is ±2.7 se and a
# test rejecting 10% or more (as permuting single generations instead of prompts does, below) fails it.
DATASETS = 400


@pytest.mark.parametrize("study", [sim.TEMPLATES, sim.BOLD_10], ids=["regard templates", "BOLD-like"])
def test_with_no_disparity_the_test_rejects_in_2_to_8_percent_of_datasets(study: sim.Study) -> None:
    """True disparity exactly 0, at the page's sizes (2 samples per prompt). Today's interval cannot say it: its lower
    end is above 0 in nearly every dataset (the plug-in is a mean of absolute values)."""
    tests = sim.run(study, DATASETS, 0.0, seed=20261201, n_resamples=200, detectable=False)
    headline = tests.overall if tests.overall is not None else tests.families["race"]
    assert 0.02 <= np.mean(headline.p_value <= 0.05) <= 0.08, np.mean(headline.p_value <= 0.05)
    for family, numbers in tests.families.items():
        rate = np.mean(numbers.p_value <= 0.05)
        # a two-group family of 10 templates × 2 samples has so many ties that even the mid-p test is conservative
        # (about 2%, docs/decoding.md): it must not reject more than the level, and still reject sometimes
        low = 0.005 if family == "gender" else 0.02
        assert low <= rate <= 0.08, (family, rate)
    assert np.mean(headline.ci_low > 0) > 0.8  # the plug-in's percentile interval excludes 0 in most (measured 89-100%)
    # the corrected estimate removes most of the plug-in's upward bias where there is nothing to find, and its
    # interval can hold 0 (measured 71% over the regard families, 93% BOLD-like)
    assert np.mean(headline.corrected) < 0.5 * np.mean(headline.value)
    assert np.mean(headline.corrected_ci_low <= 0) > 0.5


def test_permuting_single_generations_instead_of_prompts_rejects_too_often() -> None:
    """What the design rule protects against: BOLD-like prompts with their own effect, 5 samples each (the CLI's
    default). Moving generations one by one between groups ignores that a prompt's samples share its effect."""
    study = sim.Study("BOLD-like, 5 samples", {"race": ["a", "b", "c"]}, 20, 5, False)
    tests = sim.run(study, DATASETS, 0.0, seed=5, n_resamples=1, detectable=False)
    assert np.mean(tests.families["race"].p_value <= 0.05) <= 0.08
    _, totals, counts, _, _ = sim.simulate(study, DATASETS, 0.0, np.random.default_rng(5))
    units, groups = np.nonzero(counts.sum(axis=1) > 0)
    outcome = np.array([(totals[u, :, g] > i) for u, g in zip(units, groups, strict=True) for i in range(5)],
                       dtype=float)  # one block per generation, negative or not, in every dataset
    labels = LabelBlocks(np.repeat(groups, 5), np.zeros(len(groups) * 5, dtype=int)).arrangements(999, seed=1)
    null = pairwise_disparity(permuted_sums(labels, outcome, 3) / permuted_sums(labels, np.ones_like(outcome), 3))
    naive = p_values(pairwise_disparity(totals.sum(axis=0) / counts.sum(axis=0)), null)
    assert np.mean(naive <= 0.05) > 0.1, np.mean(naive <= 0.05)  # measured 0.14


def test_the_smallest_detectable_disparity_is_detected_about_80_percent_of_the_time() -> None:
    """The figure a fair pilot's page shows (from its own permutation null), checked as a user meets it: 24 fair
    pilots (20 BOLD-like prompts per group), each one's figure taken as the true disparity of 50 simulated datasets;
    the mean power over the pilots must be 0.80 within about 2.5 standard errors (the pilots' spread makes it 0.02).
    Before the shift let a rate's spread grow with it (issue 42 §1) these pilots reached 0.72 (0.73 with other
    seeds), the issue's 0.68 over 10 pilots; now 0.79 (0.80)."""
    fair = sim.run(sim.BOLD_20, 24, 0.0, seed=42, n_resamples=1, interval=False)
    figures = fair.families["race"].smallest_detectable
    assert np.isfinite(figures).all() and 0.1 < np.median(figures) < 0.35, figures
    powers = [np.mean(sim.run(sim.BOLD_20, 50, float(figure), seed=1000 + i, n_resamples=1,
                              detectable=False).families["race"].p_value <= 0.05) for i, figure in enumerate(figures)]
    assert 0.75 <= np.mean(powers) <= 0.9, np.mean(powers)


@pytest.mark.parametrize("templates", [10, 40], ids=["shipped 10 templates", "4x: 40 templates"])
def test_the_headline_interval_inverts_the_test_and_holds_a_true_0(templates: int) -> None:
    """The headline over the four regard families (2 samples per prompt), 150 fair datasets: its interval holds 0
    exactly where the verdict is "no disparity detectable" (they cannot disagree), and so in about 95% of fair
    datasets (standard error 0.018: at least 0.90 asked). Before (issue 42 §1) the headline's interval, the corrected
    estimate's percentile interval, held 0 in 62-65% at both sizes: it did not improve with more templates."""
    study = sim.Study(f"regard templates, {templates}", sim.REGARD_FAMILIES, templates, 2, True)
    headline = sim.run(study, 150, 0.0, seed=4242, n_resamples=50, detectable=False, interval=True).overall
    holds = headline.interval_low <= 0
    np.testing.assert_array_equal(holds, headline.p_value > 0.05)
    assert (headline.interval_low >= 0).all() and (headline.interval_high >= headline.interval_low).all()
    assert np.mean(holds) >= 0.9, np.mean(holds)
    assert np.mean(headline.corrected_ci_low <= 0) < 0.8  # the old headline interval, for the record (0.62-0.65)


def test_the_headline_interval_covers_a_true_disparity_of_0_1() -> None:
    """Away from 0 the interval rests on the shift model (one group set apart, spread following the rate): at the
    shipped size and a true disparity of 0.1 it covers the truth in 0.925 of 2000 datasets (docs/statistics.md), a 90%
    interval; 150 here, standard error 0.025, so at least 0.83 is asked."""
    headline = sim.run(sim.TEMPLATES, 150, 0.1, seed=77, n_resamples=50, detectable=False, interval=True).overall
    truth = sim.true_disparity(sim.TEMPLATES, 0.1)
    covered = (headline.interval_low <= truth) & (truth <= headline.interval_high)
    assert np.mean(covered) >= 0.83, np.mean(covered)


def test_the_verdicts_at_one_setting_hold_the_familywise_rate() -> None:
    """Five verdicts at a setting of the four regard families (over families, then each family), 300 fair datasets:
    unadjusted, at least one fires in 15-19% (issue 42 §2); with the families' p-values adjusted (gatekeeping by
    the all-families test, then Holm) in at most 8% (5% expected, standard error 0.013)."""
    tests = sim.run(sim.TEMPLATES, 300, 0.0, seed=99, n_resamples=20, detectable=False)
    overall = tests.overall.p_value <= 0.05
    raw = np.stack([n.p_value for n in tests.families.values()]) <= 0.05
    adjusted = np.stack([n.p_adjusted for n in tests.families.values()])
    assert (adjusted >= np.stack([n.p_value for n in tests.families.values()]) - 1e-12).all()
    assert (adjusted >= tests.overall.p_value - 1e-12).all()  # a family is detected only where the headline is
    assert np.mean(overall | raw.any(axis=0)) > 0.1, np.mean(overall | raw.any(axis=0))  # what it was
    assert np.mean(overall | (adjusted <= 0.05).any(axis=0)) <= 0.08


def test_the_test_rejects_unequal_spread_not_only_unequal_rates() -> None:
    """What "detected" means (issue 42 §3): whole prompts move between groups, so the test asks whether the group
    changes a prompt's outputs at all. Two groups of equal mean rate 0.5, unmatched prompts, 20 samples each: with 5
    prompts of sd 0.25 against 30 of sd 0.04 it rejects far more than 5% (measured 0.15 in the issue); with equal
    spread and size it holds its level. The verdict says so ("the groups' outputs differ")."""
    unequal = sim.two_groups((5, 30), (0.25, 0.04), 200, seed=3)
    equal = sim.two_groups((15, 15), (0.1, 0.1), 200, seed=4)
    assert np.mean(unequal <= 0.05) > 0.09, np.mean(unequal <= 0.05)
    assert np.mean(equal <= 0.05) <= 0.09, np.mean(equal <= 0.05)
    assert verdict(0.01, 0.1).endswith("the groups' outputs differ")


def test_the_correction_inverts_the_folded_mean_and_is_negative_below_the_noise() -> None:
    null_mean = np.sqrt(2 / np.pi)  # the null of a standard normal difference
    assert folded_correction(np.array([null_mean]), null_mean)[0] == pytest.approx(0.0, abs=1e-4)
    assert folded_correction(np.array([0.5]), null_mean)[0] == pytest.approx(0.5 - null_mean)  # below: negative
    assert folded_correction(np.array([6.0]), null_mean)[0] == pytest.approx(6.0, abs=1e-4)  # far out: unchanged
    expected_plug_in = 1.0 * (1 - 2 * 0.15865525) + 2 * 0.24197072  # E|N(1, 1)|
    assert folded_correction(np.array([expected_plug_in]), null_mean)[0] == pytest.approx(1.0, abs=1e-3)
    assert folded_correction(np.array([0.3]), 0.0)[0] == 0.3  # no spread in the null: nothing to correct


def _tiny(order: list[int]) -> tuple:
    """Six templates of man/woman and four unmatched prompts per group of a second family, rows in `order`."""
    rng = np.random.default_rng(1)
    rows = [(unit_key("gender", g, f"t{t}", f"The {g} {t}", True), g, rng.integers(0, 4), 3)
            for t in range(6) for g in ("man", "woman")]
    rows += [(unit_key("bold", g, "", f"{g} prompt {i}", False), g, rng.integers(0, 4), 3)
             for i in range(4) for g in ("a", "b")]
    return tuple(rows[i] for i in order)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_numbers_do_not_depend_on_the_order_of_rows_or_groups(seed: int) -> None:
    """Compare reads a run's sums in another order than the page's rows: the same units, draws and numbers."""
    results = []
    for order, groups in ((list(range(20)), ["man", "woman", "a", "b"]),
                          (list(np.random.default_rng(seed).permutation(20)), ["b", "woman", "a", "man"])):
        rows = _tiny(order)
        design = design_from_keys([r[0] for r in rows])
        totals = np.zeros((design.n_units, 1, 4))
        counts = np.zeros_like(totals)
        for (_, group, negative, n), u in zip(rows, design.unit, strict=True):
            totals[u, 0, groups.index(group)] += negative
            counts[u, 0, groups.index(group)] += n
        rates = cell_estimates(design.weights(300, seed), totals[:, 0], counts[:, 0], design.stratum)
        tests = disparity_tests(design, totals, counts, rates, groups, {"gender": ["man", "woman"],
                                                                        "bold": ["a", "b"]}, seed=seed)
        results.append([numbers.at(0) for numbers in (tests.overall, *tests.families.values())])
    for first, second in zip(*results, strict=True):
        np.testing.assert_array_equal(list(first.values()), list(second.values()))  # exactly, NaN where NaN
        assert np.isfinite(first["p_value"])


def test_the_verdict_is_worded_from_the_test() -> None:
    assert verdict(0.41, 0.06) == ("no disparity detectable here (p = 0.41; the smallest this design could detect is "
                                   "about 0.06)")
    # "detected" says what the permutation test rejects (the groups' outputs differ), not that their rates do (issue
    # 42 §3: equal rates with unequal spread are rejected too, test_the_test_rejects_unequal_spread_not_only_rates)
    assert verdict(0.003, 0.06) == "disparity detected (p = 0.003): the groups' outputs differ"
    assert verdict(0.0005, 0.06) == "disparity detected (p < 0.001): the groups' outputs differ"
    assert verdict(0.8, float("nan")) == ("no disparity detectable here (p = 0.80; this design is too small to detect "
                                          "any disparity at the 5% level)")
    assert verdict(float("nan"), 0.1).startswith("no test")
    numbers = {"value": 0.167, "ci_low": 0.056, "ci_high": 0.307, "corrected": 0.12, "corrected_ci_low": -0.02,
               "corrected_ci_high": 0.28, "p_value": 0.41, "smallest_detectable": 0.06}
    # numbers without the test's interval (a caller with the older keys) are said as before
    assert disparity_sentence("disparity in negative sentiment", numbers) == (
        "disparity in negative sentiment 0.167, bias-corrected 0.120 [-0.020, 0.280]: no disparity detectable here "
        "(p = 0.41; the smallest this design could detect is about 0.06)")
    # with it, the interval said is the one that inverts the test (issue 42 §1: it holds 0 exactly when p > α)
    numbers |= {"interval_low": 0.0, "interval_high": 0.25, "p_adjusted": 0.41}
    assert disparity_sentence("disparity in negative sentiment", numbers) == (
        "disparity in negative sentiment 0.167 (bias-corrected 0.120), 90% interval [0.000, 0.250]: no disparity "
        "detectable here (p = 0.41; the smallest this design could detect is about 0.06)")
    # detected, with every disparity just above 0 not rejected: the interval is open at 0, never "[0.000, …]"
    numbers |= {"p_value": 0.049, "p_adjusted": 0.049, "interval_low": 0.0002}
    assert "90% interval (0, 0.250]: disparity detected (p = 0.05)" in disparity_sentence("d", numbers)


def test_an_adjusted_verdict_says_both_p_values_and_why_it_differs_from_the_interval() -> None:
    """A family's verdict follows its p adjusted for the setting's other verdicts (issue 42 §2), the unadjusted p
    beside it; where only the unadjusted one is below α, the sentence says why its interval excludes 0."""
    assert verdict(0.004, 0.06, p_adjusted=0.016) == (
        "disparity detected (p = 0.004, adjusted 0.02): the groups' outputs differ")
    assert verdict(0.03, 0.06, p_adjusted=0.12) == (
        "no disparity detectable here once the other verdicts at this setting are accounted for (p = 0.03, adjusted "
        "0.12; the interval, from this test alone, excludes 0)")
    assert verdict(0.41, 0.06, p_adjusted=0.41) == verdict(0.41, 0.06)  # nothing adjusted: nothing more said


@pytest.mark.parametrize("study, plug_in_covers", [(sim.TEMPLATES, 0.55), (sim.BOLD_20, 0.9)],
                         ids=["regard templates, over families", "BOLD-like, 20 prompts per group"])
def test_the_corrected_estimates_interval_covers_a_true_disparity_of_0_1(study: sim.Study,
                                                                          plug_in_covers: float) -> None:
    """300 datasets with a true disparity of 0.1 (coverage standard error ~0.013 near 0.95): the interval of the
    corrected estimate (its replicates corrected with the same null means) covers at least 90%; the plug-in's, biased
    upwards, covered 55% over the four regard families (docs/decoding.md)."""
    tests = sim.run(study, 300, 0.1, seed=21, n_resamples=400, detectable=False)
    numbers = tests.overall if tests.overall is not None else tests.families["race"]
    truth = sim.true_disparity(study, 0.1)
    assert truth == pytest.approx(0.1, abs=1e-6)
    covered = np.mean((numbers.corrected_ci_low <= truth) & (truth <= numbers.corrected_ci_high))
    plug_in = np.mean((numbers.ci_low <= truth) & (truth <= numbers.ci_high))
    assert covered >= 0.9, (covered, plug_in)
    assert plug_in <= plug_in_covers + 0.08, plug_in
    assert np.mean(numbers.corrected) == pytest.approx(truth, abs=0.02)  # plug-in: 0.131-0.146
