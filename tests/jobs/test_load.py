"""How busy the machine is, for time estimates: the arithmetic is pure and the gauge takes its probe and clock,
so nothing here times anything."""

from __future__ import annotations

import pytest

from fairness_core.jobs.load import (
    MAX_SLOWDOWN,
    MIN_SLOWDOWN,
    PROBE_REFERENCE_S,
    SHARE_EXPONENT,
    LoadGauge,
    combined_slowdown,
    rescale,
    revised_left,
    slowdown,
)


def test_the_slowdown_is_the_probe_over_the_quiet_reference_within_bounds() -> None:
    assert slowdown(PROBE_REFERENCE_S) == 1.0
    assert slowdown(0.3, reference_s=0.01) == pytest.approx(30.0, rel=1e-5)
    assert slowdown(0.001, reference_s=0.01) == MIN_SLOWDOWN  # a faster probe is noise, not a 10x machine
    assert slowdown(100.0, reference_s=0.01) == MAX_SLOWDOWN
    assert slowdown(0.0) == 1.0


def test_a_burst_in_the_torch_probe_is_bounded_by_the_cores_share() -> None:
    bound = SHARE_EXPONENT
    # the torch probe caught a burst (12x) while one thread still gets most of a core (1.2x)
    assert combined_slowdown(0.12, 0.012, torch_reference_s=0.01, share_reference_s=0.01) == pytest.approx(
        1.2 ** bound, rel=1e-5)
    # two busy processes on two cores: torch threads stall each other (6x); one thread gets 2/3 of a core
    assert combined_slowdown(0.06, 0.015, torch_reference_s=0.01, share_reference_s=0.01) == pytest.approx(
        1.5 ** bound, rel=1e-5)
    # a quiet machine: both near 1, the larger of the two (the share is the least torch slows by)
    assert combined_slowdown(0.0101, 0.0105, torch_reference_s=0.01, share_reference_s=0.01) == pytest.approx(
        1.05, rel=1e-5)


def test_a_torch_probe_below_the_cores_share_is_a_lucky_moment_not_a_quieter_machine() -> None:
    """Issue 35 §3: at load 24 the torch probe read 2.0x beside a 3.9x share, and a training took 5x its estimate:
    torch's threads each get about one thread's share of a core, so the share is the least they slow by."""
    assert combined_slowdown(0.02, 0.039, torch_reference_s=0.01, share_reference_s=0.01) == pytest.approx(
        3.9, rel=1e-5)
    # above the share and below its bound: the torch probe's own figure, as before
    assert combined_slowdown(0.05, 0.039, torch_reference_s=0.01, share_reference_s=0.01) == pytest.approx(
        5.0, rel=1e-5)


def test_a_faster_interpreter_bounds_the_torch_probe_as_it_is_not_amplified() -> None:
    """Issue 30 §2: the exponent models threads that wait for each other on a busy machine; a single-thread probe
    faster than the reference (share 0.6) is a faster machine, and 0.6 ** 1.5 = 0.46 would shrink every
    estimate below what the torch probe itself says."""
    # torch probe 0.9x, single thread 0.6x: the bound is 0.6, so the torch probe's 0.9 is not cut
    assert combined_slowdown(0.009, 0.006, torch_reference_s=0.01, share_reference_s=0.01) == pytest.approx(
        0.6, rel=1e-5)
    # torch probe 0.7x, single thread 0.8x: the torch probe's own figure
    assert combined_slowdown(0.007, 0.008, torch_reference_s=0.01, share_reference_s=0.01) == pytest.approx(
        0.7, rel=1e-5)


def test_a_measured_rate_is_rescaled_to_the_load_of_the_moment() -> None:
    # 0.02 s per unit measured while the machine was 4x slower than the reference; now it is 12x slower
    assert rescale(0.02, measured_at=4.0, now=12.0) == pytest.approx(0.06, rel=1e-5)
    assert rescale(0.02, measured_at=4.0, now=1.0) == pytest.approx(0.005, rel=1e-5)  # the other job ended
    assert rescale(0.02, measured_at=0.0, now=3.0) == 0.02  # nothing known about the past load: as measured


def test_a_running_job_trusts_its_own_progress_more_as_it_goes() -> None:
    # shown before it started: 20 s. After 10 s it has done 2%: progress alone says 490 s left, a 2% sample
    first = 20.0
    early = revised_left(10.0, 0.02, first)
    assert 10.0 < early < 490.0 - 10.0
    assert early == pytest.approx(0.08 * 500 + 0.92 * 20 - 10, rel=1e-5)  # weight 0.02 / 0.25 on progress
    # from a quarter of the work on, progress alone: 30 s for 30%, 70 s left
    assert revised_left(30.0, 0.3, first) == pytest.approx(70.0, rel=1e-5)
    assert revised_left(5.0, 0.0, first) == 15.0  # nothing done yet: the first estimate, less the time spent
    assert revised_left(8.0, 0.5) == pytest.approx(8.0, rel=1e-5)  # no first estimate: progress alone
    assert revised_left(50.0, 0.0, first) == 0.0  # never negative


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_gauge_probes_when_stale_and_takes_the_median_of_recent_probes() -> None:
    probes = iter([2.0, 20.0, 3.0, 4.0])  # slowdowns: 2x, a 20x burst, 3x, 4x
    calls: list[float] = []

    def probe() -> float:
        calls.append(clock.now)
        return next(probes)

    clock = Clock()
    gauge = LoadGauge(probe=probe, clock=clock, max_age_s=20, background=False, window_s=120)
    assert gauge.slowdown() == pytest.approx(2.0, rel=1e-5)
    clock.now = 10
    assert gauge.slowdown() == pytest.approx(2.0, rel=1e-5) and calls == [0.0]  # fresh: no new probe
    clock.now = 25
    assert gauge.slowdown() == pytest.approx(11.0, rel=1e-5)  # median of 2x and the 20x burst
    clock.now = 50
    assert gauge.slowdown() == pytest.approx(3.0, rel=1e-5)  # 2, 20, 3: the burst no longer sets the figure
    clock.now = 200  # the window has passed: only what was probed now counts
    assert gauge.slowdown() == pytest.approx(4.0, rel=1e-5)
    assert calls == [0.0, 25, 50, 200]


def test_the_gauge_does_not_probe_while_its_own_process_runs_model_work() -> None:
    """Issue 45 §1: a probe while the server's own model workers run times the server's own work and takes CPU
    from it; the last figure stands until they are idle or for at most two minutes (a first figure is always
    probed)."""
    probes = iter([2.0, 5.0, 6.0])
    calls: list[float] = []
    running = [True]

    def probe() -> float:
        calls.append(clock.now)
        return next(probes)

    clock = Clock()
    gauge = LoadGauge(probe=probe, clock=clock, max_age_s=20, background=False, window_s=120,
                      own_work_running=lambda: running[0])
    assert gauge.slowdown() == pytest.approx(2.0) and calls == [0.0]  # no figure yet: probed even so
    clock.now = 60
    assert gauge.slowdown() == pytest.approx(2.0) and calls == [0.0]  # stale, but the workers run: kept
    running[0] = False
    clock.now = 70
    assert gauge.slowdown() == pytest.approx(3.5) and calls == [0.0, 70]  # idle again: probed (median of 2 and 5)
    running[0] = True
    clock.now = 70 + gauge.busy_max_age_s - 1
    assert gauge.slowdown() == pytest.approx(5.0) and calls == [0.0, 70]  # busy: reused (the window keeps only 70's)
    clock.now = 70 + gauge.busy_max_age_s
    assert gauge.slowdown() == pytest.approx(6.0) and calls[-1] == clock.now  # busy for 2 minutes: probed even so
