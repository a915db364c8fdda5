"""A check for people and for CI systems: lines of text, and JUnit XML (one testcase per criterion).

JUnit XML as Jenkins, GitLab and GitHub (through the common test-report actions) read it: `<testsuites>` holding one
`<testsuite>` (the check) with `tests` / `failures` / `errors` / `skipped` counts and `<properties>` (check id,
system, baseline, spec), and one `<testcase classname="fairness.<study>" name="<criterion>">` per criterion. A failed
criterion carries `<failure message="<the sentence>" type="threshold">`; a criterion that could not be evaluated
fails too (`type="not-evaluated"`), never `<skipped>`: nothing passes silently. `<system-out>` holds the sentence
of a passed criterion, so the report says by how much it passed. Where verdicts read p-values, both the unadjusted
and the Holm-adjusted p are in the sentence and the failure's text, and the suite's `multiplicity` property (and a
line of the text) states the rule.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from fairness_core.check.criteria import fmt
from fairness_core.check.record import CheckResult


def multiplicity(result: CheckResult) -> str:
    """The rule the check's p-values were adjusted by, in words ("" when no verdict read a p-value)."""
    return next((c.multiplicity for c in result.criteria if c.multiplicity), "")


class OutputError(ValueError):
    """A report file that cannot be written; one sentence naming it. Nothing was written."""


def junit_xml(result: CheckResult, elapsed_s: float = 0.0) -> str:
    failures = sum(1 for c in result.criteria if not c.passed)
    suites = ET.Element("testsuites", name="fairness check", tests=str(len(result.criteria)),
                        failures=str(failures), errors="0", time=f"{elapsed_s:.3f}")
    suite = ET.SubElement(suites, "testsuite", name=result.name, tests=str(len(result.criteria)),
                          failures=str(failures), errors="0", skipped="0", time=f"{elapsed_s:.3f}",
                          timestamp=datetime.now(UTC).replace(microsecond=0).isoformat())
    properties = ET.SubElement(suite, "properties")
    for name, value in (("check_id", result.check_id), ("system", result.system),
                        ("baseline", result.baseline or ""), ("spec", result.spec_file),
                        ("from_store", str(result.from_store).lower()), ("runs", ",".join(result.runs)),
                        ("multiplicity", multiplicity(result) or "no verdict reads a p-value")):
        ET.SubElement(properties, "property", name=name, value=value)
    for criterion in result.criteria:
        case = ET.SubElement(suite, "testcase", classname=f"fairness.{criterion.study}", name=criterion.name,
                             time="0")
        if criterion.passed:
            ET.SubElement(case, "system-out").text = criterion.reason
            continue
        failure = ET.SubElement(case, "failure", message=criterion.reason,
                                type="threshold" if criterion.evaluated else "not-evaluated")
        failure.text = "\n".join(line for line in (
            f"criterion: {criterion.name}", f"rule: {criterion.rule}", f"measure: {criterion.measure} "
            f"({criterion.group})", f"value: {fmt(criterion.value)} [{fmt(criterion.ci_low)}, "
            f"{fmt(criterion.ci_high)}]", f"p-value: {fmt(criterion.p_value)}" if criterion.p_value is not None
            else "", f"adjusted p-value: {fmt(criterion.p_adjusted)} ({criterion.multiplicity})"
            if criterion.p_adjusted is not None else "",
            f"smallest detectable disparity (80% power, α = 0.05): {fmt(criterion.smallest_detectable)}; effect: "
            f"{fmt(criterion.effect)}" if criterion.effect is not None else "",
            f"runs: {', '.join(criterion.run_ids)}" if criterion.run_ids else "") if line)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def check_destination(path: str | Path) -> Path:
    """Refuse, before anything runs, a JUnit file that cannot be written (missing folder, a folder, not .xml)."""
    destination = Path(path).expanduser()
    if destination.is_dir():
        raise OutputError(f"--junit {destination} is a folder; give an .xml file name")
    if not destination.parent.is_dir():
        raise OutputError(f"--junit {destination}: the folder {destination.parent} does not exist; nothing was run")
    if destination.suffix.lower() != ".xml":
        raise OutputError(f"--junit {destination}: give a file name ending in .xml")
    return destination


def write_junit(result: CheckResult, path: str | Path, elapsed_s: float = 0.0) -> Path:
    """Write the JUnit XML atomically (a CI job never reads half a file)."""
    destination = check_destination(path)
    staging = destination.with_name(f".{destination.name}.{os.getpid()}.partial")
    try:
        staging.write_text(junit_xml(result, elapsed_s), encoding="utf-8")
        os.replace(staging, destination)
    except OSError as error:
        staging.unlink(missing_ok=True)
        raise OutputError(f"cannot write {destination} ({error.strerror or error}); nothing was written") from None
    return destination


def text_lines(result: CheckResult) -> list[str]:
    """What `check` prints without --json: a line per criterion, then the verdict."""
    lines = [f"check {result.check_id} ({result.name}): {result.system}"
             + (f" against {result.baseline}" if result.baseline else "")
             + (" — read from the store" if result.from_store else "")]
    for criterion in result.criteria:
        mark = "PASS" if criterion.passed else ("FAIL" if criterion.evaluated else "FAIL (not evaluated)")
        lines.append(f"  {mark}  {criterion.name}: {criterion.reason}")
    rule = multiplicity(result)
    if rule:
        lines.append(f"  p-values: {rule}")
    passed = sum(c.passed for c in result.criteria)
    lines.append(f"{passed} of {len(result.criteria)} criteria passed: the check "
                 f"{'passes' if result.passed else 'fails'}; runs behind it: {', '.join(result.runs) or 'none'}")
    return lines
