"""Charts of the CAIRO page (Altair): correlation vs combination size, contributions, scatter, rankings."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common import OKABE_ITO, PALETTE

LINES = ["CAIRO (best pair)", "average over pairs", "original prompts", "held-out r (LOSO)"]
#: Okabe & Ito (2008, `ui.common`), colour-blind safe: Streamlit's theme drew "average" light blue and "held-out"
#: pink, which faded into the white panel and into "original prompts"' red (now black: the reference line)
LINE_COLOURS = [OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["black"], OKABE_ITO["bluish green"]]
#: one colour per system: Okabe-Ito (pale yellow late), then Tol's indigo, wine, olive and a mid grey (12 apart)
SYSTEM_PALETTE = [*PALETTE, "#332288", "#882255", "#999933", "#7F7F7F"]
#: one dash per line of `correlation_vs_size` (solid, dashed, dotted, dash-dot), long enough to tell apart at a glance
DASHES = [[1, 0], [8, 4], [2, 3], [12, 3, 3, 3]]


def correlation_vs_size(sizes: pd.DataFrame, n_systems: int, metric_a: str, metric_b: str) -> alt.Chart:
    """Fig. 6: Pearson r against combination size, CAIRO vs the average over all pairs vs the originals (no chart
    title: the page's `correlation_title` heads it)."""
    present = [c for c in LINES if c in sizes and sizes[c].notna().any()]
    long = sizes.melt(id_vars=["size", "p_value", "n_pairs", "combo_a", "combo_b"], value_vars=present,
                      var_name="series", value_name="r").dropna(subset=["r"])
    return alt.Chart(long).mark_line(point=True).encode(
        x=alt.X("size:O", title="combination size (sets incl. the original)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("r:Q", title=f"Pearson r across n = {n_systems} systems", scale=alt.Scale(domain=[-1, 1])),
        # the legend draws each line as a short thick segment in its colour and dash: as point symbols, the dash
        # outlined each circle and turned it into a star-like blur
        color=alt.Color("series:N", sort=present, title=None,
                        scale=alt.Scale(domain=present, range=[LINE_COLOURS[LINES.index(c)] for c in present]),
                        legend=alt.Legend(orient="bottom", symbolType="stroke", symbolSize=600, symbolStrokeWidth=3,
                                          labelFontSize=12)),
        strokeDash=alt.StrokeDash("series:N", sort=present, legend=None,
                                  scale=alt.Scale(domain=present, range=[DASHES[LINES.index(c)] for c in present])),
        tooltip=["series", "size", alt.Tooltip("r:Q", format=".3f"), alt.Tooltip("p_value:Q", format=".4f"),
                 "n_pairs", "combo_a", "combo_b"],
    ).properties(height=320)  # titled by the page's subheader: a Vega title sat half under the warning above it


def correlation_title(metric_a: str, metric_b: str, n_systems: int) -> str:
    """The heading above `correlation_vs_size` (plain text: the page escapes it for markdown)."""
    return f"Correlation against combination size (Fig. 6): {metric_a} vs {metric_b}, n = {n_systems} systems"


def contributions_chart(frame: pd.DataFrame) -> alt.Chart:
    """Fig. 7: sets each paraphrasing model contributed to the best combinations, per size."""
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("size:O", title="combination size", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("sets:Q", title="sets in the best pair (A + B)"),
        # Okabe-Ito: the theme's dark and light blue stacked next to each other were hard to tell apart
        color=alt.Color("paraphrasing model:N", scale=alt.Scale(range=list(PALETTE))),
        tooltip=["size", "paraphrasing model", "sets"],
    ).properties(height=260)


def scatter(values: pd.DataFrame, which: str, r: float | None, n_systems: int, metric_a: str = "metric A",
            metric_b: str = "metric B") -> alt.Chart:
    """Figs. 10–11: per-system bias, metric A against metric B, with the originals or the CAIRO combinations.

    Axes name the metrics; systems are told apart by colour (legend) and hover text, not by text labels, which
    overlapped when systems' biases were close."""
    r_text = "r undefined" if r is None else f"r = {r:.2f}"
    frame = values.rename(columns={f"A {which}": "A", f"B {which}": "B"})
    frame["label"] = short_names(frame["system"])
    return alt.Chart(frame).mark_circle(size=90, opacity=0.9).encode(
        x=alt.X("A:Q", title=f"{metric_a} bias (Eq. 1)", scale=alt.Scale(zero=False)),
        y=alt.Y("B:Q", title=f"{metric_b} bias (Eq. 1)", scale=alt.Scale(zero=False)),
        # one system per legend line: two columns in a half-width panel cut the longer settings off
        color=alt.Color("label:N", title="system", legend=alt.Legend(orient="bottom", columns=1, labelLimit=420),
                        scale=alt.Scale(range=SYSTEM_PALETTE)),
        tooltip=["system", alt.Tooltip("A:Q", format=".4f", title=f"{metric_a} bias"),
                 alt.Tooltip("B:Q", format=".4f", title=f"{metric_b} bias")],
    ).properties(title=f"{which}: {r_text}, n = {n_systems} systems", height=300,
                 # fit-x: the 300 px are the plot's; Streamlit's default ("fit" both ways) squeezed the title,
                 # axes and legend into them and left the points a strip a few pixels high
                 autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


def short_names(systems: pd.Series) -> list[str]:
    """System names without the part every name shares (e.g. the model before " · "), for point labels."""
    names = [str(s) for s in systems]
    heads = {n.split(" · ")[0] for n in names}
    if len(heads) == 1 and all(" · " in n for n in names):
        return [n.split(" · ", 1)[1] for n in names]
    return names


def rank_chart(ranks: pd.DataFrame) -> alt.Chart:
    """Fig. 8: each system's rank (1 = most biased) under both metrics, before and after CAIRO."""
    n_ranks = max(len(ranks), 1)
    long = ranks.assign(system=short_names(ranks["system"])).melt(id_vars=["system"], var_name="ranking",
                                                                  value_name="rank")
    return alt.Chart(long).mark_line(point=True).encode(
        x=alt.X("ranking:N", sort=["A original", "B original", "A CAIRO", "B CAIRO"], title=None,
                axis=alt.Axis(labelAngle=0)),
        # ranks run 1..n (the default scale started at a rank 0 that no system has); a tick per rank
        y=alt.Y("rank:Q", scale=alt.Scale(reverse=True, domain=[1, n_ranks], padding=8), title="rank (1 = most biased)",
                axis=alt.Axis(values=list(range(1, n_ranks + 1)), format="d")),
        # the scatter's colours: a system keeps its colour from Figs. 10-11 to Fig. 8
        color=alt.Color("system:N", legend=alt.Legend(orient="bottom", columns=3, labelLimit=320),
                        scale=alt.Scale(range=SYSTEM_PALETTE)),
        tooltip=["system", "ranking", "rank"],
    ).properties(height=300)
