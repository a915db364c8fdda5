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
def _serve(root: Path, store: Path, log_path: Path, env: dict[str, str] | None = None
           ) -> Iterator[tuple[str, subprocess.Popen]]:
    port = _free_port()
    server_env = dict(os.environ, FAIRNESS_LAB_STORE=str(store), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                      **(env or {}))
    with open(log_path, "a") as log:  # a restarted server (`Dashboard`) writes on after the first one's lines
        process = subprocess.Popen(
            [sys.executable, "-m", "ui.serve", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port),
             "--browser.gatherUsageStats", "false"],
            cwd=root, env=server_env, stdout=log, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def serve_dashboard(root: Path, store: Path, log_path: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """The dashboard served from `root` exactly as `make run` serves it (`python -m ui.serve`), with the store
    `store` and `env` on top of this process's environment (offline); yields the base URL and stops the server."""
    with _serve(root, store, log_path, env) as (url, _process):
        yield url


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc), 0.0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Dashboard:
    """A served dashboard shared by the tests of one worker, restarted after a test that left work running.

    A page's background job outlives the browser tab that started it (by design: a reload finds it again), so a test
    that ends while its page still computes (a default view computing itself, a run it did not wait for) would
    leave that job on the server's model workers, and the next test would wait behind it: on the CI machine, an
    adaptation run waited past 300 s. After each test the server's CPU use is read over half a second; a busy server is
    stopped (its jobs with it) and served afresh on the same store."""

    #: the share of one core over the look that counts as busy (30%): a quiet server with no session uses next to
    #: none, a computing one all it gets. The wait and look were 0.5 s + 1 s after every browser test until
    #: 2026-11-29; 0.3 s + 0.5 s (15 clock ticks at the threshold) tells the two apart as well and gives back
    #: 0.7 s x 75 tests.
    BUSY_SHARE = 0.3

    def __init__(self, root: Path, store: Path, log_path: Path, env: dict[str, str] | None = None) -> None:
        self._args = (root, store, log_path, env)
        self._stack: contextlib.ExitStack | None = None
        self._process: subprocess.Popen | None = None
        self.url = ""
        self.restarts = 0

    def __enter__(self) -> Dashboard:
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _start(self) -> None:
        stack = contextlib.ExitStack()
        self.url, self._process = stack.enter_context(_serve(*self._args))
        self._stack = stack

    def _stop(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None

    def busy(self, settle_s: float = 0.3, look_s: float = 0.5) -> bool:
        """Whether the server is still computing once the last page has had `settle_s` to finish its script."""
        assert self._process is not None
        time.sleep(settle_s)
        before = cpu_seconds(self._process.pid)
        time.sleep(look_s)
        return cpu_seconds(self._process.pid) - before > self.BUSY_SHARE * look_s

    def fresh_if_busy(self, after: str) -> bool:
        """Restart the server if test `after` left it computing (noted in test-artifacts/server-restarts.txt, so
        a test that leaves work behind shows up); True when it did."""
        if not self.busy():
            return False
        self._stop()
        self._start()
        self.restarts += 1
        ARTIFACTS.mkdir(exist_ok=True)
        with open(ARTIFACTS / "server-restarts.txt", "a") as notes:
            notes.write(f"{time.strftime('%H:%M:%S')} served afresh after {after}\n")
        return True


@pytest.fixture(scope="session")
def _dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    store = tmp_path_factory.mktemp("browser-store") / "runs.duckdb"
    log_path = tmp_path_factory.mktemp("browser-log") / "streamlit.log"
    with Dashboard(REPO_ROOT, store, log_path) as dashboard:
        yield dashboard


@pytest.fixture()
def streamlit_server(_dashboard: Dashboard, request: pytest.FixtureRequest) -> Iterator[str]:
    """Base URL of the dashboard served exactly as `make run` serves it, with a throwaway store (one server per
    worker; served afresh after a test that left it computing, so no test waits behind another's work)."""
    yield _dashboard.url
    _dashboard.fresh_if_busy(request.node.nodeid)


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
