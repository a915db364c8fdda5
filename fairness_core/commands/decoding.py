"""`decoding`: sweep top-p / top-k / temperature and measure per-group negativity, disparity, diversity.

    python -m fairness_core decoding --model smollm2-135m-instruct --prompts regard \
        --grid "top_p=0.5,0.9;temperature=0.7" --samples 5 --max-new-tokens 30 --seed 0 --json

Prints one JSON row per configuration × group (contract keys first, extras documented in
docs/decoding.md), stores every generation in the run store, and serves repeated configurations
from it. A progress bar goes to stderr.
"""

from __future__ import annotations

import argparse
import sys

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
        "decoding", help="decoding sweep: per-group negative rates, disparity, diversity (Dhamala et al.)")
    parser.add_argument("--model", default="smollm2-135m-instruct",
                        help="causal LM: preset key, hub id, local directory or .gguf file")
    parser.add_argument("--quantization", choices=("none", "8bit", "4bit"), default="none",
                        help="bitsandbytes quantization (GPU)")
    parser.add_argument("--prompts", default="regard",
                        help="regard | bold:<domain> (gender, race, religious_ideology, political_ideology, "
                             "profession) | FILE with 'group: prompt' lines or group,prompt CSV")
    parser.add_argument("--groups", help="comma-separated groups to keep (default: all in the prompt set)")
    parser.add_argument("--bold-per-group", type=int, default=20, help="BOLD prompts drawn per group")
    parser.add_argument("--grid", default="top_p=0.9",
                        help='e.g. "top_p=0.5,0.9;temperature=0.7" (cartesian product of the knobs)')
    parser.add_argument("--samples", type=int, default=5, help="samples per prompt")
    parser.add_argument("--max-new-tokens", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threshold", type=float, default=-0.25, help="VADER compound <= this counts as negative")
    parser.add_argument("--quality-scorer", default="same",
                        help="causal LM for the quality proxy: 'same' (the generator), 'none', or a model id")
    parser.add_argument("--regard-model", default="regard-v3", help="regard classifier ('none' to skip)")
    parser.add_argument("--regard-negative-label", help="label of the negative class if not named '*neg*'")
    parser.add_argument("--batch-size", type=int, default=96, help="rows per batch (= per stored shard)")
    parser.add_argument("--full-length", action="store_true",
                        help="always generate --max-new-tokens (default: stop a row once its first sentence is "
                             "settled, which gives the same truncated outputs faster)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from fairness_core.data.prompts import PromptError, load_prompt_source
    from fairness_core.generation.grid import GridError, expand_grid, parse_grid
    from fairness_core.generation.summary import cli_rows, summarize
    from fairness_core.generation.sweep import SweepInputError, prepare_sweep, run_sweep

    # Cheap checks first: nothing loads before the input is known to be good.
    if args.samples <= 0:
        raise UserFacingError(f"--samples must be positive (got {args.samples})")
    if args.max_new_tokens <= 0:
        raise UserFacingError(f"--max-new-tokens must be positive (got {args.max_new_tokens})")
    if args.batch_size <= 0:
        raise UserFacingError(f"--batch-size must be positive (got {args.batch_size})")
    try:
        configs = expand_grid(parse_grid(args.grid), args.max_new_tokens)
        prompts = load_prompt_source(args.prompts, per_group=args.bold_per_group, seed=args.seed)
        if args.groups:
            prompts = prompts.only_groups(args.groups.split(","))
    except (GridError, PromptError) as error:
        raise UserFacingError(str(error)) from None
    store = open_store(args)
    try:
        plan = prepare_sweep(
            args.model, prompts, configs, args.samples, args.max_new_tokens, seed=args.seed,
            quantization=args.quantization,
            quality_scorer=None if args.quality_scorer == "none" else args.quality_scorer,
            regard_model=None if args.regard_model == "none" else args.regard_model,
            regard_negative_label=args.regard_negative_label, store=store, batch_size=args.batch_size,
            full_length=args.full_length,
        )
    except SweepInputError as error:
        raise UserFacingError(str(error)) from None
    if plan.regard_note:
        print(plan.regard_note, file=sys.stderr)
    if plan.cached:
        print(f"{len(plan.cached)} of {len(plan.keys)} configurations served from the run store", file=sys.stderr)
    outcome = run_sweep(plan, store, on_progress=progress_printer("decoding sweep"), executor=executor_from(args))
    summary = summarize(outcome.generations, prompts.families, threshold=args.threshold, seed=args.seed)
    run_of = dict(plan.cached)
    if plan.task is not None:
        new_run = outcome.run_ids[-1]
        run_of.update({key: new_run for key in plan.keys if key not in plan.cached})
    rows = cli_rows(summary, run_of)
    if args.json:
        print_json(rows)
        return 0
    print(f"runs: {', '.join(outcome.run_ids)}")
    current = None
    for row in rows:
        if row["config"] != current:
            current = row["config"]
            print(f"\n{current}  disparity={_fmt(row['config_disparity'])}  "
                  f"diversity={_fmt(row['diversity_trigram_entropy'])}")
        print(f"  {row['group']:<20} n={row['n']:<4} negative={_fmt(row['negative_sentiment_rate'])} "
              f"[{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]  offensive={_fmt(row['offensive_rate'])}  "
              f"empty={row['n_empty']}")
    return 0


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
