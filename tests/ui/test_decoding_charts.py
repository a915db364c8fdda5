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


def _disparity_frame(high_at_0_9: float) -> pd.DataFrame:
    """Two settings of one family (10 prompts per group give wide intervals: [0, 0.5] is real, not an error)."""
    return pd.DataFrame({"x": [0.7, 0.9], "label": ["top_p=0.7", "top_p=0.9"], "family": ["gender", "gender"],
                         "disparity": [0.1, 0.2], "disparity_ci_low": [0.0, 0.0],
                         "disparity_ci_high": [0.4, high_at_0_9]})


def test_the_disparity_axis_holds_the_widest_interval_with_room_and_caps_mark_each_end() -> None:
    spec = decoding_charts.disparity(_disparity_frame(0.5), "disparity", "disparity", "top_p").to_dict()
    bars, low_cap, high_cap, _line = spec["layer"]
    assert bars["encoding"]["y"]["scale"] == {"domain": [0, 0.55], "nice": False}  # fitted, the bar met the frame
    assert [low_cap["encoding"]["y"]["field"], high_cap["encoding"]["y"]["field"]] == ["disparity_ci_low",
                                                                                    "disparity_ci_high"]
    assert low_cap["mark"]["type"] == high_cap["mark"]["type"] == "tick"
    assert low_cap["mark"]["orient"] == "horizontal"
    assert bars["encoding"]["x"]["axis"]["values"] == [0.7, 0.9]  # a tick at each setting of the grid
    assert "title" not in spec


def test_an_interval_that_is_missing_or_not_finite_is_not_drawn_and_the_title_names_its_setting() -> None:
    frame = _disparity_frame(float("inf"))
    spec = decoding_charts.disparity(frame, "disparity", "disparity", "top_p").to_dict()
    assert spec["layer"][0]["encoding"]["y"]["scale"]["domain"] == [0, 0.45]  # from the finite bounds only
    drawn = spec["datasets"][spec["layer"][0]["data"]["name"]]
    assert [row["label"] for row in drawn] == ["top_p=0.7"]
    assert " ".join(spec["title"]["text"]) == "No 95% interval drawn (missing or not finite) for: top_p=0.9 (gender)"


def test_the_axis_top_is_a_step_above_the_highest_finite_value() -> None:
    assert decoding_charts.axis_top([0.1, 0.5]) == 0.55
    assert decoding_charts.axis_top([0.3, float("nan")]) == 0.35
    assert decoding_charts.axis_top([]) == 0.05


def test_a_share_axis_starts_at_zero_and_other_measures_are_padded_so_no_bar_ends_on_the_frame() -> None:
    configs = pd.DataFrame({"label": ["a", "b"], "marker": ["other", "Pareto front"],
                            "share": [0.0, 0.15], "share_ci_low": [0.0, 0.0], "share_ci_high": [0.1, 0.4],
                            "diversity": [5.6, 5.59], "diversity_ci_low": [5.19, 5.16],
                            "diversity_ci_high": [5.93, 5.91]})
    spec = decoding_charts.against(configs, "share", "share negative", "diversity", "diversity").to_dict()
    x_bars, y_bars, _ = spec["layer"]
    assert x_bars["encoding"]["x"]["scale"] == {"domain": [0, 0.45], "nice": False}
    assert y_bars["encoding"]["y"]["scale"] == {"padding": 12, "zero": False}


def test_the_sweep_disparity_chart_draws_the_interval_its_sentences_quote() -> None:
    """Issue 42 §1: the bars were each setting's 95% percentile interval ([0, 0.4]) beside a sentence quoting the
    test's 90% interval ([0.000, 0.217]): one number with two intervals. The chart's rows now carry the test's."""
    from fairness_core.decoding.summary import disparity_headline, family_headlines, measures_for, summarize
    from tests.decoding.test_summary import _frame
    from ui.decoding_view import TEST_INTERVAL, disparity_chart_frame

    frame = _frame({0.5: {"man": 0.2, "woman": 0.5}, 0.9: {"man": 0.3, "woman": 0.3}}, n_templates=10, samples=2)
    other = frame.assign(family="age", group=frame["group"].map({"man": "old", "woman": "young"}),
                         prompt_id="a" + frame["prompt_id"], source=frame["source"] + " (age)")
    summary = summarize(pd.concat([frame, other], ignore_index=True), {"gender": ["man", "woman"],
                                                                          "age": ["old", "young"]},
                        measures_for((("vader", {}),)), n_resamples=200)
    table, configs = summary.groups.copy(), summary.configs.copy()
    for part in (table, configs):
        part["x"] = part["config"].map(lambda c: c["top_p"])
    drawn = disparity_chart_frame(table, configs, "negative_sentiment")
    assert drawn is not None and set(drawn["family"]) == {"gender", "age", "all families (mean)"}
    for row in drawn.itertuples(index=False):
        key = f"p{row.x}"
        sentences = ([disparity_headline(summary, key)] if row.family.startswith("all families")
                     else [s for s in family_headlines(summary, key) if f"between {row.family} groups" in s])
        assert len(sentences) == 1
        quoted = f"[{row.disparity_ci_low:.3f}, {row.disparity_ci_high:.3f}]"
        assert f"90% interval {quoted}" in sentences[0] or (row.disparity_ci_low > 0 and "90% interval (0, " in
                                                            sentences[0]), (quoted, sentences[0])
    # not the percentile interval the chart drew before (they differ wherever the test rejects or the data vary)
    percentile = configs[["negative_sentiment_disparity_ci_low", "negative_sentiment_disparity_ci_high"]].to_numpy()
    tested = drawn[drawn["family"] == "all families (mean)"][["disparity_ci_low", "disparity_ci_high"]].to_numpy()
    assert not (abs(percentile - tested) < 1e-9).all()
    spec = decoding_charts.disparity(drawn, "disparity", "disparity", "top_p", TEST_INTERVAL).to_dict()
    tooltips = [t.get("title") for t in spec["layer"][-1]["encoding"]["tooltip"] if isinstance(t, dict)]
    assert "90% (the test's) low" in tooltips and "90% (the test's) high" in tooltips
