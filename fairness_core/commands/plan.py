"""`plan`: from a stored pilot run, the units a question needs (and the smallest effect the pilot's size detects).

    python -m fairness_core plan RUN_ID --effect 0.05 --power 0.8 [--measure NAME] [--against RUN_ID] [--json]

Prints one sentence ("To detect a disparity in negative sentiment of 0.05 … plan about 140 templates …"), or with
--json {measure, effect, power, n_units, n_samples, mde_at_pilot_size, method, pilot_run} and the extras
docs/planning.md lists. Pilots: a decoding run (a rate's disparity), a CAIRO run (Eq. 1 of one prompt set), a
metric-bias run (the stereotypical difference), two runs compared (--against: a paired difference), a judge audit
of the built-in templates (a term's shift, or FPED), a CrowS-Pairs run of the stereotype benchmarks (pairs for a
share preferring the stereotyped sentence: the sign test's exact power). Nothing is written to the store.
"""

from __future__ import annotations

import argparse

from fairness_core.cli import UserFacingError, add_store_argument, open_store, print_json

AUDIT_KIND = "audit-scores"
STEREOTYPE_KIND = "stereotype-scores"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plan", help="plan before you run: the prompts (and samples) a question needs, from a stored pilot run")
    parser.add_argument("run_id", metavar="RUN_ID", help="the pilot run (`runs list` shows them)")
    parser.add_argument("--effect", type=float, required=True,
                        help="the size of the difference to detect, in the measure's own units (e.g. a disparity "
                        "of 0.05 between negative-sentiment rates)")
    parser.add_argument("--power", type=float, default=0.8,
                        help="the chance of detecting it, above 0.05 and at most 0.99 (default 0.8)")
    parser.add_argument("--measure", help="what to plan (default: negative_sentiment_disparity for a decoding run; "
                                          "stereotypical_difference for a metric-bias run; bias with --against; "
                                          "shift for an audit)")
    parser.add_argument("--against", metavar="RUN_ID", help="a second run: plan the paired difference between them")
    parser.add_argument("--family", help="plan one family (attribute, prompt set) instead of the mean over them")
    parser.add_argument("--arm", help="the setting, system or metric output of the run (default: its first)")
    parser.add_argument("--term", help="an audit's term (default: the power averaged over its terms)")
    parser.add_argument("--samples", type=int, help="samples per prompt to plan with (default: the pilot's)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the simulation")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from fairness_core import audit, planning, stereotypes

    store = open_store(args)
    try:
        planning.check_target(args.effect, args.power)
        planning.check_seed(args.seed)
        info = store.get_run(args.run_id.strip()) if store.path.exists() else None
        if info is not None and info.kind == STEREOTYPE_KIND:
            _check_stereotype_options(args, info.run_id)
            plan = planning.Plan(**stereotypes.plan_stored_crows(store, info.run_id, args.effect, args.power,
                                                                 args.measure))
        elif info is not None and info.kind == AUDIT_KIND and args.against is None:
            _check_audit_options(args, info.run_id)
            plan = audit.plan_stored_audit(store, info.run_id, args.effect, args.power, args.measure or "shift",
                                           args.term, args.seed)
        else:
            if args.term is not None:
                raise planning.PlanError("--term goes with an audit run (a judge's scores per identity term)")
            plan = planning.plan_run(store, args.run_id, args.effect, args.power, args.measure, args.family,
                                     args.arm, args.against, args.samples, args.seed)
    except (planning.PlanError, stereotypes.StereotypePlanError) as error:
        raise UserFacingError(str(error)) from None
    if args.json:
        print_json(plan.as_json())
    else:
        print(plan.answer)
    return 0


def _check_audit_options(args: argparse.Namespace, run_id: str) -> None:
    """PlanError for an option a judge audit has nothing for: it was accepted and ignored before (issue 43), so a
    reader asking for one family, setting or number of samples got a plan of something else without a word."""
    from fairness_core.planning import PlanError

    if args.family is not None:
        raise PlanError(f"run {run_id} is a judge audit, which has no family {args.family!r} (no families at "
                        "all): --family goes with a decoding, CAIRO or metric-bias run; an audit plans one "
                        "identity term with --term")
    if args.arm is not None:
        raise PlanError(f"run {run_id} is a judge audit of one judge, which has no setting or system "
                        f"{args.arm!r}: --arm goes with a decoding, CAIRO or metric-bias run")
    if args.samples is not None:
        raise PlanError(f"run {run_id} is a judge audit, which scores each text once, so it has no samples per "
                        "prompt to plan: leave out --samples (the audit plans patterns)")


def _check_stereotype_options(args: argparse.Namespace, run_id: str) -> None:
    """A CrowS-Pairs run plans the share of pairs preferring the stereotyped sentence, nothing else: an option it has
    nothing for is one sentence, not ignored."""
    from fairness_core.stereotypes import StereotypePlanError

    for option, value in (("--against", args.against), ("--family", args.family), ("--arm", args.arm),
                          ("--term", args.term), ("--samples", args.samples)):
        if value is not None:
            raise StereotypePlanError(f"run {run_id} is a stereotype-benchmark run, planned on its own score "
                                      "(CrowS-Pairs: pct_stereotype; StereoSet: ss; BBQ: bias_disambig or "
                                      f"bias_ambig): {option} does not apply")
