"""Served use: Streamlit reads the repository's config and watches no files (no inotify flood in the log)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_streamlit_runs_without_a_file_watcher() -> None:
    shown = subprocess.run([sys.executable, "-m", "streamlit", "config", "show"], cwd=REPO_ROOT,
                           capture_output=True, text=True, check=True).stdout
    assert re.search(r'^fileWatcherType = "none"$', shown, flags=re.MULTILINE), shown[-2000:]
