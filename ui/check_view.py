"""A stored check on the Run store page: per criterion, whether it passed, its number with the interval, the rule,
by how much, the sentence and the runs behind it (`fairness_core.check`, issue 34)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from fairness_core import check
from ui import common


def criteria_frame(result: check.CheckResult) -> pd.DataFrame:
    rows = []
    for c in result.criteria:
        rows.append({"criterion": c.name, "verdict": "PASS" if c.passed else ("FAIL" if c.evaluated else
                                                                              "FAIL (not evaluated)"),
                     "value": c.value, "95% low": c.ci_low, "95% high": c.ci_high, "p-value": c.p_value,
                     "p (Holm)": c.p_adjusted, "smallest detectable": c.smallest_detectable, "rule": c.rule,
                     "margin": c.margin, "why": c.reason, "runs": ", ".join(c.run_ids)})
    return pd.DataFrame(rows)


def show_check(store: Any, run_id: str) -> None:
    """The check's criteria under the opened run's manifest."""
    try:
        result = check.read_check(store, run_id)
    except ValueError as error:
        st.error(common.escape_markdown(str(error)))
        return
    passed = sum(c.passed for c in result.criteria)
    verdict = "passed" if result.passed else "failed"
    against = f" against {result.baseline}" if result.baseline else ""
    st.markdown(f"**The check {common.escape_markdown(verdict)}**: "
                + common.escape_markdown(f"{passed} of {len(result.criteria)} criteria — {result.system}{against}"))
    st.dataframe(criteria_frame(result), hide_index=True, width="stretch",
                 column_config={"why": st.column_config.TextColumn("why", width="large"),
                                "margin": st.column_config.NumberColumn("margin", help="by how much it passed (> 0) "
                                                                        "or failed (< 0) on its threshold")})
    common.how_to_read("Each row is one criterion of the check's spec. *value* is the study's number (for a "
                       "baseline criterion, the paired difference this system − the baseline) with its 95% "
                       "interval; the *rule* says which of them is compared with the threshold; *margin* says by "
                       "how much it passed or failed. A disparity criterion's *p-value* is its permutation test's; "
                       "*p (Holm)* is that p adjusted over every test the check reads (Holm's step-down correction: "
                       "the chance that any of them fires on a fair system stays at most alpha), and the verdict "
                       "reads it. \"No disparity\" passes only where the design detects the criterion's effect "
                       "with 80% power (*smallest detectable*, at α = 0.05). A criterion that could not be "
                       "evaluated fails with its reason. The runs behind a criterion are in this store: open them "
                       "above, or report the check.")
