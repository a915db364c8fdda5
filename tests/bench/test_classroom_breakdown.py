"""bench.classroom reads the server's TIMING lines into where a move's time goes."""

from __future__ import annotations

import os

from bench.classroom import breakdown

LOG = """\
TIMING job lane=live rows=11 queue_s=0.500 run_s=1.500
TIMING model rows=11 seconds=1.200
TIMING scorers rows=11 seconds=0.100
some other server line
TIMING job lane=live rows=22 queue_s=1.500 run_s=2.500
TIMING job lane=sweep rows=990 queue_s=0.000 run_s=40.000
TIMING model rows=22 seconds=2.000
"""


def test_the_breakdown_counts_live_jobs_and_subtracts_their_medians_from_the_median_move() -> None:
    line = breakdown(LOG, [3.0, 4.0, 5.0])
    assert "queue p50 1.00 s" in line and "job run p50 2.00 s" in line  # the sweep's job is not a move
    assert "model calls: 2, median 16 rows" in line and "scorers p50 0.10 s" in line
    assert "~1.00 s (median move - median queue - median run)" in line
    assert "queue none" in breakdown("", [])


def test_the_floor_is_the_servers_work_at_the_share_it_gets_against_the_window_the_moves_came_in() -> None:
    """Issue 45 §1: 120 s of server CPU at 0.5 cores needs 240 s of wall; the moves came over 100 s, so the last one
    waits at least 140 s whatever the queue does."""
    from bench.classroom import Session, cpu_seconds, floor_line

    shared, own = Session(0, shared=True), Session(1, shared=False)
    shared.sent, own.sent = [0.0, 50.0], [10.0, 100.0]
    shared.shared_results = 1  # one move answered from another session's job: not computed
    rates = [0.1] * 5 + [0.5] * 45  # idle seconds do not lower the share the server gets when busy
    line = floor_line(120.0, rates, [shared, own], moves=4)
    assert "120 s of CPU for 4 moves and 2 first visits (5 computed: 24.00 s each)" in line
    assert "0.50 cores" in line and "needs 240 s of wall against the 100 s" in line
    assert "a backlog of at least 140 s" in line and "alone at that share 48.0 s" in line
    assert floor_line(float("nan"), rates, [shared], 2) == "    floor: not measured"
    assert "not measured" in floor_line(10.0, [0.0, 0.0], [shared], 2)  # no share: no division by it
    assert cpu_seconds(os.getpid()) > 0  # this very process has used some CPU
