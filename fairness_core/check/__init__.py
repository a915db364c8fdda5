"""Fairness checks a team runs on every release (issue 34): one TOML spec names the system, the studies and the
pass/fail criteria; `run_check` runs the studies through their faces (stored runs are read back), judges every
criterion (absolute thresholds on estimates and interval bounds; "no disparity" from the disparity test's p-value,
Holm-adjusted over the check's tests, by a design with the power to see the criterion's effect; paired differences
with a baseline) and stores the check as a run of kind `check`; `junit_xml` / `write_junit` give CI systems their
report. docs/checks.md has the spec's keys and a worked example.

This module is the package's one public face: the `check` command and the pages import from here only.
"""

from fairness_core.check.criteria import (
    MULTIPLICITY,
    CriterionResult,
    Numbers,
    Pending,
    adjust_family,
    evaluate,
    judge,
    required_detectable,
    verdict,
)
from fairness_core.check.output import OutputError, check_destination, junit_xml, text_lines, write_junit
from fairness_core.check.record import KIND, CheckResult, latest_check, read_check
from fairness_core.check.spec import CONDITIONS, CheckSpec, CriterionSpec, SpecError, load_spec, parse_spec
from fairness_core.check.studies import CheckInputError
from fairness_core.check.suite import run_check

__all__ = [
    "CONDITIONS",
    "KIND",
    "MULTIPLICITY",
    "CheckInputError",
    "CheckResult",
    "CheckSpec",
    "CriterionResult",
    "CriterionSpec",
    "Numbers",
    "OutputError",
    "Pending",
    "SpecError",
    "adjust_family",
    "check_destination",
    "evaluate",
    "judge",
    "junit_xml",
    "latest_check",
    "load_spec",
    "parse_spec",
    "read_check",
    "required_detectable",
    "run_check",
    "text_lines",
    "verdict",
    "write_junit",
]
