"""`cairo`: do prompt-based fairness metrics agree, and which prompt combinations make them agree (CAIRO).

    python -m fairness_core cairo --bias-table FILE --json [--permutations 99] [--no-heldout]
    python -m fairness_core cairo run --systems "smollm2-135m-instruct@top_p=0.9;...": systems x prompt
        sets x scorer -> bias table -> search, resumable through the run store (see docs/cairo.md)

FILE is a CSV `system,metric,prompt_set,bias[,n_prompts]`; each metric has a set named `original`.
Output: {"pairs": [{"metric_a", "metric_b", "n_systems", "original_r", "by_size": [{"size", "r",
"p_value", "combo_a", "combo_b", "mean_r", ...extras}]}]} for every metric pair.
"""

from __future__ import annotations

import argparse
import sys

from fairness_core.cli import (
    ENDPOINT_WORD,
    UserFacingError,
    add_endpoint_arguments,
    add_store_argument,
    endpoint_source,
    executor_from,
    open_store,
    print_json,
    resolve_endpoint_word,
)

DEFAULT_SYSTEMS = "smollm2-135m-instruct@top_p=0.9;smollm2-135m-instruct@top_p=0.5"
#: with an endpoint and no --systems: the endpoint under three decoding settings (a correlation needs 3)
ENDPOINT_SYSTEMS = f"{ENDPOINT_WORD}@top_p=0.5;{ENDPOINT_WORD}@top_p=0.9;{ENDPOINT_WORD}@temperature=0.7"


def register(subparsers: argparse._SubParsersAction) -> None:
    from fairness_core.cairo import METRICS  # the help lists every metric the pipeline accepts

    parser = subparsers.add_parser(
        "cairo", help="CAIRO: correlation of prompt-based fairness metrics and the prompt combinations that raise it")
    parser.add_argument("--bias-table", help="CSV system,metric,prompt_set,bias[,n_prompts] to search")
    _search_options(parser)
    add_store_argument(parser)
    parser.set_defaults(handler=search)
    sub = parser.add_subparsers(dest="cairo_command", metavar="{run}")
    run_parser = sub.add_parser("run", help="systems x prompt sets x scorer -> bias table -> search (stored)")
    run_parser.add_argument("--systems", default=None,
                            help='";"-separated MODEL@knob=v,knob=v (e.g. "smollm2-135m-instruct@top_p=0.9,'
                                 'temperature=0.7;gpt2@greedy"); knobs: top_p, top_k, temperature, greedy. MODEL '
                                 '"endpoint" is the --endpoint* server, "endpoint:NAME" one from endpoints.toml. '
                                 f'Default: {DEFAULT_SYSTEMS!r}, or {ENDPOINT_SYSTEMS!r} with an endpoint')
    run_parser.add_argument("--metrics", default="BOLD gender,HONEST gender (valid)",
                            help=f"comma-separated metrics ({', '.join(METRICS)})")
    run_parser.add_argument("--sets", type=int, default=None,
                            help="use the original plus N paraphrase sets of each metric (default: all)")
    run_parser.add_argument("--set-order", choices=("round-robin", "file"), default="round-robin",
                            help="which N sets: in turn across paraphrasing models (default) or in file order")
    run_parser.add_argument("--per-subgroup", type=int, default=10,
                            help="original prompts drawn per subgroup (seeded; the same indices in every set)")
    run_parser.add_argument("--scorer", default="jigsaw-toxicity",
                            help="scorer of the registry (default: jigsaw-toxicity, the offline Jigsaw toxicity "
                                 "classifier standing in for the paper's BERT toxicity classifier)")
    run_parser.add_argument("--scorer-option", action="append", default=[], metavar="KEY=VALUE",
                            help="scorer option, e.g. lexicon_path=hurtlex_EN.tsv for honest (repeatable)")
    run_parser.add_argument("--seeds", default="0", help="comma-separated seeds (paper: 5)")
    run_parser.add_argument("--max-new-tokens", type=int, default=25)
    run_parser.add_argument("--sample-seed", type=int, default=0, help="seed of the prompt subsample")
    run_parser.add_argument("--batch-size", type=int, default=64)
    run_parser.add_argument("--out", help="also write the bias table CSV here")
    run_parser.add_argument("--bootstrap", type=int, default=200,
                            help="prompt-bootstrap replicates for the intervals of the mean r and the rank τ/ρ "
                                 "(0: off)")
    add_endpoint_arguments(run_parser)
    _search_options(run_parser)
    add_store_argument(run_parser)
    run_parser.set_defaults(handler=run)


def _search_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--permutations", type=int, default=0,
                        help="system shuffles for the permutation p-value that redoes the search (0: off)")
    parser.add_argument("--no-heldout", action="store_true", help="skip the leave-one-system-out r")
    parser.add_argument("--seed", type=int, default=0, help="seed of the permutations")
    parser.add_argument("--combination", choices=("weighted", "released"), default="weighted",
                        help="weighted (default): a combination's bias = prompt-weighted mean of its distinct sets' "
                             "biases, every cross pair searched; released (the authors' code): Eq. 1 on the pooled "
                             "generations, sets may repeat, the same combination for both metrics (needs the "
                             "subgroup_scores column `cairo run` writes)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def _print_text(payload: dict) -> None:
    for note in payload.get("notes", []):
        print(f"note: {note}", file=sys.stderr)
    for pair in payload["pairs"]:
        print(f"{pair['metric_a']} vs {pair['metric_b']} — {pair['n_systems']} systems; original r = "
              f"{_fmt(pair['original_r'])}")
        print("  size      r   p_value  mean_r  heldout_r  p_search  combo_a | combo_b")
        for row in pair["by_size"]:
            print(f"  {row['size']:>4} {_fmt(row['r']):>7} {_fmt(row['p_value'], 4):>8} {_fmt(row['mean_r']):>7} "
                  f"{_fmt(row['heldout_r']):>10} {_fmt(row['p_search'], 3):>9}  {', '.join(row['combo_a'])} | "
                  f"{', '.join(row['combo_b'])}")


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


#: permutation p-values: 10,000 shuffles resolve p to 1e-4; each redoes the whole search
MAX_PERMUTATIONS = 10_000


def _check_permutations(count: int) -> None:
    if not 0 <= count <= MAX_PERMUTATIONS:
        raise UserFacingError(f"--permutations must be between 0 and {MAX_PERMUTATIONS:,} (got {count:,}); each "
                              "permutation redoes the whole search")


def _search_with_estimate(table: object, args: argparse.Namespace) -> dict:
    """The search; with permutations, one unpermuted search is timed first and the estimate printed."""
    import time

    from fairness_core.cairo import search_json
    from fairness_core.jobs import format_seconds

    if args.permutations > 0:
        started = time.perf_counter()
        search_json(table, permutations=0, heldout=False, seed=args.seed,  # type: ignore[arg-type]
                    combination=args.combination)
        per_search = time.perf_counter() - started
        print(f"estimated time: about {format_seconds(per_search * (args.permutations + 1))} "
              f"({args.permutations:,} permutations × {per_search:.2f} s per search on this machine)",
              file=sys.stderr)
    return search_json(table, permutations=args.permutations, heldout=not args.no_heldout,  # type: ignore[arg-type]
                       seed=args.seed, combination=args.combination)


def _seeds(text: str) -> tuple[int, ...]:
    from fairness_core.cairo import CairoInputError, parse_seeds

    try:
        return parse_seeds(text)
    except CairoInputError as error:  # the page's sentence, named as the flag
        raise UserFacingError(f"--{error}") from None


def _check_out(out: str | None) -> None:
    """The --out CSV's folder exists and the name is not a folder: checked before anything runs."""
    if not out:
        return
    from pathlib import Path

    target = Path(out).expanduser()
    if target.is_dir():
        raise UserFacingError(f"--out {out} is a folder; give a file name such as {target / 'bias_table.csv'}")
    if not target.parent.is_dir():
        raise UserFacingError(f"--out {out}: the folder {target.parent} does not exist; nothing was run")


def search(args: argparse.Namespace) -> int:
    from fairness_core.cairo import BiasTableError, read_bias_table_file

    if not args.bias_table:
        raise UserFacingError("give --bias-table FILE (a CSV system,metric,prompt_set,bias[,n_prompts]) or use "
                              "`cairo run` to compute one")
    if args.permutations < 0:
        _check_permutations(args.permutations)
    try:
        table = read_bias_table_file(args.bias_table)
        if args.permutations > MAX_PERMUTATIONS:  # refused with what it would have cost on this machine
            import time

            from fairness_core.cairo import search_json
            from fairness_core.jobs import format_seconds

            started = time.perf_counter()
            search_json(table, permutations=0, heldout=False, seed=args.seed, combination=args.combination)
            cost = (time.perf_counter() - started) * args.permutations
            raise UserFacingError(f"--permutations {args.permutations:,} is above the limit of {MAX_PERMUTATIONS:,} "
                                  f"(about {format_seconds(cost)} on this machine: each permutation redoes the "
                                  "whole search)")
        payload = _search_with_estimate(table, args)
    except BiasTableError as error:
        raise UserFacingError(str(error)) from None
    if args.json:
        print_json(payload)
    else:
        _print_text(payload)
    return 0


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from fairness_core.cairo import (
        BiasTableError,
        CairoDataError,
        CairoInputError,
        RunRequest,
        add_uncertainty,
        parse_systems,
        plan_sets,
        read_bias_table,
        run_pipeline,
    )
    from fairness_core.decoding import estimate

    served = endpoint_source(args)
    systems_text = args.systems or (ENDPOINT_SYSTEMS if served else DEFAULT_SYSTEMS)
    _check_permutations(args.permutations)
    _check_out(args.out)
    seeds = _seeds(args.seeds)
    try:
        options = dict(_option(o) for o in args.scorer_option)
        systems = tuple(replace(system, model=resolved, name="") if resolved != system.model else system
                        for system in parse_systems(systems_text)
                        for resolved in [resolve_endpoint_word(system.model, args)])
        request = RunRequest(
            systems=systems, metrics=tuple(m.strip() for m in args.metrics.split(",") if m.strip()),
            n_sets=args.sets, set_order=args.set_order, per_subgroup=args.per_subgroup, scorer=(args.scorer, options),
            seeds=seeds, max_new_tokens=args.max_new_tokens,
            sample_seed=args.sample_seed, batch_size=args.batch_size)
        problems = request.problems()
        if problems:
            raise CairoInputError(problems[0])
        work = estimate(len(request.systems), len(plan_sets(request).prompts.items), len(seeds), args.max_new_tokens)
        print(f"estimated: {work.describe()} (generations already stored are read back)", file=sys.stderr)
        store = open_store(args)
        from fairness_core.cli import progress_printer

        outcome = run_pipeline(request, store, on_progress=progress_printer("cairo"), executor=executor_from(args))
    except (CairoInputError, CairoDataError, ValueError) as error:
        raise UserFacingError(str(error).splitlines()[0]) from None
    if outcome.status != "complete":
        print("cancelled; finished batches are stored and the next run resumes", file=sys.stderr)
        return 1
    if args.out:
        outcome.bias_table.to_csv(args.out, index=False)
    if args.bootstrap < 0:
        raise UserFacingError(f"--bootstrap must be 0 or more (got {args.bootstrap})")
    try:
        table = read_bias_table(outcome.bias_table, "the computed bias table")
        payload = _search_with_estimate(table, args)
        if args.bootstrap:
            add_uncertainty(payload, table, outcome.generations, outcome.value_column, args.combination,
                            n_boot=args.bootstrap, seed=args.seed)
    except BiasTableError as error:
        raise UserFacingError(str(error)) from None
    payload["run_ids"] = outcome.run_ids
    payload["bias_table"] = [_clean(row) for row in outcome.bias_table.to_dict("records")]
    payload["prompt_split"] = [_clean(row) for row in outcome.split_rows]
    payload["indices"] = outcome.indices
    payload["notes"] = [*outcome.notes, *payload["notes"]]
    if args.json:
        print_json(payload)
    else:
        _print_text(payload)
    return 0


def _clean(row: dict) -> dict:
    """NaN -> null, so the output is strict JSON."""
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}


def _option(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise UserFacingError(f"--scorer-option {text!r} is not KEY=VALUE")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()
