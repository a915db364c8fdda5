"""Pass or fail, with the sentence a person reads: one criterion against the numbers a study stored.

A criterion compares one number of a measure with its threshold: the estimate (`value_at_most`, `value_at_least`)
or a bound of its 95% interval (`upper_at_most`: the whole interval lies below the threshold, so a small sample
cannot pass by luck; `lower_at_least`). A disparity criterion may also pass when the study's permutation test
detects no disparity (`undetectable`: p >= alpha), read from the decoding summary's `<measure>_disparity_p_value`
column. With both, the criterion passes when either holds.

A number that is missing (no interval: a group with fewer than two resampled units; no p-value column; a statistic
the study refused; a study that cannot run here) fails the criterion with that reason: nothing passes silently.
"Every term" (group, family, attribute) criteria pass when every member passes, and report the worst member.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fairness_core.check.spec import CONDITIONS, CriterionSpec

NUMBER_WORDS = {"value": "value", "ci_high": "upper bound", "ci_low": "lower bound"}


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

    @classmethod
    def of(cls, member: str, value: Any, low: Any = None, high: Any = None, p_value: Any = None,
           **options: Any) -> Numbers:
        return cls(member, _finite(value), _finite(low), _finite(high), _finite(p_value), **options)


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

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "study": self.study, "measure": self.measure, "group": self.group,
                "value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "p_value": self.p_value,
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


def verdict(spec: CriterionSpec, numbers: Numbers) -> Verdict:
    """Whether one member's numbers pass the criterion, by how much, and why (see the module docstring)."""
    routes: list[Verdict] = []
    if spec.condition is not None:
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
        if numbers.p_value is None:
            routes.append(Verdict(False, None, False, "no disparity test to read: "
                                                      + (numbers.missing_p_value or "no p-value")))
        elif numbers.p_value >= spec.alpha:
            routes.append(Verdict(True, None, True, f"no disparity detectable (p = {numbers.p_value:.3g} ≥ "
                                                    f"{spec.alpha:g})"))
        else:
            routes.append(Verdict(False, None, True, f"a disparity is detected (p = {numbers.p_value:.3g} < "
                                                      f"{spec.alpha:g})"))
    passing = [r for r in routes if r.passed]
    chosen = passing[0] if passing else routes[0]
    words = chosen.words if passing else "; ".join(r.words for r in routes)
    margin = next((r.margin for r in routes if r.margin is not None), None)
    return Verdict(bool(passing), margin, passing != [] or all(r.evaluated for r in routes), words)


def _shown(numbers: Numbers) -> str:
    interval = f" [{fmt(numbers.ci_low)}, {fmt(numbers.ci_high)}]" if numbers.ci_low is not None and \
        numbers.ci_high is not None else ""
    return f"{fmt(numbers.value)}{interval}"


def evaluate(spec: CriterionSpec, members: Sequence[Numbers], run_ids: Sequence[str], what: str,
             every: str | None = None) -> CriterionResult:
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
                    "p_value": n.p_value, "passed": v.passed, "margin": v.margin} for n, v in judged]
    return CriterionResult(group=numbers.member, value=numbers.value, ci_low=numbers.ci_low, ci_high=numbers.ci_high,
                           p_value=numbers.p_value, passed=not failed, reason=reason + ".", margin=outcome.margin,
                           evaluated=all(v.evaluated or v.passed for _, v in judged), details=details, **base)


def unevaluated(spec: CriterionSpec, why: str, run_ids: Sequence[str] = ()) -> CriterionResult:
    """A criterion that cannot be judged here: it fails, with the reason."""
    return CriterionResult(spec.name, spec.study, spec.measure, spec.group, None, None, None, None, spec.threshold,
                           False, run_ids[0] if run_ids else None, f"not evaluated: {why}.", spec.rule(), None,
                           False, list(run_ids), spec.against)
