"""`slices`: the worst cells of a generation run, with intervals, tests at the design's unit and FDR control.

    python -m fairness_core slices RUN_ID [--by ATTR[,ATTR]] [--measure NAME] [--min-units K] [--fdr Q] [--json]

Prints the cells over the run's attributes (family, group, source template, setting, and for prompts of several
attributes each of them, e.g. gender and race; default: each that varies and every pair — with several attributes
per prompt, each attribute and every intersection, an empty intersection listed with 0 units), ranked by the worse
side's bound of the gap's interval, flagged cells marked, too-small cells said so, then the top cells' generations
with their scores. --json gives {measure, by, min_units, fdr, method, attributes, cells: [...], examples}.
docs/slices.md says what each test's null is and what the intervals generalise over. Nothing is written.
"""

from __future__ import annotations

import argparse

from fairness_core.cli import UserFacingError, add_store_argument, open_store, print_json

MAX_DRAWS = 20_000


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "slices", help="the worst groups of a generation run, found honestly: every cell with its n, interval, "
                       "test at the design's unit and Benjamini-Hochberg q-value")
    parser.add_argument("run_id", metavar="RUN_ID", help="a generation run (`runs list` shows them)")
    parser.add_argument("--by", action="append", metavar="ATTR[,ATTR]",
                        help="the attributes of one set of cells, from family, group, source, setting and the run's "
                             "own (gender, race, ... where its prompts carry several) (repeat for several sets; "
                             "default: each attribute that varies and every pair of them)")
    parser.add_argument("--measure", default=None,
                        help="what to slice (default negative_sentiment_rate; any rate or scorer column the run has)")
    parser.add_argument("--min-units", type=int, default=None, metavar="K",
                        help="cells with fewer units are reported as too small and not tested (default 5)")
    parser.add_argument("--fdr", type=float, default=None, metavar="Q",
                        help="false discovery rate of the flagged cells, strictly between 0 and 1 (default 0.1)")
    parser.add_argument("--resamples", type=int, default=None,
                        help="bootstrap resamples (default: the run's own, else 1000)")
    parser.add_argument("--permutations", type=int, default=None, help="permutations per test (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the permutations")
    parser.add_argument("--json", action="store_true", help="print the cells as JSON")
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from fairness_core import slices

    # at least enough draws for a percentile interval and a p-value of 0.01; at most what fits in memory at once
    for flag, value, least in (("--resamples", args.resamples, 100), ("--permutations", args.permutations, 99)):
        if value is not None and not least <= value <= MAX_DRAWS:
            raise UserFacingError(f"{flag} must be between {least} and {MAX_DRAWS:,} (got {value})")
    if args.seed < 0:
        raise UserFacingError(f"--seed must be 0 or more (got {args.seed})")
    store = open_store(args)
    try:
        table, record = slices.slice_run(
            store, args.run_id, args.by, args.measure or slices.DEFAULT_MEASURE,
            slices.DEFAULT_MIN_UNITS if args.min_units is None else args.min_units,
            slices.DEFAULT_FDR if args.fdr is None else args.fdr,
            args.resamples, args.permutations or slices.DEFAULT_PERMUTATIONS, args.seed)
    except slices.SlicesError as error:
        raise UserFacingError(str(error)) from None
    if args.json:
        print_json(slices.table_json(table, record))
    else:
        print(slices.table_text(table, record))
    return 0
