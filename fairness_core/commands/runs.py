"""`runs`: list, show and export stored runs."""

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
