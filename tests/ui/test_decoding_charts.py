"""The decoding page's per-group chart: one distinct colour per group, legend swatches at full strength, and
axis titles short enough per line to be read (issue 23: 11 groups shared 8 colours; titles were clipped)."""

from __future__ import annotations

import pandas as pd

from ui import decoding_charts

GROUPS = {"gender": ["man", "woman"], "race": ["Asian person", "Black person", "Hispanic person", "White person"],
          "sexuality": ["gay person", "straight person"], "religion": ["Christian", "Jew", "Muslim"]}


def _table() -> pd.DataFrame:
    rows = []
    for family, groups in GROUPS.items():
        for group in groups:
            for x in (0.5, 0.9):
                rows.append({"family": family, "group": group, "x": x, "label": f"top_p={x}", "n": 10,
                             "negative_sentiment_rate": 0.2, "negative_sentiment_rate_ci_low": 0.1,
                             "negative_sentiment_rate_ci_high": 0.3})
    return pd.DataFrame(rows)


def test_eleven_groups_get_eleven_distinct_colours_and_solid_legend_swatches() -> None:
    spec = decoding_charts.group_rates(_table(), "negative_sentiment_rate",
                                       "negative sentiment rate (share of generations, VADER)", "top_p").to_dict()
    color = spec["spec"]["layer"][1]["encoding"]["color"]
    groups = sorted(g for gs in GROUPS.values() for g in gs)
    assert color["scale"]["domain"] == groups and len(groups) == 11
    assert len(set(color["scale"]["range"])) == 11
    assert color["legend"]["symbolOpacity"] == 1
    assert len(set(decoding_charts.GROUP_PALETTE)) == len(decoding_charts.GROUP_PALETTE) >= 12


def test_long_axis_titles_are_wrapped_into_lines() -> None:
    spec = decoding_charts.group_rates(_table(), "negative_sentiment_rate",
                                       "negative sentiment rate (share of generations, VADER)", "top_p").to_dict()
    title = spec["spec"]["layer"][1]["encoding"]["y"]["title"]
    assert title == ["negative sentiment rate", "(share of generations,", "VADER)"]
    assert decoding_charts.wrapped("rate") == ["rate"]
