"""A deterministic task whose shards take a moment: used to kill a run half-way through."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from fairness_core.jobs import Task, run_task
from fairness_core.store import RunStore

N_SHARDS = 12
ROWS_PER_SHARD = 5


def square_rows(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    # The delay comes from the environment, not the request: it must not change the manifest.
    time.sleep(float(os.environ.get("SLOW_TASK_DELAY_S", "0")))
    start = shard["start"]
    return [
        {"item": str(i), "grp": "even" if i % 2 == 0 else "odd", "metric": "square", "value": float(i * i),
         "attrs": {"base": request["base"]}}
        for i in range(start, start + ROWS_PER_SHARD)
    ]


def make_task(base: int = 7) -> Task:
    shards = [{"start": index * ROWS_PER_SHARD} for index in range(N_SHARDS)]
    return Task(kind="test-squares", request={"base": base, "n": N_SHARDS * ROWS_PER_SHARD}, shards=shards,
                work=square_rows)


if __name__ == "__main__":
    run_task(make_task(), RunStore(sys.argv[1]))
