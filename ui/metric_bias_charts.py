"""Plotly figures and small table helpers for the Metric bias page (pure functions of DataFrames; no
Streamlit). Every bias shown carries its 95% bootstrap interval as error bars."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from fairness_core.metric_bias import METRICS, direction_screen

#: Okabe & Ito (2008) colour-blind-safe palette (no pale colours); used by every chart on this page
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
#: text colours of the stereotype-direction label (blue / vermillion from the same palette; grey = unclear)
DIRECTION_COLOURS = {"favours the stereotype": "#D55E00", "favours the anti-stereotype": "#0072B2",
                     "no clear direction": "#555555"}

FAMILY_LABEL = {"n-gram": "n-gram-based", "matching": "PLM-based", "generation": "PLM-based",
                "regression": "PLM-based", "translation": "PLM-based", "stored": "stored scores"}
UNITS = {"minmax": "bias (0-100 scale)", "zscore": "bias (standard deviations)", "raw": "bias (metric units)"}


def base_metric(metric: str) -> str:
    return metric.split(".")[0]


def family_of(metric: str) -> str:
    """The registered metric's family; a name no metric has is a stored score column."""
    info = METRICS.get(base_metric(metric))
    return info.family if info else "stored"


def _errors(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(err_plus=frame["ci_high"] - frame["bias"], err_minus=frame["bias"] - frame["ci_low"])


def bias_bars(table: pd.DataFrame, normalisation: str = "minmax") -> go.Figure:
    """Paper Fig. 2: bias per attribute and metric, n-gram and PLM-based metrics side by side."""
    frame = _errors(table.copy())
    frame["paradigm"] = frame["metric"].map(lambda m: FAMILY_LABEL[family_of(m)])
    figure = px.bar(frame, x="attribute", y="bias", color="metric", barmode="group", facet_col="paradigm",
                    error_y="err_plus", error_y_minus="err_minus", color_discrete_sequence=PALETTE,
                    labels={"bias": UNITS.get(normalisation, "bias"), "attribute": "sensitive attribute"},
                    category_orders={"paradigm": [p for p in ("n-gram-based", "PLM-based", "stored scores")
                                                  if p in set(frame["paradigm"])]})
    figure.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))  # "PLM-based", not "paradigm=…"
    figure.update_yaxes(matches=None, showticklabels=True)  # the paper also uses separate y ranges
    # the legend at the right: below the plot it covered the facets' x-axis titles (issue 43), above it the
    # facets' names
    figure.update_layout(height=400, margin={"t": 40, "b": 10},
                         legend={"orientation": "v", "yanchor": "top", "y": 1.0, "x": 1.02, "title": None})
    return figure


def bias_cells(table: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """attribute × metric cells "bias [ci_low, ci_high]" (the main table, any normalisation)."""
    cell = table.apply(lambda r: f"{r.bias:.{digits}f} [{r.ci_low:.{digits}f}, {r.ci_high:.{digits}f}]", axis=1)
    return table.assign(cell=cell).pivot(index="attribute", columns="metric", values="cell")


def pairs_used_sentence(table: pd.DataFrame) -> str:
    """How many pairs each cell used, in words: one sentence when no score was excluded (a table of zeros says
    nothing), else where pairs were excluded (a non-finite score excludes its pair; it is never mapped to a number)."""
    if not len(table):
        return "No pairs."
    used = sorted({int(n) for n in table["n_pairs"]})
    counts = " to ".join(f"{n:,}" for n in (used[0], used[-1])) if len(used) > 1 else f"{used[0]:,}"
    excluded = table[table["n_excluded"] > 0]
    if excluded.empty:
        return f"Every cell used all its pairs ({counts} per attribute); no score was non-finite."
    return (f"{len(excluded)} of {len(table)} cells excluded pairs whose score is not a finite number (a non-finite "
            f"score excludes its pair; it is never mapped to a number) — pairs used and excluded below.")


def pairs_used_table(table: pd.DataFrame) -> pd.DataFrame:
    """attribute × metric cells "used (excluded)" for the cells that excluded any pair."""
    cell = table.apply(lambda r: f"{int(r.n_pairs):,} used, {int(r.n_excluded):,} excluded", axis=1)
    return table.assign(cell=cell).pivot(index="attribute", columns="metric", values="cell").fillna("")


def stereo_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The Appendix-E rows: attribute, metric, direction label, the difference with its interval, its unadjusted p
    and its Benjamini-Hochberg q over the cells given (the cells on screen: `direction_screen` labels a direction
    only where q < 0.05), pairs."""
    screened = direction_screen(table)
    columns = ["attribute", "metric", "direction", "stereo_diff", "stereo_ci_low", "stereo_ci_high",
               "stereo_p_value", "stereo_q_value", "n_stereo"]
    return screened[[c for c in columns if c in screened]].reset_index(drop=True)


def stereo_table(table: pd.DataFrame):  # -> pandas Styler
    """The Appendix-E table with a coloured direction label (text colour from the palette, bold)."""
    frame = stereo_frame(table)

    def colour(value: str) -> str:
        shade = DIRECTION_COLOURS.get(value)
        return f"color: {shade}; font-weight: bold" if shade else "color: #555555"

    return frame.round(3).style.map(colour, subset=["direction"]).format(precision=3)


def normalisation_ranks(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Rank of each metric (1 = most biased) per normalisation, averaged over attributes."""
    columns = {}
    for name, table in tables.items():
        primary = table[~table["metric"].str.contains(".", regex=False)]
        ranks = primary.groupby("attribute")["bias"].rank(ascending=False, method="min")
        columns[f"rank ({name})"] = ranks.groupby(primary["metric"]).mean()
    return pd.DataFrame(columns).sort_values(f"rank ({next(iter(tables))})")


def prf_bars(table: pd.DataFrame) -> go.Figure | None:
    """Paper Fig. 5: precision vs recall vs F bias (with 95% intervals) for metrics that have all three."""
    frame = table[table["metric"].map(lambda m: METRICS.get(base_metric(m)) is not None
                                      and len(METRICS[base_metric(m)].outputs) > 1)].copy()
    if frame.empty:
        return None
    frame = _errors(frame)
    frame["output"] = frame["metric"].map(lambda m: m.split(".")[1] if "." in m else "F")
    frame["metric family"] = frame["metric"].map(base_metric)
    figure = px.bar(frame, x="metric family", y="bias", color="output", barmode="group", facet_col="attribute",
                    error_y="err_plus", error_y_minus="err_minus", color_discrete_sequence=PALETTE,
                    category_orders={"output": ["P", "R", "F"]},
                    labels={"bias": "bias (0-100 scale)", "output": "variant"})
    figure.update_layout(height=340, margin={"t": 40, "b": 10})
    return figure


def size_scatter(frame: pd.DataFrame) -> go.Figure:
    """Paper Fig. 4: bias (95% interval as error bars) against backbone size, one line per metric."""
    frame = _errors(frame.sort_values("params_m"))
    facet = "attribute" if frame["attribute"].nunique() > 1 else None
    figure = px.line(frame, x="params_m", y="bias", color="metric", markers=True, facet_col=facet,
                     error_y="err_plus", error_y_minus="err_minus", hover_data=["model"], log_x=True,
                     color_discrete_sequence=PALETTE,
                     labels={"params_m": "backbone parameters (millions, log scale)", "bias": "bias (0-100)"})
    figure.update_layout(height=340, margin={"t": 20, "b": 10})
    return figure


def gap_histogram(pairs: pd.DataFrame) -> go.Figure:
    figure = px.histogram(pairs, x="gap", color="metric", nbins=40, barmode="overlay", opacity=0.7,
                          color_discrete_sequence=PALETTE,
                          labels={"gap": "rescaled gap Ŝ1 − Ŝ2 (candidate 1 minus candidate 2)"})
    figure.update_layout(height=260, margin={"t": 10, "b": 10})
    return figure
