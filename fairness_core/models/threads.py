"""One thread policy for the model layer: each model call picks its torch thread count from the measured load.

Why: torch runs a forward pass on OpenMP threads (2 on this machine), and a parallel region waits for its
slowest thread. On a shared machine — a classroom server, a training job beside a scoring job, CI — the second
thread is often not scheduled, and every one of a forward's thousands of small kernels then waits for it:
BERTScore's packed encoder used 3.2x the CPU of one thread at load ~7 on 2 cores, and tiny test models took 3 ms
per 32-wide product. The old fix, `one_torch_thread()` around the Jigsaw judge, set the count of the whole
process: every thread that started its first torch work meanwhile (a Streamlit rerun, another job) silently ran
on one thread for the rest of its life.

The policy (`model_threads`), used by every backend call that runs a model:

- **per call, from the measured load**: the runnable threads of other work right now — the kernel's count of
  runnable threads (/proc/loadavg) minus the one taking the reading, the smallest of a few readings over ~10 ms
  (an OpenMP worker of this thread's previous call may still spin for a few ms before it sleeps; other work that
  keeps a core busy shows in every reading) — and the cores this process may use (its CPU affinity). The
  1-minute load average is not used: it counts this process's own recent model calls, so a slider move after a
  move would see its own past as "load". Other jobs of this process (another worker's generation) are other
  work, and count. Threads = cores - others, at least 1, at
  most a caller's cap (the Jigsaw BiLSTM: 1, its steps are too small to share). So model work never adds more
  runnable threads than there are free cores, and gets every free core on a quiet machine. Where /proc is
  missing (macOS), the 1-minute load average stands in for the others;
- **in the calling thread only**: an OpenMP thread count belongs to the thread that sets it, but
  `torch.set_num_threads` also sets the default that a thread takes when it starts its first torch work; that
  default is put back at once (by a short-lived helper thread), so another job — running, or starting meanwhile —
  keeps the process's count; nested calls (a metric calling the model) keep the outer decision;
- **restored after the call**: the thread's count before it, so code outside the model layer sees no change.

A decision is reused for `REUSE_S` seconds in the same thread (a live slider move makes a few model calls in a
row; measuring takes ~10 ms). `FAIRNESS_TORCH_THREADS=N`, or else `OMP_NUM_THREADS=N`, fixes the count
(a pinned deployment, a benchmark, reproducing a figure).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

#: Readings of the runnable count per decision, and the pause between them (seconds): ~10 ms in all, because the
#: OpenMP worker of this thread's own previous call spins for ~5 ms after it (measured: readings taken 0-2 ms
#: after a two-thread product saw one other runnable thread, from 5 ms on none), and a call that follows another
#: at once (a benchmark's sides, batches back to back) would otherwise take its own idle worker for other work.
SAMPLES, SAMPLE_PAUSE_S = 4, 0.0035
#: A thread reuses its last decision for this long (seconds).
REUSE_S = 1.0
#: Environment variable that fixes the thread count of every model call.
FIXED_ENV = "FAIRNESS_TORCH_THREADS"

_local = threading.local()


def usable_cores() -> int:
    """CPUs this process may run on (its affinity mask; the CPU count where there is none)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity masks
        return max(1, os.cpu_count() or 1)


def _system_runnable() -> int | None:
    """Runnable threads in the whole system now (the 4th field of /proc/loadavg, 'running/total')."""
    try:
        return int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None


def other_runnable() -> float:
    """Runnable threads of other work (other processes, other threads of this one): the smallest of `SAMPLES`
    readings of the system's runnable count minus the reading thread; the 1-minute load average without /proc."""
    readings = []
    for number in range(SAMPLES):
        system = _system_runnable()
        if system is None:
            break
        readings.append(max(0, system - 1))
        if number + 1 < SAMPLES:
            time.sleep(SAMPLE_PAUSE_S)
    if readings:
        return float(min(readings))
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):  # pragma: no cover
        return 0.0


def threads_for(others: float, cores: int, cap: int | None = None) -> int:
    """Threads for one model call: the cores that other runnable work leaves free, at least 1, at most `cap`."""
    threads = max(1, cores - round(others))
    return max(1, min(threads, cap)) if cap is not None else threads


#: Callbacks that stop this process's own background work (work nobody has asked for yet: `decoding.prefetch`) and
#: return once it is off the cores; called before the runnable threads are read, so that a call that starts while
#: such work runs gets the cores it would get without it, instead of counting it as other work for its whole length.
_MAKE_WAY: list[Callable[[], None]] = []


def make_way_with(callback: Callable[[], None]) -> None:
    """Register a callback of `_MAKE_WAY` (it must return at once when called from its own background thread)."""
    _MAKE_WAY.append(callback)


def decide(cap: int | None = None) -> int:
    """The thread count a model call in this thread should use now (see the module's policy)."""
    fixed = (os.environ.get(FIXED_ENV, "") or os.environ.get("OMP_NUM_THREADS", "")).strip()
    if fixed.isdigit() and int(fixed) > 0:
        return min(int(fixed), cap) if cap is not None else int(fixed)
    now = time.monotonic()
    last = getattr(_local, "last", None)
    if last is not None and now - last[0] < REUSE_S:
        free = last[1]
    else:
        for make_way in list(_MAKE_WAY):
            make_way()
        free = threads_for(other_runnable(), usable_cores())
        _local.last = (now, free)
    return max(1, min(free, cap)) if cap is not None else free


_DEFAULT: list[int] = []
_DEFAULT_LOCK = threading.Lock()


def process_default() -> int:
    """The process's torch thread count as it was before the policy first changed anything."""
    import torch

    with _DEFAULT_LOCK:
        if not _DEFAULT:
            _DEFAULT.append(torch.get_num_threads())
        return _DEFAULT[0]


def set_this_thread(threads: int) -> None:
    """This thread's torch thread count, leaving every other thread's (and new threads' default) as it was."""
    import torch

    default = process_default()
    torch.set_num_threads(threads)
    if threads != default:  # put the default for threads that start their torch work later back
        helper = threading.Thread(target=torch.set_num_threads, args=(default,), name="torch-threads-default")
        helper.start()
        helper.join()


@contextlib.contextmanager
def model_threads(cap: int | None = None) -> Iterator[int]:
    """Run the block with this thread's torch thread count set by the policy (`decide`), restored afterwards.

    Nested blocks keep the outermost decision (lowered to their own `cap`, if smaller). Yields the count."""
    import torch

    process_default()  # noted before anything changes
    outer = getattr(_local, "threads", None)
    before = torch.get_num_threads()
    threads = decide(cap) if outer is None else (min(outer, cap) if cap is not None else outer)
    if threads != before:
        set_this_thread(threads)
    _local.threads = threads
    try:
        yield threads
    finally:
        _local.threads = outer
        if torch.get_num_threads() != before:
            set_this_thread(before)


F = TypeVar("F", bound=Callable[..., Any])


def uses_model_threads(cap: int | None = None) -> Callable[[F], F]:
    """Decorator: the function runs inside `model_threads(cap)`."""

    def wrap(function: F) -> F:
        @functools.wraps(function)
        def inner(*args: Any, **kwargs: Any) -> Any:
            with model_threads(cap):
                return function(*args, **kwargs)

        return inner  # type: ignore[return-value]

    return wrap
