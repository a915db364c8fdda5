"""What a running work unit can see of its job: cancellation and progress *inside* a shard.

Work units stay pure `(request, shard) -> rows`, but one shard can take a minute (a batch of
generations), and users expect Cancel to act within seconds and a bar that moves. While a shard
runs in-process, the runner installs a context for the current thread; long loops call
`checkpoint(done, total)`, which reports the fraction of the shard done and raises
`ShardCancelled` once the job is cancelled (the shard's rows are then discarded: nothing partial
is written). Outside a job — a Ray worker, a plain call in a test — `checkpoint` does nothing.

A caller that wants results before a shard is done (a page streaming generated text) passes an
`on_partial` callback; work units `publish` what they have (plain dicts, the work unit's choice) and
ask `wants_partials()` first, so nothing is prepared when nobody listens. Partial results are for
display only: the shard's rows, written when it finishes, are the result.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_local = threading.local()

#: in-shard progress is forwarded at most this often (seconds): enough for a live bar, cheap for loops
REPORT_EVERY_S = 0.5


class ShardCancelled(Exception):
    """Raised inside a work unit when its job was cancelled; the runner stops without writing the shard."""


@contextmanager
def shard_context(cancel: Any = None, on_fraction: Callable[[float], None] | None = None,
                  on_partial: Callable[[dict[str, Any]], None] | None = None) -> Iterator[None]:
    """Install (cancel token, progress callback, partial-result callback) for work units in this thread."""
    previous = getattr(_local, "state", None)
    _local.state = {"cancel": cancel, "on_fraction": on_fraction, "on_partial": on_partial,
                    "last": -math.inf}  # nothing reported yet: the first report always goes out
    try:
        yield
    finally:
        _local.state = previous


def checkpoint(done: int | None = None, total: int | None = None) -> None:
    """Report `done / total` of the current shard and stop here if the job was cancelled."""
    state = getattr(_local, "state", None)
    if state is None:
        return
    cancel = state["cancel"]
    if cancel is not None and cancel.cancelled:
        raise ShardCancelled("cancelled by the user")
    callback = state["on_fraction"]
    if callback is None or done is None or not total:
        return
    now = time.monotonic()
    if now - state["last"] >= REPORT_EVERY_S:
        state["last"] = now
        callback(min(max(done / total, 0.0), 1.0))


def wants_partials() -> bool:
    """True when the job's caller listens for partial results (`publish`)."""
    state = getattr(_local, "state", None)
    return state is not None and state.get("on_partial") is not None


def publish(partial: dict[str, Any]) -> None:
    """Hand a partial result to the job's caller (no-op when nobody listens)."""
    state = getattr(_local, "state", None)
    callback = None if state is None else state.get("on_partial")
    if callback is not None:
        callback(partial)
