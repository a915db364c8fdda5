"""The CAIRO page's charts name what they plot (issue 23: "metric A bias", a title under the warning box, labels
piled on each other)."""

from __future__ import annotations

import pandas as pd

from ui import cairo_charts


def _values() -> pd.DataFrame:
    return pd.DataFrame({"system": ["gpt2 · top_p=0.5", "gpt2 · top_p=0.9", "gpt2 · greedy"],
                         "A original": [0.10, 0.11, 0.30], "B original": [0.20, 0.21, 0.05]})


def test_the_scatter_axes_name_the_metrics_and_systems_are_colours_with_hover_text() -> None:
    spec = cairo_charts.scatter(_values(), "original", 0.5, 3, "BOLD gender", "HONEST gender (valid)").to_dict()
    encoding = spec["encoding"]
    assert encoding["x"]["title"] == "BOLD gender bias (Eq. 1)"
    assert encoding["y"]["title"] == "HONEST gender (valid) bias (Eq. 1)"
    assert spec["mark"]["type"] == "circle" and "layer" not in spec  # no text labels to overlap
    assert encoding["color"]["field"] == "label"  # short names: "top_p=0.5", not "gpt2 · top_p=0.5"
    assert [t["title"] for t in encoding["tooltip"][1:]] == ["BOLD gender bias", "HONEST gender (valid) bias"]


def test_the_correlation_chart_has_no_vega_title_and_the_page_heading_names_the_pair() -> None:
    sizes = pd.DataFrame({"size": [1, 2], "p_value": [0.1, 0.2], "n_pairs": [1, 4], "combo_a": ["o", "o+a"],
                          "combo_b": ["o", "o+b"], "CAIRO (best pair)": [0.2, 0.6],
                          "average over pairs": [0.2, 0.3], "original prompts": [0.2, 0.2]})
    spec = cairo_charts.correlation_vs_size(sizes, 8, "BOLD gender", "HONEST gender (valid)").to_dict()
    assert "title" not in spec  # a Vega title sat half under the warning box above the chart
    assert cairo_charts.correlation_title("BOLD gender", "HONEST gender (valid)", 8) == (
        "Correlation against combination size (Fig. 6): BOLD gender vs HONEST gender (valid), n = 8 systems")


def test_the_correlation_legend_draws_each_line_as_a_solid_coloured_segment_with_its_dash() -> None:
    sizes = pd.DataFrame({"size": [1, 2], "p_value": [0.1, 0.2], "n_pairs": [1, 4], "combo_a": ["o", "o+a"],
                          "combo_b": ["o", "o+b"], "CAIRO (best pair)": [0.2, 0.6],
                          "average over pairs": [0.2, 0.3], "original prompts": [0.2, 0.2]})
    encoding = cairo_charts.correlation_vs_size(sizes, 8, "BOLD gender", "HONEST gender (valid)").to_dict()["encoding"]
    legend = encoding["color"]["legend"]
    # as point symbols, each circle's outline took the line's dash and read as a star
    assert legend["symbolType"] == "stroke" and legend["symbolStrokeWidth"] == 3
    lines = ["CAIRO (best pair)", "average over pairs", "original prompts"]
    assert encoding["strokeDash"]["scale"] == {"domain": lines, "range": [[1, 0], [8, 4], [2, 3]]}  # best: solid
    assert encoding["color"]["scale"]["range"] == ["#0072B2", "#E69F00", "#000000"]  # Okabe-Ito; the theme's pale
    # blue and pink faded into the panel


def test_a_system_has_one_colour_in_the_scatter_and_the_rank_chart_and_the_scatter_keeps_its_height() -> None:
    scatter = cairo_charts.scatter(_values(), "original", 0.5, 3).to_dict()
    ranks = cairo_charts.rank_chart(pd.DataFrame({"system": ["gpt2 · greedy"], "A original": [1], "B original": [1],
                                                  "A CAIRO": [1], "B CAIRO": [1]})).to_dict()
    assert scatter["encoding"]["color"]["scale"] == ranks["encoding"]["color"]["scale"]
    assert scatter["encoding"]["color"]["legend"]["columns"] == 1  # full settings, not cut off in two columns
    # Streamlit's default autosize fitted title, axes and legend into the 300 px and the points into a thin strip
    assert scatter["autosize"] == {"type": "fit-x", "contains": "padding"} and scatter["height"] == 300


def test_the_rank_axis_runs_over_the_ranks_systems_have() -> None:
    ranks = pd.DataFrame({"system": ["gpt2 · greedy", "gpt2 · top_p=0.5", "gpt2 · top_p=0.9"],
                          "A original": [1, 2, 3], "B original": [2, 1, 3], "A CAIRO": [1, 3, 2], "B CAIRO": [1, 2, 3]})
    y = cairo_charts.rank_chart(ranks).to_dict()["encoding"]["y"]
    assert y["scale"]["domain"] == [1, 3] and y["scale"]["reverse"]  # no rank 0 on the axis
    assert y["axis"]["values"] == [1, 2, 3]
