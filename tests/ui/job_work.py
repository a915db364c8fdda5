"""Work for the ui.jobs tests: a task whose one long batch reports in-batch progress and stops when cancelled."""

from __future__ import annotations

import threading
import time
from typing import Any

from fairness_core.jobs import Task, checkpoint

#: steps per batch; each is short, so a batch is "long" only because it has many of them
STEPS = 100_000
#: set by a test to let the batches run to the end
RELEASE = threading.Event()


def long_batches(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """A batch that checkpoints at every step and waits for RELEASE after the first steps."""
    for step in range(STEPS):
        checkpoint(step, STEPS)
        if step >= 10 and not RELEASE.is_set():
            time.sleep(0.01)
    return [{"item": str(shard["index"]), "metric": "steps", "value": float(STEPS)}]


def make_task(n_batches: int = 3, tag: str = "ui") -> Task:
    return Task("test-long-batches", {"n": n_batches, "tag": tag}, [{"index": i} for i in range(n_batches)],
                long_batches)
