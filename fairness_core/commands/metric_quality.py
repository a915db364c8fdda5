"""`metric-quality`: does a text-generation metric agree with people? Correlation of its scores with human
judgments (REALSumm shipped, or your own), with 95% intervals that resample documents, systems or both (each
interval says what it generalises over). Stores every run."""

from __future__ import annotations

import argparse
import sys

from fairness_core.cli import (
    UserFacingError,
    add_store_argument,
    executor_from,
    open_store,
    print_json,
)

DATA_HELP = """\
data (--data):
  realsumm   the shipped REALSumm copy (data/realsumm/): 100 CNN/DailyMail documents x 24 systems, human =
             LitePyramid recall (Bhandari et al. 2020; via txsun1997/Metric-Fairness, MIT licence)
  DIR        a folder with realsumm_documents.jsonl (doc_id, source, reference) and realsumm_summaries.jsonl
             (doc_id, system, summary, litepyramid_recall, stored {column: score})
  FILE       a CSV / TSV / JSONL table: item_id, system, candidate, reference, [source], [group], human; any
             other column holding only numbers is a stored score. Every system must score every item (of its
             group); at least 3 items. group: e.g. a WMT language pair, with its own items and systems.

rules (--rule): pooled = one correlation over all candidates (the released REALSumm analysis, Sun et al. 2022
  Tables 4-5); document = correlation over systems within each item, averaged (a document on which people tell
  the systems apart but the metric scores them all alike counts as 0; --constant-documents drop leaves it out,
  and a paired difference then uses the documents both metrics define); system = mean per system, then one
  correlation over systems. --group-average: the rule within each group (language pair), averaged over groups;
  with --rule system --statistic pearson this is Sun et al.'s WMT protocol (Tables 4, 5 and 8).

intervals (--resample): 95% percentile bootstrap (Deutsch, Dror & Roth 2021) that draws documents with all their
  candidates (documents: it generalises to other documents, for these systems), systems (systems: to other
  systems, on these documents) or both (both: to other documents and systems). Defaults: documents for the
  pooled and document rules, both for the system rule (whose points are the systems).

stored scores (--stored-scores): score columns that come with the data become metrics named "<column> (stored)",
  e.g. "BARTScore-BART-base (stored)" (REALSumm carries the authors' BARTScore-BART-base and its +adapter
  variant). With --stored-scores and no --metrics, only the stored columns are correlated.

output (--json): {"<metric>": {"spearman", "ci_low", "ci_high", "pearson", "kendall", "value", "n",
  "n_documents", "n_systems", "rule", "ci_of", "resample", "interval_generalises", "n_excluded", "n_resamples",
  "n_undefined_resamples", "n_constant_documents", "n_undefined_documents", "constant_documents", "n_groups"}};
  ci_low/ci_high are of "ci_of" (--statistic), whose value is "value". An undefined number is null, never NaN.
  Notes about the data and the runs go to stderr. A repeated call with the same data and options is read from the store.

example: python -m fairness_core metric-quality --data realsumm --metrics bleu,rouge1,chrf,bertscore --json
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "metric-quality", help="agreement of text-generation metrics with human judgments (REALSumm or your own)",
        description=__doc__, epilog=DATA_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, metavar="realsumm|DIR|FILE",
                        help="the judgments: realsumm (shipped), a REALSumm-format folder, or a CSV/JSONL table")
    parser.add_argument("--metrics", default=None,
                        help="comma-separated registered metrics, e.g. bleu,rouge1,meteor,chrf,bertscore,moverscore,"
                             "bartscore-lm (default: bleu,rouge1,chrf,bertscore; none with --stored-scores)")
    parser.add_argument("--stored-scores", nargs="*", default=None, metavar="COLUMN",
                        help="also correlate the scores stored with the data (all of them, or these columns)")
    parser.add_argument("--model", metavar="ID",
                        help="model for every model-based metric (preset key, hub id or local path)")
    parser.add_argument("--option", action="append", default=[], metavar="METRIC.OPTION=VALUE",
                        help="an option of one metric, e.g. bartscore-lm.term_weighting=uniform (repeatable)")
    parser.add_argument("--adapter", metavar="ID",
                        help="a debiasing adapter (`mitigate train`) on every chosen metric that takes one")
    parser.add_argument("--rule", default="pooled", choices=("pooled", "document", "system"),
                        help="how candidates are correlated (default: pooled, the released REALSumm rule)")
    parser.add_argument("--statistic", default="spearman", choices=("spearman", "pearson", "kendall"),
                        help="the statistic the interval is of (default: spearman; WMT: pearson)")
    parser.add_argument("--resample", default=None, choices=("documents", "systems", "both"),
                        help="what the interval resamples (default: documents; both under --rule system)")
    parser.add_argument("--group-average", action="store_true",
                        help="the rule within each group of the data (its 'group' column, e.g. a WMT language "
                             "pair), averaged over groups")
    parser.add_argument("--constant-documents", default="zero", choices=("zero", "drop"),
                        help="document rule: a document the metric scores all alike counts as 0 (default) or is "
                             "left out")
    parser.add_argument("--resamples", default="1000",
                        help="bootstrap resamples for the 95%% interval (0 to 100,000; default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print the agreement table as JSON (the contract)")
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def build(args: argparse.Namespace):  # -> metric_quality.QualityRequest
    """The request from the command line, through the same core functions the page uses (nothing is stored)."""
    from fairness_core import metric_quality as mq

    try:
        resamples = mq.parse_resamples(args.resamples)  # before reading any file
        names = mq.parse_metric_names(args.metrics) if args.metrics is not None else (
            [] if args.stored_scores is not None else list(mq.DEFAULT_METRICS))
        options = mq.parse_metric_options(args.option)
        if options and not names:
            raise mq.RequestError("--option needs --metrics naming the metric it is for")
        takes_adapter = [n for n in names if args.adapter and "adapter" in mq.METRICS[n].Options.__dataclass_fields__]
        if args.adapter and not takes_adapter:
            raise mq.RequestError("--adapter applies to model-based metrics (bertscore, bartscore, …) and none of "
                                  "them is among the chosen metrics")
        for name in takes_adapter:
            options.setdefault(name, {})["adapter"] = args.adapter
        metrics = mq.build_metrics(names, model=args.model, options=options) if names else []
        for metric in metrics if args.adapter else []:
            try:
                metric.validate()  # an unknown adapter, or one of another backbone: one sentence, nothing stored
            except mq.MetricOptionError as error:
                raise mq.RequestError(str(error)) from None
        judgments = mq.load_judgments(args.data)
        stored = [] if args.stored_scores is None else mq.choose_stored(judgments, args.stored_scores or True)
        return mq.build_request(judgments, metrics, stored, args.rule, resamples, args.seed, args.statistic,
                                args.resample, args.constant_documents, args.group_average)
    except mq.RequestError as error:
        raise UserFacingError(str(error)) from error


def run(args: argparse.Namespace) -> int:
    from fairness_core import metric_quality as mq

    request = build(args)
    judgments = request.judgments
    print(f"data: {judgments.describe()}", file=sys.stderr)
    for note in judgments.notes:
        print(f"note: {note}", file=sys.stderr)
    if request.metrics:
        print(f"estimate: about {mq.estimate_seconds(request):.0f} s of scoring (stored runs are read back instead)",
              file=sys.stderr)
    store = open_store(args)
    from tqdm import tqdm

    bar = tqdm(total=len(judgments) * (len(request.metrics) + len(request.stored)), unit="candidate",
               desc=f"scoring {judgments.name}", file=sys.stderr, dynamic_ncols=True, disable=None)

    def on_progress(progress) -> None:
        bar.update(progress.done - bar.n)

    try:
        outcome = mq.run_quality(request, store, on_progress=on_progress, executor=executor_from(args),
                                 skip_unavailable=True)
    except (mq.ModelUnavailableError, mq.MetricOptionError) as error:
        raise UserFacingError(str(error)) from error
    finally:
        bar.close()
    for note in outcome.skipped:
        print(f"note: {note}", file=sys.stderr)
    if not outcome.runs:
        raise UserFacingError("none of the chosen metrics can run here (see the notes above); nothing was stored")
    for score_run in outcome.runs:
        note = "from the store" if score_run.from_cache else "computed and stored"
        print(f"{score_run.name}: run {score_run.run_id} ({note})", file=sys.stderr)
    if outcome.agreement_run:
        print(f"agreement ({request.rule} rule): run {outcome.agreement_run}", file=sys.stderr)
    for note in mq.notes(outcome.correlations):
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        print_json(mq.summary_json(outcome.correlations))
        return 0
    print(f"{judgments.describe()}")
    averaged = f", averaged over {judgments.n_groups} groups" if request.group_average else ""
    print(f"rule: {mq.rule_label(request.rule)}{averaged}; 95% interval of {request.statistic.capitalize()}: a "
          f"bootstrap that {mq.interval_scope(request.resample_unit, judgments.n_items, judgments.n_systems)} "
          f"({request.n_resamples} resamples, seed {request.seed})")
    for name, c in outcome.correlations.items():
        interval = "(no interval)" if c.ci_low != c.ci_low else f"[{c.ci_low:.3f}, {c.ci_high:.3f}]"
        print(f"{name:<40} {request.statistic} {c.value:7.3f} {interval:<18} spearman {c.spearman:7.3f} "
              f"pearson {c.pearson:7.3f} kendall {c.kendall:7.3f}  n={c.n} documents={c.n_documents}")
    return 0
