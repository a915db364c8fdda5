"""DuckDB run store: runs, their completed shards and long-format result rows.

Concurrency model (DuckDB locks the whole file per process): connections are short-lived and
opened per operation, read-write for writers and read-only for readers, serialised inside the
process by a lock and retried with backoff when another process holds the file. A writer holds the
file only for the few milliseconds of one batch transaction, so a second Streamlit session or the
CLI waits briefly instead of crashing on `Conflicting lock`.

Warm reads (`RunStore(path, warm=True)`, what the app's pages use): reads share one process-wide read-only
connection per file, so DuckDB's buffers stay warm between a page's queries (a fresh connection re-reads every
block it needs: 2-5x the query). It holds DuckDB's shared file lock, so it is given back:
- before any write in this process (a read-write connection cannot open beside it), and by `close_warm_reads()`;
- after `WARM_IDLE_S` without a read (a timer thread), so a CLI writer in another process, which retries for
  `lock_timeout_s`, gets in within about that long;
- after `WARM_HOLD_S` of continuous use, followed by `WARM_PAUSE_S` of cold reads, so a page that keeps
  reading never locks another process's writer out for longer.
While it is open no other process can write the file, so it never serves stale data.

Every connection opens with DuckDB's external access and extension auto-install/auto-load off and
the configuration locked (`LOCKED_CONFIG`): a crafted store file cannot read server files through a
view, and a path such as `md:x` cannot make DuckDB fetch an extension. A file that is not a run store
(another format, a damaged file, another program's database) is refused before anything is written.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from fairness_core import config
from fairness_core.store.manifest import canonical_json, library_versions, manifest_hash
from fairness_core.store.typed import REGISTER_RUN_SQL, TYPED_KINDS, ensure_typed, insert_sql, typed_current

RESULT_COLUMNS = ("item", "grp", "variant", "metric", "value", "text", "attrs")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL,
    manifest VARCHAR NOT NULL,
    manifest_hash VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    n_shards INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    versions VARCHAR NOT NULL,
    owner VARCHAR,
    error VARCHAR
);
CREATE TABLE IF NOT EXISTS shards (
    run_id VARCHAR NOT NULL,
    shard INTEGER NOT NULL,
    n_rows INTEGER NOT NULL,
    finished_at TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, shard)
);
CREATE TABLE IF NOT EXISTS results (
    run_id VARCHAR NOT NULL,
    shard INTEGER NOT NULL,
    item VARCHAR,
    grp VARCHAR,
    variant VARCHAR,
    metric VARCHAR,
    value DOUBLE,
    text VARCHAR,
    attrs VARCHAR
);
CREATE TABLE IF NOT EXISTS read_settings (
    run_id VARCHAR PRIMARY KEY,
    settings VARCHAR NOT NULL,
    recorded_at TIMESTAMP NOT NULL
);
"""

# Statuses written to the table. A `running` run whose owning process is gone reads as `incomplete`.
RUNNING, COMPLETE, CANCELLED, FAILED, INCOMPLETE = "running", "complete", "cancelled", "failed", "incomplete"
#: an unfinished run whose request a later run completed (its stored batches are part of that request's results)
SUPERSEDED = "superseded"
#: what a cancelled run records as its reason (never an exception's repr)
CANCELLED_BY_USER = "cancelled by the user"

#: Settings every connection opens with; locked, so no SQL in a crafted file can switch them back on.
LOCKED_CONFIG = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}
#: The columns a run store's own tables must have (other tables may exist beside them).
_EXPECTED_COLUMNS = {
    "runs": ["run_id", "kind", "manifest", "manifest_hash", "status", "n_shards", "created_at", "finished_at",
             "versions", "owner", "error"],
    "shards": ["run_id", "shard", "n_rows", "finished_at"],
    "results": ["run_id", "shard", "item", "grp", "variant", "metric", "value", "text", "attrs"],
}
_DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file


#: warm reads: closed after this long without a read, after this long held, and then not reopened for this long
WARM_IDLE_S, WARM_HOLD_S, WARM_PAUSE_S = 2.0, 10.0, 0.5


class StoreError(RuntimeError):
    """A store that cannot be used; the message is one sentence naming the file."""


class StoreBusyError(StoreError):
    """Another process held the store's file lock for longer than the configured timeout."""


class StoreUnreadableError(StoreError):
    """The store file is not a readable run store (another format, damaged, a folder, no permission)."""


def open_duckdb(path: str | Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with external access and extension loading off, configuration locked."""
    return duckdb.connect(str(path), read_only=read_only, config=dict(LOCKED_CONFIG))


class _WarmReader:
    """One file's process-wide read-only connection; every method runs under `RunStore._process_lock`."""

    def __init__(self) -> None:
        self.connection: duckdb.DuckDBPyConnection | None = None
        self.opened_at = self.last_used = self.paused_until = 0.0
        self.timer: threading.Timer | None = None

    def close(self, pause: float = 0.0) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.paused_until = time.monotonic() + pause

    def schedule(self, key: str) -> None:
        if self.timer is None and self.connection is not None:
            self.timer = threading.Timer(WARM_IDLE_S, _close_if_idle, [key])
            self.timer.daemon = True
            self.timer.start()


_warm_readers: dict[str, _WarmReader] = {}


def _warm_key(path: Path) -> str:
    return str(path.absolute())


def _close_if_idle(key: str) -> None:
    with RunStore._process_lock:
        reader = _warm_readers.get(key)
        if reader is None or reader.connection is None:
            return
        reader.timer = None
        if time.monotonic() - reader.last_used >= WARM_IDLE_S * 0.95:
            reader.close()
        else:
            reader.schedule(key)


def close_warm_reads(path: str | Path | None = None) -> None:
    """Give back the warm read connection of one store file (or of every file); the next read opens a new one."""
    with RunStore._process_lock:
        for key, reader in list(_warm_readers.items()):
            if path is None or key == _warm_key(Path(path).expanduser()):
                reader.close()


atexit.register(close_warm_reads)  # close before the interpreter tears DuckDB down under an open connection


def warm_reads_open(path: str | Path) -> bool:
    """Whether this process holds a warm read connection to this store file now."""
    reader = _warm_readers.get(_warm_key(Path(path).expanduser()))
    return reader is not None and reader.connection is not None


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    kind: str
    manifest: dict[str, Any]
    manifest_hash: str
    status: str
    n_shards: int
    shards_done: int
    n_rows: int
    created_at: datetime
    finished_at: datetime | None
    versions: dict[str, str]
    error: str | None

    @property
    def is_complete(self) -> bool:
        return self.status == COMPLETE


def run_id_for(digest: str) -> str:
    """Run ids are the manifest hash's prefix: the same request always maps to the same run."""
    return digest[:16]


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _owner_token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_alive(owner: str | None) -> bool:
    if not owner or ":" not in owner:
        return False
    host, pid_text = owner.rsplit(":", 1)
    if host != socket.gethostname():
        return True  # cannot tell; trust the record
    try:
        os.kill(int(pid_text), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    return True


def _is_lock_error(error: Exception) -> bool:
    text = str(error).lower()
    return "conflicting lock" in text or "could not set lock" in text or "being used by another process" in text


def _is_damage(error: Exception) -> bool:
    """Errors that mean the file's bytes are bad (not a mistake in the SQL)."""
    text = str(error).lower()
    # a file cut short (a half-written copy) reads as "could not read enough bytes" once the connection is open
    return (isinstance(error, duckdb.SerializationException) or "corrupt" in text or "checksum" in text
            or "could not read enough bytes" in text)


class RunStore:
    """Owns one DuckDB file. Cheap to construct; every operation opens its own connection, or with `warm=True`
    reads share the process-wide warm one (see the module's docstring)."""

    _process_lock = threading.RLock()

    def __init__(self, path: str | Path | None = None, lock_timeout_s: float | None = None,
                 warm: bool = False) -> None:
        self.path = Path(path).expanduser() if path else config.store_path()
        self.warm = warm
        self.lock_timeout_s = config.store_lock_timeout_s() if lock_timeout_s is None else lock_timeout_s
        self._schema_ready = False
        self._complete_schema = False  # set by check(): the file has every table (readable without writing)
        self._typed_current = False  # set by check(): the typed tables and views are up to date
        self._checked: tuple[int, ...] | None = None  # the file's signature when check() last passed
        self._session: tuple[int, duckdb.DuckDBPyConnection] | None = None  # see `reading`

    # -- connections -------------------------------------------------------------------------
    @contextmanager
    def reading(self) -> Iterator[RunStore]:
        """Reads inside share one read-only connection (a comparison's few queries pay one open, ~50 ms each).

        Only for the thread that opened it, and only for reads: the process lock is held until the block ends,
        so keep it short; a write inside raises `StoreError`.
        """
        if self._session is not None and self._session[0] == threading.get_ident():
            yield self
            return
        with self._connect(write=False) as con:
            self._session = (threading.get_ident(), con)
            try:
                yield self
            finally:
                self._session = None

    @contextmanager
    def _connect(self, write: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        session = self._session
        if session is not None and session[0] == threading.get_ident():
            if write:
                raise StoreError(f"run store {self.path}: a write inside RunStore.reading(); nothing was changed")
            yield session[1]
            return
        if not write and self.warm:
            with self._process_lock:
                warm = self._warm_connection()
                if warm is not None:
                    cursor = warm.cursor()  # its own connection to the same database: the buffers are shared
                    try:
                        with self._damage_named():
                            yield cursor
                    finally:
                        cursor.close()
                        reader = _warm_readers[_warm_key(self.path)]
                        reader.last_used = time.monotonic()
                        reader.schedule(_warm_key(self.path))
                    return
        if not self._schema_ready and (write or not self._readable_as_is()):
            self._ensure_schema()
        with self._process_lock:
            if write:
                close_warm_reads(self.path)  # a read-write connection cannot open beside a read-only one
            con = self._open(read_only=not write)
            try:
                with self._damage_named():
                    yield con
            finally:
                con.close()

    @contextmanager
    def _damage_named(self) -> Iterator[None]:
        """A DuckDB error that means the file is damaged becomes one sentence naming the file."""
        try:
            yield
        except duckdb.Error as error:
            if _is_damage(error):
                raise self._unreadable(error) from error
            raise

    def _warm_connection(self) -> duckdb.DuckDBPyConnection | None:
        """The file's warm read connection (opened after the usual checks), or None: in its pause after being
        held `WARM_HOLD_S`, or the file needs its schema written first."""
        key = _warm_key(self.path)
        reader = _warm_readers.setdefault(key, _WarmReader())
        now = time.monotonic()
        if reader.connection is not None and now - reader.opened_at > WARM_HOLD_S:
            reader.close(pause=WARM_PAUSE_S)  # a writer in another process gets its turn
        if reader.connection is not None:
            return reader.connection  # checked when opened; no other process can have written since
        if now < reader.paused_until or not self.path.exists():
            return None
        if not self._schema_ready and not self._readable_as_is():
            return None
        reader.connection = self._open(read_only=True)
        reader.opened_at = reader.last_used = now
        return reader.connection

    def _open(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.01
        while True:
            try:
                return open_duckdb(self.path.absolute(), read_only=read_only)
            except duckdb.Error as error:
                if not _is_lock_error(error):
                    raise self._unreadable(error) from error
                if time.monotonic() >= deadline:
                    raise StoreBusyError(
                        f"run store {self.path} is busy: another process has held its lock for more than "
                        f"{self.lock_timeout_s:g} s, so nothing was changed; try again when that job finishes"
                    ) from error
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _unreadable(self, error: BaseException) -> StoreUnreadableError:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        reason = reason.replace("IO Error: ", "").replace("Serialization Error: ", "")[:160]
        return StoreUnreadableError(f"run store {self.path} is unreadable ({reason}); nothing was changed")

    def check(self) -> None:
        """Raise `StoreError` (one sentence) unless the file is absent or a readable run store; writes nothing."""
        if self._schema_ready:
            return
        signature = self._file_signature()
        if signature is not None and signature == self._checked:
            return  # the same bytes passed last time (any write changes the file's or its WAL's size or mtime)
        if not self.path.exists():
            if self.path.parent.exists() and not self.path.parent.is_dir():
                raise StoreUnreadableError(f"run store {self.path} cannot be created: {self.path.parent} is a file, "
                                           "not a folder; nothing was changed")
            return
        if self.path.is_dir():
            raise StoreUnreadableError(f"run store {self.path} is a folder, not a DuckDB file; nothing was changed")
        if not self.path.is_file():
            raise StoreUnreadableError(f"run store {self.path} is not a regular file; nothing was changed")
        try:
            with open(self.path, "rb") as handle:
                header = handle.read(12)
        except OSError as error:
            raise StoreUnreadableError(
                f"run store {self.path} is unreadable ({error.strerror or error}); nothing was changed") from error
        if header[8:12] != _DUCKDB_MAGIC:
            raise StoreUnreadableError(f"run store {self.path} is unreadable: it is not a DuckDB database file; "
                                       "nothing was changed")
        with self._process_lock:
            con = self._open(read_only=True)
            try:
                found = con.execute(
                    "SELECT table_name, column_name, (SELECT table_type FROM information_schema.tables t "
                    "WHERE t.table_name = c.table_name AND t.table_schema = c.table_schema LIMIT 1) "
                    "FROM information_schema.columns c WHERE table_schema = 'main' AND table_catalog = "
                    "current_database() ORDER BY table_name, ordinal_position"
                ).fetchall()
                self._typed_current = typed_current(con)
            except duckdb.Error as error:
                raise self._unreadable(error) from error
            finally:
                con.close()
        columns: dict[str, list[str]] = {}
        kinds: dict[str, str] = {}
        for table, column, table_type in found:
            columns.setdefault(table, []).append(column)
            kinds[table] = table_type
        self._complete_schema = set(_EXPECTED_COLUMNS) <= set(columns)
        if columns and not set(columns) & set(_EXPECTED_COLUMNS):
            raise StoreUnreadableError(f"run store {self.path} is a DuckDB database of another program (no runs "
                                       "table); nothing was changed")
        for table, expected in _EXPECTED_COLUMNS.items():
            if table in columns and (kinds[table] != "BASE TABLE" or columns[table] != expected):
                raise StoreUnreadableError(f"run store {self.path} is unreadable: its {table} table is not the lab's "
                                           "(different columns, or a view); nothing was changed")
        self._checked = signature

    def typed_views_current(self) -> bool:
        """Whether the file's typed tables and views match this version's (`typed.py`); a writable store that is
        behind is brought up to date by its next read-write open, a read-only one stays behind."""
        self.check()
        return bool(self._schema_ready or self._typed_current)

    def _file_signature(self) -> tuple[int, ...] | None:
        """Inode, size and modification time of the file and its WAL (None: no regular file to check)."""
        try:
            main = self.path.stat()
        except OSError:
            return None
        if not self.path.is_file():
            return None
        try:
            wal = self.path.with_name(self.path.name + ".wal").stat()
            wal_part: tuple[int, ...] = (wal.st_ino, wal.st_size, wal.st_mtime_ns)
        except OSError:
            wal_part = ()
        return (main.st_dev, main.st_ino, main.st_size, main.st_mtime_ns, *wal_part)

    def _readable_as_is(self) -> bool:
        """A store that already has the lab's tables is read without opening it for writing, so a read-only file
        (a shared copy, a read-only mount) can be listed and exported, and a read changes no byte of the file. A
        writable store whose typed tables are missing or out of date gets them first (`_ensure_schema`)."""
        self.check()
        writable = os.access(self.path, os.W_OK)
        return self._complete_schema and (self._typed_current or not writable)

    def _ensure_schema(self) -> None:
        with self._process_lock:
            if self._schema_ready:
                return
            self.check()
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreUnreadableError(f"run store {self.path} cannot be created ({error.strerror or error}); "
                                           "nothing was changed") from error
            close_warm_reads(self.path)
            con = self._open(read_only=False)
            try:
                con.execute(_SCHEMA)
                ensure_typed(con)
            except duckdb.Error as error:
                raise self._unreadable(error) from error
            finally:
                con.close()
            self._schema_ready = True

    # -- runs --------------------------------------------------------------------------------
    def begin_run(self, manifest: dict[str, Any], n_shards: int) -> RunInfo:
        """Create the run for this manifest, or take over an unfinished one to resume it."""
        digest = manifest_hash(manifest)
        run_id = run_id_for(digest)
        with self._connect(write=True) as con:
            con.begin()
            existing = con.execute("SELECT status FROM runs WHERE run_id = ?", [run_id]).fetchall()
            if not existing:
                con.execute(
                    "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, NULL)",
                    [
                        run_id,
                        manifest.get("kind", "unknown"),
                        canonical_json(manifest),
                        digest,
                        RUNNING,
                        n_shards,
                        _now(),
                        json.dumps(library_versions(), sort_keys=True),
                        _owner_token(),
                    ],
                )
            elif existing[0][0] != COMPLETE:
                con.execute(
                    "UPDATE runs SET status = ?, owner = ?, error = NULL, n_shards = ?, versions = ? "
                    "WHERE run_id = ?",
                    [RUNNING, _owner_token(), n_shards, json.dumps(library_versions(), sort_keys=True), run_id],
                )
            con.commit()
        info = self.get_run(run_id)
        assert info is not None
        return info

    def finish_run(self, run_id: str, status: str, error: str | None = None) -> None:
        with self._connect(write=True) as con:
            con.execute(
                "UPDATE runs SET status = ?, finished_at = ?, error = ?, owner = NULL WHERE run_id = ?",
                [status, _now() if status == COMPLETE else None, error, run_id],
            )

    def supersede(self, run_ids: Sequence[str], by: str) -> None:
        """Mark unfinished runs as superseded by run `by`, which completed their request (resume under a new id).

        Their stored batches stay (the completed request reads them); the catalogue then lists the request once."""
        if not run_ids:
            return
        with self._connect(write=True) as con:
            con.execute(
                "UPDATE runs SET status = ?, error = ?, owner = NULL WHERE list_contains(?, run_id) AND status != ?",
                [SUPERSEDED, f"superseded by run {by}", list(run_ids), COMPLETE],
            )

    def write_shard(self, run_id: str, shard: int, rows: pd.DataFrame | Sequence[dict[str, Any]]) -> int:
        """Write one shard's rows and mark it done, in one transaction (idempotent per shard)."""
        frame = rows_frame(rows)
        frame.insert(0, "shard", shard)
        frame.insert(0, "run_id", run_id)
        with self._connect(write=True) as con:
            con.begin()
            try:
                done = con.execute(
                    "SELECT count(*) FROM shards WHERE run_id = ? AND shard = ?", [run_id, shard]
                ).fetchall()[0][0]
                if done:
                    con.rollback()
                    return 0
                con.register("incoming_rows", frame)
                con.execute("INSERT INTO results SELECT * FROM incoming_rows")
                kind = con.execute("SELECT kind FROM runs WHERE run_id = ?", [run_id]).fetchall()
                typed = TYPED_KINDS.get(kind[0][0]) if kind else None
                if typed is not None:  # the same rows, attributes as columns (fairness_core.store.typed)
                    con.execute(REGISTER_RUN_SQL, [run_id])
                    con.execute(insert_sql(typed, "incoming_rows", lookup=typed.lookup_needed(frame)))
                con.unregister("incoming_rows")
                con.execute("INSERT INTO shards VALUES (?, ?, ?, ?)", [run_id, shard, len(frame), _now()])
                con.commit()
            except Exception:
                con.rollback()
                raise
        return len(frame)

    def completed_shards(self, run_id: str) -> set[int]:
        with self._connect(write=False) as con:
            found = con.execute("SELECT shard FROM shards WHERE run_id = ?", [run_id]).fetchall()
        return {int(row[0]) for row in found}

    def find_complete(self, manifest: dict[str, Any]) -> RunInfo | None:
        """The cache look-up: a complete run with this manifest, or None. Never loads a model."""
        if not self.path.exists():
            return None
        info = self.get_run(run_id_for(manifest_hash(manifest)))
        return info if info is not None and info.is_complete else None

    def get_run(self, run_id: str) -> RunInfo | None:
        runs = self._run_infos("WHERE r.run_id = ?", [run_id])
        return runs[0] if runs else None

    def list_runs(self, kind: str | None = None) -> list[RunInfo]:
        if not self.path.exists():
            return []
        if kind:
            return self._run_infos("WHERE r.kind = ?", [kind])
        return self._run_infos("", [])

    def _run_infos(self, where: str, params: list[Any]) -> list[RunInfo]:
        sql = f"""
            SELECT r.run_id, r.kind, r.manifest, r.manifest_hash, r.status, r.n_shards,
                   (SELECT count(*) FROM shards s WHERE s.run_id = r.run_id),
                   (SELECT coalesce(sum(n_rows), 0) FROM shards s WHERE s.run_id = r.run_id),
                   r.created_at, r.finished_at, r.versions, r.owner, r.error
            FROM runs r {where} ORDER BY r.created_at DESC
        """
        with self._connect(write=False) as con:
            found = con.execute(sql, params).fetchall()
        infos = []
        for row in found:
            try:
                manifest, versions = json.loads(row[2]), json.loads(row[10])
            except (TypeError, ValueError):
                raise StoreUnreadableError(f"run store {self.path} is damaged: the manifest of run {row[0]} is not "
                                           "JSON; nothing was changed") from None
            status = row[4]
            if status == RUNNING and not _owner_alive(row[11]):
                status = INCOMPLETE
            infos.append(
                RunInfo(
                    run_id=row[0],
                    kind=row[1],
                    manifest=manifest,
                    manifest_hash=row[3],
                    status=status,
                    n_shards=int(row[5]),
                    shards_done=int(row[6]),
                    n_rows=int(row[7]),
                    created_at=row[8],
                    finished_at=row[9],
                    versions=versions,
                    error=row[12],
                )
            )
        return infos

    def delete_run(self, run_id: str) -> None:
        with self._connect(write=True) as con:
            con.begin()
            for table in ("results", "shards", "runs", "typed_runs", "read_settings",
                          *(typed.table for typed in TYPED_KINDS.values())):
                con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            con.commit()

    # -- read settings -----------------------------------------------------------------------
    def record_read_settings(self, run_id: str, settings: dict[str, Any]) -> None:
        """Record how a run's study read it (thresholds, resamples: settings that change its numbers, not its rows)
        beside the run, outside its manifest hash; a later record replaces it (`fairness_core.reading.settings`)."""
        with self._connect(write=True) as con:
            con.execute("INSERT OR REPLACE INTO read_settings VALUES (?, ?, ?)",
                        [run_id, canonical_json(settings), _now()])

    def read_settings(self, run_id: str) -> dict[str, Any]:
        """What `record_read_settings` recorded for the run, {} if nothing (or the store predates the record)."""
        if not self.path.exists():
            return {}
        try:
            found = self.query("SELECT settings FROM read_settings WHERE run_id = ?", [run_id])
        except duckdb.CatalogException:  # a read-only store written before the table existed is read as it is
            return {}
        try:
            value = json.loads(found["settings"].iloc[0]) if not found.empty else {}
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    # -- reading rows ------------------------------------------------------------------------
    def rows(self, run_id: str) -> pd.DataFrame:
        """All result rows of a run in write order, `attrs` decoded into a dict column."""
        frame = self.query(
            "SELECT * FROM results WHERE run_id = ? ORDER BY shard, rowid", [run_id]
        )
        frame["attrs"] = frame["attrs"].map(lambda text: json.loads(text) if isinstance(text, str) and text else {})
        return frame

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pd.DataFrame:
        """Run a read-only SQL query over the tables and typed views; `$name` parameters take a dict."""
        with self._connect(write=False) as con:
            return con.execute(sql, params if isinstance(params, dict) else list(params or [])).df()

    def size_bytes(self) -> int:
        total = 0
        for candidate in (self.path, self.path.with_name(self.path.name + ".wal")):
            if candidate.exists():
                total += candidate.stat().st_size
        return total

    # -- export ------------------------------------------------------------------------------
    def export(self, run_id: str, destination: str | Path, fmt: str | None = None) -> Path:
        """Write a run's rows plus its manifest (see `fairness_core.store.export.export_run`)."""
        from fairness_core.store.export import export_run

        return export_run(self, run_id, destination, fmt)


def rows_frame(rows: pd.DataFrame | Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Coerce work-unit output to the results columns; unknown keys are rejected loudly."""
    frame = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    unknown = set(frame.columns) - set(RESULT_COLUMNS)
    if unknown:
        raise ValueError(f"result rows carry unknown fields {sorted(unknown)}; allowed: {RESULT_COLUMNS}")
    for column in RESULT_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    frame = frame[list(RESULT_COLUMNS)]
    frame["attrs"] = frame["attrs"].map(_attrs_json).astype(object)
    for column in ("item", "grp", "variant", "metric", "text"):
        frame[column] = frame[column].map(_optional_text)
    frame["value"] = pd.to_numeric(frame["value"], errors="raise").astype("float64")
    return frame


def _attrs_json(attrs: Any) -> str | None:
    return json.dumps(attrs, sort_keys=True, ensure_ascii=False) if isinstance(attrs, dict) and attrs else None


def _optional_text(value: Any) -> str | None:
    missing = value is None or (isinstance(value, float) and value != value)  # NaN from pandas
    return None if missing else str(value)
