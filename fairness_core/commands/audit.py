"""`audit-scorer`: is a judge (a registry scorer or metric) itself biased? (Dixon et al. 2018; Borkan et al. 2019;
Dhamala et al. 2023 §6.3.2; see docs/audit.md.)

Contract (--json):
  audit-scorer --scorer NAME [--templates FILE --format iptts|eec|templates|texts] [--terms FILE]
               [--swap-run RUN_ID] [--column C] [--threshold X] [--resamples B] [--seed S]
    -> {"scorer", "rows": [{"term", "group", "n", "mean", "shift", "ci_low", "ci_high", "fpr", "flip_rate",
                            "subgroup_auc", "bpsn_auc", "bnsp_auc", ...}, ...], "refused": {statistic: why}, ...}
  Term rows (largest shift first), then one row per group (term null). Without --templates: the built-in
  IPTTS-style set x the built-in identity terms.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from fairness_core.cli import (
    UserFacingError,
    add_store_argument,
    executor_from,
    open_store,
    print_json,
    progress_printer,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit-scorer", help="audit a judge: score shift per identity term, flips, FPR, subgroup/BPSN/BNSP AUCs",
        description="Fill templates with identity terms (or swap the identity word of generated texts), score every "
                    "text with the judge, and report per term and group the mean shift against the across-group "
                    "background (95%% intervals that resample the design's clusters: the built-in set's 11 "
                    "patterns, an IPTTS file's templates), the share of labels flipped at the threshold, Dixon et "
                    "al.'s FPR on non-toxic templates with FPED and its permutation test of 'every term alike', "
                    "and Borkan et al.'s AUCs on labelled ones.")
    judge = parser.add_mutually_exclusive_group()
    judge.add_argument("--scorer", help="registry scorer (default: jigsaw-toxicity)")
    judge.add_argument("--metric", help="registry metric: each text scored against its template without the "
                                        "identity word")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="scorer or metric option (repeatable)")
    parser.add_argument("--column", help="the scorer column / metric output read (default: the scorer's measure)")
    parser.add_argument("--threshold", type=float,
                        help="decision threshold (default: the scorer's, e.g. 0.5 toxic, VADER compound <= -0.25)")
    parser.add_argument("--templates", metavar="FILE", help="templates file (default: the built-in IPTTS-style set)")
    parser.add_argument("--format", choices=("iptts", "eec", "templates", "texts"), default=None,
                        help="templates: one per line with {person} (label after a tab); iptts / eec: the released "
                             "CSVs; texts: generated texts, one per line, whose identity word is swapped")
    parser.add_argument("--terms", metavar="FILE", help="identity terms, 'group: term, term' per line "
                                                        "(default: the built-in madlibs adjectives in six groups)")
    parser.add_argument("--swap-run", metavar="RUN_ID", help="swap the identity word in a stored generation run's "
                                                             "texts (instead of --templates)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples over templates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--examples", type=int, default=10, help="texts with the largest shift in the output")
    parser.add_argument("--json", action="store_true")
    add_store_argument(parser)
    parser.set_defaults(handler=run_audit_scorer)


def _options(pairs: list[str]) -> dict[str, Any]:
    options = {}
    for text in pairs:
        key, eq, value = text.partition("=")
        if not eq or not key.strip():
            raise UserFacingError(f"--option {text!r} is not KEY=VALUE")
        options[key.strip()] = value
    return options


def run_audit_scorer(args: argparse.Namespace) -> int:
    from fairness_core import audit

    if args.swap_run and args.templates:
        raise UserFacingError("give --templates or --swap-run, not both")
    fmt = args.format or ("texts" if args.swap_run else "templates" if args.templates else "builtin")
    if args.templates is None and fmt in ("iptts", "eec", "templates") and not args.swap_run:
        raise UserFacingError(f"--format {fmt} needs --templates FILE")
    if args.swap_run and fmt != "texts":
        raise UserFacingError("--swap-run swaps words in generated texts: leave --format out (or give texts)")
    if args.examples < 0:
        raise UserFacingError(f"--examples must be 0 or more (got {args.examples})")
    store = open_store(args)
    try:
        texts = audit.stored_texts(store, args.swap_run) if args.swap_run else None
        request = audit.build_request(
            scorer=None if args.metric else (args.scorer or "jigsaw-toxicity"), metric=args.metric,
            column=args.column, threshold=args.threshold, options=_options(args.option), fmt=fmt,
            templates=args.templates, terms=args.terms, texts=texts,
            texts_name=f"run {args.swap_run}" if args.swap_run else "texts", resamples=args.resamples,
            seed=args.seed)
    except audit.AuditInputError as error:
        raise UserFacingError(str(error)) from None
    for note in request.design.notes:
        print(f"note: {note}", file=sys.stderr)
    result = audit.run_audit(request, store, on_progress=progress_printer("audit"), executor=executor_from(args))
    payload = audit.audit_json(result, args.examples)
    if not result.complete:
        print(f"the audit stopped ({result.status}); finished batches are stored and running it again resumes",
              file=sys.stderr)
    if args.json:
        print_json(payload)
        return 0 if result.complete else 1
    print(f"{payload['scorer']} ({payload['flagged_when'] or payload['column']}) on {request.design.name}: "
          f"{payload['templates']['n_templates']} templates x {payload['n_terms']} terms; 95% intervals: "
          f"{payload['resampled'].get('method', 'resampling')} over the {payload['resampled']['n_clusters']} "
          f"{payload['resampled']['unit']}")
    fped = payload.get("fped")
    if fped and fped["value"] is not None:
        print(f"  FPED {fped['value']:.3f}: {fped['headline']}")
    for name, why in payload["refused"].items():
        print(f"  {name}: not computed - {why}")
    for row in payload["rows"]:
        who = row["term"] if row["level"] == "term" else f"[{row['group']}]"
        interval = "" if row["ci_low"] is None else f" [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
        extra = "".join(f" {key} {row[key]:.3f}" for key in ("fpr", "flip_rate", "subgroup_auc", "bpsn_auc",
                                                             "bnsp_auc") if row[key] is not None)
        print(f"  {who:28s} shift {row['shift']:+.3f}{interval}{extra}")
    return 0 if result.complete else 1
