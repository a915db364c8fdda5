"""Admission for model work when many sessions share one server: one fair queue and a bounded worker pool.

A classroom is thirty browser sessions on one process. Every distinct computation used to start its own
thread, so thirty slider moves were thirty torch loops fighting for two cores. Here:

- `FairQueue` (pure ordering, no threads) holds pending requests. A request is a job key (the manifest hash
  of what it computes), a lane (`LIVE` slider moves, or `SWEEP` for long background jobs) and the sessions
  waiting for it. Each session holds at most one pending live request: a newer one replaces its queued one
  (the replaced request is dropped unless another session still waits for it). Identical requests from
  different sessions are one entry with several waiters, so they are computed once. Live requests are
  served before sweeps; within a lane, sessions take turns (round-robin over the sessions that own a
  pending request, a session served going to the back), so one session's sweep or stream of moves cannot
  starve the others.
- `WorkerPool` runs what the queue hands out on a fixed number of worker threads (`worker_count()`,
  `FAIRNESS_LAB_MODEL_WORKERS`, default one per CPU core, up to 8: a live generation uses every core when it
  runs alone on a quiet machine, else one intra-op thread, `live_threads`). Sweeps may hold at most
  `sweep_slots(workers)` of them at once, so a worker is always left for live requests when there are two or
  more. Live requests of one group queued at the same moment run as one call, up to `max_batch_size` rows.

    queue = FairQueue()
    queue.submit("alice", "live-ab12", LIVE, payload=run_it)     # [] — nothing replaced
    queue.submit("bob", "live-ab12", LIVE, payload=run_it)       # shares alice's entry
    queue.submit("alice", "live-cd34", LIVE, payload=run_other)  # alice moved again; bob still waits for ab12
    queue.position("live-cd34")                                   # 1: bob's (formerly alice's) entry is first
    entry = queue.take()                                          # live-ab12, then live-cd34, then sweeps
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

LIVE = "live"
SWEEP = "sweep"
LANES = (LIVE, SWEEP)  # serve order: every pending live request before any sweep
WORKERS_ENV = "FAIRNESS_LAB_MODEL_WORKERS"
MAX_DEFAULT_WORKERS = 8


@dataclass
class Entry:
    """One pending computation: its job key, lane, what runs it, and the sessions waiting (first = owner)."""

    key: str
    lane: str
    payload: Any
    waiters: list[str] = field(default_factory=list)
    estimate_s: float | None = None  # expected seconds of work once started (None: not known yet)
    group: str | None = None  # live requests with the same group may run together in one call (`take_companions`)
    size: int = 1  # rows it generates: what a batch of companions is bounded by (`WorkerPool.max_batch_size`)

    @property
    def owner(self) -> str:
        return self.waiters[0]


class FairQueue:
    """Pending requests in serve order: live before sweep, sessions round-robin, one live request per session.

    Not thread-safe by itself: `WorkerPool` guards it with its lock. Pure Python so the order can be tested
    without Streamlit or threads.
    """

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}  # insertion order: a session's sweeps are served in the order asked
        self._live: dict[str, str] = {}  # session -> the live request it waits for (at most one)
        self._rotation: deque[str] = deque()  # sessions that own a pending entry, next to be served first

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> Entry | None:
        return self._entries.get(key)

    def submit(self, session: str, key: str, lane: str, payload: Any = None,
               estimate_s: float | None = None, group: str | None = None, size: int = 1) -> list[Entry]:
        """`session` now wants `key` in `lane`; returns the entries dropped because nobody waits for them now.

        A live request replaces the session's earlier pending live request (a newer slider move), which keeps
        the session's turn. If `key` is already pending, the session joins its waiters (a shared job).
        Otherwise, with a `payload`, a new entry owned by the session is queued; without one (the key is
        already running elsewhere) only the session's older live request is let go.
        """
        if lane not in LANES:
            raise ValueError(f"unknown lane {lane!r}: choose one of {', '.join(LANES)}")
        dropped: list[Entry] = []
        place = self._rotation.index(session) if session in self._rotation else None
        previous = self._live.get(session) if lane == LIVE else None
        if previous is not None and previous != key:
            entry = self._withdraw(session, previous)
            if entry is not None:
                dropped.append(entry)
            else:
                place = None  # the older request went on for others, in this session's turn
        entry = self._entries.get(key)
        if entry is not None:
            if session not in entry.waiters:
                entry.waiters.append(session)
        elif payload is not None:
            entry = Entry(key, lane, payload, [session], estimate_s, group, max(1, size))
            self._entries[key] = entry
            if session not in self._rotation:
                self._rotation.insert(len(self._rotation) if place is None else place, session)
        if entry is not None and lane == LIVE:
            self._live[session] = key
        return dropped

    def withdraw(self, session: str, key: str) -> Entry | None:
        """`session` no longer waits for `key`; returns the entry if it was dropped (nobody waits any more)."""
        return self._withdraw(session, key)

    def take(self, lanes: Iterable[str] = LANES) -> Entry | None:
        """Remove and return the next entry to run among `lanes` (None when none is pending)."""
        order = self.order(lanes)
        if not order:
            return None
        entry = order[0]
        owner = entry.owner
        self._remove(entry)
        if owner in self._rotation:
            self._rotation.remove(owner)
        if self._owns_any(owner):
            self._rotation.append(owner)  # served: to the back of the line
        return entry

    def take_companions(self, entry: Entry, limit: int, max_size: int | None = None) -> list[Entry]:
        """Remove and return up to `limit` other pending live entries of `entry`'s group, in serve order: requests
        queued at the same moment for the same model that one call can answer together (their sessions' turns
        pass, as they are served now). With `max_size`, the sizes of `entry` and its companions add up to at most
        that (first fit in serve order: a request too big for what is left waits for the next call)."""
        if entry.group is None or entry.lane != LIVE or limit <= 0:
            return []
        companions: list[Entry] = []
        room = None if max_size is None else max_size - entry.size
        for other in self.order((LIVE,)):
            if len(companions) >= limit:
                break
            if other.group != entry.group or (room is not None and other.size > room):
                continue
            companions.append(other)
            room = None if room is None else room - other.size
        for other in companions:
            owner = other.owner
            self._remove(other)
            if owner in self._rotation:
                self._rotation.remove(owner)
            if self._owns_any(owner):
                self._rotation.append(owner)
        return companions

    def order(self, lanes: Iterable[str] = LANES) -> list[Entry]:
        """The pending entries of `lanes` in the order `take` would return them (nothing is removed)."""
        lanes = tuple(lanes)
        rotation = list(self._rotation)
        served: list[Entry] = []
        for lane in LANES:
            if lane not in lanes:
                continue
            queues = {session: [e for e in self._entries.values() if e.lane == lane and e.owner == session]
                      for session in rotation}
            while any(queues.values()):
                session = next(s for s in rotation if queues[s])
                served.append(queues[session].pop(0))
                rotation.remove(session)
                rotation.append(session)
        return served

    def position(self, key: str) -> int | None:
        """How many pending entries are served before `key` (None when `key` is not pending)."""
        for index, entry in enumerate(self.order()):
            if entry.key == key:
                return index
        return None

    def ahead_of(self, key: str) -> list[Entry]:
        """The pending entries served before `key` (empty when it is next or not pending)."""
        order = self.order()
        keys = [entry.key for entry in order]
        return order[: keys.index(key)] if key in keys else []

    # -- internals -------------------------------------------------------------------------------------------
    def _owns_any(self, session: str) -> bool:
        return any(entry.owner == session for entry in self._entries.values())

    def _withdraw(self, session: str, key: str) -> Entry | None:
        if self._live.get(session) == key:
            del self._live[session]
        entry = self._entries.get(key)
        if entry is None or session not in entry.waiters:
            return None
        was_owner = entry.owner == session
        entry.waiters.remove(session)
        if not entry.waiters:
            self._remove(entry)
            dropped: Entry | None = entry
        else:
            dropped = None
            if was_owner and entry.owner not in self._rotation:
                # the next waiter owns it now: the request keeps its place in line
                place = self._rotation.index(session) if session in self._rotation else len(self._rotation)
                self._rotation.insert(place, entry.owner)
        if session in self._rotation and not self._owns_any(session):
            self._rotation.remove(session)
        return dropped

    def _remove(self, entry: Entry) -> None:
        self._entries.pop(entry.key, None)
        for session in entry.waiters:
            if self._live.get(session) == entry.key:
                del self._live[session]
        for session in list(self._rotation):
            if not self._owns_any(session):
                self._rotation.remove(session)


def worker_count(environ: dict[str, str] | None = None) -> int:
    """Model workers for this process: `$FAIRNESS_LAB_MODEL_WORKERS`, else one per CPU core (at most 8).

    A bad value (not a whole number >= 1) falls back to the default rather than stopping a classroom.
    """
    environ = os.environ if environ is None else environ
    default = max(1, min(os.cpu_count() or 1, MAX_DEFAULT_WORKERS))
    text = environ.get(WORKERS_ENV, "").strip()
    try:
        value = int(text) if text else default
    except ValueError:
        return default
    return value if value >= 1 else default


def sweep_slots(workers: int) -> int:
    """At most this many workers run sweeps at once: one worker is kept for live requests when there are two."""
    return max(1, workers - 1) if workers > 1 else 1


def wait_estimate(ahead_s: Iterable[float | None], running_left_s: Iterable[float | None], workers: int
                  ) -> float | None:
    """Seconds until a queued request starts: the work ahead of it plus what running jobs have left, spread
    over the workers. None when any of it has no estimate yet (nothing measured of that kind)."""
    total = 0.0
    for seconds in (*ahead_s, *running_left_s):
        if seconds is None:
            return None
        total += max(seconds, 0.0)
    return total / max(workers, 1)


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity where the system says, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def live_threads(cores: int, busy_workers: int, load: float = 0.0) -> int:
    """Intra-op threads for a live generation that starts while `busy_workers` workers (itself included) run
    model work and the machine's load average is `load`: every core when it runs alone on a quiet machine, an
    even share when several workers run, one when other programs keep the cores busy; never fewer than one.

    The load matters as much as the pool: with two threads on two cores that other processes also use, each
    small matrix product waits for the slower core (measured: an 11-row SmolLM2 call took 3-5 s with one
    thread and 46-54 s with two at load average ~10), so a core counts as free only when the load leaves it.
    Decided once when the job starts; a job that starts later takes its share then.
    """
    share = cores // max(1, busy_workers)
    free = cores - int(max(load, 0.0) + 0.5)  # the load average rounded: cores other work leaves idle
    return max(1, min(share, free))


_MALLOC_TRIM: Any = None


def release_free_memory() -> bool:
    """Give the C heap's free pages back to the system (glibc `malloc_trim`); False where there is no glibc.

    Model work frees its large tensors into glibc's arenas, which keep the pages: after thirty sessions' batched
    generations the server's resident memory stayed 10.6% above its start although nothing was held any more
    (bench.classroom). The pool calls it when it goes idle (`WorkerPool(on_idle=...)`), so it never slows a request.
    """
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _MALLOC_TRIM = libc.malloc_trim
            _MALLOC_TRIM.argtypes, _MALLOC_TRIM.restype = [ctypes.c_size_t], ctypes.c_int
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
    if not _MALLOC_TRIM:
        return False
    _MALLOC_TRIM(0)
    return True


def tidy_when_idle(pool: WorkerPool, every_s: float = 60.0, stop: threading.Event | None = None) -> threading.Thread:
    """A daemon thread that, every `every_s` seconds while `pool` has nothing running or queued, collects
    garbage and gives free heap pages back (`release_free_memory`).

    The pool's own idle hook runs when work ends, but what sessions leave behind is let go later: Streamlit keeps
    a closed session's state for `server.disconnectedSessionTTL` (120 s) so a reconnecting student finds it.
    Setting `stop` ends the thread.
    """
    import gc

    stop = stop or threading.Event()

    def tidy() -> None:
        while not stop.wait(every_s):
            if pool.idle():
                gc.collect()
                release_free_memory()

    thread = threading.Thread(target=tidy, name="model-pool-tidy", daemon=True)
    thread.start()
    return thread


def machine_load() -> float:
    """The one-minute load average (0 where the system does not say)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def position_message(ahead: int, wait_s: float | None) -> str:
    """'3 requests ahead of yours, about 8 s' (the queued request's place, for the page)."""
    from fairness_core.jobs.runner import format_seconds

    plural = "s" if ahead != 1 else ""
    where = "Yours is next in the queue" if ahead <= 0 else f"{ahead} request{plural} ahead of yours"
    if wait_s is None:
        return where
    # under half a second: "about 0 s" read as a frozen clock (a sweep queued behind sampling ahead said it)
    return f"{where}, starting in a moment" if wait_s < 0.5 else f"{where}, about {format_seconds(wait_s)}"


class WorkerPool:
    """`workers` daemon threads that run `FairQueue` entries; a payload is a no-argument callable.

    Threads start on the first `submit`, so importing or building a pool costs nothing. `on_drop` is called
    (outside the lock) with each entry the queue drops because nobody waits for it any more. With `run_batch`,
    a worker that takes a live entry with a group also takes up to `max_batch - 1` queued entries of the same
    group, their sizes adding up to at most `max_batch_size` (None: no bound), and hands them all to `run_batch`
    (one call) instead of running each payload. `busy_workers()` counts the workers running something now.
    """

    def __init__(self, workers: int, on_drop: Callable[[Entry], None] | None = None,
                 run_batch: Callable[[list[Entry]], None] | None = None, max_batch: int = 8,
                 max_batch_size: int | None = None,
                 on_idle: Callable[[], object] | None = None) -> None:
        self.workers = workers
        self.on_idle = on_idle  # called (outside the lock) each time the last running work ends, none queued
        self.run_batch = run_batch
        self.max_batch = max_batch
        self.max_batch_size = max_batch_size
        self._busy = 0  # workers between taking entries and finishing them
        self.sweep_limit = sweep_slots(workers)
        self.queue = FairQueue()
        self.running: dict[str, tuple[str, Entry]] = {}  # key -> (lane, entry) while a worker runs it
        self._on_drop = on_drop
        self._lock = threading.Condition()
        self._threads: list[threading.Thread] = []

    def submit(self, session: str, key: str, lane: str, payload: Callable[[], None] | None = None,
               estimate_s: float | None = None, group: str | None = None, size: int = 1) -> None:
        with self._lock:
            dropped = self.queue.submit(session, key, lane, payload, estimate_s, group, size)
            self._start_threads()
            self._lock.notify_all()
        self._dropped(dropped)

    def withdraw(self, session: str, key: str) -> bool:
        """`session` stops waiting for `key`; True when the queued request was dropped (nobody else waits)."""
        with self._lock:
            dropped = self.queue.withdraw(session, key)
        self._dropped([dropped] if dropped is not None else [])
        return dropped is not None

    def idle(self) -> bool:
        """Nothing running and nothing queued."""
        with self._lock:
            return self._busy == 0 and not self.queue

    def busy_workers(self) -> int:
        """Workers running model work now (a batch of several requests is one worker)."""
        with self._lock:
            return self._busy

    def snapshot(self, key: str) -> tuple[int | None, list[Entry], list[Entry]]:
        """(position of `key`, entries ahead of it, entries running now) under the lock."""
        with self._lock:
            ahead = self.queue.ahead_of(key)
            position = self.queue.position(key)
            running = [entry for _, entry in self.running.values()]
        return position, ahead, running

    def _dropped(self, entries: list[Entry]) -> None:
        if self._on_drop is not None:
            for entry in entries:
                self._on_drop(entry)

    def _start_threads(self) -> None:
        while len(self._threads) < self.workers:
            thread = threading.Thread(target=self._work, name=f"model-worker-{len(self._threads)}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _next(self) -> list[Entry]:
        with self._lock:
            while True:
                sweeps = sum(1 for lane, _ in self.running.values() if lane == SWEEP)
                lanes = LANES if sweeps < self.sweep_limit else (LIVE,)
                entry = self.queue.take(lanes)
                if entry is not None:
                    taken = [entry]
                    if self.run_batch is not None:
                        taken += self.queue.take_companions(entry, self.max_batch - 1, self.max_batch_size)
                    for each in taken:
                        self.running[each.key] = (each.lane, each)
                    self._busy += 1
                    return taken
                self._lock.wait()

    def _work(self) -> None:
        while True:
            entries = self._next()
            try:
                if len(entries) > 1 and self.run_batch is not None:
                    self.run_batch(entries)
                else:
                    entries[0].payload()  # the payload records its own result or error (ui.jobs does)
            except BaseException:  # a payload that raises must not take the worker down
                pass
            finally:
                with self._lock:
                    for entry in entries:
                        self.running.pop(entry.key, None)
                    self._busy -= 1
                    idle = self._busy == 0 and not self.queue
                    self._lock.notify_all()
            if idle and self.on_idle is not None:
                with contextlib.suppress(Exception):  # housekeeping must not take the worker down
                    self.on_idle()
