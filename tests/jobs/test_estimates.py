"""Time estimates of jobs (issue 35 §3): the arithmetic is pure and the gauges are injected, so nothing here times
anything (timing is the bench's: `python -m bench.job_estimates`)."""

from __future__ import annotations

import pytest

from fairness_core.jobs import Progress
from fairness_core.jobs.estimates import (
    BATCHED,
    SHARE,
    TORCH,
    Work,
    calibrated_seconds,
    measured_ratio,
    weighted_fraction,
)
from fairness_core.jobs.load import LoadGauge


def test_work_costs_its_documented_seconds_scaled_by_the_slowdown() -> None:
    work = Work("audit", units=2_000, seconds_per_unit=0.001, fixed_s=1.0, scaling=SHARE)
    assert work.reference_s == pytest.approx(3.0)
    assert work.seconds(4.0) == pytest.approx(12.0)
    with pytest.raises(ValueError, match="scaling must be one of"):
        Work("x", 1, 1.0, scaling="gpu")


def test_parts_that_cost_differently_are_weighted_by_their_cost() -> None:
    """BLEU (1 s) done and BERTScore (99 s) a tenth done is 10.9% of the work, not 55% of the candidates: the
    metric-quality page said "9 s left" at 50% and "1 min 30 s" at 66%."""
    assert weighted_fraction([(1.0, 1.0), (99.0, 0.1)]) == pytest.approx(0.109)
    assert weighted_fraction([(1.0, 2.0), (1.0, -1.0)]) == pytest.approx(0.5)  # shares kept within [0, 1]
    assert weighted_fraction([]) == 0.0
    progress = Progress(1, 2, elapsed_s=10.9, partial=0.1, weighted=0.109)
    assert progress.fraction == pytest.approx(0.109) and progress.eta_s == pytest.approx(89.1, rel=1e-3)
    unweighted = Progress(1, 2, elapsed_s=10.0, partial=0.1)
    assert unweighted.fraction == pytest.approx(0.55) and unweighted.eta_s == pytest.approx(8.18, rel=1e-2)


def test_a_ratio_measured_here_corrects_the_next_estimate_of_its_kind() -> None:
    work = Work("sweep", units=100, seconds_per_unit=0.1)
    assert calibrated_seconds(work, 2.0) == pytest.approx(20.0)
    assert calibrated_seconds(work, 2.0, measured=(1.5, 3.0)) == pytest.approx(30.0)
    assert measured_ratio(30.0, 20.0) == pytest.approx(1.5)
    assert measured_ratio(0.0, 20.0) is None and measured_ratio(3.0, 0.0) is None


def test_the_page_estimate_uses_the_larger_of_the_load_average_and_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """The load average (load / (1.5 x cores)) and a one-thread probe each missed some loads (issue 35 §3); the
    larger counts, to the power its kind of work feels it. The torch probe (`LOAD`) is not used for a `Work`."""
    from fairness_core.jobs.estimates import SHARE_POWERS
    from fairness_core.jobs.load import load_average_slowdown
    from ui import jobs

    assert load_average_slowdown(load=12.0, cores=2) == pytest.approx(4.0)
    assert load_average_slowdown(load=0.5, cores=2) == 1.0
    monkeypatch.setattr(jobs, "LOAD", LoadGauge(probe=lambda: 30.0, background=False))
    monkeypatch.setattr(jobs, "SHARE_LOAD", LoadGauge(probe=lambda: 2.0, background=False))
    monkeypatch.setattr(jobs, "load_average_slowdown", lambda: 4.0)  # load 12 on 2 cores
    monkeypatch.setattr(jobs, "_RATIOS", {})
    assert jobs.estimate(Work("t", 10, 1.0, scaling=TORCH)) == pytest.approx(40.0)
    assert jobs.estimate(Work("b", 10, 1.0, scaling=BATCHED)) == pytest.approx(10 * 4.0 ** SHARE_POWERS[BATCHED])
    monkeypatch.setattr(jobs, "load_average_slowdown", lambda: 1.0)  # a quiet load average, a busy probe
    assert jobs.estimate(Work("s", 10, 1.0, scaling=SHARE)) == pytest.approx(20.0)
    jobs._RATIOS["s"] = (10.0, 2.0)  # one odd job: its ratio moves the next estimate at most MAX_CORRECTION times
    assert jobs.estimate(Work("s", 10, 1.0, scaling=SHARE)) == pytest.approx(20.0 * jobs.MAX_CORRECTION)
    monkeypatch.setattr(jobs, "SHARE_LOAD", LoadGauge(probe=lambda: 0.8, background=False))  # a faster machine:
    assert jobs.estimate(Work("b", 10, 1.0, scaling=BATCHED)) == pytest.approx(10.0)  # the reference (learnt later)


def test_a_job_started_with_its_work_keeps_the_shown_estimate_and_learns_its_ratio(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.jobs import CancelToken
    from ui import jobs

    monkeypatch.setattr(jobs, "SHARE_LOAD", LoadGauge(probe=lambda: 2.0, background=False))
    monkeypatch.setattr(jobs, "load_average_slowdown", lambda: 1.0)
    monkeypatch.setattr(jobs, "_RATIOS", {})
    work = Work("tiny", units=4, seconds_per_unit=0.05, scaling=SHARE)  # 0.4 s at slowdown 2

    def run(on_progress, cancel: CancelToken) -> str:
        for done in range(5):
            on_progress(Progress(done, 4, elapsed_s=0.01 * done))
        return "done"

    job = jobs.start(jobs.key_for("tiny", {"n": 1}), run, label="Tiny", estimate_of=work, session="test")
    assert job.first_s == pytest.approx(0.4)
    jobs.wait(job.key, timeout_s=30)
    assert job.result == "done"
    ratio, slowdown = jobs._RATIOS["tiny"]
    assert slowdown == 2.0 and ratio == pytest.approx((job.finished - job.started) / 0.4)


def test_a_rise_of_the_time_left_is_taken_at_a_pace_and_good_news_at_once() -> None:
    """A sweep's first in-batch report carried its warm-up: the time left went from 17 s to 54 s and back to 39 s
    within 10 s. A rise of the whole time the line implies is taken at the pace of ETA_SMOOTHING_S of the job's
    own time; a fall at once."""
    from ui import jobs

    job = jobs.BackgroundJob("sweep-steady")
    assert jobs.steady_left(job, elapsed=9.0, left=17.0) == 17.0  # the first figure: as it is (26 s in all)
    left = jobs.steady_left(job, elapsed=11.0, left=54.0)  # progress says 65 s in all, two seconds later
    assert left == pytest.approx(26.0 + (65.0 - 26.0) * 2.0 / jobs.ETA_SMOOTHING_S - 11.0)
    assert jobs.steady_left(job, elapsed=13.0, left=20.0) == pytest.approx(20.0)  # 33 s in all: shown at once
    assert jobs.steady_left(job, elapsed=40.0, left=30.0) == pytest.approx(30.0)  # a rise over 27 s: whole
    assert jobs.steady_left(job, elapsed=75.0, left=0.0) == 0.0  # never negative
    seeded = jobs.BackgroundJob("sweep-seeded")  # the first report after the estimate the line showed (22 s)
    assert jobs.steady_left(seeded, elapsed=7.0, left=39.0, first=22.0) == pytest.approx(15.0)  # 22 s in all yet
