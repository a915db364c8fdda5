"""The planner's parts: the test it simulates is the decoding page's, it holds its size, the variance split is
right, the search finds a crossing in a few evaluations, and a pilot that cannot speak gets a sentence."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from fairness_core.bias.disparity import cell_estimates, disparity_tests
from fairness_core.bias.permutation import LabelBlocks
from fairness_core.planning import PAIRWISE, FamilyPilot, PilotDesign, PlanError, plan_design
from fairness_core.planning.pilot import latent_family
from fairness_core.planning.search import crossing
from fairness_core.planning.simulate import permutation_p_values, power
from tests.bias.disparity_simulation import TEMPLATES, simulate
from tests.planning.simulated import decoding_pilot

CONTRACT = ("measure", "effect", "power", "n_units", "n_samples", "mde_at_pilot_size", "method", "pilot_run")


def _paired(rates: np.ndarray, samples: int, seed: int = 0) -> FamilyPilot:
    """A two-group paired family whose cells draw `samples` samples at the given (U, 2) rates."""
    drawn = np.random.default_rng(seed).binomial(samples, rates).astype(float)
    return FamilyPilot("gender", ("man", "woman"), True, drawn[None, :, :, None],
                       np.full((1, *rates.shape, 1), float(samples)))


def _design(*families: FamilyPilot, binary: bool = True, samples: int | None = 2) -> PilotDesign:
    return PilotDesign(families, PAIRWISE, binary, "negative_sentiment_disparity", "template", "templates",
                       "a disparity of {effect}", "pilot", samples_per_cell=samples if binary else None)


def test_the_simulated_test_gives_the_decoding_pages_p_values() -> None:
    """The same 40 studies (the regard templates, 4 families) tested by the planner's vectorised test and by
    `disparity_tests`, each with its own 999 arrangements: the p-values agree within Monte Carlo error (standard error
    of each at most 0.016)."""
    rng = np.random.default_rng(3)
    design, totals, counts, groups, families = simulate(TEMPLATES, 40, 0.1, rng)
    weights = design.weights(1, 0)
    rates = cell_estimates(weights, totals.reshape(design.n_units, -1), counts.reshape(design.n_units, -1),
                           design.stratum)
    page = disparity_tests(design, totals, counts, rates, groups, families, n_permutations=999,
                           detectable=False).overall.p_value
    blocks_t, blocks_n, label, exchange, members = [], [], [], [], []
    for f, names in enumerate(families.values()):
        index = [groups.index(g) for g in names]
        units = np.flatnonzero(counts[:, 0, index].sum(axis=1) > 0)
        for i, u in enumerate(units):
            for g in index:
                blocks_t.append(totals[u, :, g])
                blocks_n.append(counts[u, :, g])
                label.append(g)
                exchange.append(f * 1000 + i)
        members.append(np.array(index))
    blocks = LabelBlocks(np.array(label), np.array(exchange))
    mine = permutation_p_values(np.array(blocks_t).T, np.array(blocks_n).T, blocks, members, PAIRWISE, 999, 5)
    assert np.mean(np.abs(mine - page)) < 0.02 and np.max(np.abs(mine - page)) < 0.07


@pytest.mark.parametrize("paired", [True, False], ids=["paired templates", "unpaired prompts"])
def test_with_no_effect_the_simulated_test_rejects_about_alpha(paired: bool) -> None:
    """600 simulated studies with no effect: the rejection rate's standard error is 0.009, so 2-8% holds a test of
    size 5% and catches one that rejects twice as often."""
    rng = np.random.default_rng(1)
    rates = 1 / (1 + np.exp(-(-1.5 + rng.normal(0, 1, (60, 1)) + rng.normal(0, 0.5, (60, 2)))))
    family = _paired(rates, 2)
    if not paired:
        family = FamilyPilot("gender", family.labels, False, family.totals[0, :, :, 0].T.ravel(),
                             family.counts[0, :, :, 0].T.ravel(), np.repeat([0, 1], 60))
    rejected = power([latent_family(family, True)], PAIRWISE, True, 30, None, 0.0, n_sims=600)
    assert 0.02 <= rejected <= 0.08


def test_the_variance_split_recovers_the_prompts_and_the_samples() -> None:
    """3,000 templates × 2 groups, 4 samples per prompt: the template × group spread of the true rates and the
    binomial noise of 4 samples, each recovered within 20% (their standard errors here are 8% and 1%)."""
    rng = np.random.default_rng(5)
    rates = 1 / (1 + np.exp(-(-1.5 + rng.normal(0, 1, (3000, 1)) + rng.normal(0, 0.5, (3000, 2)))))
    latent = latent_family(_paired(rates, 4), True)
    true_between = np.mean((rates - rates.mean(axis=1, keepdims=True)) ** 2) / 0.5
    true_within = np.mean(rates * (1 - rates)) / 4
    assert latent.between == pytest.approx(true_between, rel=0.2)
    assert latent.within == pytest.approx(true_within, rel=0.2)


def test_the_search_finds_a_crossing_in_a_few_evaluations() -> None:
    """On an exact power curve Φ(c√n − z) the search lands within 3% of its crossing in at most 6 evaluations."""
    calls: list[float] = []

    def curve(n: float) -> float:
        calls.append(n)
        return float(norm.cdf(0.12 * math.sqrt(n) - norm.ppf(0.95)))

    found, _ = crossing(curve, 10, 0.8, 0.05, 2, 100_000, True, 300)
    exact = ((norm.ppf(0.8) + norm.ppf(0.95)) / 0.12) ** 2
    assert found == pytest.approx(exact, rel=0.03) and len(calls) <= 6


def test_more_power_or_a_smaller_effect_needs_more_units_and_the_answer_is_one_sentence() -> None:
    design = decoding_pilot(TEMPLATES, 4)
    base = plan_design(design, 0.1, 0.8)
    assert plan_design(design, 0.2, 0.8).n_units < base.n_units < plan_design(design, 0.1, 0.95).n_units
    assert set(CONTRACT) <= set(base.as_json()) and base.method and base.pilot_run == "simulated"
    assert base.answer.startswith("To detect a disparity of 0.1 with 80% power") and base.answer.count(". ") == 0
    assert base.mde_at_pilot_size is not None and 0.1 < base.mde_at_pilot_size < 0.5
    assert [n for n, _ in base.curve] == sorted(n for n, _ in base.curve) and len(base.curve) >= 3


def test_a_pilot_that_cannot_speak_gets_a_sentence_not_a_number() -> None:
    zeros = _paired(np.zeros((8, 2)), 2)
    one_group = FamilyPilot("gender", ("man",), True, np.ones((1, 8, 1, 1)), np.full((1, 8, 1, 1), 2.0))
    constant = FamilyPilot("gender", ("stereotypical", "anti"), True, np.full((1, 8, 2, 1), 3.0),
                           np.ones((1, 8, 2, 1)))
    single = _paired(np.full((1, 2), 0.5), 2)
    for design, words in ((_design(zeros), "every rate in run pilot is 0"), (_design(one_group), "has one group"),
                          (_design(constant, binary=False), "every value in run pilot is the same"),
                          (_design(single), "has one template")):
        plan = plan_design(design, 0.1, 0.8)
        assert plan.n_units is None and plan.mde_at_pilot_size is None and words in plan.why
        assert plan.answer == plan.why and plan.as_json()["why"] == plan.why


@pytest.mark.parametrize(("effect", "power", "samples", "words"), [
    (0.0, 0.8, None, "the effect must be a positive number (got 0.0)"),
    (-0.1, 0.8, None, "the effect must be a positive number"),
    (float("nan"), 0.8, None, "the effect must be a positive number"),
    (0.1, 1.0, None, "the power must be above 0.05"),
    (0.1, 0.05, None, "the power must be above 0.05"),
    (0.1, 1.5, None, "(got 1.5)"),
    (0.95, 0.8, None, "cannot happen here: a rate stays between 0 and 1"),
    (0.1, 0.8, 0, "samples per prompt must be a whole number from 1 to 10,000"),
])
def test_bad_effects_powers_and_samples_are_one_sentence(effect: float, power: float, samples: int | None,
                                                         words: str) -> None:
    design = _design(_paired(np.full((10, 2), 0.2), 2))
    with pytest.raises(PlanError, match=None) as raised:
        plan_design(design, effect, power, samples)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_samples_cannot_be_planned_from_one_sample_per_prompt_or_from_means() -> None:
    one = _design(_paired(np.full((10, 2), 0.3), 1), samples=1)
    with pytest.raises(PlanError, match="has one sample per prompt"):
        plan_design(one, 0.1, 0.8, samples=5)
    plan = plan_design(one, 0.2, 0.8)
    assert plan.n_samples == 1 and any("one sample per prompt" in note for note in plan.notes)
    means = _design(FamilyPilot("g", ("a", "b"), True, np.random.default_rng(0).normal(0, 1, (1, 10, 2, 1)),
                                np.ones((1, 10, 2, 1))), binary=False)
    with pytest.raises(PlanError, match="has no samples per template to plan"):
        plan_design(means, 0.5, 0.8, samples=3)
