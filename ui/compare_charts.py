"""Charts of the Compare and SQL console pages: estimates with intervals, difference bars, a quick chart."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

PAIRED_COLORS = {True: "#1f77b4", False: "#ff7f0e"}


def cell_labels(frame: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    return [" · ".join(str(v) for v in row if v is not None and v == v) for row in frame[list(keys)].itertuples(
        index=False)]


def estimates_chart(rows: pd.DataFrame, keys: Sequence[str]) -> go.Figure:
    """Each run's estimate per cell with its 95% interval (first run and each other run side by side)."""
    figure = go.Figure()
    labels = cell_labels(rows, ["metric", *keys])
    first = rows.drop_duplicates(["metric", *keys]) if not rows.empty else rows
    first_labels = cell_labels(first, ["metric", *keys])
    figure.add_trace(go.Scatter(x=first_labels, y=first["run_a"], mode="markers", name=str(first["run_a_id"].iloc[0])
                                if not first.empty else "first run",
                                error_y={"type": "data", "symmetric": False,
                                         "array": first["run_a_high"] - first["run_a"],
                                         "arrayminus": first["run_a"] - first["run_a_low"]}))
    for run_id, part in rows.assign(label=labels).groupby("run_b_id", sort=False):
        figure.add_trace(go.Scatter(x=part["label"], y=part["run_b"], mode="markers", name=str(run_id),
                                    error_y={"type": "data", "symmetric": False,
                                             "array": part["run_b_high"] - part["run_b"],
                                             "arrayminus": part["run_b"] - part["run_b_low"]}))
    figure.update_layout(height=420, yaxis_title="estimate (95% interval)", legend_title_text="run",
                         margin={"t": 30, "b": 10}, scattermode="group")
    return figure


def difference_chart(rows: pd.DataFrame, keys: Sequence[str]) -> go.Figure:
    """Bars of other − first per cell with their intervals; blue where paired, orange where not."""
    figure = go.Figure()
    several = rows["run_b_id"].nunique() > 1
    for paired, part in rows.groupby("paired", sort=False):
        labels = cell_labels(part, ["metric", *keys])
        if several:
            labels = [f"{run} · {label}" for run, label in zip(part["run_b_id"], labels, strict=True)]
        figure.add_trace(go.Bar(x=labels, y=part["difference"], name="paired" if paired else "unpaired",
                                marker_color=PAIRED_COLORS[bool(paired)],
                                error_y={"type": "data", "symmetric": False,
                                         "array": part["ci_high"] - part["difference"],
                                         "arrayminus": part["difference"] - part["ci_low"]}))
    figure.add_hline(y=0, line_color="#888", line_width=1)
    figure.update_layout(height=420, yaxis_title="difference, other − first (95% interval)",
                         legend_title_text="interval", margin={"t": 30, "b": 10})
    return figure


def quick_chart(frame: pd.DataFrame, x: str, y: str, color: str | None = None) -> go.Figure:
    """A bar chart of a SQL result (numeric y), or a scatter when x is numeric too."""
    numeric_x = pd.api.types.is_numeric_dtype(frame[x])
    kind = go.Scatter if numeric_x else go.Bar
    figure = go.Figure()
    groups = frame.groupby(color, sort=False) if color else [(None, frame)]
    for name, part in groups:
        options = {"mode": "markers"} if numeric_x else {}
        figure.add_trace(kind(x=part[x].astype(str) if not numeric_x else part[x], y=part[y],
                              name=str(name) if name is not None else y, **options))
    figure.update_layout(height=380, xaxis_title=x, yaxis_title=y, margin={"t": 30, "b": 10})
    return figure
