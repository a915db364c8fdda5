"""Plotly figures for the Judge audit page (pure functions of DataFrames; no Streamlit)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ui.common import category_colors


def shift_chart(terms: pd.DataFrame, unit: str) -> go.Figure:
    """Terms sorted by their mean score shift, with 95% intervals and a zero line; colour = group.

    `terms`: the audit's term rows (term, group, shift, ci_low, ci_high, n)."""
    data = terms.dropna(subset=["shift"]).sort_values("shift")
    colors = category_colors(data["group"].drop_duplicates())
    figure = go.Figure()
    for group, part in data.groupby("group", sort=False):
        has_ci = part["ci_low"].notna()
        figure.add_trace(go.Scatter(
            x=part["shift"], y=part["term"], mode="markers", name=str(group),
            marker={"color": colors[str(group)], "size": 9},
            error_x={"type": "data", "symmetric": False, "visible": bool(has_ci.any()),
                     "array": (part["ci_high"] - part["shift"]).where(has_ci, 0).clip(lower=0),
                     "arrayminus": (part["shift"] - part["ci_low"]).where(has_ci, 0).clip(lower=0)},
            customdata=part[["group", "n"]].to_numpy(),
            hovertemplate="%{y}: %{x:+.3f} (%{customdata[0]}, %{customdata[1]} templates)<extra></extra>"))
    figure.add_vline(x=0, line_width=1, line_color="#444")
    figure.update_yaxes(categoryorder="array", categoryarray=list(data["term"]), title=None)
    figure.update_xaxes(title=f"score shift against the average identity ({unit}); 0 = no shift", zeroline=False)
    figure.update_layout(height=max(320, 18 * len(data) + 90), margin={"t": 20, "b": 10},
                         legend={"title": "group"})
    return figure
