"""Work units for the Ray executor tests. They live in a module (not in the test file) because Ray
pickles a work unit by reference and each worker imports it from here."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.jobs.slow_task import square_rows


def dies_the_first_time(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Like `square_rows`, but the first attempt at each shard in `shard["die_on"]` kills its worker
    process outright (os._exit: no exception, no cleanup, as the OOM killer would). A marker file
    per shard remembers the first attempt; every attempt is logged with its process id."""
    marks = Path(shard["marker_dir"])
    with (marks / f"attempts-{shard['start']}.log").open("a") as log:
        log.write(f"{os.getpid()}\n")
    marker = marks / f"died-{shard['start']}"
    if shard["start"] in shard["die_on"] and not marker.exists():
        marker.touch()
        os._exit(1)
    return square_rows(request, shard)


def report_model_loads(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Fetch the tiny GPT-2 through the process-wide model cache and say whether this call loaded it."""
    from fairness_core.models import load_model, resolve_model
    from fairness_core.models.cache import loaded_keys

    spec = resolve_model(request["model"], "causal-lm")
    loaded_before = spec.cache_key() in loaded_keys()
    load_model(spec)
    return [{"item": str(shard["index"]), "grp": str(os.getpid()), "metric": "loaded_the_model",
             "value": 0.0 if loaded_before else 1.0}]


def sleepy_squares(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """`square_rows` that takes `shard["delay_s"]` seconds (shards are not in the manifest)."""
    import time

    time.sleep(shard["delay_s"])
    return square_rows(request, shard)


def fails_on_shard(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """A work unit with a bug on one shard: the exception must fail the run, not be retried."""
    with (Path(shard["marker_dir"]) / f"attempts-{shard['start']}.log").open("a") as log:
        log.write(f"{os.getpid()}\n")
    if shard["start"] == shard["fail_on"]:
        raise ValueError(f"bad shard starting at {shard['start']}")
    return square_rows(request, shard)


def traced_squares(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """`sleepy_squares` that logs when each shard starts and ends (one log shared by all workers)."""
    with Path(shard["trace"]).open("a") as trace:
        trace.write(f"start {shard['start']}\n")
    rows = sleepy_squares(request, shard)
    with Path(shard["trace"]).open("a") as trace:
        trace.write(f"end {shard['start']}\n")
    return rows
