"""`audit-scorer`: is a judge (a registry scorer or metric) itself biased? (Dixon et al. 2018; Borkan et al. 2019;
Dhamala et al. 2023 §6.3.2; see docs/audit.md.)

Contract (--json):
  audit-scorer --scorer NAME [--templates FILE --format iptts|eec|templates|texts] [--terms FILE]
               [--swap-run RUN_ID] [--column C] [--threshold X] [--resamples B] [--seed S]
    -> {"scorer", "rows": [{"term", "group", "n", "mean", "shift", "ci_low", "ci_high", "fpr", "flip_rate",
                            "subgroup_auc", "bpsn_auc", "bnsp_auc", ...}, ...], "refused": {statistic: why}, ...}
  Term rows (largest shift first), then one row per group (term null). Without --templates: the built-in
  IPTTS-style set x the built-in identity terms. "unscored": texts without a score (an LLM judge read by text:
  its unparseable replies), counted, never dropped silently.

An LLM judge (docs/judges.md): --scorer llm-judge --option rubric=toxicity --option read=likelihood|text, its
model by --option model=PRESET_OR_ID or by --endpoint-url URL --endpoint-model NAME. Its own checks run instead of
the term audit when asked (each one JSON object, nothing stored):
  --order-bias RUN_ID      a stored run's two systems judged pairwise in both orders
    -> {"check": "order_bias", "flip_share": {value, ci_low, ci_high, n}, "first_position_wins": {...},
        "x_preferred", "x_balanced", "verdicts": {"first_position": {p_value, p_holm, significant}, "preference"}}
  --identity-statement     the same answers with and without "As someone who is TERM, I would say: ..."
    -> {"check": "identity_statement", "rows": [{"level", "term", "group", "n_answers", "shift", "ci_low",
        "ci_high", "p_value", "q_value", "flagged", "vs_average_shift", ...}, ...], "unparseable": {n, of} | null}
  --consistency K          the judge's written answer sampled K times (--temperature) per text
    -> {"check": "consistency", "all_agree": {value, ci_low, ci_high, n}, "modal_share": {...}, ...}
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

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
    checks = parser.add_argument_group("an LLM judge's own checks (--scorer llm-judge; docs/judges.md)")
    checks.add_argument("--order-bias", metavar="RUN_ID",
                        help="judge a stored generation run's two systems pairwise, each pair in both orders: flip "
                             "share and first-position win rate (instead of the term audit)")
    checks.add_argument("--identity-statement", action="store_true",
                        help="judge answers with and without a stated author identity (the built-in answers, or "
                             "--swap-run / --templates FILE --format texts): grade shift per group and term")
    checks.add_argument("--consistency", type=int, metavar="K",
                        help="sample the judge's written answer K times per text (at --temperature): the share "
                             "whose answers all agree")
    checks.add_argument("--temperature", type=float, default=1.0, help="temperature of --consistency's samples")
    parser.add_argument("--json", action="store_true")
    add_endpoint_arguments(parser)
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


def _judge_options(args: argparse.Namespace) -> dict[str, Any]:
    """--option pairs, with the model the --endpoint* flags name as an LLM judge's `model`."""
    options = _options(args.option)
    source = endpoint_source(args)
    if source is not None:
        if (args.scorer or "") != "llm-judge":
            raise UserFacingError("the --endpoint flags name an LLM judge's model: give --scorer llm-judge")
        if "model" in options:
            raise UserFacingError("give the judge's model by --option model=... or by the --endpoint flags, not both")
        options["model"] = source
    return options


def run_audit_scorer(args: argparse.Namespace) -> int:
    from fairness_core import audit

    options = _judge_options(args)
    asked = [flag for flag, given in (("--order-bias", args.order_bias), ("--identity-statement",
             args.identity_statement), ("--consistency", args.consistency is not None)) if given]
    if asked:
        return _run_llm_check(args, asked, options)
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
            column=args.column, threshold=args.threshold, options=options, fmt=fmt,
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
    if payload["unscored"]["n"]:
        print(f"  unscored texts (an LLM judge's unparseable replies): {payload['unscored']['n']} of "
              f"{payload['unscored']['of']}, left out of every statistic")
    for name, why in payload["refused"].items():
        print(f"  {name}: not computed - {why}")
    for row in payload["rows"]:
        who = row["term"] if row["level"] == "term" else f"[{row['group']}]"
        interval = "" if row["ci_low"] is None else f" [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
        extra = "".join(f" {key} {row[key]:.3f}" for key in ("fpr", "flip_rate", "subgroup_auc", "bpsn_auc",
                                                             "bnsp_auc") if row[key] is not None)
        print(f"  {who:28s} shift {row['shift']:+.3f}{interval}{extra}")
    return 0 if result.complete else 1


def _check_texts(args: argparse.Namespace, store: Any) -> list[str] | None:
    """The answers an LLM check judges: a stored run's (--swap-run), a texts file's, else None (built-in)."""
    from fairness_core import audit

    if args.swap_run:
        return audit.stored_texts(store, args.swap_run)
    if args.templates:
        if (args.format or "texts") != "texts":
            raise UserFacingError("the identity-statement and consistency checks judge answers: give --templates "
                                  "FILE with --format texts (one answer per line)")
        from pathlib import Path

        try:
            return Path(args.templates).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise UserFacingError(f"texts file {args.templates} cannot be read as UTF-8 text "
                                  f"({type(error).__name__})") from None
    return None


def _run_llm_check(args: argparse.Namespace, asked: list[str], options: dict[str, Any]) -> int:
    """One of an LLM judge's checks (docs/judges.md), printed; bad input is one sentence and nothing is stored."""
    from fairness_core import audit

    if len(asked) > 1:
        raise UserFacingError(f"give one check at a time ({' and '.join(asked)} were given)")
    if (args.scorer or "") != "llm-judge" or args.metric:
        raise UserFacingError(f"{asked[0]} checks an LLM judge: give --scorer llm-judge")
    store = open_store(args)
    try:
        if args.order_bias:
            payload = audit.order_bias_audit(store, args.order_bias, options, args.resamples, args.seed).payload
        elif args.identity_statement:
            groups = None
            if args.terms:
                from pathlib import Path

                try:
                    groups = audit.parse_terms(Path(args.terms).read_text(encoding="utf-8"), Path(args.terms).name)
                except (OSError, UnicodeDecodeError) as error:
                    raise UserFacingError(f"terms file {args.terms} cannot be read as UTF-8 text "
                                          f"({type(error).__name__})") from None
            payload = audit.identity_statement_audit(options, _check_texts(args, store), groups,
                                                     column=args.column or "judge_grade")
        else:
            payload = audit.consistency_audit(options, _check_texts(args, store), args.consistency,
                                              args.temperature, args.resamples, args.seed)
    except audit.AuditInputError as error:
        raise UserFacingError(str(error)) from None
    if args.json:
        print_json(payload)
        return 0
    _print_check(payload)
    return 0


def _interval_text(estimate: dict[str, Any]) -> str:
    return f"{estimate['value']:.3f} [{estimate['ci_low']:.3f}, {estimate['ci_high']:.3f}]"


def _print_check(payload: dict[str, Any]) -> None:
    if payload["check"] == "order_bias":
        print(f"order bias on run {payload['run_id']} ({payload['systems']['x']} vs {payload['systems']['y']}, "
              f"{payload['n_pairs']} pairs x 2 orders; {payload['interval']}):")
        if payload.get("read") == "text":
            left = payload["unparseable"]
            print(f"  read by text ({payload['parse_rule']}): {left['replies']} of {left['of_replies']} replies "
                  f"unparseable; {left['pairs_left_out']} of {left['of_pairs']} pairs left out")
        for key in ("flip_share", "first_position_wins", "x_preferred", "x_balanced"):
            print(f"  {key:20s} {_interval_text(payload[key])}")
        for name, verdict in payload["verdicts"].items():
            p = "no test" if verdict["p_value"] is None else f"p {verdict['p_value']:.3g}, Holm {verdict['p_holm']:.3g}"
            print(f"  {name}: {p}{' - significant' if verdict['significant'] else ''} ({verdict['claim']})")
        print(f"  multiplicity: {payload['multiplicity']['rule']} over the verdicts")
    elif payload["check"] == "identity_statement":
        print(f"identity statement ({payload['statement']!r}): {payload['n_answers']} answers x "
              f"{payload['n_terms']} terms, {payload['column']} shift; {payload['interval']}; "
              f"{payload['multiplicity']['rule']}, {payload['multiplicity']['screens']}")
        if payload["unparseable"]:
            print(f"  unparseable replies: {payload['unparseable']['n']} of {payload['unparseable']['of']}")
        for row in payload["rows"]:
            who = row["term"] if row["level"] == "term" else f"[{row['group']}]"
            shift = "no value" if row["shift"] is None else f"{row['shift']:+.3f}"
            interval = "" if row["ci_low"] is None else f" [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
            q = "" if row["q_value"] is None else f" q {row['q_value']:.3f}"
            relative = "" if row["vs_average_shift"] is None else f"; vs average {row['vs_average_shift']:+.3f}" + (
                "" if row["vs_average_q_value"] is None else f" q {row['vs_average_q_value']:.3f}")
            print(f"  {who:28s} shift {shift}{interval}{q}{' flagged' if row['flagged'] else ''}{relative}")
    else:
        print(f"consistency: {payload['n_texts']} texts x {payload['repeats']} samples at temperature "
              f"{payload['temperature']:g}; {payload['interval']}")
        print(f"  all repeats agree   {_interval_text(payload['all_agree'])}")
        print(f"  modal answer share  {_interval_text(payload['modal_share'])}")
        print(f"  unparseable replies {payload['unparseable_share']:.3f}")
