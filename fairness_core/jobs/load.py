"""How much slower work runs on this machine *now* than on a quiet reference machine, for time estimates.

Estimates used to be a fixed cost per unit measured once on a quiet machine ("about 50 s"), and a sweep that
shared the 2 cores with another job took 583 s: torch's worker threads wait for each other at every operation,
so when other processes hold the cores a thread that is switched out stalls the rest, and the slowdown is far
more than the share of the cores lost (measured: 2 busy processes made a small sweep 36x slower). The load
average cannot see that, so this module measures it: `probe_seconds` times a small torch kernel shaped like the
sampler's work (one linear layer of a 135M model over a batch of rows, with torch's thread count), and
`slowdown` is its time over the same kernel's time on the quiet reference machine (`PROBE_REFERENCE_S`, the
machine the documented per-unit costs were measured on). The ratio also carries a faster or slower machine.

    gauge = LoadGauge()                       # probes at most every `max_age_s`; the page asks on each rerun
    now = gauge.slowdown()                    # 1.0 quiet, 20.0 when torch fights other processes for the cores
    seconds = units * seconds_per_unit * now  # nothing measured here yet: the documented cost, scaled
    seconds = rescale(measured_rate, measured_at=then, now=now) * units   # a rate an earlier job measured

A running job's figure is revised from its own progress (`revised_left`). The arithmetic (`slowdown`,
`rescale`, `revised_left`) is pure, and `LoadGauge` takes its probe and clock as arguments, so
tests inject both; only `probe_seconds` touches the machine.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable

#: `probe_seconds()` on the reference machine (2 CPU cores, 2 torch threads) when quiet, 2026-11-26: 19 ms for 40
#: layers at load average ~1.4, i.e. 14 ms for the probe's 30 (the fastest of 60 10-layer probes at load ~10 was
#: 12 ms). The documented per-unit costs (docs/decoding.md) were measured on the same machine.
PROBE_REFERENCE_S = 0.0143
#: `cpu_share_seconds()` on the reference machine: about the fastest of 60 runs, 2026-11-26 (one thread gets
#: a whole core at times even when the machine is shared)
SHARE_REFERENCE_S = 0.026
#: a probe runs this many times and the lower quartile counts (some repeats land in a short burst of other work;
#: sustained contention slows them all)
PROBE_REPEATS = 9
#: a slowdown is kept within these bounds: a probe a little faster than the reference is noise, not a faster
#: machine, below MIN; above MAX a figure would mean nothing anyway
MIN_SLOWDOWN, MAX_SLOWDOWN = 0.5, 200.0
#: the bound `combined_slowdown` puts on the torch probe: the single-thread share's slowdown to this power (1: the
#: share alone, 2: its square, two threads waiting for each other); 1.5 put the first shown figure within 2x of
#: the real time in two runs of `python -m bench.estimates` where 1 and 2 each missed once (2026-11-26)
SHARE_EXPONENT = 1.5
#: a running job's own progress alone sets its time left once this share of its work is done (`revised_left`)
TRUST_PROGRESS_AFTER = 0.25
#: the probes of this many seconds count (their median): a burst of other work moves one probe, not the figure
WINDOW_S = 120.0
#: how long a probed slowdown is reused (seconds): a probe costs ~0.1 s quiet, a few seconds under heavy load
MAX_AGE_S = 20.0
#: ... and while the process's own model work runs (`LoadGauge.own_work_running`): a probe then times that work too
#: and takes CPU from it, so it comes at most every two minutes, not never (a sweep or a class can run for hours)
BUSY_MAX_AGE_S = 120.0


def probe_seconds(repeats: int = PROBE_REPEATS) -> float:
    """Seconds (lower quartile of `repeats`) of a fixed small torch kernel: 30 linear layers + tanh over a 96 x 576
    batch, the shape of SmolLM2-135M's hidden state in a sweep batch, with torch's current thread count, after one
    warm-up."""
    import torch

    generator = torch.Generator().manual_seed(0)
    rows = torch.randn(96, 576, generator=generator)
    weight = torch.randn(576, 576, generator=generator) / 24

    def once() -> float:
        started = time.perf_counter()
        hidden = rows
        for _ in range(30):
            hidden = torch.tanh(hidden @ weight)
        return time.perf_counter() - started

    once()
    times = sorted(once() for _ in range(max(1, repeats)))
    return times[(len(times) - 1) // 4]  # the lower quartile: a burst of other work lengthens some repeats


def cpu_share_seconds(repeats: int = PROBE_REPEATS) -> float:
    """Seconds (lower quartile of `repeats`) of a fixed pure-Python loop: one thread, so it measures the share of a
    core this process gets now, without torch's threads waiting for each other."""

    def once() -> float:
        started = time.perf_counter()
        total = 0
        for number in range(1_000_000):
            total += number
        return time.perf_counter() - started

    times = sorted(once() for _ in range(max(1, repeats)))
    return times[(len(times) - 1) // 4]


def combined_slowdown(torch_probe_s: float, share_probe_s: float, torch_reference_s: float = PROBE_REFERENCE_S,
                      share_reference_s: float = SHARE_REFERENCE_S) -> float:
    """The machine's slowdown for a torch job: the torch probe's, but at most the single-thread share's to the power
    `SHARE_EXPONENT` when that share is a slowdown (> 1; a speed-up, < 1, bounds it as it is). The torch probe sees
    torch's threads stall each other when other processes hold the cores, but it is short and jumps with every
    burst of other work (1.2x to 40x within minutes here), while a sweep averages over those bursts. Its threads
    each get about the single-thread share of a core and wait for each other at every operation, so it slows by
    more than that share (up to its square with two threads)."""
    share = slowdown(share_probe_s, share_reference_s)
    # The exponent is for threads that wait for each other on a shared machine: a share below 1 (a faster
    # interpreter than the reference) is a faster machine, which the power would make look faster still.
    bound = share ** SHARE_EXPONENT if share > 1.0 else share
    # ... and the share is the least a busy machine slows torch by: its threads each get about that share of a core.
    # A torch probe below it is a lucky moment in a burst (2.0x beside a 3.9x share at load 24, 2026-11-28, when a
    # training took 5x its estimate), not a quieter machine.
    torch = slowdown(torch_probe_s, torch_reference_s)
    return min(max(torch, share) if share > 1.0 else torch, bound)


def share_slowdown(repeats: int = PROBE_REPEATS) -> float:
    """The single-thread share's slowdown now: the *median* time of `repeats` runs of the `cpu_share_seconds` loop
    over its reference, what pure-Python work on one thread feels of a sustained load (~0.3 s quiet, a few seconds
    when busy). Not the lower quartile: on a machine at load 20-30 the fastest quarter of the loops often ran
    uninterrupted and read 1.1x while jobs ran 10x slower (2026-11-28, `python -m bench.job_estimates`)."""

    def once() -> float:
        started = time.perf_counter()
        total = 0
        for number in range(1_000_000):
            total += number
        return time.perf_counter() - started

    return slowdown(statistics.median(once() for _ in range(max(1, repeats))), SHARE_REFERENCE_S)


#: processes in the 1-minute load average per core that make work run twice as slow as on the quiet machine, about:
#: fitted 2026-11-28 on the 2-core machine (`python -m bench.job_estimates`: real over quiet time of a sweep,
#: metric quality, the audits and training at load averages 2.7-30 tracked load / 3 within 1.5x in most runs)
LOAD_PER_CORE_DOUBLING = 1.5


def load_average_slowdown(load: float | None = None, cores: int | None = None) -> float:
    """The slowdown the 1-minute load average implies: load / (1.5 x cores), at least 1. It smooths over the bursts
    that a sub-second probe lands in or misses (a one-thread probe read 1.1x at load 5-10 while every job ran twice
    as slow), at the price of lagging a change by a minute."""
    import os

    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # no load average on this platform
            return 1.0
    cores = cores or os.cpu_count() or 1
    return min(max(load / (LOAD_PER_CORE_DOUBLING * cores), 1.0), MAX_SLOWDOWN)


def probe_slowdown() -> float:
    """`combined_slowdown` of both probes run now (~0.3 s on a quiet machine, a few seconds under heavy load)."""
    return combined_slowdown(probe_seconds(), cpu_share_seconds())


def slowdown(probe_s: float, reference_s: float = PROBE_REFERENCE_S) -> float:
    """How many times slower than the quiet reference machine: probe time over reference time, within bounds."""
    if probe_s <= 0 or reference_s <= 0:
        return 1.0
    return min(max(probe_s / reference_s, MIN_SLOWDOWN), MAX_SLOWDOWN)


def rescale(seconds_per_unit: float, measured_at: float, now: float) -> float:
    """A rate measured when the machine was `measured_at` times slower than the reference, as it would be `now`."""
    if measured_at <= 0 or now <= 0:
        return seconds_per_unit
    return seconds_per_unit * now / measured_at


def revised_left(elapsed_s: float, fraction_done: float, first_estimate_s: float | None = None,
                 trust_after: float = TRUST_PROGRESS_AFTER) -> float:
    """Seconds left for a running job, revised from its own progress: the time spent so far over the share of
    its work done, blended with the estimate shown before it started while that share is small (the first rows
    of a batch are slow and one burst of other work skews a 2% sample), trusting progress alone from
    `trust_after` of the work on. Without a first estimate, progress alone."""
    if fraction_done <= 0:
        return max((first_estimate_s or 0.0) - elapsed_s, 0.0)
    from_progress = elapsed_s / min(fraction_done, 1.0)
    weight = 1.0 if first_estimate_s is None else min(fraction_done / trust_after, 1.0)
    total = weight * from_progress + (1 - weight) * (first_estimate_s or 0.0)
    return max(total - elapsed_s, 0.0)


class LoadGauge:
    """The machine's current slowdown: the median of the probes of the last `window_s` seconds (other sessions'
    work comes in bursts, and one probe can land in one), probed again at most every `max_age_s` seconds, one
    probe at a time.

    The first call probes and waits for it; afterwards a stale value is returned at once while a background
    thread probes again (`background=False` probes in the caller instead), so a page's rerun or a finishing
    job never waits for a probe that a heavy load makes slow. `probe` returns a slowdown (default
    `probe_slowdown`) and `clock` the time, so tests inject both.

    `own_work_running` (optional) says whether this process's own model work runs now: while it does, a figure is
    reused for up to `busy_max_age_s` (2 minutes) instead of `max_age_s`. A probe then times this process's own work
    as much as the machine's other programs, and takes CPU from it: in a classroom of 30 sessions the two gauges'
    probes, every 20 s, used 15.7 s of the server's 209 s of CPU (issue 45 §1). Not never: a long sweep or a class
    keeps the workers busy for hours, and a figure from before it would go stale.
    """

    def __init__(self, probe: Callable[[], float] = probe_slowdown, clock: Callable[[], float] = time.monotonic,
                 max_age_s: float = MAX_AGE_S, background: bool = True, window_s: float = WINDOW_S,
                 own_work_running: Callable[[], bool] | None = None, busy_max_age_s: float = BUSY_MAX_AGE_S) -> None:
        self.probe, self.clock, self.max_age_s = probe, clock, max_age_s
        self.background, self.window_s = background, window_s
        self.own_work_running, self.busy_max_age_s = own_work_running, busy_max_age_s
        self._lock, self._probing = threading.Lock(), threading.Lock()
        self._probes: list[tuple[float, float]] = []  # (when, slowdown), oldest first

    def slowdown(self) -> float:
        with self._lock:
            value, age = self._current()
        busy = age < self.busy_max_age_s and self.own_work_running is not None and self.own_work_running()
        if value is not None and (age < self.max_age_s or busy):
            return value
        if value is not None and self.background:
            if not self._probing.locked():
                threading.Thread(target=self._measure, name="load-probe", daemon=True).start()
            return value
        return self._measure()

    def _current(self) -> tuple[float | None, float]:
        """(median of the probes in the window, seconds since the newest; None and infinity before any); lock held."""
        now = self.clock()
        self._probes = [(at, value) for at, value in self._probes if now - at < self.window_s] or self._probes[-1:]
        if not self._probes:
            return None, float("inf")
        return statistics.median(value for _, value in self._probes), now - self._probes[-1][0]

    def _measure(self) -> float:
        with self._probing:
            with self._lock:
                value, age = self._current()
            if value is not None and age < self.max_age_s:
                return value  # another caller probed while this one waited
            measured = min(max(self.probe(), MIN_SLOWDOWN), MAX_SLOWDOWN)
            with self._lock:
                self._probes.append((self.clock(), measured))
                return self._current()[0]  # type: ignore[return-value]
