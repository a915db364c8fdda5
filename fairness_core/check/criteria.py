"""Pass or fail, with the sentence a person reads: one criterion against the numbers a study stored.

A criterion compares one number of a measure with its threshold: the estimate (`value_at_most`, `value_at_least`)
or a bound of its 95% interval (`upper_at_most`: the whole interval lies below the threshold, so a small sample
cannot pass by luck; `lower_at_least`), or both bounds with a band (`equivalent_within = x`: the interval lies
within ±x, two one-sided tests — equivalence, for a signed difference with the baseline). A disparity criterion
may also pass on "no disparity" (`undetectable`, with the `effect` it must be able to see): the study's
permutation test detects nothing (its Holm-adjusted p ≥ alpha) *and* the design had the power to detect a
disparity of `effect` (the summary's smallest detectable disparity at 80% power, moved to the level Holm's first
step tests at, is at most `effect`). A test that finds nothing in a study too small to find anything shows
nothing, so that case fails, saying how many prompts the planner asks for
(issue 42 §4). With a threshold and `undetectable`, the criterion passes when either holds.

Multiplicity (issue 42 §2): every p-value a check's verdicts read (each member of each `undetectable` criterion) is
one family, adjusted by Holm's step-down correction (`fairness_core.bias.multiplicity.holm`), so the chance that
*any* of them fires on a fair system stays at most alpha however many criteria the spec has. Threshold criteria
read interval bounds, not p-values, and are not adjusted.

A number that is missing (no interval: a group with fewer than two resampled units; no p-value column; a statistic
the study refused; a study that cannot run here) fails the criterion with that reason: nothing passes silently.
"Every term" (group, family, attribute) criteria pass when every member passes, and report the worst member.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any

from fairness_core.bias.multiplicity import RULES, holm
from fairness_core.check.spec import CONDITIONS, POWER, CriterionSpec

#: the rule across a check's p-values: familywise, since one false alarm fails the whole gate (issue 42 §2)
MULTIPLICITY = "holm"
#: the level the decoding summary's smallest detectable disparity is computed at (`bias.disparity.ALPHA`)
SUMMARY_ALPHA = 0.05

NUMBER_WORDS = {"value": "value", "ci_high": "upper bound", "ci_low": "lower bound", "interval": "95% interval"}


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def fmt(value: float | None) -> str:
    """A number for a sentence: 4 significant digits, float noise as 0."""
    if value is None:
        return "n/a"
    return "0" if abs(value) < 1e-12 else f"{value:.4g}"


@dataclass(frozen=True)
class Numbers:
    """One member's numbers: the estimate, its 95% interval and (disparities) the test's p-value."""

    member: str  # the group, family, term or attribute they are of
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    missing_interval: str = ""  # why there is no interval, when there is none
    missing_p_value: str = ""  # why there is no p-value, when there is none
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. the two arms of a paired difference
    #: the smallest disparity the design detects with 80% power at α = 0.05 (None: it cannot detect any)
    smallest_detectable: float | None = None
    p_adjusted: float | None = None  # Holm-adjusted over the check's p-values (`adjust_family`)
    tests: int = 0  # how many p-values that family holds
    missing_smallest: str = ""  # why there is no smallest detectable disparity to read (a summary without it)

    @classmethod
    def of(cls, member: str, value: Any, low: Any = None, high: Any = None, p_value: Any = None,
           smallest_detectable: Any = None, **options: Any) -> Numbers:
        return cls(member, _finite(value), _finite(low), _finite(high), _finite(p_value),
                   smallest_detectable=_finite(smallest_detectable), **options)


@dataclass
class CriterionResult:
    name: str
    study: str
    measure: str
    group: str  # the member reported (the worst, for an "every ..." criterion)
    value: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    threshold: float | None
    passed: bool
    run_id: str | None
    reason: str
    rule: str = ""
    margin: float | None = None  # by how much it passed (> 0) or failed (< 0) on its threshold
    evaluated: bool = True  # False: a number it needs could not be computed
    run_ids: list[str] = field(default_factory=list)
    against: str | None = None
    details: list[dict[str, Any]] = field(default_factory=list)  # every member of an "every ..." criterion
    p_adjusted: float | None = None  # the reported member's Holm-adjusted p (what its verdict read)
    multiplicity: str = ""  # the rule behind p_adjusted, in words, with the family's size ("" without a test)
    smallest_detectable: float | None = None  # the reported member's, at 80% power and α = 0.05
    effect: float | None = None  # what `undetectable` had to be able to see

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "study": self.study, "measure": self.measure, "group": self.group,
                "value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "p_value": self.p_value,
                "p_adjusted": self.p_adjusted, "multiplicity": self.multiplicity,
                "smallest_detectable": self.smallest_detectable, "effect": self.effect,
                "threshold": self.threshold, "passed": self.passed, "run_id": self.run_id, "reason": self.reason,
                "rule": self.rule, "margin": self.margin, "evaluated": self.evaluated, "run_ids": self.run_ids,
                "against": self.against, "details": self.details}

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> CriterionResult:
        keys = cls.__dataclass_fields__
        return cls(**{k: v for k, v in record.items() if k in keys})


@dataclass(frozen=True)
class Verdict:
    passed: bool
    margin: float | None
    evaluated: bool
    words: str  # why, in words (no subject)
    underpowered: bool = False  # nothing detected, by a design too small to detect the criterion's effect


def p_words(numbers: Numbers) -> str:
    """"p = 0.012, Holm-adjusted 0.036 over 3 tests": both, so a reader sees what the adjustment did."""
    raw = f"p = {numbers.p_value:.3g}"
    if numbers.p_adjusted is None:
        return raw
    tests = f"{numbers.tests} test{'s' if numbers.tests != 1 else ''}"
    return f"{raw}, Holm-adjusted {numbers.p_adjusted:.3g} over {tests}"


def required_detectable(smallest: float, alpha: float, tests: int) -> float:
    """The smallest detectable disparity moved from the summary's α = 0.05 to α/tests, the level Holm's first step
    tests at (the member judged may be that step; later steps test at more, so this errs towards caution).

    Normal approximation of a test of |Δ|: it rejects at |Δ| > s·z(1 − α/2) and so reaches a power β at
    δ = s·(z(1 − α/2) + z(β)); the design's spread s cancels in the ratio. Without it a check of many criteria would
    pass "no disparity" at a power far below 80%: each test runs at a smaller level than the figure assumes."""
    z = NormalDist().inv_cdf
    level = alpha / max(tests, 1)
    return smallest * (z(1 - level / 2) + z(POWER)) / (z(1 - SUMMARY_ALPHA / 2) + z(POWER))


def verdict(spec: CriterionSpec, numbers: Numbers) -> Verdict:
    """Whether one member's numbers pass the criterion, by how much, and why (see the module docstring)."""
    routes: list[Verdict] = []
    if spec.condition is not None and CONDITIONS[spec.condition][1] == "within":
        routes.append(_equivalent(spec, numbers))
    elif spec.condition is not None:
        key, op = CONDITIONS[spec.condition]
        number = getattr(numbers, {"value": "value", "ci_high": "ci_high", "ci_low": "ci_low"}[key])
        word = NUMBER_WORDS[key]
        assert spec.threshold is not None
        if number is None:
            why = numbers.missing_interval if key != "value" and numbers.value is not None else \
                "the measure has no value here"
            routes.append(Verdict(False, None, False, f"its {word} cannot be computed ({why or 'no interval'})"))
        else:
            margin = spec.threshold - number if op == "<=" else number - spec.threshold
            sign = "≤" if op == "<=" else "≥"
            if margin >= 0:
                routes.append(Verdict(True, margin, True, f"{word} {fmt(number)} {sign} {fmt(spec.threshold)} "
                                                          f"(margin {fmt(margin)})"))
            else:
                other = ">" if op == "<=" else "<"
                routes.append(Verdict(False, margin, True, f"{word} {fmt(number)} {other} {fmt(spec.threshold)} by "
                                                           f"{fmt(-margin)}"))
    if spec.undetectable:
        routes.append(_undetectable(spec, numbers))
    passing = [r for r in routes if r.passed]
    chosen = passing[0] if passing else routes[0]
    words = chosen.words if passing else "; ".join(r.words for r in routes)
    margin = next((r.margin for r in routes if r.margin is not None), None)
    return Verdict(bool(passing), margin, passing != [] or all(r.evaluated for r in routes), words,
                   not passing and any(r.underpowered for r in routes))


def _equivalent(spec: CriterionSpec, numbers: Numbers) -> Verdict:
    """Equivalence (`equivalent_within = x`): the whole 95% interval lies within ±x. Each end is a one-sided test at
    2.5% ("at least x", "at most −x"), both rejected: two one-sided tests, stricter than TOST's usual 90% interval.
    A small study has a wide interval and cannot pass it, so it needs no statement of power."""
    assert spec.threshold is not None
    if numbers.ci_low is None or numbers.ci_high is None:
        why = numbers.missing_interval if numbers.value is not None else "the measure has no value here"
        return Verdict(False, None, False, f"its 95% interval cannot be computed ({why or 'no interval'})")
    farthest = max(-numbers.ci_low, numbers.ci_high)  # the end farthest from 0
    margin = spec.threshold - farthest
    band = f"±{fmt(spec.threshold)}"
    if margin >= 0:
        return Verdict(True, margin, True, f"95% interval within {band} (margin {fmt(margin)})")
    end = numbers.ci_high if numbers.ci_high == farthest else numbers.ci_low
    return Verdict(False, margin, True, f"95% interval reaches {fmt(end)}, outside {band} by {fmt(-margin)}")


def _undetectable(spec: CriterionSpec, numbers: Numbers) -> Verdict:
    """"No disparity": nothing detected at the adjusted p, by a design able to detect `spec.effect`."""
    if numbers.p_value is None:
        return Verdict(False, None, False, "no disparity test to read: " + (numbers.missing_p_value or "no p-value"))
    p = numbers.p_adjusted if numbers.p_adjusted is not None else numbers.p_value
    if p < spec.alpha:
        return Verdict(False, None, True, f"a disparity is detected ({p_words(numbers)} < {spec.alpha:g})")
    assert spec.effect is not None  # the spec requires it with undetectable
    found = f"no disparity detected ({p_words(numbers)} ≥ {spec.alpha:g})"
    smallest = numbers.smallest_detectable
    if smallest is None and numbers.missing_smallest:  # not "too small": the figure was never computed
        return Verdict(False, None, False, f"{found}, and no power figure to read: {numbers.missing_smallest}")
    if smallest is None:
        return Verdict(False, None, True, f"{found}, but this design cannot show there is none: it is too small to "
                                          f"detect any disparity with {POWER:.0%} power", underpowered=True)
    needed = required_detectable(smallest, spec.alpha, max(numbers.tests, 1))
    at = f" at α = {spec.alpha:g}/{numbers.tests}" if numbers.tests > 1 else f" at α = {spec.alpha:g}"
    if needed > spec.effect:
        return Verdict(False, None, True, f"{found}, but this design is too small to show there is none: the "
                                          f"smallest disparity it detects with {POWER:.0%} power{at} is "
                                          f"{fmt(needed)} > the effect {fmt(spec.effect)} it must be able to see",
                       underpowered=True)
    return Verdict(True, None, True, f"{found}, by a design that detects {fmt(needed)} with {POWER:.0%} power{at} "
                                     f"(≤ the effect {fmt(spec.effect)})")


@dataclass
class Pending:
    """A criterion whose members' numbers are read and whose verdict waits for the family's adjusted p-values."""

    spec: CriterionSpec
    members: list[Numbers]
    run_ids: list[str]
    what: str
    every: str | None = None
    #: what to add when the reported member fails for want of power: the planner's size (called only then)
    advice: Callable[[Numbers], str] | None = None


def adjust_family(pending: Sequence[Pending]) -> int:
    """Holm-adjust, in place, every p-value a verdict reads (each member of each `undetectable` criterion) as one
    family; returns its size. A member without a p-value is left out of the count (it fails on its own)."""
    slots = [(i, j) for i, item in enumerate(pending) if item.spec.undetectable
             for j, numbers in enumerate(item.members) if numbers.p_value is not None]
    adjusted = holm([pending[i].members[j].p_value for i, j in slots])
    for (i, j), p in zip(slots, adjusted, strict=True):
        pending[i].members[j] = replace(pending[i].members[j], p_adjusted=float(p), tests=len(slots))
    return len(slots)


def multiplicity_words(tests: int) -> str:
    """The rule as the output states it."""
    return (f"{RULES[MULTIPLICITY]} over the check's {tests} disparity test{'s' if tests != 1 else ''}: each "
            "verdict reads its adjusted p")


def judge(pending: Pending) -> CriterionResult:
    return evaluate(pending.spec, pending.members, pending.run_ids, pending.what, pending.every, pending.advice)


def _shown(numbers: Numbers) -> str:
    interval = f" [{fmt(numbers.ci_low)}, {fmt(numbers.ci_high)}]" if numbers.ci_low is not None and \
        numbers.ci_high is not None else ""
    return f"{fmt(numbers.value)}{interval}"


def evaluate(spec: CriterionSpec, members: Sequence[Numbers], run_ids: Sequence[str], what: str,
             every: str | None = None, advice: Callable[[Numbers], str] | None = None) -> CriterionResult:
    """The criterion over one member, or over every member (`every` names them: "terms", "groups", ...)."""
    run_id = run_ids[0] if run_ids else None
    base = {"name": spec.name, "study": spec.study, "measure": spec.measure, "threshold": spec.threshold,
            "run_id": run_id, "run_ids": list(run_ids), "rule": spec.rule(), "against": spec.against}
    if not members:
        return unevaluated(spec, f"{what}: nothing to judge", run_ids)
    judged = [(numbers, verdict(spec, numbers)) for numbers in members]
    failed = [(n, v) for n, v in judged if not v.passed]

    def badness(item: tuple[Numbers, Verdict]) -> float:
        return -math.inf if item[1].margin is None else item[1].margin

    if every is None:
        numbers, outcome = judged[0]
        reason = f"{what} {_shown(numbers)}: {outcome.words}"
        details: list[dict[str, Any]] = []
    else:
        numbers, outcome = min(failed or judged, key=badness)
        if failed:
            reason = (f"{len(failed)} of {len(judged)} {every} fail; the worst, {numbers.member!r}: {what} "
                      f"{_shown(numbers)}: {outcome.words}")
        else:
            reason = (f"all {len(judged)} {every} pass; the closest, {numbers.member!r}: {what} {_shown(numbers)}: "
                      f"{outcome.words}")
        details = [{"member": n.member, "value": n.value, "ci_low": n.ci_low, "ci_high": n.ci_high,
                    "p_value": n.p_value, "p_adjusted": n.p_adjusted, "smallest_detectable": n.smallest_detectable,
                    "passed": v.passed, "margin": v.margin} for n, v in judged]
    if outcome.underpowered and advice is not None:
        said = advice(numbers)
        reason += f"; {said.rstrip('.')}" if said else ""
    tests = max((n.tests for n in members), default=0)
    return CriterionResult(group=numbers.member, value=numbers.value, ci_low=numbers.ci_low, ci_high=numbers.ci_high,
                           p_value=numbers.p_value, passed=not failed, reason=reason + ".", margin=outcome.margin,
                           evaluated=all(v.evaluated or v.passed for _, v in judged), details=details,
                           p_adjusted=numbers.p_adjusted, multiplicity=multiplicity_words(tests) if tests else "",
                           smallest_detectable=numbers.smallest_detectable, effect=spec.effect, **base)


def unevaluated(spec: CriterionSpec, why: str, run_ids: Sequence[str] = ()) -> CriterionResult:
    """A criterion that cannot be judged here: it fails, with the reason."""
    return CriterionResult(spec.name, spec.study, spec.measure, spec.group, None, None, None, None, spec.threshold,
                           False, run_ids[0] if run_ids else None, f"not evaluated: {why}.", spec.rule(), None,
                           False, list(run_ids), spec.against)
