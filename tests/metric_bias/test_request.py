"""Requests are checked whole before any work: resamples, limits with the estimate in the message."""

from __future__ import annotations

import pytest

from fairness_core.data.pairs import Pair, PairDataset
from fairness_core.metric_bias import request as mb


def _dataset(n: int) -> PairDataset:
    return PairDataset("big", tuple(Pair(f"p{i}", f"he ran {i}", f"she ran {i}", f"they ran {i}", "gender")
                                    for i in range(n)))


@pytest.mark.parametrize(("value", "expected"), [("1000", 1000), (" 50 ", 50), ("1e3", 1000), (7, 7)])
def test_resamples_accept_whole_numbers(value, expected) -> None:
    assert mb.parse_resamples(value) == expected


@pytest.mark.parametrize("value", ["0", "-5", "1e9", "nan", "inf", "2.5", "many", ""])
def test_resamples_refuse_everything_else_in_one_sentence(value) -> None:
    with pytest.raises(mb.RequestError, match=r"^--resamples must be"):
        mb.parse_resamples(value)


def test_the_estimate_grows_with_pairs_and_metrics_and_bounds_bootstrap_memory() -> None:
    small = mb.build_request(_dataset(100), mb.build_metrics(["bleu"]), n_resamples=1000)
    big = mb.build_request(_dataset(300_000), mb.build_metrics(["bleu", "bertscore"]), n_resamples=100_000)
    a, b = mb.estimate(small), mb.estimate(big)
    assert a.scorings == 200 and b.scorings == 1_200_000
    assert b.seconds > 100 * a.seconds
    assert a.bootstrap_bytes == b.bootstrap_bytes  # memory is one chunk, whatever pairs × resamples
    mb.check_limits(a)
    with pytest.raises(mb.RequestError, match=r"this request would take about .* \(300,000 pairs, 1,200,000 candidate "
                                              r"scorings .*above the limit of 4 h 00 min"):
        mb.check_limits(b)


def test_the_paper_preset_holds_the_released_moverscore_and_expands_in_the_cli() -> None:
    import argparse

    from fairness_core.commands import metric_bias as command

    assert mb.expand_presets(["bleu", "metric-fairness-2022"]) == list(mb.PRESETS["metric-fairness-2022"])
    assert "moverscore" in mb.PRESETS["metric-fairness-2022"]  # the released v2, not moverscore-bigram
    assert "moverscore-bigram" not in mb.PRESETS["metric-fairness-2022"]
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    args = parser.parse_args(["metric-bias", "--format", "demo", "--metrics", "metric-fairness-2022",
                              "--config", "metric-fairness-2022"])
    request = command.build(args)
    assert [m.name for m in request.metrics] == list(mb.PRESETS["metric-fairness-2022"])
    mover = next(m for m in request.metrics if m.name == "moverscore")
    assert mover.label == "MoverScore (released v2)"
