"""Time estimates of jobs: the figure a page shows before Run, and how far a running job has got.

A study says how much work a request is as a `Work`: its units (generated tokens, judged texts, scored candidates,
training steps), its documented cost per unit on the quiet reference machine (the 2-core machine every cost in
docs/ was measured on, checked by `python -m bench.job_estimates`), a fixed part (set-up, the summary after the
last batch) and which slowdown scales it:

- TORCH: torch work on several threads (a sweep, BERTScore);
- SHARE: pure-Python work on one thread (VADER, the n-gram metrics, bootstraps) and small torch operations that
  do not spread over threads (the Jigsaw classifier's BiLSTM);
- BATCHED: long torch jobs on both threads in big batches (adapter training, the before/after comparison), which
  a busy machine slows less (`SHARE_POWERS`). The slowdown itself is the page's (`ui.jobs.slowdown_for`).

    work = Work("audit", units=2_150, seconds_per_unit=0.0008, fixed_s=1.5, scaling=SHARE)
    seconds = work.seconds(slowdown=3.0)          # the first estimate on a machine 3x slower than the reference

A job whose parts cost very different amounts per unit (BLEU then BERTScore; 800 pairs then 2,400 summaries)
reports its progress weighted by each part's cost (`weighted_fraction`), so that the time left, revised from
progress (`load.revised_left`), does not jump when a cheap part ends and an expensive one starts: the metric-quality
page said "9 s left" at 50% (BLEU done) and "1 min 30 s" at 66% (BERTScore started) before this.

Pure arithmetic: nothing here probes the machine or reads a clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: the slowdowns a cost can scale with (module docstring)
TORCH, SHARE, BATCHED = "torch", "share", "batched"
SCALINGS = (TORCH, SHARE, BATCHED)
#: the power of the machine's slowdown (`ui.jobs.slowdown_for`: the larger of the load average's and a one-thread
#: probe's) that slows each kind of work, fitted 2026-11-28 on the 2-core machine (`python -m bench.job_estimates`,
#: docs/FOUNDATION.md): each kind's quiet time measured at load 0.5, its real time at loads 2.7-30 over that. A
#: sweep, metric quality and the audits followed the slowdown itself; training and the before/after comparison,
#: long jobs on both threads in big batches, slowed less at loads 5-10 (two threads get two of the scheduler's turns)
SHARE_POWERS = {SHARE: 1.0, TORCH: 1.0, BATCHED: 0.8}


@dataclass(frozen=True)
class Work:
    """How much work a job is, and what it costs on the quiet reference machine."""

    kind: str  # the job kind: rates measured by finished jobs are kept per kind
    units: float  # how much work, in `unit`
    seconds_per_unit: float  # documented cost of one unit on the quiet reference machine (slowdown 1)
    unit: str = "units"
    fixed_s: float = 0.0  # once per job on the reference machine: set-up, the summary after the last batch
    scaling: str = TORCH  # which slowdown scales it: TORCH, SHARE or BATCHED

    def __post_init__(self) -> None:
        if self.scaling not in SCALINGS:
            raise ValueError(f"scaling must be one of {', '.join(SCALINGS)} (got {self.scaling!r})")

    @property
    def reference_s(self) -> float:
        """Seconds on the quiet reference machine."""
        return self.fixed_s + self.units * self.seconds_per_unit

    def seconds(self, slowdown: float = 1.0) -> float:
        """Seconds on a machine `slowdown` times slower than the reference (for this work's scaling)."""
        return self.reference_s * max(slowdown, 0.0)


def weighted_fraction(parts: Sequence[tuple[float, float]]) -> float:
    """The share of a job's work done when its parts cost different amounts: `parts` = (cost of the part, the
    share of that part done), e.g. [(BLEU's seconds, 1.0), (BERTScore's seconds, 0.1)]. Costs in any one unit."""
    total = sum(max(cost, 0.0) for cost, _ in parts)
    if total <= 0:
        return 0.0
    return min(1.0, sum(max(cost, 0.0) * min(max(done, 0.0), 1.0) for cost, done in parts) / total)


def calibrated_seconds(work: Work, slowdown: float, measured: tuple[float, float] | None = None) -> float:
    """The first estimate of `work` now: its documented seconds at this `slowdown`, corrected by the ratio of real
    to estimated time that the last finished job of its kind measured here (`measured` = (that ratio, the slowdown
    it ran at)), so a machine or a model that runs at another speed than the reference is learnt once. The ratio
    is a ratio of times at that job's own load, so it carries over to this load as it is."""
    estimate = work.seconds(slowdown)
    if measured is None:
        return estimate
    ratio, _ = measured
    return estimate * ratio if ratio > 0 else estimate


def measured_ratio(real_s: float, estimated_s: float) -> float | None:
    """Real over estimated seconds of a finished job (None when either is not a positive number)."""
    if real_s <= 0 or estimated_s <= 0:
        return None
    return real_s / estimated_s
