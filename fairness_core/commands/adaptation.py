"""Template adaptation (Quiroga et al. 2025): `vbcm`, `templates import`, `adapt`.

Contracts (--json):
  vbcm --scores FILE            FILE: CSV template_id,group,term,score
                                -> {"background": mean over templates of beta_j, "vbcm": {group: value}, "n_templates"}
  templates import --format {eec,iptts} FILE
                                -> {"n_rows", "n_templates", "groups": {attribute: {group: count}}}
  adapt ...                     the pipeline: templates x terms, domain corpus, chat model -> adapted templates,
                                NOEs, scores, VBCM per set, MAE / Pearson r against the NOEs (stored, resumable)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

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
    vbcm = subparsers.add_parser(
        "vbcm", help="VBCM bias vector of a score table (Czarnowska et al. 2021; Quiroga et al. 2025 App. A.2)",
        description="VBCM_g = mean over templates j of 1 - |beta_j - phi_jg| (Eq. 1), phi_jg = mean score of "
                    "group g's perturbations of template j, beta_j = average across groups of phi_jg (Sec. 3.1; "
                    "--background all-sentences: the mean of every filled-in sentence, which weights groups by "
                    "list size). Rows with an empty/NaN score are skipped and counted (stderr).")
    vbcm.add_argument("--scores", required=True, metavar="FILE", help="CSV with columns template_id,group,term,score")
    vbcm.add_argument("--resamples", type=int, default=0,
                      help="bootstrap resamples over templates for 95%% CIs (0: none; the --json contract then "
                           "stays exactly background/vbcm/n_templates)")
    vbcm.add_argument("--seed", type=int, default=0)
    vbcm.add_argument("--background", choices=("group-means", "all-sentences"), default="group-means",
                      help="beta_j: average of the group means (Sec. 3.1, default) or mean of all filled-in "
                           "sentences (weights each group by its number of terms; not the paper's rule)")
    vbcm.add_argument("--json", action="store_true")
    vbcm.set_defaults(handler=run_vbcm)

    templates = subparsers.add_parser("templates", help="template sets: import EEC / IPTTS files")
    actions = templates.add_subparsers(dest="action", metavar="ACTION", required=True)
    importer = actions.add_parser("import", help="read an EEC or IPTTS CSV and report what it holds")
    importer.add_argument("--format", required=True, choices=("eec", "iptts"))
    importer.add_argument("file", metavar="FILE")
    importer.add_argument("--json", action="store_true")
    importer.set_defaults(handler=run_templates_import)

    adapt = subparsers.add_parser(
        "adapt", help="adapt templates to a domain with a chat LM and compare bias vectors with NOEs",
        description="Rewrite each template (filled with an anchor term) in the style of the domain with a chat LM "
                    "(App. A.4 prompt), re-template, find naturally occurring examples (NER), score every set "
                    "with the classifiers under test, and compare VBCM vectors (MAE, Pearson r, 95%% bootstrap CIs). "
                    "Every step is stored; rerunning resumes.")
    adapt.add_argument("--templates", default="eec", help="eec | iptts (the project's), or a text file with one "
                                                          "{person} template per line")
    adapt.add_argument("--n-templates", type=int, default=None, help="seeded subsample of templates")
    adapt.add_argument("--attributes", default="gender,nationality", help="attributes of the identity terms")
    adapt.add_argument("--terms", default=None, metavar="JSON", help="identity terms file (default: the project's)")
    adapt.add_argument("--corpus", default="bold", help="bold (BOLD Wikipedia sentences) or a file")
    adapt.add_argument("--corpus-format", default="lines", choices=("lines", "csv", "jsonl"))
    adapt.add_argument("--corpus-field", default="text", help="CSV column / JSONL field of the corpus text")
    adapt.add_argument("--bold-domains", default="gender,race,profession,religious_ideology,political_ideology")
    adapt.add_argument("--corpus-size", type=int, default=2000, help="seeded sample of corpus sentences searched")
    adapt.add_argument("--max-noes", type=int, default=200, help="at most this many NOE sentences (seeded)")
    adapt.add_argument("--model", default=None, help="chat LM: preset, hub id, dir or .gguf (default "
                       "smollm2-135m-instruct; the --endpoint* flags put a served chat model here instead)")
    adapt.add_argument("--examples", type=int, default=15, help="domain examples in the prompt (paper: 15)")
    adapt.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (paper: 0 or 0.01)")
    adapt.add_argument("--max-new-tokens", type=int, default=102, help="paper: 102 (Wikipedia), 40 (Twitter)")
    adapt.add_argument("--classifiers", default="vader,jigsaw-toxicity",
                       help="scorers under test (registry names; jigsaw-toxicity is the offline identity-aware one)")
    adapt.add_argument("--no-rewrite", action="store_true",
                       help="no chat model: compare the original templates with the naturally occurring examples")
    adapt.add_argument("--resamples", type=int, default=1000)
    adapt.add_argument("--seed", type=int, default=0)
    adapt.add_argument("--json", action="store_true")
    add_endpoint_arguments(adapt)
    add_store_argument(adapt)
    adapt.set_defaults(handler=run_adapt)


#: bootstrap resamples of `vbcm`: 100,000 draws of a template set take seconds; more only costs memory
MAX_RESAMPLES = 100_000


def run_vbcm(args: argparse.Namespace) -> int:
    from fairness_core.adaptation import TemplateImportError, VBCMInputError, read_scores_csv, vbcm

    if not 0 <= args.resamples <= MAX_RESAMPLES:
        raise UserFacingError(f"--resamples must be between 0 (no intervals) and {MAX_RESAMPLES:,} "
                              f"(got {args.resamples})")
    try:
        frame = read_scores_csv(args.scores)
        result = vbcm(frame, n_resamples=args.resamples, seed=args.seed, background=args.background)
    except (VBCMInputError, TemplateImportError) as error:
        raise UserFacingError(str(error)) from None
    if result.n_skipped_nan:
        print(f"note: {result.n_skipped_nan} row(s) without a score were skipped", file=sys.stderr)
    if result.n_duplicates:
        print(f"note: {result.n_duplicates} repeated row(s) (same template_id, group and term) were dropped; each "
              "perturbation counts once", file=sys.stderr)
    payload = result.as_json()
    if args.resamples > 0:
        payload = {**payload, "ci": {g: list(v) for g, v in result.ci.items()}}
    if args.json:
        print_json(payload)
        return 0
    print(f"{result.n_templates} templates; background (mean of per-template backgrounds) {result.background:.4f}")
    for group, value in result.vbcm.items():
        ci = result.ci.get(group)
        extra = f"  [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else ""
        print(f"  {group}: {value:.4f}{extra}  ({result.n_templates_per_group[group]} templates)")
    return 0


def run_templates_import(args: argparse.Namespace) -> int:
    from fairness_core.adaptation import TemplateImportError, import_templates

    try:
        imported = import_templates(args.format, args.file)
    except TemplateImportError as error:
        raise UserFacingError(str(error)) from None
    for note in imported.notes:
        print(f"note: {note}", file=sys.stderr)
    summary = imported.summary()
    if args.json:
        print_json(summary)
        return 0
    print(f"{args.file}: {summary['n_rows']} rows, {summary['n_templates']} templates")
    for attribute, groups in summary["groups"].items():
        print(f"  {attribute}: " + ", ".join(f"{g} {n}" for g, n in groups.items()))
    return 0


def _stage_printer() -> Any:
    """A progress bar per stage (NER, rewriting, scoring): a new bar whenever the job changes."""
    state: dict[str, Any] = {}

    def on_progress(progress: Any) -> None:
        key = progress.total
        if state.get("key") != key or progress.done < state.get("done", 0):
            state["printer"] = progress_printer("adapt")
            state["key"] = key
        state["done"] = progress.done
        state["printer"](progress)

    return on_progress


def run_adapt(args: argparse.Namespace) -> int:
    from fairness_core.adaptation import AdaptationInputError, build_request, report_json, report_text, run_adaptation

    served = endpoint_source(args)
    if served is not None and args.model:
        raise UserFacingError("give either --model or an endpoint (--endpoint / --endpoint-url), not both")
    model = served or resolve_endpoint_word(args.model or "smollm2-135m-instruct", args)
    try:
        request = build_request(
            templates=args.templates, n_templates=args.n_templates,
            attributes=[a.strip() for a in args.attributes.split(",") if a.strip()], terms_path=args.terms,
            corpus=args.corpus, corpus_format=args.corpus_format, corpus_field=args.corpus_field,
            bold_domains=[d.strip() for d in args.bold_domains.split(",") if d.strip()],
            corpus_size=args.corpus_size, max_noes=args.max_noes, model=model, n_examples=args.examples,
            temperature=args.temperature, max_new_tokens=args.max_new_tokens,
            classifiers=[c.strip() for c in args.classifiers.split(",") if c.strip()], seed=args.seed,
            resamples=args.resamples, rewrite=not args.no_rewrite)
        result = run_adaptation(request, open_store(args), on_progress=_stage_printer(),
                                executor=executor_from(args), log=lambda m: print(m, file=sys.stderr))
    except AdaptationInputError as error:
        raise UserFacingError(str(error)) from None
    if args.json:
        print_json(report_json(result))
    else:
        print(report_text(result))
    return 0
