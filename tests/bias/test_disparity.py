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
    """The figure a fair model's page shows (from its own permutation null), checked: simulated datasets whose true
    disparity is that figure are detected in 80% ± 12% of them (300 datasets: standard error 0.023; the rest is the
    approximation's: a shift on the rate scale, one group set apart)."""
    fair = sim.run(sim.BOLD_20, 12, 0.0, seed=8, n_resamples=1)
    smallest = float(np.median(fair.families["race"].smallest_detectable))
    assert 0.1 < smallest < 0.35, smallest
    detected = sim.run(sim.BOLD_20, 300, smallest, seed=9, n_resamples=1, detectable=False)
    assert 0.68 <= np.mean(detected.families["race"].p_value <= 0.05) <= 0.92, (smallest, np.mean(
        detected.families["race"].p_value <= 0.05))


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
    assert verdict(0.003, 0.06) == "disparity detected (p = 0.003)"
    assert verdict(0.0005, 0.06) == "disparity detected (p < 0.001)"
    assert verdict(0.8, float("nan")) == ("no disparity detectable here (p = 0.80; this design is too small to detect "
                                          "any disparity at the 5% level)")
    assert verdict(float("nan"), 0.1).startswith("no test")
    numbers = {"value": 0.167, "ci_low": 0.056, "ci_high": 0.307, "corrected": 0.12, "corrected_ci_low": -0.02,
               "corrected_ci_high": 0.28, "p_value": 0.41, "smallest_detectable": 0.06}
    assert disparity_sentence("disparity in negative sentiment", numbers) == (
        "disparity in negative sentiment 0.167, bias-corrected 0.120 [-0.020, 0.280]: no disparity detectable here "
        "(p = 0.41; the smallest this design could detect is about 0.06)")


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
