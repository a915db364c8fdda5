"""Real-browser fixtures: `streamlit run` on a free port, driven by Playwright in Debian Chromium.

Playwright's own browser download cannot work here (no network), so we launch the system
Chromium that `make test` installs, with the flags that keep it from phoning home.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"streamlit did not become healthy at {url} within {timeout_s} s")


@contextlib.contextmanager
def serve_dashboard(root: Path, store: Path, log_path: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """`streamlit run app.py` from `root` exactly as `make run` serves it, with the store `store` and `env` on top
    of this process's environment (offline); yields the base URL and stops the server after."""
    port = _free_port()
    server_env = dict(os.environ, FAIRNESS_LAB_STORE=str(store), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                      **(env or {}))
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port),
             "--browser.gatherUsageStats", "false"],
            cwd=root, env=server_env, stdout=log, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="session")
def streamlit_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of the dashboard served exactly as `make run` serves it, with a throwaway store."""
    store = tmp_path_factory.mktemp("browser-store") / "runs.duckdb"
    log_path = tmp_path_factory.mktemp("browser-log") / "streamlit.log"
    with serve_dashboard(REPO_ROOT, store, log_path) as url:
        yield url


@pytest.fixture(scope="session")
def _browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}; `make test` installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture()
def browser_page(_browser: object) -> Iterator[object]:
    """A fresh Playwright page (1400×1000) in headless Chromium."""
    context = _browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


@pytest.fixture()
def artifact_dir() -> Path:
    """Where screenshots go (kept after the run; git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
