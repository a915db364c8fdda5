"""DuckDB run store: manifests, cache look-up by manifest hash, batch writes, export."""

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
    open_duckdb,
)

__all__ = [
    "CANCELLED",
    "CANCELLED_BY_USER",
    "COMPLETE",
    "FAILED",
    "INCOMPLETE",
    "RESULT_COLUMNS",
    "RUNNING",
    "SUPERSEDED",
    "RunInfo",
    "RunStore",
    "StoreBusyError",
    "StoreError",
    "StoreUnreadableError",
    "build_manifest",
    "canonical_json",
    "manifest_hash",
    "open_duckdb",
    "signature",
]
