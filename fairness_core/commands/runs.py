"""`runs`: list, show and export stored runs."""

from __future__ import annotations

import argparse

from fairness_core.cli import UserFacingError, add_store_argument, open_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("runs", help="list, show or export stored runs")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="all runs, newest first")
    listing.add_argument("--kind", help="only runs of this kind (e.g. metric-bias)")
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
    runs = open_store(args).list_runs(kind=args.kind)
    if args.json:
        print_json([_summary(info) for info in runs])
        return 0
    if not runs:
        print("no runs stored yet")
    for info in runs:
        print(f"{info.run_id}  {info.kind:<14} {info.status:<10} {info.shards_done}/{info.n_shards} batches  "
              f"{info.n_rows} rows  {info.created_at:%Y-%m-%d %H:%M}")
    return 0


def _get(args: argparse.Namespace):
    store = open_store(args)
    info = store.get_run(args.run_id) if store.path.exists() else None
    if info is None:
        raise UserFacingError(f"no run {args.run_id!r} in {store.path}")
    return store, info


def show_run(args: argparse.Namespace) -> int:
    _, info = _get(args)
    document = dict(_summary(info), manifest=info.manifest, manifest_hash=info.manifest_hash,
                    versions=info.versions, error=info.error)
    if args.json:
        print_json(document)
    else:
        for key, value in document.items():
            print(f"{key}: {value}")
    return 0


def export_run(args: argparse.Namespace) -> int:
    store, info = _get(args)
    written = store.export(info.run_id, args.destination, args.format)
    print(f"wrote {written}")
    return 0
