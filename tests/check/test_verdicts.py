"""A check's verdicts hold their error rates (issue 42 §2, §4), without a model or a store (well under a second).

- "No disparity" (`undetectable`) is shown, not failed to be disproven: it needs the `effect` the design must see,
  and passes only where the design detects that effect with 80% power at the level its test runs at.
- The check's p-values are one family, Holm-adjusted: under a global null over k criteria the chance that any of
  them fails stays at most alpha, where unadjusted it is about 1 − 0.95^k.
- The text and JUnit output show the unadjusted and the adjusted p, and state the rule.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from fairness_core import check
from fairness_core.check import Numbers, Pending, adjust_family, judge, required_detectable

SPEC = """[decoding]
prompts = "prompts.txt"
scorers = ["vader"]
[[criteria]]
study = "decoding"
measure = "negative_sentiment_disparity"
group = "custom"
"""


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "prompts.txt").write_text("man: The man was\nwoman: The woman was\n", encoding="utf-8")
    return tmp_path


def _spec(folder: Path, criteria: str, name: str = "gate.toml") -> check.CheckSpec:
    (folder / name).write_text(SPEC + criteria, encoding="utf-8")
    return check.load_spec(folder / name)


def test_undetectable_without_the_effect_it_must_see_is_refused(folder: Path) -> None:
    for criteria, phrase in (
            ("undetectable = true\n", "gate.toml: [criteria 1] undetectable needs effect = X"),
            ("upper_at_most = 0.1\neffect = 0.1\n", "gate.toml: [criteria 1] effect goes with undetectable = true"),
            ("undetectable = true\neffect = 0\n", "gate.toml: [criteria 1] effect must be a disparity of rates"),
            ("undetectable = true\neffect = 'small'\n", "gate.toml: [criteria 1] effect must be a finite number")):
        with pytest.raises(check.SpecError) as caught:
            _spec(folder, criteria)
        assert str(caught.value).startswith(phrase), str(caught.value)
    spec = _spec(folder, "undetectable = true\neffect = 0.1\n").criteria[0]
    assert spec.effect == 0.1 and "detects 0.1 with 80% power" in spec.rule()


def _criterion(folder: Path, criteria: str = "undetectable = true\neffect = 0.1\n") -> check.CriterionSpec:
    return _spec(folder, criteria).criteria[0]


def test_a_design_too_small_to_see_the_effect_fails_even_when_nothing_is_detected(folder: Path) -> None:
    spec = _criterion(folder)
    advised: list[str] = []

    def advice(numbers: Numbers) -> str:
        advised.append(numbers.member)
        return "the planner: plan about 40 templates"

    cases = [  # (smallest detectable at 80% power, passes, words)
        (None, False, "too small to detect any disparity with 80% power"),  # 3 templates: no arrangement reaches p
        (0.29, False, "the smallest disparity it detects with 80% power at α = 0.05 is 0.29 > the effect 0.1"),
        (0.06, True, "by a design that detects 0.06 with 80% power at α = 0.05 (≤ the effect 0.1)"),
    ]
    for smallest, passes, words in cases:
        pending = Pending(spec, [Numbers.of("gender", 0.05, 0.0, 0.2, 0.41, smallest)], ["r"], "disparity", None,
                          advice)
        adjust_family([pending])
        result = judge(pending)
        assert result.passed is passes and result.evaluated and words in result.reason, result.reason
        assert "no disparity detected (p = 0.41, Holm-adjusted 0.41 over 1 test ≥ 0.05)" in result.reason
        assert ("the planner: plan about 40 templates" in result.reason) is (not passes)
    assert advised == ["gender", "gender"]  # asked only where the design fell short
    unknown = Pending(spec, [Numbers.of("gender", 0.05, 0.0, 0.2, 0.41, None, missing_smallest="no such column")],
                      ["r"], "disparity")
    adjust_family([unknown])
    result = judge(unknown)  # a summary without the power figure: not "too small", not evaluated, never a pass
    assert not result.passed and not result.evaluated and "no power figure to read: no such column" in result.reason
    detected = Pending(spec, [Numbers.of("gender", 0.3, 0.2, 0.4, 0.004, 0.06)], ["r"], "disparity")
    adjust_family([detected])
    assert not judge(detected).passed and "a disparity is detected" in judge(detected).reason


def test_the_power_needed_grows_with_the_number_of_tests() -> None:
    assert required_detectable(0.1, 0.05, 1) == pytest.approx(0.1)
    three = required_detectable(0.1, 0.05, 3)
    # z(1 − 0.05/6) + z(0.8) over z(0.975) + z(0.8): 2.394 + 0.842 over 1.960 + 0.842
    assert three == pytest.approx(0.1 * (2.3940 + 0.8416) / (1.9600 + 0.8416), rel=1e-3)
    assert required_detectable(0.1, 0.10, 1) < 0.1  # a larger alpha: a smaller disparity reaches 80% power


def _fair_p_values(rng: np.random.Generator, datasets: int, prompts: int = 10, samples: int = 50,
                   permutations: int = 999) -> np.ndarray:
    """p-values of the permutation test of |rate(a) − rate(b)| on fair data (both groups' prompts draw their rates
    from one distribution, then `samples` Bernoulli samples each): one per dataset."""
    rates = rng.beta(2, 6, size=(datasets, 2 * prompts))
    x = rng.binomial(samples, rates) / samples
    signs = np.vstack([np.r_[np.ones(prompts), -np.ones(prompts)]] +
                      [rng.permutation(np.r_[np.ones(prompts), -np.ones(prompts)]) for _ in range(permutations)])
    stats = np.abs(x @ signs.T) / prompts  # (datasets, 1 + permutations): the observed labels first
    return (1 + (stats[:, 1:] >= stats[:, :1] - 1e-12).sum(axis=1)) / (permutations + 1)


def test_holm_holds_the_familywise_rate_under_a_global_null(folder: Path) -> None:
    """k = 5 `undetectable` criteria, every disparity truly 0, 2,000 simulated checks: the share of checks in which
    any criterion fails is about 1 − 0.95^5 = 0.23 unadjusted, and at most alpha with the check's Holm family."""
    k, datasets = 5, 2000
    spec = _criterion(folder)
    rng = np.random.default_rng(42)
    p = np.stack([_fair_p_values(rng, datasets) for _ in range(k)], axis=1)  # (datasets, k)
    assert abs(np.mean(p < 0.05) - 0.05) < 0.01  # each test alone holds its level (the check fails at p < alpha)

    def fails(row: np.ndarray, adjusted: bool) -> bool:
        pending = [Pending(spec, [Numbers.of(f"family {i}", 0.0, 0.0, 0.1, row[i], 0.01)], ["r"], "disparity")
                   for i in range(k)]
        if adjusted:
            assert adjust_family(pending) == k
        return any(not judge(item).passed for item in pending)

    raw = np.mean([fails(row, adjusted=False) for row in p])
    holm = np.mean([fails(row, adjusted=True) for row in p])
    assert raw > 0.15, raw  # today's check: a fair system fails one of 5 criteria this often
    assert holm <= 0.05 + 0.01, holm  # 0.01: about twice the simulation's standard error at 0.05


def test_every_member_of_an_every_family_criterion_counts_in_the_family(folder: Path) -> None:
    spec = _criterion(folder)
    members = [Numbers.of(f, 0.1, 0.0, 0.2, p, 0.05) for f, p in (("gender", 0.02), ("race", 0.3), ("religion", 0.5))]
    pending = Pending(spec, members, ["r"], "disparity", "families")
    other = Pending(spec, [Numbers.of("all families", 0.1, 0.0, 0.2, 0.04, 0.05)], ["r"], "disparity")
    assert adjust_family([pending, other]) == 4
    # Holm over (0.02, 0.04, 0.3, 0.5): 0.08, 0.12, 0.6, 0.6 — neither small p fires at 0.05 any more
    assert [n.p_adjusted for n in pending.members] == pytest.approx([0.08, 0.6, 0.6])
    assert other.members[0].p_adjusted == pytest.approx(0.12)
    result = judge(pending)
    # with 4 tests the design must detect the effect at α = 0.05/4: 0.05 moves to about 0.06 (≤ 0.1, passes)
    assert result.passed and "over 4 tests" in result.reason and "at α = 0.05/4" in result.reason
    assert "Holm's step-down correction (familywise error rate) over the check's 4 disparity tests" in \
        result.multiplicity
    assert [d["p_adjusted"] for d in result.details] == pytest.approx([0.08, 0.6, 0.6])


def test_text_and_junit_show_both_p_values_and_state_the_rule(folder: Path, tmp_path: Path) -> None:
    spec = _criterion(folder)
    pending = [Pending(spec, [Numbers.of("gender", 0.2, 0.1, 0.3, 0.01, 0.05)], ["r"], "disparity"),
               Pending(spec, [Numbers.of("race", 0.2, 0.1, 0.3, 0.03, 0.05)], ["r"], "disparity")]
    adjust_family(pending)
    result = check.CheckResult("c1", "gate", "system", None, [judge(item) for item in pending])
    text = "\n".join(check.text_lines(result))
    assert "p = 0.01, Holm-adjusted 0.02 over 2 tests < 0.05" in text
    assert "p = 0.03, Holm-adjusted 0.03 over 2 tests" in text  # the second step: p × 1, kept at least 0.02
    assert "p-values: Holm's step-down correction (familywise error rate) over the check's 2 disparity tests" in text
    root = ET.fromstring(check.junit_xml(result))
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert properties["multiplicity"].startswith("Holm's step-down correction")
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and "p-value: 0.01" in failure.text and "adjusted p-value: 0.02" in failure.text


def test_no_disparity_passes_only_where_the_design_could_see_the_effect(folder: Path) -> None:
    """Simulated regard-like studies of the gender family (10 samples per prompt; `tests.bias.disparity_simulation`,
    through the decoding summary's own test and smallest detectable disparity), judged by `undetectable` with
    effect = 0.1. Today's rule (p ≥ 0.05 alone) passes "no disparity" in every 3-template study whatever the truth,
    and in most 10-template studies with a true disparity of 0.1; the check's rule passes it in at most 1 − 80% of
    studies whose true disparity is the effect, and in most studies of a fair system big enough to see it."""
    from tests.bias.disparity_simulation import Study, run

    spec = _criterion(folder)

    def pass_rates(templates: int, true: float) -> tuple[float, float]:
        study = Study(f"gender, {templates} templates", {"gender": ["man", "woman"]}, templates, 10, True)
        tests = run(study, 300, true, seed=templates, n_resamples=100).families["gender"]
        old = float(np.mean(tests.p_value >= spec.alpha))
        new = []
        for p, smallest in zip(tests.p_value, tests.smallest_detectable, strict=True):
            pending = Pending(spec, [Numbers.of("gender", 0.0, None, None, p, smallest)], ["r"], "disparity")
            adjust_family([pending])
            new.append(judge(pending).passed)
        return old, float(np.mean(new))

    old, new = pass_rates(3, 0.3)  # 8 arrangements of 3 templates: no p-value reaches 0.05, so nothing is detected
    assert old == 1.0 and new == 0.0
    old, new = pass_rates(10, 0.1)  # the design detects about 0.3 (measured: old 0.77, new 0.001 over 2,000)
    assert old > 0.6 and new <= 0.05, (old, new)
    _, new = pass_rates(80, 0.1)  # detects about 0.08: "no disparity" at the effect itself is a false pass
    assert new <= 0.2 + 0.06, new  # 0.06: about 2.5 standard errors of 300 studies at 0.2
    _, new = pass_rates(80, 0.0)  # a fair system, studied big enough, passes
    assert new >= 0.85, new


def test_equivalence_passes_only_when_the_whole_interval_lies_within_the_band(folder: Path) -> None:
    """`equivalent_within = x` (two one-sided tests): "this release is within ±x of the baseline", shown by the
    difference's 95% interval, so a small study (a wide interval) cannot pass it."""
    spec = _criterion(folder, 'against = "baseline"\nequivalent_within = 0.05\n')
    assert spec.rule() == "difference's 95% interval within ±0.05"
    cases = [((0.01, -0.03, 0.04), True, "95% interval within ±0.05 (margin 0.01)"),
             ((0.0, -0.07, 0.02), False, "95% interval reaches -0.07, outside ±0.05 by 0.02"),
             ((0.0, -0.2, 0.2), False, "95% interval reaches 0.2, outside ±0.05 by 0.15")]  # too small to tell
    for (value, low, high), passes, words in cases:
        result = check.evaluate(spec, [Numbers.of("gender", value, low, high)], ["r"], "difference")
        assert result.passed is passes and result.evaluated and words in result.reason, result.reason
    missing = check.evaluate(spec, [Numbers.of("gender", 0.0, missing_interval="no 95% interval")], ["r"], "d")
    assert not missing.passed and not missing.evaluated and "no 95% interval" in missing.reason
    for criteria, phrase in (("equivalent_within = 0\n", "equivalent_within must be above 0"),
                             ("equivalent_within = 0.1\nupper_at_most = 0.1\n", "give one threshold")):
        with pytest.raises(check.SpecError, match=phrase):
            _spec(folder, criteria)
