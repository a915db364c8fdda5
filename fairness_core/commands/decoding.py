"""`decoding`: sweep top-p / top-k / temperature and measure per-group negativity, disparity, diversity.

    python -m fairness_core decoding --model smollm2-135m-instruct --prompts regard \
        --grid "top_p=0.5,0.9;temperature=0.7" --samples 5 --max-new-tokens 30 --seed 0 --json

Prints one JSON row per configuration × group (contract keys first, extras documented in
docs/decoding.md), stores every generation in the run store (through the generic generate-then-score
task), and serves repeated generations from it. A progress bar goes to stderr. Request building and
the summary are shared with the page (`fairness_core.decoding`).
"""

from __future__ import annotations

import argparse
import sys

from fairness_core.cli import (
    UserFacingError,
    add_endpoint_arguments,
    add_store_argument,
    endpoint_source,
    executor_from,
    open_store,
    print_json,
    progress_printer,
    resolve_endpoint_word,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "decoding", help="decoding sweep: per-group negative rates, disparity, diversity (Dhamala et al.)")
    parser.add_argument("--model", default=None,
                        help="causal LM: preset key, hub id, local directory or .gguf file (default "
                             "smollm2-135m-instruct; the --endpoint* flags put a served model here instead)")
    parser.add_argument("--quantization", choices=("none", "8bit", "4bit"), default="none",
                        help="bitsandbytes quantization (GPU)")
    parser.add_argument("--prompts", default="regard",
                        help="regard | bold:<domain> (gender, race, religious_ideology, political_ideology, "
                             "profession) | FILE with 'group: prompt' lines or group,prompt CSV")
    parser.add_argument("--groups", help="comma-separated groups to keep (default: all in the prompt set)")
    parser.add_argument("--counterfactual", metavar="ATTRIBUTE", action="append",
                        help="build per-group variants of --prompts (one prompt per line, or regard / bold:<domain>) "
                             "by swapping the identity words of this attribute (gender, race, ...; repeatable); see "
                             "the `counterfactual` command for a preview")
    parser.add_argument("--cross", action="store_true",
                        help="with two or more --counterfactual attributes: a variant per combination of their "
                             "groups (gender × race), each prompt naming one group of each; `slices` then shows the "
                             "marginals and the intersections")
    parser.add_argument("--word-lists", metavar="FILE",
                        help="with --counterfactual: your word lists instead of the shipped ones")
    parser.add_argument("--bold-per-group", type=int, default=20, help="BOLD prompts drawn per group")
    parser.add_argument("--grid", default="top_p=0.9",
                        help='e.g. "top_p=0.5,0.9;temperature=0.7" (cartesian product of the knobs)')
    parser.add_argument("--samples", type=_count, default=5, help="samples per prompt")
    parser.add_argument("--max-new-tokens", type=_count, default=30)
    parser.add_argument("--seed", type=_count, default=0)
    parser.add_argument("--threshold", type=float, default=-0.25, help="VADER compound <= this counts as negative")
    parser.add_argument("--resamples", type=_count, default=1000,
                        help="bootstrap resamples of the prompt templates for the 95%% intervals")
    parser.add_argument("--allow-large", action="store_true",
                        help="run a sweep above the confirmation limit (the hard limits still apply; docs/decoding.md)")
    parser.add_argument("--quality-scorer", default="same",
                        help="causal LM for the quality proxy: 'same' (the generator), 'none', or a model id")
    parser.add_argument("--regard-model", default="regard-v3", help="regard classifier ('none' to skip)")
    parser.add_argument("--regard-negative-label", help="label of the negative class if not named '*neg*'")
    parser.add_argument("--batch-size", type=_count, default=96, help="rows per batch (= per stored shard)")
    parser.add_argument("--full-length", action="store_true",
                        help="always generate --max-new-tokens (default: stop a row once its first sentence is "
                             "settled, which gives the same truncated outputs faster)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    add_endpoint_arguments(parser)
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def _count(text: str) -> int:
    """A whole number, also written as 1e9 (so a huge value reaches the limit check and its estimate)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")) or value != int(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(value)


def run(args: argparse.Namespace) -> int:
    from fairness_core.decoding import (
        PromptError,
        RequestError,
        build_request,
        check_model_source,
        cli_rows,
        counterfactual_source,
        default_scorers,
        disparity_headline,
        load_prompts,
        measures_for,
        plan_decoding,
        run_decoding,
        summarize,
        token_usage,
    )

    # Every check that needs no model runs first; nothing is written before the request is known good.
    served = endpoint_source(args)
    if served is not None and args.model:
        raise UserFacingError("give either --model or an endpoint (--endpoint / --endpoint-url), not both")
    args.model = served or resolve_endpoint_word(args.model or "smollm2-135m-instruct", args)
    try:
        if args.bold_per_group <= 0:
            raise RequestError(f"--bold-per-group must be positive (got {args.bold_per_group})")
        if args.regard_model and args.regard_model != "none":  # named on the command line: a bad value is an error
            try:  # (the page keeps working with a note instead: the regard scorer is then left out)
                check_model_source(args.regard_model)
            except RequestError as error:
                raise RequestError(f"--regard-model: {error}") from None
        if args.cross and not args.counterfactual:
            raise RequestError("--cross goes with two or more --counterfactual ATTRIBUTE (the attributes crossed)")
        if args.word_lists and not args.counterfactual:
            raise RequestError("--word-lists goes with --counterfactual ATTRIBUTE (the attribute whose words are "
                               "swapped)")
        if args.counterfactual:
            try:
                prompts = counterfactual_source(args.prompts, args.counterfactual, args.word_lists,
                                                args.cross).prompt_set
                if args.groups:
                    prompts = prompts.only_groups(args.groups.split(","))
            except PromptError as error:
                raise RequestError(str(error)) from None
        else:
            prompts = load_prompts(args.prompts, args.groups, per_group=args.bold_per_group, seed=args.seed)
        for note in prompts.notes:
            print(f"note: {note}", file=sys.stderr)
        scorers = default_scorers(args.model, None if args.quality_scorer == "none" else args.quality_scorer,
                                  None if args.regard_model == "none" else args.regard_model,
                                  args.regard_negative_label)
        request = build_request(args.model, prompts, args.grid, samples=args.samples,
                                max_new_tokens=args.max_new_tokens, seed=args.seed, threshold=args.threshold,
                                quantization=args.quantization, scorers=scorers, batch_size=args.batch_size,
                                full_length=args.full_length, n_resamples=args.resamples,
                                confirmed=args.allow_large)
        store = open_store(args)
        plan = plan_decoding(request, store)
    except RequestError as error:
        raise UserFacingError(str(error)) from None
    for note in plan.notes:
        print(note, file=sys.stderr)
    if plan.from_store:
        print(f"all {plan.plan.n_wanted} generations served from the run store", file=sys.stderr)
    elif plan.plan.n_wanted - plan.plan.n_to_generate:
        print(f"{plan.plan.n_wanted - plan.plan.n_to_generate} of {plan.plan.n_wanted} generations served from the "
              "run store", file=sys.stderr)
    outcome = run_decoding(plan, store, on_progress=progress_printer("decoding sweep"), executor=executor_from(args))
    summary = summarize(outcome.generations, prompts.families, measures_for(plan.generation.scorers),
                        thresholds=request.thresholds, n_resamples=request.n_resamples, seed=args.seed)
    run_of = (outcome.generations.groupby("config_key")["run_id"].agg(lambda ids: ",".join(sorted(set(ids))))
              .to_dict() if not outcome.generations.empty else {})
    rows = cli_rows(summary, run_of)
    usage = token_usage(store, outcome.run_ids)
    if usage["requests"]:
        print(f"endpoint token usage (runs {', '.join(outcome.run_ids)}): {usage['prompt_tokens']:,} prompt + "
              f"{usage['completion_tokens']:,} completion tokens in {usage['requests']:,} requests", file=sys.stderr)
    if args.json:
        print_json(rows)
        return 0
    print(f"runs: {', '.join(outcome.run_ids)}")
    print(f"intervals: 95% template bootstrap, {summary.design}")
    headlines = {str(config): disparity_headline(summary, key)
                 for key, config in zip(summary.configs.get("config_key", []), summary.configs.get("config", []),
                                        strict=True)}
    current = None
    for row in rows:
        if row["config"] != current:
            current = row["config"]
            print(f"\n{current}  disparity={_fmt(row['config_disparity'])}  "
                  f"diversity={_fmt(row['diversity_trigram_entropy'])} "
                  f"[{_fmt(row['diversity_ci_low'])}, {_fmt(row['diversity_ci_high'])}]")
            print(f"  {headlines.get(str(current), '')}")
        print(f"  {row['group']:<20} n={row['n']:<4} negative={_fmt(row['negative_sentiment_rate'])} "
              f"[{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]  offensive={_fmt(row['offensive_rate'])}  "
              f"empty={row['n_empty']}")
    return 0


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
