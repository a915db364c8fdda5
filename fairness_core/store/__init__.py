"""DuckDB run store: manifests, cache look-up by manifest hash, batch writes, export.

Run browsing (the runs page and the `runs` command) uses this face: the catalogue and its filters, exports."""

from fairness_core.store.catalog import (
    catalogue,
    empty_cancelled,
    filter_catalogue,
    run_labels,
    search_runs,
    status_note,
    store_catalogue,
)
from fairness_core.store.export import ExportError, check_destination, export_format
from fairness_core.store.manifest import build_manifest, canonical_json, manifest_hash, signature
from fairness_core.store.store import (
    CANCELLED,
    CANCELLED_BY_USER,
    COMPLETE,
    FAILED,
    INCOMPLETE,
    RESULT_COLUMNS,
    RUNNING,
    SUPERSEDED,
    RunInfo,
    RunStore,
    StoreBusyError,
    StoreError,
    StoreUnreadableError,
    close_warm_reads,
    open_duckdb,
    warm_reads_open,
)
from fairness_core.store.typed import describe_views

__all__ = [
    "CANCELLED",
    "CANCELLED_BY_USER",
    "COMPLETE",
    "FAILED",
    "INCOMPLETE",
    "RESULT_COLUMNS",
    "RUNNING",
    "SUPERSEDED",
    "ExportError",
    "RunInfo",
    "RunStore",
    "StoreBusyError",
    "StoreError",
    "StoreUnreadableError",
    "build_manifest",
    "canonical_json",
    "catalogue",
    "check_destination",
    "close_warm_reads",
    "describe_views",
    "empty_cancelled",
    "export_format",
    "filter_catalogue",
    "manifest_hash",
    "open_duckdb",
    "run_labels",
    "search_runs",
    "signature",
    "status_note",
    "store_catalogue",
    "warm_reads_open",
]
