"""The DATScore page's segment headline: the Eq. 2 number with its scale. What it shows comes from the study's face,
`fairness_core.datscore` (`segment_summary`)."""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from fairness_core import datscore as ds
from ui import common


def segment_headline(scores: Any, segment_id: str, result: Any, term_weighting: str, label: str) -> ds.SegmentSummary:
    """The segment's DATScore, its per-token figure and its rank, with a sentence saying what the sum adds up;
    returns the summary (the page draws its weighted mean direction among the direction bars)."""
    summary = ds.segment_summary(scores, segment_id, result, term_weighting)
    # the per-token figure and the rank first: a sum of log-probabilities over 8 directions ("-1089.671") says
    # nothing until its scale is known, and it is still there, third
    per_token, rank, total = st.columns(3)
    per_token.metric(f"{label} per token" if summary.summed else "Weighted mean direction (per token)",
                     f"{summary.per_token:.3f}" if math.isfinite(summary.per_token) else "—")
    rank.metric("Rank in this corpus (1 = highest)", f"{summary.rank} of {summary.n_ranked}" if summary.rank else "—")
    # a minus sign, as the charts write it (an ASCII hyphen read "-1089.7", issue 43 §5)
    total.metric(f"{label} of this segment (Eq. 2 sum)", f"{summary.score:.1f}".replace("-", "\u2212"))
    st.caption(common.escape_markdown(summary.sentence()))
    return summary
