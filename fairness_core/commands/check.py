"""`check`: a fairness test suite in one file, for CI (docs/checks.md).

    python -m fairness_core check SPEC.toml [--baseline RUN_OR_CHECK_ID|last] [--json] [--junit FILE]

Exit codes: 0 every criterion passed, 1 a criterion failed (or could not be evaluated: it fails with its reason),
2 a bad spec or input (one sentence naming the key or file; nothing is run or written). `--json` prints
{check_id, system, baseline, criteria: [{name, study, measure, group, value, ci_low, ci_high, p_value, p_adjusted,
multiplicity, threshold, passed, run_id, reason, ...}], passed, ...}; `--junit FILE` writes one testcase per
criterion. The p-values the verdicts read are Holm-adjusted over the check (familywise; docs/checks.md).
"""

from __future__ import annotations

import argparse
import sys
import time

from fairness_core.cli import (
    UserFacingError,
    add_endpoint_arguments,
    add_store_argument,
    endpoint_source,
    executor_from,
    open_store,
    print_json,
    progress_printer,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check", help="run a fairness check (a TOML spec of studies and pass/fail criteria); exit 1 when one fails",
        description="Run the studies a spec names on its system, judge every criterion (thresholds on estimates and "
                    "95%% interval bounds, the disparity test Holm-adjusted over the check's tests, paired differences "
                    "with a baseline), store the check "
                    "(kind check) and print it. Exit 0: all pass; 1: a criterion failed; 2: bad spec or input.")
    parser.add_argument("spec", metavar="SPEC.toml", help="the check's spec (docs/checks.md; examples/ has one)")
    parser.add_argument("--baseline", metavar="RUN_OR_CHECK_ID",
                        help="compare with this stored generation run or check (or 'last': the newest stored check "
                             "of the same name); overrides the spec's [baseline]")
    parser.add_argument("--json", action="store_true", help="print the check as JSON (the documented contract)")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one testcase per criterion)")
    add_endpoint_arguments(parser)
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from fairness_core import check

    started = time.monotonic()
    try:
        if args.junit:
            check.check_destination(args.junit)  # before any work: a report that cannot be written is bad input
        if args.baseline is not None and not args.baseline.strip():
            raise UserFacingError("--baseline is empty; give a run or check id, or 'last'")
        spec = check.load_spec(args.spec, endpoint_model=endpoint_source(args))
    except (check.SpecError, check.OutputError) as error:
        raise UserFacingError(str(error)) from None
    if args.baseline and not spec.relative:
        print("note: --baseline is not used: the spec has no criterion with against = \"baseline\"", file=sys.stderr)
    for note in spec.decoding.notes if spec.decoding else ():
        print(f"note: {note}", file=sys.stderr)
    store = open_store(args)
    bars: dict[str, object] = {}

    def on_progress(what: str, progress: object) -> None:
        if what not in bars:
            bars[what] = progress_printer(what)
        bars[what](progress)  # type: ignore[operator]

    try:
        result = check.run_check(spec, store, baseline=args.baseline, on_progress=on_progress,
                                 executor=executor_from(args))
    except check.CheckInputError as error:
        raise UserFacingError(str(error)) from None
    if args.junit:
        try:
            check.write_junit(result, args.junit, time.monotonic() - started)
        except check.OutputError as error:
            raise UserFacingError(str(error)) from None
    if args.json:
        print_json(result.as_json())
    else:
        print("\n".join(check.text_lines(result)))
    return 0 if result.passed else 1
