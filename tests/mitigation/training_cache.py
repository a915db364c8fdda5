"""A cache directory with the built training set in it, built once per test module (building reads PANDA's archive,
~10-60 s) and copied into each test's own cache directory (checkpoints and adapters start empty)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def build_once(folder: Path) -> Path:
    """Build the gender training set into `folder` (a cache directory); returns it."""
    from fairness_core.mitigation import training_data

    previous = os.environ.get("FAIRNESS_LAB_CACHE")
    os.environ["FAIRNESS_LAB_CACHE"] = str(folder)
    try:
        training_data("gender")
    finally:
        if previous is None:
            os.environ.pop("FAIRNESS_LAB_CACHE")
        else:
            os.environ["FAIRNESS_LAB_CACHE"] = previous
    return folder


def fresh_cache(built: Path, target: Path) -> Path:
    """A new cache directory holding only the built training set."""
    shutil.copytree(built / "mitigation", target / "mitigation", ignore=shutil.ignore_patterns("checkpoints"))
    return target
