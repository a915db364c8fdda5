"""DuckDB run store: manifests, cache look-up by manifest hash, batch writes, export."""

from fairness_core.store.manifest import build_manifest, canonical_json, manifest_hash, signature
from fairness_core.store.store import (
    CANCELLED,
    COMPLETE,
    FAILED,
    INCOMPLETE,
    RESULT_COLUMNS,
    RUNNING,
    RunInfo,
    RunStore,
    StoreBusyError,
)

__all__ = [
    "CANCELLED",
    "COMPLETE",
    "FAILED",
    "INCOMPLETE",
    "RESULT_COLUMNS",
    "RUNNING",
    "RunInfo",
    "RunStore",
    "StoreBusyError",
    "build_manifest",
    "canonical_json",
    "manifest_hash",
    "signature",
]
