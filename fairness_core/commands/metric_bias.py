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

stored scores (--stored-scores): every numeric column of the data beyond candidate/reference (the released
  TSVs carry 29: BLEU ... FrugalScore-BERT-medium; a pairs table: <name>_1 and <name>_2 columns) becomes a
  metric named "<header> (stored)" (e.g. "BLEU (stored)" beside the recomputed "bleu"); give column names
  (headers) to pick some.

output (--json): {"<attribute>": {"<metric>": {"bias", "ci_low", "ci_high", "n_pairs", "n_excluded"}}}; bias
is mean |S1 - S2| after min-max rescaling of all 2N scores to [0, 100] (Eq. 1-2; min and max are the
dataset's fixed unit); CI = 95% percentile bootstrap of mean |gap| over pairs. A pair with a non-finite
score is excluded and counted in n_excluded. Notes about the data (kept identical pairs, skipped rows)
go to stderr. A repeated call with the same data and options is answered from the run store.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    from fairness_core.metric_bias.options import METRICS, metric_names

    parser = subparsers.add_parser(
        "metric-bias", help="social bias of text-generation metrics on paired examples (Sun et al. 2022)",
        description=__doc__, epilog=FORMAT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="*", default=[], metavar="PATH",
                        help="input file(s), or a keyword for winobias / crows-pairs (see below)")
    parser.add_argument("--format", required=True,
                        choices=("metric-fairness", "pairs", "winobias", "crows-pairs", "demo"))
    listed = "; ".join(f"{n} ({METRICS[n].label})" for n in metric_names())
    parser.add_argument("--metrics", default="bleu,rouge1,meteor,nist,chrf",
                        help=f"comma-separated, from: {listed}; or metric-fairness-2022 for the metrics of the "
                             "paper's released code that run here (MoverScore = the released v2) "
                             "(default: the five n-gram metrics)")
    parser.add_argument("--stored-scores", nargs="*", default=None, metavar="COLUMN",
                        help="also use the scores stored in the data as metrics (all numeric columns, or these)")
    parser.add_argument("--config", default="default", choices=("default", "metric-fairness-2022"),
                        help="n-gram metric settings: library defaults, or exactly the paper's released code")
    parser.add_argument("--model", action="append", default=[], metavar="ID",
                        help="model for model-based metrics (preset key, hub id or local path); metric=ID targets one")
    parser.add_argument("--adapter", action="append", default=[], metavar="ID",
                        help="a debiasing adapter (`mitigate train`; `models --json` lists them) on every model-based "
                             "metric whose backbone it was trained for; metric=ID targets one")
    parser.add_argument("--layer", type=int, help="encoder layer for BERTScore/MoverScore (default: bert_score's "
                                                  "tuned layer for a model it knows, else the last)")
    parser.add_argument("--idf", action="store_true", help="BERTScore idf weighting over the corpus's references "
                                                           "(off, as in the paper)")
    parser.add_argument("--baseline", help="BERTScore baseline rescaling with bert_score's baseline for this model "
                                           "name (e.g. roberta-large); linear, so it cannot change a minmax or "
                                           "zscore bias")
    parser.add_argument("--normalisation", default="minmax", choices=("minmax", "zscore", "raw"),
                        help="score rescaling before gaps (paper: minmax)")
    parser.add_argument("--resamples", default="1000",
                        help="bootstrap resamples for the 95%% CI (1 to 100,000; default 1000)")
    parser.add_argument("--max-hours", type=float, default=4.0,
                        help="refuse a request estimated to take longer (default 4; the estimate is printed)")
    parser.add_argument("--outputs", action="store_true",
                        help="also report secondary outputs (bertscore.P, bertscore.R, bartscore.P, …)")
    parser.add_argument("--json", action="store_true", help="print the bias table as JSON (the documented contract)")
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def build(args: argparse.Namespace):  # -> MetricBiasRequest
    """The request from the command line, through the same core function the page uses."""
    from fairness_core import metric_bias as mb

    try:
        mb.parse_resamples(args.resamples)  # before reading any file
        dataset = mb.load_dataset(args.format, args.data)
        names = mb.expand_presets([n.strip().lower() for n in args.metrics.split(",") if n.strip()])
        stored = [] if args.stored_scores is None else mb.choose_stored(dataset, args.stored_scores or True)
        if not names and stored:
            metrics = []
        else:
            general, targeted = mb.parse_model_flags(args.model)
            adapter, adapters = mb.parse_adapter_flags(args.adapter)
            metrics = mb.build_metrics(names, config=args.config, model=general, models=targeted,
                                       layer=args.layer, idf=args.idf, baseline=args.baseline, adapter=adapter,
                                       adapters=adapters)
        request = mb.build_request(dataset, metrics, stored, args.normalisation, mb.parse_resamples(args.resamples))
        if not (args.max_hours > 0 and args.max_hours == args.max_hours):
            raise mb.RequestError(f"--max-hours must be a positive number of hours (got {args.max_hours})")
        mb.check_limits(mb.estimate(request), max_seconds=min(args.max_hours, 1e6) * 3600)
        return request
    except mb.RequestError as error:
        raise UserFacingError(str(error)) from error


def run(args: argparse.Namespace) -> int:
    from fairness_core import metric_bias as mb

    request = build(args)
    dataset = request.dataset
    print(f"estimate: {mb.estimate(request).describe()} (stored runs are read back instead)", file=sys.stderr)
    for note in dataset.notes:
        print(f"note: {note}", file=sys.stderr)
    store = open_store(args)
    bars = {}

    def on_progress(name, progress) -> None:
        if name not in bars:
            bars[name] = progress_printer(f"{name} on {dataset.name}")
        bars[name](progress)

    # One metric that cannot run here (METEOR without WordNet, a model not on this machine) is reported with its
    # fix; the other metrics still compute.
    usable, why = [], []
    for metric in request.metrics:
        try:
            metric.check_available()
            usable.append(metric)
        except mb.ModelUnavailableError as error:
            print(f"note: skipped {metric.label}: {error}", file=sys.stderr)
            why.append(f"{metric.label}: {error}")
    if request.metrics and not usable and not request.stored:  # the refusal names the input (issue 43 §3)
        raise UserFacingError(f"--metrics: none of the chosen metrics can run here ({'; '.join(why)})")
    try:
        runs = mb.run_metrics(dataset, usable, store, on_progress=on_progress, stored=request.stored,
                                executor=executor_from(args))
    except (mb.ModelUnavailableError, ValueError) as error:
        raise UserFacingError(str(error)) from error
    for metric_run in runs:
        note = "from the store" if metric_run.from_cache else "computed and stored"
        print(f"{metric_run.name}: run {metric_run.run_id} ({note})", file=sys.stderr)
    table = mb.bias_table(mb.pair_table(store, [r.run_id for r in runs]),
                          normalisation=request.normalisation, n_resamples=request.n_resamples,
                          expected=mb.expected_pairs(dataset))
    for note in mb.notes(table):
        print(f"note: {note}", file=sys.stderr)
    keep = None if args.outputs else [r.name for r in runs]
    if args.json:
        print_json(mb.summary_json(table, keep))
        return 0
    print(f"dataset {dataset.name} ({len(dataset)} pairs, version {dataset.content_hash()[:12]}; "
          f"licence: {dataset.licence})")
    print(f"bias = mean |gap| after {request.normalisation} rescaling (unit fixed by all 2N scores), "
          "95% bootstrap CI over pairs")
    shown = table if keep is None else table[table["metric"].isin(keep)]
    for row in shown.itertuples(index=False):
        stereo = "" if row.stereo_diff != row.stereo_diff else f"  stereo diff {row.stereo_diff:+7.2f}"
        excluded = f" ({int(row.n_excluded)} excluded: non-finite)" if row.n_excluded else ""
        print(f"{row.attribute:<20} {row.metric:<24} {row.bias:8.2f}  [{row.ci_low:6.2f}, {row.ci_high:6.2f}]  "
              f"n={int(row.n_pairs)}{excluded}{stereo}")
    return 0
