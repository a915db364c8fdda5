"""`python -m fairness_core`: the registry and stored runs, as a script would use them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.jobs import run_task
from fairness_core.store import RunStore
from tests.jobs.slow_task import make_task

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_models_json_lists_the_registry_with_availability() -> None:
    result = subprocess.run([sys.executable, "-m", "fairness_core", "models", "--json"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True, env={"HF_HUB_OFFLINE": "1", "PATH": ""})
    payload = json.loads(result.stdout)
    by_key = {entry["key"]: entry for entry in payload["models"]}
    assert by_key["smollm2-135m-instruct"]["available"] is True
    assert by_key["all-minilm-l6-v2"]["status"] == "available"
    assert by_key["gpt2"]["status"] == "unavailable" and "Hugging Face" in by_key["gpt2"]["reason"]
    assert payload["device"]["kind"] in ("cpu", "cuda")


def test_runs_list_show_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store_path = tmp_path / "cli.duckdb"
    outcome = run_task(make_task(), RunStore(store_path))

    assert main(["--store", str(store_path), "runs", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["run_id"] == outcome.run_id and listed[0]["status"] == "complete"

    assert main(["runs", "show", outcome.run_id, "--json", "--store", str(store_path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["manifest"]["kind"] == "test-squares" and shown["n_rows"] == 60

    destination = tmp_path / "out.parquet"
    assert main(["--store", str(store_path), "runs", "export", outcome.run_id, str(destination)]) == 0
    assert destination.exists() and (tmp_path / "out.parquet.manifest.json").exists()


def test_an_unknown_run_is_one_line_and_exit_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(tmp_path / "none.duckdb"), "runs", "show", "deadbeef"]) == 2
    assert capsys.readouterr().err.strip() == f"error: no run 'deadbeef' in {tmp_path / 'none.duckdb'}"


def test_a_reader_that_leaves_ends_the_command_quietly_and_sigpipe_stays_ignored(
        capsys: pytest.CaptureFixture[str]) -> None:
    import signal

    process = subprocess.Popen([sys.executable, "-m", "fairness_core", "models", "--json"], cwd=REPO_ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # as `| head` does
    assert process.stderr.read() == b"" and process.wait() in (0, 1)
    process.stderr.close()
    assert main(["models", "--json"]) == 0
    capsys.readouterr()
    # with SIGPIPE's default action, a write to a server that went away would kill the process silently
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN
