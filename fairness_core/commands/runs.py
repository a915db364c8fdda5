"""`runs`: list, show, export stored runs; import generations made elsewhere (`runs import generations FILE`)."""

from __future__ import annotations

import argparse

from fairness_core.cli import UserFacingError, add_store_argument, open_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("runs", help="list, show or export stored runs")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="all runs, newest first: what each computed, filterable")
    listing.add_argument("--kind", action="append", help="only runs of this kind (e.g. metric-bias); repeatable")
    listing.add_argument("--status", action="append",
                         choices=("running", "complete", "cancelled", "failed", "incomplete", "superseded"),
                         help="only runs with this status; repeatable")
    listing.add_argument("--search", default="",
                         help="words that must all appear in a run's description (dataset, version, metrics "
                              "or grid, model, seed, run id), case-insensitive")
    listing.add_argument("--json", action="store_true")
    add_store_argument(listing)
    listing.set_defaults(handler=list_runs)

    show = actions.add_parser("show", help="one run: manifest, status, row count")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true")
    add_store_argument(show)
    show.set_defaults(handler=show_run)

    export = actions.add_parser("export", help="rows + manifest to CSV, Parquet or JSON")
    export.add_argument("run_id")
    export.add_argument("destination", help="output file; the format follows its extension unless --format")
    export.add_argument("--format", choices=("csv", "parquet", "json"))
    add_store_argument(export)
    export.set_defaults(handler=export_run)

    imports = actions.add_parser("import", help="store what was made elsewhere as a run (generations)")
    what = imports.add_subparsers(dest="what", metavar="WHAT", required=True)
    generations = what.add_parser(
        "generations", help="generations from a JSONL, CSV or Parquet file, or an lm-evaluation-harness "
                            "--log_samples file, as a generation run (scored; summaries, Compare, audits, checks)")
    generations.add_argument("file", help="columns prompt, generation, group [, family, system, sample, config.top_p, "
                                          "...]; or samples_<task>_<date>.jsonl from lm-eval --log_samples")
    generations.add_argument("--format", choices=("auto", "jsonl", "csv", "parquet", "lm-eval"), default="auto")
    generations.add_argument("--group-column", metavar="NAME", action="append",
                             help="the column with each row's group (default: group; lm-eval: doc.group, a dotted "
                                  "field of the record such as doc.gender); give it again for each further "
                                  "attribute (--group-column gender --group-column race): each row's group is "
                                  "then the combination, e.g. 'female × Black', and slices shows the marginals")
    generations.add_argument("--family-column", metavar="NAME", help="the column (lm-eval: field) with the family")
    generations.add_argument("--groups-map", metavar="FILE",
                             help="a CSV of prompt,group[,family] giving each prompt's group instead of a column")
    generations.add_argument("--family", default="custom", help="family of rows that name none (default custom)")
    generations.add_argument("--system", help="system name of rows that name none (default: imported)")
    generations.add_argument("--mode", choices=("continue", "chat"), default="continue",
                             help="continue: the generation continues the prompt (scored as prompt + generation); "
                                  "chat: it answers it (scored alone)")
    generations.add_argument("--first-sentence", action="store_true",
                             help="keep each generation's first sentence only, as the decoding study does")
    generations.add_argument("--scorers", default="vader,offensive,jigsaw-toxicity,negative_words",
                             help="comma-separated registry scorers (default: the decoding page's offline ones)")
    generations.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the summary")
    generations.add_argument("--json", action="store_true")
    add_store_argument(generations)
    generations.set_defaults(handler=import_generations_command)


def _summary(info) -> dict:
    return {
        "run_id": info.run_id,
        "kind": info.kind,
        "status": info.status,
        "shards_done": info.shards_done,
        "n_shards": info.n_shards,
        "n_rows": info.n_rows,
        "created_at": info.created_at,
        "finished_at": info.finished_at,
    }


def list_runs(args: argparse.Namespace) -> int:
    from fairness_core.store import search_runs

    table = search_runs(open_store(args), kinds=args.kind, statuses=args.status, search=args.search)
    if args.json:
        print_json(table.to_dict(orient="records"))
        return 0
    if table.empty:
        filtered = args.kind or args.status or args.search.strip()
        print("no runs match these filters" if filtered else "no runs stored yet")
    for row in table.itertuples(index=False):
        described = "  ".join(part for part in (
            f"{row.dataset} @{row.version}" if row.dataset or row.version else "", row.what,
            f"model {row.model}" if row.model else "", f"seed {row.seed}" if row.seed else "", row.size) if part)
        print(f"{row.run_id}  {row.kind:<14} {row.status:<10} {row.batches:>7} batches  {row.rows} rows  "
              f"{row.created:%Y-%m-%d %H:%M}  {described}" + (f"  [{row.note}]" if row.note else ""))
    return 0


def _get(args: argparse.Namespace):
    store = open_store(args)
    info = store.get_run(args.run_id) if store.path.exists() else None
    if info is None:
        raise UserFacingError(f"no run {args.run_id!r} in {store.path}")
    return store, info


def show_run(args: argparse.Namespace) -> int:
    _, info = _get(args)
    from fairness_core.store import status_note

    document = dict(_summary(info), manifest=info.manifest, manifest_hash=info.manifest_hash,
                    versions=info.versions, error=info.error, note=status_note(info))
    if args.json:
        print_json(document)
    else:
        for key, value in document.items():
            print(f"{key}: {value}")
    return 0


def export_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from fairness_core.store import ExportError, check_destination, export_format

    destination = Path(args.destination).expanduser()
    try:  # a bad destination is refused before the store is even opened
        export_format(destination, args.format)
        check_destination(destination)
        store, info = _get(args)
        written = store.export(info.run_id, destination, args.format)
    except ExportError as error:
        raise UserFacingError(str(error)) from error
    print(f"wrote {written}")
    return 0


def import_generations_command(args: argparse.Namespace) -> int:
    """`runs import generations FILE`: read and check the whole file, store it as a generation run, summarise."""
    import sys
    from pathlib import Path

    from fairness_core.cli import progress_printer
    from fairness_core.decoding import (
        GenerationInputError,
        GenerationsImportError,
        cli_rows,
        import_generations,
        measures_for,
        parse_mapping,
        plan_import,
        read_generations,
        summarize,
    )

    if not 100 <= args.resamples <= 100_000:
        raise UserFacingError(f"--resamples must be between 100 and 100,000 (got {args.resamples})")
    try:
        mapping = None
        if args.groups_map:
            mapping = parse_mapping(_read_text(Path(args.groups_map), "--groups-map"), Path(args.groups_map).name)
        path = Path(args.file).expanduser()
        imported = read_generations(path.name, _read_bytes(path, "the generations file"), args.format,
                                    args.group_column, mapping, args.family, args.family_column, args.system)
        scorers = tuple((name.strip(), {}) for name in args.scorers.split(",") if name.strip())
        plan = plan_import(imported, scorers, mode=args.mode,
                           truncate="first-sentence" if args.first_sentence else "none")
    except (GenerationsImportError, GenerationInputError) as error:
        raise UserFacingError(str(error)) from None
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    outcome = import_generations(plan, open_store(args), on_progress=progress_printer(f"import {imported.name}"))
    if outcome.status != "complete":
        raise UserFacingError(f"the import stopped ({outcome.status}); running it again resumes it")
    summary = summarize(outcome.generations, imported.families, measures_for(plan.scorers),
                        n_resamples=args.resamples)
    rows = cli_rows(summary, {key: outcome.run_id for key in summary.groups.get("config_key", [])})
    for row, label in zip(rows, summary.groups.get("label", []), strict=False):
        row["system"] = label
    record = {"run_id": outcome.run_id, "from_store": outcome.from_store, **imported.record(),
              "systems": [name for name, _ in imported.systems], "groups": imported.groups, "notes": plan.notes,
              "summary": rows}
    if args.json:
        print_json(record)
        return 0
    print(f"run {outcome.run_id}: {len(imported.rows):,} generations of {len(imported.systems)} system(s) from "
          f"{imported.name} ({imported.format}; sha256 {imported.sha256[:12]}) "
          + ("read from the store (this file was imported before)" if outcome.from_store else "stored and scored"))
    for row in rows:
        print(f"  {row['system']:<20} {row['group']:<16} n={row['n']:<5} negative={row['negative_sentiment_rate']} "
              f"[{row['ci_low']}, {row['ci_high']}]")
    return 0


def _read_bytes(path, what: str) -> bytes:
    from fairness_core.decoding import MAX_IMPORT_BYTES

    if not path.exists():
        raise UserFacingError(f"{what} {path} does not exist")
    if path.is_dir():
        raise UserFacingError(f"{what} {path} is a folder; give a file")
    try:
        if path.stat().st_size > MAX_IMPORT_BYTES:
            raise UserFacingError(f"{path.name} is {path.stat().st_size / 1e6:,.0f} MB; an import is at most "
                                  f"{MAX_IMPORT_BYTES / 1e6:.0f} MB (split it, or import per system)")
        return path.read_bytes()
    except OSError as error:
        raise UserFacingError(f"{what} {path} cannot be read ({error.strerror or error})") from None


def _read_text(path, what: str) -> str:
    data = _read_bytes(path.expanduser(), what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserFacingError(f"{what} {path.name} is not UTF-8 text") from None
