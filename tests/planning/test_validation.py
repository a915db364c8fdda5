"""Designs of the planned size reach the target power (issue 33 §2), checked against the truth.

Each case draws one pilot from a model whose truth is known (`tests.planning.simulated`), plans for a power of 0.8,
then simulates 400 fresh studies of the planned size from the *true* model with the true effect equal to the planned
one, tests each with the study's own test (the decoding page's `disparity_tests`, CAIRO's `gap_interval`, a sign-flip
test written out in the helper) and counts how many are rejected. The pilots are large (100-1,000 units), so what is
checked is the planner's method, not the luck of a small pilot (docs/planning.md measures that spread: the page's
10-template pilot plans sizes whose power ranges 0.66-0.92).

What 400 studies can detect: the realised power's standard error is 0.02 at 0.8, so a planner whose planned sizes
really reach 0.8 ± 0.03 passes the ±0.07 check with probability above 97%, and one off by 0.11 or more fails it with
probability above 97%. Each case costs about 1-2 s.
"""

from __future__ import annotations

import pytest

from fairness_core.planning import plan_design
from tests.bias.disparity_simulation import REGARD_FAMILIES, Study
from tests.planning.simulated import (
    cairo_pilot,
    cairo_power,
    check_decoding,
    difference_pilot,
    difference_power,
)

TARGET, MARGIN = 0.8, 0.07
GENDER = {"gender": REGARD_FAMILIES["gender"]}


@pytest.mark.parametrize(("study", "samples", "family"), [
    (Study("regard gender family: 200 templates, 2 samples", GENDER, 200, 2, True), None, "gender"),
    (Study("regard gender family: 400 templates, 4 samples", GENDER, 400, 4, True), 8, "gender"),
    (Study("BOLD-like: 3 groups, 100 prompts per group, 2 samples", {"race": ["a", "b", "c"]}, 100, 2, False), None,
     "race"),
], ids=["paired templates", "other samples per prompt", "unpaired prompts"])
def test_a_planned_decoding_study_reaches_the_target_power(study: Study, samples: int | None, family: str) -> None:
    check = check_decoding(study, 1, 0.1, samples, datasets=400, family=family)
    assert check.planned.n_units is not None and check.planned.n_units > 10
    assert abs(check.realised - TARGET) <= MARGIN, (check.planned.answer, check.realised)


def test_a_planned_paired_difference_reaches_the_target_power() -> None:
    """Metric bias's stereotypical difference (a pair's signed gap, heavier-tailed than normal): 5 points."""
    plan = plan_design(difference_pilot(1000, 1), 5.0, TARGET)
    assert plan.n_units is not None
    assert abs(difference_power(plan.n_units, 5.0, 400, seed=7) - TARGET) <= MARGIN, plan.answer


def test_a_planned_cairo_study_reaches_the_target_power_of_its_interval() -> None:
    """CAIRO's Eq. 1 of three subgroups, tested as its page does (the interval excludes 0)."""
    plan = plan_design(cairo_pilot(500, 1), 0.1, TARGET)
    assert plan.n_units is not None
    assert abs(cairo_power(plan.n_units, 0.1, 400, seed=7) - TARGET) <= MARGIN, plan.answer
