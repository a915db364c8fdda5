"""Charts of a comparison as plotly figure JSON (plain dicts): the report draws them with the plotly.js it inlines,
the Compare page with `plotly.graph_objects.Figure(figure)`. The core never imports plotly.

`disparity_figure` is what a decoding comparison shows first: one row per (contrast, family), the change in the
disparity (b − a) as a dot with its 95% interval, coloured by what the interval says (higher / lower / no clear
change), the two disparities in the hover and the change written beside the dot.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairness_core.bias.disparity import ALPHA, p_text
from fairness_core.compare.numbers import clean_number, format_number, number_scale
from fairness_core.compare.wording import ALL_FAMILIES, statistic_words

MAX_CHART_CELLS = 60
#: Okabe–Ito (colour-blind safe, as `ui.common.PALETTE`): more disparity, less disparity, inside the noise
HIGHER, LOWER, UNCLEAR = "#D55E00", "#0072B2", "#7F7F7F"
ROW_PX = 34


def cell_label(frame: pd.DataFrame, keys: list[str]) -> list[str]:
    return [" · ".join(str(v) for v in row if v is not None and v == v) for row in frame[keys].itertuples(index=False)]


def numbers(values: Any) -> list[float | None]:
    """Chart values: None for missing, float noise as 0 (the hover then reads 0, not -1.1e-16)."""
    array = np.asarray(values, dtype=float)
    scale = number_scale(array)
    return [clean_number(float(v), scale, digits=15) if np.isfinite(v) else None for v in array]


def error_bars(estimate: pd.Series, low: pd.Series, high: pd.Series) -> dict[str, Any]:
    return {"type": "data", "symmetric": False, "array": numbers(high - estimate),
            "arrayminus": numbers(estimate - low)}


def _verdict(low: float, high: float, difference: float, q: float = float("nan")) -> str:
    if not (np.isfinite(low) and np.isfinite(high)):
        return "no interval"
    if (low > 0 or high < 0) and np.isfinite(q) and q >= ALPHA:  # one of several line-ups: its q decides
        return ADJUSTED
    if low > 0:
        return "higher (interval above 0)"
    if high < 0:
        return "lower (interval below 0)"
    return "no clear change (interval includes 0)"


#: an interval off 0 whose Benjamini-Hochberg q (over the comparison's line-ups) is not below 5%
ADJUSTED = "no clear change after the false-discovery adjustment (interval off 0, q ≥ 0.05)"
COLOURS = {"higher (interval above 0)": HIGHER, "lower (interval below 0)": LOWER,
           "no clear change (interval includes 0)": UNCLEAR, "no interval": UNCLEAR, ADJUSTED: UNCLEAR}


def disparity_rows(rows: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """The rows a disparity chart shows: one group statistic (negative sentiment's disparity when present), per
    contrast and family, the mean over families last."""
    if rows.empty:
        return rows
    statistics = rows[rows["metric"].str.endswith(("_disparity", "_eq1_bias"))]
    if statistics.empty:
        return statistics
    if metric is None:
        metric = "negative_sentiment_disparity" if (statistics["metric"] == "negative_sentiment_disparity").any() \
            else str(statistics["metric"].iloc[0])
    return statistics[statistics["metric"] == metric].reset_index(drop=True)


def disparity_figure(rows: pd.DataFrame, metric: str | None = None) -> dict[str, Any]:
    """The change in a disparity per (contrast, family) with its 95% interval (see the module docstring)."""
    shown = disparity_rows(rows, metric).head(MAX_CHART_CELLS)
    if shown.empty:
        return {"data": [], "layout": {"title": {"text": "No disparity to compare (no group rates on both sides)"}}}
    contrasts = shown["contrast"].astype(str)
    several_contrasts = contrasts.nunique() > 1 or shown["run_b_id"].nunique() > 1
    several_families = shown["family"].nunique() > 1
    labels = []
    for contrast, arm_b, family in zip(contrasts, shown["arm_b"], shown["family"], strict=True):
        where = "mean over families" if family == ALL_FAMILIES else str(family)
        what = contrast if contrasts.nunique() > 1 else str(arm_b)
        labels.append(" · ".join(p for p in ((what if several_contrasts else ""),
                                             (where if several_families or not several_contrasts else "")) if p))
    scale = number_scale(pd.concat([shown["run_a"], shown["run_b"], shown["difference"]]))
    q_values = shown["q_difference"].astype(float) if "q_difference" in shown else pd.Series(np.nan, shown.index)
    verdicts = [_verdict(lo, hi, d, q) for lo, hi, d, q in zip(shown["ci_low"].astype(float),
                                                                shown["ci_high"].astype(float),
                                                                shown["difference"].astype(float), q_values,
                                                                strict=True)]
    traces = []
    for verdict in dict.fromkeys(verdicts):
        index = [i for i, v in enumerate(verdicts) if v == verdict]
        part = shown.iloc[index]
        hover = [f"{labels[i]}<br>{row.arm_a}: {_side(row, 'a', scale)}<br>{row.arm_b}: "
                 f"{_side(row, 'b', scale)}<br>change {format_number(row.difference, scale)} "
                 f"[{format_number(row.ci_low, scale)}, {format_number(row.ci_high, scale)}]<br>{row.pairing}"
                 for i, row in zip(index, part.itertuples(index=False), strict=True)]
        texts = [("+" if d > 0 else "") + format_number(d, scale) for d in part["difference"].astype(float)]
        traces.append({"type": "scatter", "mode": "markers+text", "orientation": "h", "name": verdict,
                       "y": [labels[i] for i in index], "x": numbers(part["difference"]), "text": texts,
                       "textposition": "top center", "cliponaxis": False, "hovertext": hover, "hoverinfo": "text",
                       "marker": {"size": 13, "color": COLOURS[verdict]},
                       "error_x": {**error_bars(part["difference"], part["ci_low"], part["ci_high"]),
                                   "color": COLOURS[verdict], "thickness": 2, "width": 6}})
    first = shown.iloc[0]
    statistic = statistic_words(str(first["metric"]))
    title = (f"Change in the {statistic}: {first['arm_b']} − {first['arm_a']}" if not several_contrasts else
             f"Change in the {statistic} (second − first)")
    return {"data": traces, "layout": {
        "title": {"text": title, "font": {"size": 15}},
        "height": int(max(240, len(shown) * ROW_PX + 150)),
        "margin": {"t": 50, "b": 40, "l": 10, "r": 20},
        "xaxis": {"title": {"text": "change in disparity (95% interval); 0 = the same disparity"},
                  "zeroline": True, "zerolinecolor": "#444", "zerolinewidth": 2, "hoverformat": ".4g"},
        "yaxis": {"automargin": True, "type": "category", "autorange": "reversed"},
        "legend": {"orientation": "h", "y": -0.25}, "showlegend": True}}


def _side(row: Any, side: str, scale: float) -> str:
    """One side of a disparity row for the hover: the plug-in, and where the run was tested the bias-corrected
    estimate (what the change is computed from) and the p-value."""
    text = format_number(getattr(row, f"run_{side}"), scale)
    corrected, p_value = getattr(row, f"run_{side}_corrected", None), getattr(row, f"run_{side}_p_value", None)
    if corrected is not None and corrected == corrected:
        tested = f", p {p_text(float(p_value))}" if p_value is not None and p_value == p_value else ""
        text += f" (bias-corrected {format_number(corrected, scale)}{tested})"
    return text


def estimates_figure(table: pd.DataFrame, keys: list[str], title: str) -> dict[str, Any]:
    shown = table.head(MAX_CHART_CELLS)
    traces = []
    for metric, part in shown.groupby("metric", sort=False):
        traces.append({"type": "scatter", "mode": "markers", "name": str(metric),
                       "x": cell_label(part, keys), "y": numbers(part["estimate"]),
                       "error_y": error_bars(part["estimate"], part["ci_low"], part["ci_high"])})
    return {"data": traces, "layout": {"title": {"text": title}, "height": 420, "margin": {"b": 140},
                                       "yaxis": {"title": {"text": "estimate (95% interval)"}, "hoverformat": ".4g"},
                                       "xaxis": {"automargin": True}}}


def difference_figure(rows: pd.DataFrame, keys: list[str]) -> dict[str, Any]:
    shown = rows.head(MAX_CHART_CELLS)
    several = shown["contrast"].nunique() > 1 or shown["run_b_id"].nunique() > 1
    traces = []
    for paired, part in shown.groupby("paired", sort=False):
        labels = [f"{contrast}: {label}" if several else label for contrast, label in
                  zip(part["contrast"], cell_label(part, ["metric", *keys]), strict=True)]
        traces.append({"type": "bar", "name": "paired interval" if paired else "unpaired or partly paired interval",
                       "x": labels, "y": numbers(part["difference"]),
                       "error_y": error_bars(part["difference"], part["ci_low"], part["ci_high"])})
    title = "Differences (second − first)" if several else \
        f"Difference {shown['arm_b'].iloc[0]} − {shown['arm_a'].iloc[0]}"
    return {"data": traces, "layout": {"title": {"text": title},
                                       "height": 440, "margin": {"b": 160}, "barmode": "group",
                                       "yaxis": {"title": {"text": "difference (95% interval)"}, "hoverformat": ".4g"},
                                       "xaxis": {"automargin": True}}}
