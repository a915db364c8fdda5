"""Plotly figures for the Mitigation page (pure functions of plain values and DataFrames; no Streamlit)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.common import NEGATIVE_COLOR, NEUTRAL_COLOR, POSITIVE_COLOR


def loss_curve(curve: pd.DataFrame) -> go.Figure:
    """The two losses of every training step (Eq. 4 debias, Eq. 5 distillation), log scale, with a running mean."""
    figure = go.Figure()
    for column, name, color in (("loss_debias", "debias (Eq. 4)", NEGATIVE_COLOR),
                                ("loss_kd", "distillation (Eq. 5)", POSITIVE_COLOR)):
        figure.add_scatter(x=curve["step"], y=curve[column], mode="lines", name=f"{name}, per step",
                           line={"color": color, "width": 1}, opacity=0.35)
        figure.add_scatter(x=curve["step"], y=curve[column].rolling(10, min_periods=1).mean(), mode="lines",
                           name=f"{name}, mean of 10 steps", line={"color": color, "width": 2.5})
    # a log axis in plain powers of ten: plotly's default SI prefixes read "1f … 1μ" for 1e-15 … 1e-6
    figure.update_layout(height=320, margin={"t": 20, "b": 10}, xaxis_title="training step",
                         yaxis={"type": "log", "exponentformat": "power", "showexponent": "all",
                                "title": "squared score difference (log scale)"},
                         legend={"orientation": "h", "y": -0.3})
    return figure


def attribute_bars(rows: pd.DataFrame) -> go.Figure:
    """Bias before and after per attribute (Eq. 2, each side on its own min-max unit) with 95% intervals."""
    figure = go.Figure()
    for side, color in (("before", NEUTRAL_COLOR), ("after", POSITIVE_COLOR)):
        plus = np.nan_to_num(rows[f"{side}_high"] - rows[side])
        minus = np.nan_to_num(rows[side] - rows[f"{side}_low"])
        figure.add_bar(x=rows["attribute"], y=rows[side], name=side, marker_color=color,
                       error_y={"type": "data", "array": plus, "arrayminus": minus},
                       hovertemplate=f"%{{x}} {side}: %{{y:.2f}}<extra></extra>")
    figure.update_layout(barmode="group", height=340, margin={"t": 20, "b": 10},
                         yaxis_title="bias (Eq. 2, min-max 0–100)", legend={"orientation": "h", "y": -0.25})
    return figure


def bias_quality_arrow(before: dict[str, Any], after: dict[str, Any]) -> go.Figure:
    """The paper's two axes with an arrow from before to after: bias (x, lower = fairer) and Spearman with people
    (y), each point with its own 95% interval."""
    figure = go.Figure()
    for point, color in ((before, NEUTRAL_COLOR), (after, POSITIVE_COLOR)):
        figure.add_scatter(
            x=[point["bias"]], y=[point["quality"]], mode="markers+text", text=[point["label"]],
            textposition="top center", marker={"size": 13, "color": color}, showlegend=False,
            error_x={"type": "data", "array": [np.nan_to_num(point["bias_high"] - point["bias"])],
                     "arrayminus": [np.nan_to_num(point["bias"] - point["bias_low"])]},
            error_y={"type": "data", "array": [np.nan_to_num(point["quality_high"] - point["quality"])],
                     "arrayminus": [np.nan_to_num(point["quality"] - point["quality_low"])]},
            hovertemplate=f"{point['label']}<br>bias %{{x:.2f}}<br>Spearman %{{y:.3f}}<extra></extra>")
    figure.add_annotation(x=after["bias"], y=after["quality"], ax=before["bias"], ay=before["quality"],
                          xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=3, arrowwidth=2,
                          arrowcolor=POSITIVE_COLOR, text="")
    figure.update_layout(height=420, margin={"t": 30, "b": 10},
                         xaxis_title="gender bias (Eq. 2, min-max; lower = fairer), 95% interval over pairs",
                         yaxis_title="Spearman ρ with people (pooled), 95% interval over documents")
    return figure
