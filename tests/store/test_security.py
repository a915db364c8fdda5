"""A store file is data from outside: it must not read server files, fetch extensions or steer exports.

Each test builds the crafted file an attacker would hand over, then uses it through the store exactly as
the CLI and the app do.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb
import pytest

from fairness_core.jobs import run_task
from fairness_core.store import COMPLETE, RunStore, StoreUnreadableError, build_manifest, open_duckdb
from fairness_core.store.export import export_file_name, export_into
from fairness_core.store.paths import StorePathError, resolve_store_choice
from tests.jobs.slow_task import make_task

SECRET = Path("/etc/hostname")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def secret_text() -> str:
    if not SECRET.is_file() or not SECRET.read_text().strip():
        pytest.skip("this machine has no /etc/hostname to protect")
    return SECRET.read_text().strip()


def test_a_view_over_a_server_file_cannot_be_read_through_the_store(tmp_path: Path, secret_text: str) -> None:
    path = tmp_path / "crafted.duckdb"
    store = RunStore(path)
    run_task(make_task(), store)  # a genuine run store ...
    raw = duckdb.connect(str(path))  # ... to which the attacker adds a view reading a server file
    raw.execute(f"CREATE VIEW leak AS SELECT content FROM read_text('{SECRET}')")
    assert raw.execute("SELECT content FROM leak").fetchall()[0][0].strip() == secret_text  # it works unlocked
    raw.close()

    with pytest.raises(duckdb.PermissionException, match="disabled by configuration"):
        RunStore(path).query("SELECT content FROM leak")
    assert RunStore(path).list_runs()[0].status == COMPLETE  # the rest of the store still works


def test_a_runs_table_replaced_by_a_view_is_refused_in_one_sentence(tmp_path: Path, secret_text: str) -> None:
    path = tmp_path / "crafted.duckdb"
    raw = duckdb.connect(str(path))
    raw.execute(f"CREATE VIEW runs AS SELECT content AS run_id FROM read_text('{SECRET}')")
    raw.close()
    before = _digest(path)
    with pytest.raises(StoreUnreadableError) as refused:
        RunStore(path).list_runs()
    message = str(refused.value)
    assert str(path) in message and "nothing was changed" in message and "\n" not in message
    assert secret_text not in message
    assert _digest(path) == before


@pytest.mark.parametrize("statement", [
    "INSTALL httpfs",
    "LOAD httpfs",
    "ATTACH 'md:x'",
    "SET enable_external_access = true",
    "SET autoinstall_known_extensions = true",
    f"SELECT * FROM read_text('{SECRET}')",
    "SELECT * FROM read_csv('/etc/passwd')",
])
def test_sql_cannot_switch_the_lock_off_or_reach_outside(store: RunStore, statement: str) -> None:
    store.list_runs()
    run_task(make_task(), store)
    with pytest.raises(duckdb.Error) as refused:
        store.query(statement)
    assert any(word in str(refused.value) for word in ("disabled", "locked", "read-only", "Permission"))


def test_md_address_cannot_make_duckdb_fetch_an_extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(duckdb.PermissionException, match="extensions is disabled"):
        open_duckdb("md:x")
    assert list(tmp_path.iterdir()) == []


def test_every_store_connection_runs_with_the_locked_settings(store: RunStore) -> None:
    run_task(make_task(), store)
    settings = store.query(
        "SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access', "
        "'autoinstall_known_extensions', 'autoload_known_extensions', 'lock_configuration')")
    assert dict(zip(settings["name"], settings["value"], strict=True)) == {
        "enable_external_access": "false", "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false", "lock_configuration": "true"}


# -- exports never take their file name from a stored string as it is ---------------------------------
@pytest.mark.parametrize("run_id", ["../../escape", "/etc/cron.d/x", "..", "a/b\\c", "run\x00id", "ok-id_1"])
def test_export_file_names_are_safe(run_id: str) -> None:
    name = export_file_name(run_id, "csv")
    assert name.startswith("run-") and name.endswith(".csv")
    assert "/" not in name and "\\" not in name and "\x00" not in name and ".." not in name
    assert Path(name).name == name


def test_a_crafted_run_id_cannot_write_outside_the_export_folder(tmp_path: Path) -> None:
    path = tmp_path / "crafted.duckdb"
    store = RunStore(path)
    run = store.begin_run(build_manifest("demo", {}), n_shards=1)
    store.write_shard(run.run_id, 0, [{"item": "a", "value": 1.0}])
    store.finish_run(run.run_id, COMPLETE)
    crafted = "../../escaped"
    raw = duckdb.connect(str(path))
    for table in ("runs", "shards", "results"):
        raw.execute(f"UPDATE {table} SET run_id = ? WHERE run_id = ?", [crafted, run.run_id])
    raw.close()

    export_folder = tmp_path / "exports" / "session"
    export_folder.mkdir(parents=True)
    written = export_into(RunStore(path), crafted, export_folder, "csv")
    assert written.parent == export_folder.resolve()
    assert sorted(p.name for p in export_folder.iterdir()) == [written.name, written.name + ".manifest.json"]
    assert not (tmp_path / "escaped.csv").exists() and not list(tmp_path.glob("run-*"))


# -- the app may only open stores inside its root ------------------------------------------------------
@pytest.fixture()
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


def test_store_choices_inside_the_root_are_allowed(root: Path, tmp_path: Path) -> None:
    default = tmp_path / "configured.duckdb"
    assert resolve_store_choice("experiments.duckdb", root, default) == root.resolve() / "experiments.duckdb"
    assert resolve_store_choice(str(root / "sub" / "a.duckdb"), root, default) == root.resolve() / "sub" / "a.duckdb"
    assert resolve_store_choice("", root, default) == default
    assert resolve_store_choice(str(default), root, default) == default  # the operator's own choice


@pytest.mark.parametrize(("typed", "phrase"), [
    ("/proc/version", "outside the store folder"),
    ("/etc/passwd", "outside the store folder"),
    ("../outside.duckdb", "outside the store folder"),
    ("md:x", "is an address, not a file path"),
    ("s3://bucket/runs.duckdb", "is an address"),
    ("runs.csv", "must end in .duckdb"),
    (".", "is a folder"),
    ("x" * 300 + ".duckdb", "at most 255"),
    ("a\x00b.duckdb", "control characters"),
])
def test_store_choices_elsewhere_are_refused_in_one_sentence(root: Path, tmp_path: Path, typed: str,
                                                             phrase: str) -> None:
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(StorePathError, match=phrase) as refused:
        resolve_store_choice(typed, root, tmp_path / "configured.duckdb")
    assert "\n" not in str(refused.value)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing created


def test_a_symlink_out_of_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, root / "link")
    with pytest.raises(StorePathError, match="outside the store folder"):
        resolve_store_choice("link/runs.duckdb", root, tmp_path / "configured.duckdb")


# -- files that are not run stores ---------------------------------------------------------------------
def _another_programs_database(path: Path) -> None:
    raw = duckdb.connect(str(path))
    raw.execute("CREATE TABLE invoices AS SELECT 1 AS id")
    raw.close()


def _damaged_store(path: Path) -> None:
    store = RunStore(path)
    run_task(make_task(), store)
    data = bytearray(path.read_bytes())
    data[4096:8192] = os.urandom(4096)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("make", "phrase"), [
    (lambda p: p.write_text("item,value\na,1\n"), "not a DuckDB database file"),
    (lambda p: p.write_bytes(b""), "not a DuckDB database file"),
    (_another_programs_database, "another program"),
    (_damaged_store, "is unreadable"),
    (lambda p: p.mkdir(), "is a folder"),
])
def test_a_file_that_is_not_a_run_store_is_refused_and_left_alone(tmp_path: Path, make, phrase: str) -> None:
    path = tmp_path / "runs.duckdb"
    make(path)
    before = _digest(path) if path.is_file() else None
    with pytest.raises(StoreUnreadableError, match=phrase) as refused:
        RunStore(path).begin_run(build_manifest("demo", {}), n_shards=1)
    assert str(path) in str(refused.value) and "nothing was changed" in str(refused.value)
    if before is not None:
        assert _digest(path) == before
    assert not path.with_name(path.name + ".wal").exists()

