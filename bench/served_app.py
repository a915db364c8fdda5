"""The app served on a free local port with a throw-away store, offline, for the browser benches."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def wait_healthy(port: int, timeout_s: float = 120, poll_s: float = 0.3) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(poll_s)
    raise SystemExit("the app did not become healthy")


@contextmanager
def served_app(port_base: int, store_name: str, wait: bool = True) -> Iterator[str]:
    """Yields the app's base URL; the server (and its store) is gone afterwards. `port_base` keeps benches that run
    at once apart; `wait=False` lets a bench time the first visit from before the server is healthy."""
    port = port_base + os.getpid() % 300
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, FAIRNESS_LAB_STORE=str(Path(tmp) / store_name), HF_HUB_OFFLINE="1",
                   TRANSFORMERS_OFFLINE="1")
        server = subprocess.Popen(
            [sys.executable, "-m", "ui.serve", "--server.headless", "true", "--server.address",
             "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
            cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if wait:
                wait_healthy(port)
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()
            server.wait(timeout=30)
