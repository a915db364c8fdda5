"""`stereotypes BENCHMARK`: CrowS-Pairs, StereoSet or BBQ scored by likelihood with a causal LM (or StereoSet
predictions made elsewhere), with intervals over each design's unit (docs/stereotypes.md).

Contract (--json):
  stereotypes crows-pairs [--model M | --predictions FILE] [--subset TYPE,...] [--limit N] [--resamples B] [--seed S]
    -> {"benchmark", "run_id", "model", "selection", "protocol", "licence", "citation",
        "overall": {"n", "pct_stereotype" (a share), "pct_stereotype_ci_low/high", "likelihood_diff",
                    "likelihood_diff_ci_low/high", "p_value", "n_ties", "verdict", ...},
        "by_bias_type": {type: same}}
  stereotypes stereoset [--model M | --predictions FILE] [--subset intrasentence,intersentence] [--limit N]
    -> {"intrasentence"/"intersentence": {domain | "overall": {"lms", "ss", "icat", "count", "n_terms",
        "<name>_ci_low/high", "verdict"}}, "overall": {...}}
  stereotypes bbq [--model M | --predictions FILE] [--subset CATEGORY,...] [--limit N]
    -> {"by_category": {group: {"ambig" | "disambig": {"n", "n_templates", "accuracy", "bias", intervals,
        "verdict"}}}, "overall": {...}}
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from fairness_core.cli import (
    UserFacingError,
    add_endpoint_arguments,
    add_store_argument,
    executor_from,
    open_store,
    print_json,
    progress_printer,
    resolve_endpoint_word,
)

BENCHMARKS = ("crows-pairs", "stereoset", "bbq")  # = stereotypes.BENCHMARKS (not imported: --help stays fast)
#: a predictions file larger than this is not a StereoSet predictions file (the dev set's is ~1 MB)
MAX_PREDICTIONS_BYTES = 64 * 1024 * 1024


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "stereotypes", help="CrowS-Pairs, StereoSet or BBQ scored by likelihood, with intervals",
        description="Score a stereotype benchmark by likelihood with a causal LM: CrowS-Pairs (lm-eval's protocol; "
                    "pct_stereotype with a Wilson interval over pairs and an exact sign test), StereoSet (LMS, SS, "
                    "ICAT as its evaluation.py; intervals over target terms) or BBQ (accuracy and Parrish et al.'s "
                    "bias scores; intervals over templates). Without --limit the whole benchmark runs (BBQ: hours "
                    "on a CPU); finished batches are stored and a rerun resumes.")
    parser.add_argument("benchmark", metavar="BENCHMARK", help="crows-pairs, stereoset or bbq")
    parser.add_argument("--model", help="causal LM: preset key, hub id, local directory or .gguf; 'endpoint' for the "
                                        "--endpoint flags (default: smollm2-135m-instruct)")
    parser.add_argument("--predictions", metavar="FILE",
                        help="evaluate scores made elsewhere instead of running a model: StereoSet's predictions "
                             "file ({\"intrasentence\": [{\"id\", \"score\"}], ...}); for crows-pairs and bbq an "
                             "lm-eval --log_samples jsonl, or BBQ's jsonl with a prediction field")
    parser.add_argument("--subset", help="comma-separated bias types (crows-pairs), splits (stereoset) or "
                                         "categories (bbq); default all")
    parser.add_argument("--limit", type=int, help="a seeded sample: pairs (crows-pairs), clusters per split "
                                                  "(stereoset), items (bbq, dealt over templates)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample and of the bootstrap")
    parser.add_argument("--examples", type=int, default=5, help="items with the largest gap in the text output")
    parser.add_argument("--json", action="store_true")
    add_endpoint_arguments(parser)
    add_store_argument(parser)
    parser.set_defaults(handler=run_stereotypes_command)


def _predictions(path: str) -> bytes:
    file = Path(path).expanduser()
    if not file.is_file():
        raise UserFacingError(f"--predictions {path}: no such file")
    if file.stat().st_size > MAX_PREDICTIONS_BYTES:
        raise UserFacingError(f"--predictions {path} is larger than {MAX_PREDICTIONS_BYTES // 2**20} MB")
    return file.read_bytes()


def run_stereotypes_command(args: argparse.Namespace) -> int:
    from fairness_core import stereotypes

    if args.benchmark not in BENCHMARKS:
        raise UserFacingError(f"BENCHMARK {args.benchmark!r} is not one of {', '.join(BENCHMARKS)}")
    if args.examples < 0:
        raise UserFacingError(f"--examples must be 0 or more (got {args.examples})")
    predictions = _predictions(args.predictions) if args.predictions else None
    model = None if predictions is not None and args.model is None else (args.model or stereotypes.DEFAULT_MODEL)
    if model is not None:
        model = resolve_endpoint_word(model, args)
    try:
        request = stereotypes.build_request(args.benchmark, model=model, subset=args.subset, limit=args.limit,
                                            seed=args.seed, resamples=args.resamples, predictions=predictions,
                                            predictions_name=Path(args.predictions).name if args.predictions else "")
        store = open_store(args)
        # what the chosen size costs, before it starts (stderr: stdout stays clean for --json)
        one_minute = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        print(f"{args.benchmark}: {stereotypes.cost_note(request)} (load average now {one_minute:.1f}: a busy "
              "machine takes longer)", file=sys.stderr)
        result = stereotypes.run_stereotypes(request, store, on_progress=progress_printer(args.benchmark),
                                             executor=executor_from(args))
    except stereotypes.StereotypeInputError as error:
        raise UserFacingError(str(error)) from None
    if not result.complete:
        print(f"the run stopped ({result.status}); finished batches are stored and running it again resumes",
              file=sys.stderr)
        return 1
    if args.json:
        print_json(stereotypes.stereotype_json(result))
        return 0
    text, verdict = stereotypes.headline(result)
    print(f"{args.benchmark} · {request.model or request.predictions_name} · {len(request.items)} "
          f"{'pairs' if args.benchmark == 'crows-pairs' else 'clusters' if args.benchmark == 'stereoset' else 'items'}"
          f" (run {result.run_id})")
    print(f"  {text}")
    print(f"  {verdict}")
    print(stereotypes.breakdown(result).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for row in stereotypes.drill_down(result).head(args.examples).itertuples():
        if args.benchmark == "crows-pairs":
            print(f"  gap {row.diff:+.2f}  more: {row.sent_more}\n             less: {row.sent_less}")
        elif args.benchmark == "stereoset":
            print(f"  {row.target} ({row.split}, {row.domain}): |stereotype - anti-stereotype| {row.gap:.2f}")
        else:
            print(f"  {row.item}: predicted ans{row.pred}, correct ans{row.label} (margin {row.gap:.2f})")
    print(f"  data: {stereotypes.CITATIONS[args.benchmark]}; licence {stereotypes.licence(args.benchmark)}")
    return 0
