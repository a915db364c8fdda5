"""`datscore`: combine direction scores (Eq. 2/3) and meta-evaluate them, or run the whole pipeline.

    python -m fairness_core datscore --direction-scores FILE [--human-rr FILE] [--human-da FILE] --json
    python -m fairness_core datscore score --data FILE --src-lang fr --tgt-lang en --model ID --json
    python -m fairness_core datscore score --data synthetic --src-lang fr --tgt-lang en \
        --endpoint-url http://127.0.0.1:8000/v1 --endpoint-model NAME --json

The first form reads a CSV `segment_id,direction,score` (direction labels are opaque) and prints exactly
{"weights": {direction: Eq. 3 weight}, "scores": {segment_id: Eq. 2 DATScore}, "kendall_tau_like": Eq. 5
(with --human-rr), "pearson_abs": |r| (with --human-da)}. The second translates, scores the 8 directions
and meta-evaluates through the run store (resumable; a rerun is answered from the store). With a causal LM
(e.g. smollm2-135m-instruct, the offline choice) the result is the LM variant, DATScore-LM; so it is through an
endpoint, which must return prompt log-probs (else exit 2, one sentence) and whose Eq. 4 entropies are a lower
bound from its top log-probs (said in the notes). Notes go to stderr.
docs/datscore.md explains the science.
"""

from __future__ import annotations

import argparse
import sys

from fairness_core.cli import (
    ENDPOINT_WORD,
    EXECUTOR_CHOICES,
    UserFacingError,
    add_endpoint_arguments,
    add_store_argument,
    endpoint_source,
    executor_from,
    open_store,
    print_json,
    progress_printer,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "datscore", help="DATScore: direction weights (Eq. 3), scores (Eq. 2), meta-evaluation; 'score' runs it all",
        description="Without a mode: combine a CSV of direction scores. Mode 'score': the whole pipeline.")
    parser.add_argument("--direction-scores", metavar="FILE", help="CSV segment_id,direction,score")
    parser.add_argument("--human-rr", metavar="FILE", help="CSV better_id,worse_id (relative ranking; Eq. 5 τ)")
    parser.add_argument("--human-da", metavar="FILE", help="CSV segment_id,score (direct assessment; Pearson |r|)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_store_argument(parser)
    parser.set_defaults(handler=run_direction_scores)
    modes = parser.add_subparsers(dest="datscore_mode", metavar="MODE")
    score = modes.add_parser("score", help="translate, score 8 directions, weight, meta-evaluate (stored)")
    score.add_argument("--data", required=True, help="CSV with src, ref, hypo (+ optional segment_id, score, group) "
                                                     "or 'synthetic' for the project's synthetic fr→en set")
    score.add_argument("--src-lang", required=True, help="ISO 639-1 code of the sources, e.g. fr")
    score.add_argument("--tgt-lang", required=True, help="ISO 639-1 code of references and hypotheses, e.g. en")
    score.add_argument("--model",
                       help="multilingual seq2seq (facebook/m2m100_418M, NLLB, mBART-50: DATScore) or a causal LM "
                            "(smollm2-135m-instruct: the LM variant DATScore-LM); preset, hub id or local directory; "
                            "or the --endpoint* flags: an OpenAI-compatible server with prompt log-probs "
                            "(DATScore-LM, entropies approximated from its top log-probs; docs/endpoints.md)")
    score.add_argument("--max-new-tokens", type=int, default=64, help="length limit of the augmented translations")
    score.add_argument("--human-rr", dest="score_human_rr", metavar="FILE",
                       help="CSV better_id,worse_id[,group] to meta-evaluate against (Eq. 5)")
    score.add_argument("--limit-sources", type=int, help="subsample: only the first N source groups (stated)")
    score.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples for the CIs")
    score.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    score.add_argument("--executor", choices=EXECUTOR_CHOICES, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    add_store_argument(score)
    add_endpoint_arguments(score)
    score.set_defaults(handler=run_score)


def run_direction_scores(args: argparse.Namespace) -> int:
    from fairness_core.datscore import (
        RequestError,
        cli_payload,
        negative_weight_note,
        read_direct_assessment,
        read_direction_scores,
        read_relative_ranking,
    )

    if not args.direction_scores:
        raise UserFacingError("give --direction-scores FILE (a CSV segment_id,direction,score), or use the mode "
                              "'datscore score --data FILE ...' to run the whole pipeline")
    try:
        scores = read_direction_scores(args.direction_scores)
        source = f"{args.direction_scores}"
        rr = read_relative_ranking(args.human_rr, scores.segments, source=source) if args.human_rr else None
        da = read_direct_assessment(args.human_da, scores.segments, source=source) if args.human_da else None
        payload = cli_payload(scores, rr, da)
    except RequestError as error:
        raise UserFacingError(str(error)) from None
    negative = negative_weight_note(payload["weights"])
    for note in (*scores.notes, *([negative] if negative else [])):
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        print_json(payload)
        return 0
    print("direction weights (Eq. 3, unnormalised):")
    for direction, weight in payload["weights"].items():
        print(f"  {direction:<24} {weight:.4f}")
    for key in ("kendall_tau_like", "pearson_abs"):
        if key in payload:
            print(f"{key}: {payload[key]}")
    print(f"scores (Eq. 2) for {len(payload['scores'])} segments; use --json for all of them")
    return 0


def backbone_model(args: argparse.Namespace) -> str:
    """--model, or the endpoint the --endpoint* flags name (`--model endpoint` says the same)."""
    from fairness_core.cli import resolve_endpoint_word

    served = endpoint_source(args)
    if served is not None:
        if args.model and args.model.strip() != ENDPOINT_WORD:
            raise UserFacingError("give either --model or an endpoint (--endpoint NAME or --endpoint-url with "
                                  "--endpoint-model), not both")
        return served
    if not args.model:
        raise UserFacingError("give --model ID, or an endpoint: --endpoint NAME or --endpoint-url with "
                              "--endpoint-model")
    return resolve_endpoint_word(args.model, args)


def run_score(args: argparse.Namespace) -> int:
    from fairness_core.datscore import (
        ModelUnavailableError,
        PipelineCancelled,
        RequestError,
        ScoreRequest,
        load_synthetic,
        pipeline_report,
        read_relative_ranking,
        read_segments,
        run_pipeline,
    )

    if args.resamples < 1:
        raise UserFacingError(f"--resamples must be at least 1 (got {args.resamples})")
    model = backbone_model(args)
    try:
        segments = load_synthetic() if args.data == "synthetic" else read_segments(args.data)
        if args.limit_sources is not None:
            if args.limit_sources < 2:
                raise RequestError(f"--limit-sources must be at least 2 (got {args.limit_sources})")
            segments = segments.subset(args.limit_sources)
        ranking = tuple(segments.ranking)
        if args.score_human_rr:
            ranking = tuple(read_relative_ranking(args.score_human_rr, [s.segment_id for s in segments.segments],
                                                  source=args.data))
        request = ScoreRequest(segments, args.src_lang, args.tgt_lang, model, args.max_new_tokens)
    except RequestError as error:
        raise UserFacingError(str(error)) from None
    store = open_store(args)
    try:
        outcome = run_pipeline(request, store, on_progress=progress_printer("datscore"), executor=executor_from(args))
    except (ModelUnavailableError, RequestError, PipelineCancelled) as error:
        raise UserFacingError(str(error)) from None
    report = pipeline_report(outcome, ranking, n_resamples=args.resamples)
    for note in report.get("notes", []):
        print(f"note: {note}", file=sys.stderr)
    if getattr(args, "json", False):
        print_json(report)
        return 0
    print(f"{report['metric']} ({report['model']}) on {report['data']}: {report['n_segments']} segments; runs "
          f"{', '.join(report['runs'].values())}")
    for row in report.get("meta_evaluation", []):
        print(f"  {row['variant']:<40} τ={row['value']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]")
    return 0
