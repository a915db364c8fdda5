"""`compare`, `sql` and `report`: stored runs side by side, a read-only SQL console, a self-contained report."""

from __future__ import annotations

import argparse
import sys

from fairness_core.cli import UserFacingError, add_store_argument, open_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    compare = subparsers.add_parser(
        "compare", help="line stored runs up on what they share: estimates, differences with (paired) intervals")
    compare.add_argument("run_ids", nargs="+", metavar="RUN_ID",
                         help="two or more run ids: the first is compared with each of the others (other − first); "
                              "one run of several settings or systems: its first against each of the others")
    compare.add_argument("--by", action="append",
                         help="group by this field instead of the kind's default keys (e.g. family, config.top_p, "
                              "source, attribute); repeatable")
    compare.add_argument("--metric", action="append", help="only this metric; repeatable")
    compare.add_argument("--examples", type=int, default=0, metavar="N",
                         help="also the N examples (first two runs) whose score changed most")
    compare.add_argument("--filter", action="append", default=[], metavar="FIELD=VALUE",
                         help="per-example rows: keep rows whose FIELD equals VALUE; repeatable")
    compare.add_argument("--search", default="", help="per-example rows: words the text must contain")
    compare.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    compare.add_argument("--seed", type=int, default=0)
    compare.add_argument("--pairwise-judge", action="store_true",
                         help="two generation runs: an LLM judge reads each prompt's two answers in both orders "
                              "and says which run's it prefers (share preferred with an interval over prompts, "
                              "position bias beside it; issue 47)")
    compare.add_argument("--judge-option", action="append", default=[], metavar="KEY=VALUE",
                         help="with --pairwise-judge: the judge's options, e.g. model=PRESET_OR_PATH (default: "
                              "the offline SmolLM2-135M-Instruct, a weak judge)")
    compare.add_argument("--json", action="store_true")
    add_store_argument(compare)
    compare.set_defaults(handler=run_compare)

    sql = subparsers.add_parser(
        "sql", help="one read-only SELECT over the store's views (runs, shards, results, the typed views)")
    sql.add_argument("query", help='e.g. "SELECT config.top_p, avg(value) FROM decoding GROUP BY ALL"')
    sql.add_argument("--limit", type=int, default=10_000, help="most rows returned (default 10000)")
    sql.add_argument("--timeout", type=float, default=10.0, help="seconds before the query is stopped (default 10)")
    sql.add_argument("--json", action="store_true", help='{"columns": [...], "rows": [[...], ...]}')
    add_store_argument(sql)
    sql.set_defaults(handler=run_sql_command)

    report = subparsers.add_parser(
        "report", help="one self-contained HTML file (charts drawn offline) of one or more stored runs")
    report.add_argument("run_ids", nargs="+", metavar="RUN_ID")
    report.add_argument("--out", required=True, help="the .html file to write")
    report.add_argument("--examples", type=int, default=8, help="per-example rows shown (default 8)")
    add_store_argument(report)
    report.set_defaults(handler=run_report)


def _filters(pairs: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UserFacingError(f"--filter {pair!r} is not FIELD=VALUE")
        found.setdefault(name.strip(), []).append(value)
    return found


def _pairwise(args: argparse.Namespace, store) -> int:
    """`compare RUN_A RUN_B --pairwise-judge`: which run's answers an LLM judge prefers (`audit.pairwise_preference`,
    a study the Compare service does not import: the command joins the two)."""
    from fairness_core import audit

    if len(args.run_ids) != 2:
        raise UserFacingError(f"--pairwise-judge compares two runs' answers; got {len(args.run_ids)} run(s)")
    options: dict[str, str] = {}
    for item in args.judge_option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserFacingError(f"--judge-option {item!r}: give KEY=VALUE, e.g. model=smollm2-135m-instruct")
        options[key.strip()] = value.strip()
    try:
        report = audit.pairwise_preference(store, args.run_ids[0], args.run_ids[1], options, args.resamples,
                                           args.seed)
    except audit.AuditInputError as error:
        raise UserFacingError(str(error)) from None
    if args.json:
        print_json(report.payload)
    else:
        print(audit.preference_sentence(report.payload))
    return 0


def _difference(record: dict) -> float:
    """The difference as said: float rounding of equal values (−1.163e-13 for 0) reads as 0."""
    scale = max(1.0, abs(record["run_a"]), abs(record["run_b"]))
    return 0.0 if abs(record["difference"]) < 1e-9 * scale else record["difference"]


def run_compare(args: argparse.Namespace) -> int:
    from fairness_core.compare import CompareError, compare_runs, example_json, p_text, per_example

    if args.resamples < 100:
        raise UserFacingError(f"--resamples {args.resamples} is too few for a 95% interval; use at least 100")
    if args.judge_option and not args.pairwise_judge:
        raise UserFacingError("--judge-option goes with --pairwise-judge")
    store = open_store(args)
    if args.pairwise_judge:
        return _pairwise(args, store)
    try:
        comparison = compare_runs(store, args.run_ids, by=args.by, metrics=args.metric,
                                  n_resamples=args.resamples, seed=args.seed)
    except CompareError as error:
        raise UserFacingError(str(error)) from error
    examples = None
    if args.examples > 0:
        try:
            examples = per_example(store, args.run_ids[0], args.run_ids[1] if len(args.run_ids) > 1 else None,
                                   metric=args.metric[0] if args.metric else None,
                                   filters=_filters(args.filter), search=args.search, limit=args.examples)
        except CompareError as error:  # the refusal names the option it came from (issue 43 §3)
            given = " ".join([*(f"--filter {f}" for f in args.filter), *([f"--search {args.search!r}"]
                                                                            if args.search else [])])
            raise UserFacingError(f"{given}: {error}" if given else str(error)) from error
    if args.json:
        payload = comparison.as_json()
        if examples is not None:
            payload["examples"] = example_json(examples)
        print_json(payload)
        return 0
    if comparison.message:
        print(comparison.message)
    for gaps in comparison.gaps.values():  # a partial comparison says so before any number
        for gap in gaps:
            print(f"not compared: {gap}")
    for contrast in comparison.contrasts:
        both = f"; both: {contrast.held}" if contrast.held else ""
        print(f"{contrast.arm_b.label} (run {contrast.arm_b.run_id}) against {contrast.arm_a.label} "
              f"(run {contrast.arm_a.run_id}): {contrast.differs}{both}")
    for note in comparison.notes:
        print(f"note: {note}")
    for row in comparison.rows.itertuples(index=False):
        record = row._asdict()
        keys = "  ".join(str(record[k]) for k in ["metric", *comparison.keys] if k in record and record[k] is not None)
        interval = ("no interval" if record["ci_low"] != record["ci_low"]
                    else f"[{record['ci_low']:.4g}, {record['ci_high']:.4g}]")
        tested = ""
        if record.get("run_a_corrected") == record.get("run_a_corrected") and \
                record.get("run_b_corrected") == record.get("run_b_corrected"):  # a disparity: said as in the page
            tested = (f"  bias-corrected {record['run_a_corrected']:.4g} -> {record['run_b_corrected']:.4g}, "
                      f"tests of no disparity: p {p_text(record['run_a_p_value'])} and "
                      f"p {p_text(record['run_b_p_value'])}")
        print(f"{keys}  {record['arm_a']} {record['run_a']:.4g} -> {record['arm_b']} {record['run_b']:.4g}  "
              f"diff {_difference(record):+.4g} {interval} ({record['pairing']}){tested}")
    if examples is not None:
        for record in examples.to_dict(orient="records"):
            what = record.get("prompt") or record.get("pair") or record.get("item")
            texts = (record.get("text_a"), record.get("text_b")) if "text_a" in record else \
                (record.get("text_1"), record.get("text_2"))
            print(f"{what}  {record.get('metric', 'gap')}  {record['value_a']:.4g} -> {record['value_b']:.4g}  "
                  f"{texts[0]!r} | {texts[1]!r}", file=sys.stdout)
    return 0


def run_sql_command(args: argparse.Namespace) -> int:
    from fairness_core.compare import SqlError, run_sql

    try:
        result = run_sql(open_store(args), args.query, row_limit=args.limit, timeout_s=args.timeout)
    except SqlError as error:
        raise UserFacingError(str(error)) from error
    if args.json:
        print_json(result.as_json())
    else:
        frame = result.frame()
        print(frame.to_string(index=False) if not frame.empty else "(no rows)")
    if result.truncated:
        print(f"only the first {result.row_limit} rows are shown (--limit)", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def run_report(args: argparse.Namespace) -> int:
    from fairness_core.compare import ReportError, write_report

    try:
        written = write_report(open_store(args), args.run_ids, args.out, n_examples=args.examples)
    except ReportError as error:
        raise UserFacingError(str(error)) from error
    print(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB; opens offline)")
    return 0
