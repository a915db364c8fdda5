"""Export a stored run (rows + manifest) to CSV, Parquet or JSON, safely.

Two entry points. `export_run(store, run_id, destination)` writes where the local user asked (the CLI):
the destination is checked first (its format, that it is a file in an existing folder) and every file is
written to a temporary name and renamed, so a failure leaves nothing behind. `export_into(store, run_id,
folder, fmt)` is for the app: the file name is built by `export_file_name`, never from a stored string as
it is, and the result is confined to `folder` (a crafted run id such as `../../x` cannot escape it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pandas as pd


class RunSource(Protocol):
    """What an export reads from a run store (`RunStore` is one). Declared here, not imported, so that the store,
    whose `export` method calls this module, and this module never import each other."""

    path: Any

    def get_run(self, run_id: str) -> Any: ...

    def rows(self, run_id: str) -> pd.DataFrame: ...

EXPORT_FORMATS = ("csv", "parquet", "json")
_SAFE_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ExportError(ValueError):
    """An export that cannot be written; one sentence naming the destination. Nothing was written."""


def export_file_name(run_id: str, fmt: str, suffix: str = "") -> str:
    """`run-<id>.<fmt>` for ordinary run ids; any other id becomes `run-<safe part>-<hash>` (no `/`, no `..`)."""
    if fmt not in EXPORT_FORMATS and fmt != "manifest.json":
        raise ExportError(f"unknown export format {fmt!r}; choose csv, parquet or json")
    if _SAFE_RUN_ID.fullmatch(run_id):
        stem = run_id
    else:
        cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", run_id).strip("_")[:40]
        digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        stem = f"{cleaned}-{digest}" if cleaned else digest
    return f"run-{stem}{suffix}.{fmt}"


def export_format(destination: Path, fmt: str | None) -> str:
    """The format asked for (`fmt`), else the destination's extension, else CSV; anything else is refused."""
    chosen = (fmt or destination.suffix.lstrip(".") or "csv").lower()
    if chosen not in EXPORT_FORMATS:
        source = f"the extension of {destination.name}" if not fmt else "--format"
        raise ExportError(f"cannot export to {destination}: {chosen!r} (from {source}) is not an export format; "
                          "use .csv, .parquet or .json, or pass --format")
    return chosen


def check_destination(destination: Path) -> None:
    """Refuse folders, devices, missing folders, unusable names and DuckDB databases before any work is done."""
    try:
        _check_destination(destination)
    except OSError as error:  # e.g. a name longer than the file system allows
        reason = os.strerror(error.errno) if error.errno else str(error)
        raise ExportError(f"cannot export to {_short(destination)}: {reason}; nothing was written") from error


def _check_destination(destination: Path) -> None:
    if destination.is_dir():
        raise ExportError(f"cannot export to {destination}: it is a folder; give a file name inside it, "
                          f"e.g. {destination / 'run.csv'}")
    if destination.exists() and not destination.is_file():
        raise ExportError(f"cannot export to {destination}: it is not a regular file (a device or pipe); "
                          "give a file path")
    parent = destination.parent
    if parent.exists() and not parent.is_dir():
        raise ExportError(f"cannot export to {destination}: {parent} is not a folder")
    if not parent.is_dir():
        raise ExportError(f"cannot export to {destination}: the folder {parent} does not exist")
    if destination.is_file() and _is_duckdb(destination):
        raise ExportError(f"cannot export to {destination}: it is a DuckDB database (a run store?), which an "
                          "export would overwrite; choose another file name")


def _is_duckdb(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def _short(path: Path, limit: int = 120) -> str:
    text = str(path)
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2:]}"


def _is_store_file(store: RunSource, path: Path) -> bool:
    """True when `path` is the store's database or its write-ahead log (however the path is spelled)."""
    store_path = Path(store.path).expanduser().resolve()
    target = path.expanduser().resolve()
    return target in (store_path, store_path.with_name(store_path.name + ".wal"))


def export_run(store: RunSource, run_id: str, destination: str | Path, fmt: str | None = None) -> Path:
    """Write a run's rows plus its manifest: CSV/Parquet get a sidecar `<name>.manifest.json`."""
    destination = Path(destination).expanduser()
    chosen = export_format(destination, fmt)
    check_destination(destination)
    sidecar = destination.with_name(destination.name + ".manifest.json")
    for target in (destination, sidecar):
        if _is_store_file(store, target):
            raise ExportError(f"cannot export to {target}: it is the run store itself; choose another file name")
    info = store.get_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r} in {store.path}")
    frame = store.rows(run_id)
    frame["attrs"] = frame["attrs"].map(lambda attrs: json.dumps(attrs, sort_keys=True))
    manifest_doc = {
        "run_id": info.run_id,
        "manifest": info.manifest,
        "manifest_hash": info.manifest_hash,
        "status": info.status,
        "versions": info.versions,
    }
    if chosen == "json":
        document = dict(manifest_doc, rows=json.loads(frame.to_json(orient="records")))
        text = json.dumps(document, indent=2, ensure_ascii=False)
        _write_atomically(destination, lambda path: path.write_text(text, encoding="utf-8"))
        return destination
    check_destination(sidecar)
    if chosen == "csv":
        _write_atomically(destination, lambda path: frame.to_csv(path, index=False))
    else:
        _write_atomically(destination, lambda path: frame.to_parquet(path, index=False))
    sidecar_text = json.dumps(manifest_doc, indent=2, ensure_ascii=False)
    try:
        _write_atomically(sidecar, lambda path: path.write_text(sidecar_text, encoding="utf-8"))
    except ExportError:
        destination.unlink(missing_ok=True)  # rows without their manifest would be unreproducible
        raise
    return destination


def export_into(store: RunSource, run_id: str, folder: str | Path, fmt: str) -> Path:
    """Export into `folder` under a safe name; the written path is checked to lie directly inside it."""
    folder = Path(folder).resolve()
    target = folder / export_file_name(run_id, fmt)
    if target.resolve().parent != folder:
        raise ExportError(f"refusing to export run {run_id!r} outside {folder}")
    return export_run(store, run_id, target, fmt)


def _write_atomically(destination: Path, write: Callable[[Path], object]) -> None:
    staging = destination.with_name(f".{destination.name}.{os.getpid()}.partial")
    try:
        write(staging)
        os.replace(staging, destination)
    except OSError as error:
        with contextlib.suppress(OSError):
            staging.unlink(missing_ok=True)
        # the errno's own words: library messages (pyarrow's) would name the temporary file
        reason = os.strerror(error.errno) if error.errno else str(error).replace(str(staging), str(destination))
        raise ExportError(f"cannot export to {destination}: {reason}; nothing was written") from error
