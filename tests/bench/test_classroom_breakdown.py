"""bench.classroom reads the server's TIMING lines into where a move's time goes."""

from __future__ import annotations

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
