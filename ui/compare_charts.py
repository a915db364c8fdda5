"""Charts of the Compare and SQL console pages: estimates with intervals, difference bars, a quick chart.

The compare charts are horizontal: one line-up (metric · group · setting …) per row, its label on the y axis
where it reads left to right, the numbers along x. A label names only what differs between rows (what all rows
share is said once, above the chart); a long one is shortened in the middle with "…", and the hover shows the
full line-up. Values that are floating-point noise (-1.1e-16 for two equal estimates) are drawn and hovered
as 0 (`fairness_core.compare.clean_number`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from fairness_core.compare import clean_number, disparity_figure, number_scale

PAIRED_COLORS = {True: "#1f77b4", False: "#ff7f0e"}
LABEL_CHARS = 48  # the longest y-axis label; longer ones end in "…" (about a third of a full-width chart)
ROW_PX = 26  # height per line-up (per run within it on the estimates chart)


def cell_labels(frame: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    return [" · ".join(str(v) for v in row if v is not None and v == v) for row in frame[list(keys)].itertuples(
        index=False)]


def varying_keys(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[list[str], str]:
    """The keys whose value differs between rows (they make the labels), and the shared rest as text
    ("prompt_set regard"), which the chart says once instead of on every row. A key no row has a value for (the
    group of a disparity, which is a family's) is neither: "group nan" says nothing."""
    varying, shared = [], []
    for key in keys:
        present = frame[key].dropna() if len(frame) else frame[key]
        values = present.astype(str).unique()
        if len(frame) and present.empty:
            continue
        if len(frame) > 1 and len(values) == 1 and len(present) == len(frame):
            shared.append(f"{key} {values[0]}")
        else:
            varying.append(key)
    return (varying or list(keys)[:1]), ", ".join(shared)


def short_label(label: str, limit: int = LABEL_CHARS) -> str:
    """`label` cut to `limit` characters in the middle: its start (the metric) and its end (the setting, where
    two line-ups usually differ) stay."""
    if len(label) <= limit:
        return label
    keep_end = (limit - 1) // 2
    return label[: limit - 1 - keep_end].rstrip() + "…" + label[-keep_end:].lstrip()


def axis_labels(labels: Sequence[str], limit: int = LABEL_CHARS) -> dict[str, str]:
    """Full label -> the y-axis text: shortened, and still distinct (a number is added when two collide)."""
    shown: dict[str, str] = {}
    taken: set[str] = set()
    for label in dict.fromkeys(labels):
        text, number = short_label(label, limit), 2
        while text in taken:
            text = f"{short_label(label, limit - 4)} ({number})"
            number += 1
        taken.add(text)
        shown[label] = text
    return shown


def _clean(values: pd.Series) -> list[float]:
    scale = number_scale(values)
    return [clean_number(float(v), scale, digits=15) for v in values]


def _layout(figure: go.Figure, rows_px: float, x_title: str, legend: str, shared: str) -> None:
    # the legend sits above the plot, under the title: below it, it covered the x axis's title whenever the chart
    # was short (issue 43)
    figure.update_layout(title={"text": f"all rows: {shared}" if shared else "", "font": {"size": 12}, "y": 0.98,
                                "yanchor": "top"},
                         height=int(max(260, rows_px + 160)), xaxis_title=x_title, legend_title_text=legend,
                         margin={"t": 60, "b": 10, "l": 10, "r": 10},
                         legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1.0},
                         xaxis={"hoverformat": ".4g", "zeroline": True})
    figure.update_yaxes(autorange="reversed", automargin=True, type="category")  # the first line-up on top


def _arm_estimates(rows: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Each arm's estimate per line-up once (an arm set against several others appears in several rows)."""
    columns = ["metric", *keys]
    sides = []
    for side in ("a", "b"):
        part = rows[[*columns, f"arm_{side}", f"run_{side}", f"run_{side}_low", f"run_{side}_high"]]
        sides.append(part.set_axis([*columns, "arm", "estimate", "low", "high"], axis=1))
    both = pd.concat(sides, ignore_index=True)
    return both.drop_duplicates(["arm", *columns]).reset_index(drop=True)


def estimates_chart(rows: pd.DataFrame, keys: Sequence[str]) -> go.Figure:
    """Each arm's estimate per line-up with its 95% interval (the arms side by side on one row)."""
    figure = go.Figure()
    label_keys, shared = varying_keys(rows, ["metric", *keys])
    estimates = _arm_estimates(rows, keys) if not rows.empty else pd.DataFrame(columns=["arm"])
    labels = cell_labels(estimates, label_keys) if not estimates.empty else []
    shown = axis_labels(labels)
    hover = "%{customdata}<br>%{x:.4g}<extra>%{fullData.name}</extra>"
    for arm, part in estimates.assign(label=labels).groupby("arm", sort=False):
        figure.add_trace(go.Scatter(y=[shown[label] for label in part["label"]], x=_clean(part["estimate"]),
                                    customdata=list(part["label"]), hovertemplate=hover, mode="markers",
                                    orientation="h", name=str(arm),
                                    error_x={"type": "data", "symmetric": False,
                                             "array": part["high"] - part["estimate"],
                                             "arrayminus": part["estimate"] - part["low"]}))
    arms = max(len(figure.data), 1)  # markers per line-up, side by side: each needs some height
    _layout(figure, len(shown) * ROW_PX * (1 + 0.5 * (arms - 1)), "estimate (95% interval)", "", shared)
    figure.update_layout(scattermode="group")
    return figure


def difference_chart(rows: pd.DataFrame, keys: Sequence[str]) -> go.Figure:
    """Bars of second − first per cell with their intervals; blue where paired, orange where not (or partly)."""
    figure = go.Figure()
    several = rows["contrast"].nunique() > 1 if "contrast" in rows else rows["run_b_id"].nunique() > 1
    label_keys, shared = varying_keys(rows, ["metric", *keys])
    labels_of = {}
    for paired, part in rows.groupby("paired", sort=False):
        labels = cell_labels(part, label_keys)
        if several:
            names = part["contrast"] if "contrast" in part else part["run_b_id"]
            labels = [f"{name} · {label}" for name, label in zip(names, labels, strict=True)]
        labels_of[paired] = labels
    shown = axis_labels([label for labels in labels_of.values() for label in labels])
    for paired, part in rows.groupby("paired", sort=False):
        labels = labels_of[paired]
        figure.add_trace(go.Bar(y=[shown[label] for label in labels], x=_clean(part["difference"]), orientation="h",
                                customdata=labels, hovertemplate="%{customdata}<br>%{x:.4g}<extra>%{fullData.name}"
                                                                 "</extra>",
                                name="paired" if paired else "unpaired or partly paired",
                                marker_color=PAIRED_COLORS[bool(paired)],
                                error_x={"type": "data", "symmetric": False,
                                         "array": part["ci_high"] - part["difference"],
                                         "arrayminus": part["difference"] - part["ci_low"]}))
    figure.add_vline(x=0, line_color="#888", line_width=1)
    _layout(figure, len(shown) * ROW_PX, "difference, second − first (95% interval)", "interval", shared)
    figure.update_layout(barmode="overlay")  # one bar per line-up: it is either paired or not
    return figure


def disparity_chart(rows: pd.DataFrame, metric: str | None = None) -> go.Figure:
    """The change in a disparity per contrast and family with its interval (`compare.disparity_figure`): what a
    decoding comparison shows first."""
    return go.Figure(disparity_figure(rows, metric))


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
