"""The Compare page's charts: horizontal, one line-up per row with a readable label, the full label on hover; the
disparity chart colours a change by what its interval says.

The rows are built here in the shape `compare_runs` returns (its columns, one contrast per other run), because
these tests need labels of chosen lengths and float noise of a chosen size, which no small pipeline run produces;
the page itself is tested on pipeline runs in tests/app/test_compare_page.py."""

from __future__ import annotations

import pandas as pd

from ui.compare_charts import LABEL_CHARS, axis_labels, difference_chart, estimates_chart, short_label

KEYS = ["prompt_set", "group", "setting"]


def _rows(groups: list[str], runs: tuple[str, ...] = ("run-b",), noise: bool = False) -> pd.DataFrame:
    records = []
    for run_b in runs:
        for index, group in enumerate(groups):
            difference = -1.124e-16 if noise else 0.1 * (index + 1)
            records.append({"metric": "vader_compound", "prompt_set": "regard templates", "group": group,
                            "setting": "T=1.0 p=0.9", "run_a_id": "run-a", "run_b_id": run_b, "arm_a": "gpt2 · p=0.9",
                            "arm_b": f"{run_b} · p=0.9", "contrast": f"model gpt2 → {run_b}", "run_a": 0.2,
                            "run_a_low": 0.1, "run_a_high": 0.3, "run_b": 0.2 + difference, "run_b_low": 0.1,
                            "run_b_high": 0.4, "difference": difference, "ci_low": difference - 0.05,
                            "ci_high": difference + 0.05, "paired": index % 2 == 0})
    return pd.DataFrame(records)


def test_long_labels_are_shortened_and_stay_distinct() -> None:
    long = "vader_compound · regard templates · a very long group name · T=1.0 p=0.9"
    assert short_label("short") == "short"
    assert len(short_label(long)) <= LABEL_CHARS and "…" in short_label(long)
    assert short_label(long).startswith("vader_compound") and short_label(long).endswith("p=0.9")
    other = long.replace("p=0.9", "p=0.5")
    shown = axis_labels([long, other, long])
    assert len(shown) == 2 and shown[long] != shown[other]
    assert all(len(text) <= LABEL_CHARS for text in shown.values())


def test_estimates_are_horizontal_with_the_full_label_on_hover() -> None:
    rows = _rows(["man", "woman with a long description of who she is"])
    figure = estimates_chart(rows, KEYS)
    assert [trace.orientation for trace in figure.data] == ["h", "h"]
    assert list(figure.data[0].customdata) == ["man", "woman with a long description of who she is"]
    assert figure.layout.title.text == ("all rows: metric vader_compound, prompt_set regard templates, "
                                        "setting T=1.0 p=0.9")  # said once, not on every row
    assert all(len(label) <= LABEL_CHARS for label in figure.data[0].y)  # the axis labels fit
    assert figure.layout.yaxis.autorange == "reversed"  # the first line-up on top, as in the table
    assert list(figure.data[1].x) == [0.3, 0.4]  # 0.2 + 0.1 drawn as 0.3, not 0.30000000000000004
    # the legend is above the plot: below it, it covered the x axis's title (issue 43)
    assert figure.layout.xaxis.title.text and figure.layout.legend.yanchor == "bottom" and figure.layout.legend.y >= 1


def test_difference_bars_are_horizontal_and_noise_is_drawn_as_zero() -> None:
    figure = difference_chart(_rows(["man", "woman"], noise=True), KEYS)
    assert {trace.orientation for trace in figure.data} == {"h"}
    assert [x for trace in figure.data for x in trace.x] == [0.0, 0.0]
    assert figure.layout.xaxis.hoverformat == ".4g"


def test_the_chart_grows_with_the_line_ups() -> None:
    few = difference_chart(_rows(["a", "b"]), KEYS)
    many = difference_chart(_rows([f"group {n}" for n in range(30)], runs=("run-b", "run-c")), KEYS)
    assert many.layout.height > few.layout.height
    assert len(set(many.data[0].y) | set(many.data[1].y)) == 60  # each other run's line-up has its own row


def test_the_disparity_chart_colours_a_change_by_its_interval() -> None:
    from ui.compare_charts import disparity_chart

    rows = pd.DataFrame([
        {"metric": "negative_sentiment_disparity", "family": family, "group": None, "run_a_id": "a", "run_b_id": "b",
         "arm_a": "m · top_p=0.5", "arm_b": "m · top_p=0.95", "contrast": "top_p 0.5 → 0.95", "run_a": 0.1,
         "run_b": 0.1 + change, "difference": change, "ci_low": low, "ci_high": high, "pairing": "paired by 10 prompts",
         "paired": True} for family, change, low, high in (("gender", 0.2, 0.05, 0.35), ("race", -0.1, -0.2, -0.01),
                                                          ("religion", 0.02, -0.1, 0.14))])
    figure = disparity_chart(rows)
    names = {trace.name: list(trace.y) for trace in figure.data}
    assert names == {"higher (interval above 0)": ["gender"], "lower (interval below 0)": ["race"],
                     "no clear change (interval includes 0)": ["religion"]}
    assert figure.layout.title.text == "Change in the disparity in negative sentiment: m · top_p=0.95 − m · top_p=0.5"
    assert [t for trace in figure.data for t in trace.text] == ["+0.2", "-0.1", "+0.02"]


def test_a_key_no_line_up_has_is_not_said_in_the_title() -> None:
    """Disparity rows belong to a family, not a group: the title used to read "all rows: group nan"."""
    rows = _rows(["man", "woman"]).assign(metric="negative_sentiment_disparity", group=None,
                                          setting=["p=0.5", "p=0.9"])
    for figure in (estimates_chart(rows, KEYS), difference_chart(rows, KEYS)):
        title = figure.layout.title.text
        assert title == "all rows: metric negative_sentiment_disparity, prompt_set regard templates"
        assert "nan" not in title and "None" not in title
