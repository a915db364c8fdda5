"""The decoding page's *Worst cells* panel (`fairness_core.slices`, issue 46 §2, docs/slices.md): every cell of a
stored run over family, group, template and setting, with its n, its interval, its gap to the rest tested at the
design's unit and a Benjamini-Hochberg q-value; too-small cells said so, never shown as findings."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from fairness_core import planning, slices
from ui import common


def verdict(cell: dict) -> str:
    """One word for a cell's row: a finding only where the screen's q-value says so."""
    if cell["too_small"]:
        return "too small to test"
    if cell["p_value"] is None or pd.isna(cell["p_value"]):
        return "not tested"
    return f"flagged ({cell['direction']})" if cell["flagged"] else "not flagged"


def cells_frame(table: slices.SliceTable) -> pd.DataFrame:
    """The ranked cells as the panel shows them (one row each)."""
    rows = []
    for cell in table.cells.to_dict(orient="records"):
        rows.append({"cell": " × ".join(f"{k}={v}" for k, v in cell["attributes"].items()),
                     "units": cell["n_units"], "generations": cell["n_rows"], table.measure: cell["value"],
                     "95% low": cell["ci_low"], "95% high": cell["ci_high"], "gap to the rest": cell["gap"],
                     "gap low": cell["gap_ci_low"], "gap high": cell["gap_ci_high"], "p-value": cell["p_value"],
                     "q-value": cell["q_value"], "verdict": verdict(cell)})
    return pd.DataFrame(rows)


def slices_panel(run_ids: Sequence[str], measures: Sequence[str], key: str) -> None:
    """Computed on request (a second or two: permutations and a bootstrap per cell), kept for the session."""
    if not run_ids:
        return
    with st.expander("Worst cells: every group, template and setting (and, for prompts of several attributes, "
                     "each attribute and every intersection), with false-discovery control"):
        run_id = run_ids[0] if len(run_ids) == 1 else st.selectbox("Run", list(run_ids), key=f"{key}_run")
        c1, c2, c3 = st.columns(3)
        names = list(dict.fromkeys([*measures])) or [slices.DEFAULT_MEASURE]
        measure = c1.selectbox("Measure", names, index=names.index(slices.DEFAULT_MEASURE)
                               if slices.DEFAULT_MEASURE in names else 0, key=f"{key}_measure")
        min_units = c2.number_input("Minimum units per cell", 1, 10_000, slices.DEFAULT_MIN_UNITS,
                                    key=f"{key}_min_units")
        fdr = c3.number_input("False discovery rate", 0.01, 0.5, slices.DEFAULT_FDR, step=0.01, key=f"{key}_fdr")
        wanted = (run_id, measure, int(min_units), float(fdr))
        if st.button("Find the worst cells", key=f"{key}_go"):
            try:
                st.session_state[key] = (wanted, *slices.slice_run(common.get_store(), run_id, None, measure,
                                                                    int(min_units), float(fdr)))
            except slices.SlicesError as error:
                st.session_state.pop(key, None)
                st.error(common.escape_markdown(str(error)))
                return
        found = st.session_state.get(key)
        if found is None or found[0] != wanted:  # nothing yet, or computed for other choices
            return
        _, table, record = found
        cells = cells_frame(table)
        flagged = int(table.cells["flagged"].sum()) if not table.cells.empty else 0
        st.markdown(common.escape_markdown(f"{len(cells)} cells, {int(table.cells['p_value'].notna().sum())} tested, "
                                           f"{flagged} flagged at q ≤ {table.fdr:g}"))
        st.dataframe(cells, hide_index=True, width="stretch", key=f"{key}_table")
        for example in record.get("examples", []):
            name = " × ".join(f"{k}={v}" for k, v in example["attributes"].items())
            with st.container(border=True):
                st.caption(common.escape_markdown(f"Generations of {name}, the worst scores first"))
                st.dataframe(pd.DataFrame(example["rows"]), hide_index=True, width="stretch")
        common.how_to_read(
            "Each row is a cell of the run: a family, a group, a template, a setting, or a pair of them; where "
            "its prompts carry several attributes (gender and race), each attribute alone (the marginals) and every "
            "pair of them (the intersections), an intersection no prompt has listed with 0 units. *units* "
            "are the design's (a template shared by a family's groups is one unit). The gap is to the rest of the "
            "run — for a group on shared templates, to the other groups on the same templates — tested at the unit "
            "(a paired sign-flip or a permutation of units). *q-value*: Benjamini-Hochberg over the tested cells; "
            "a cell is flagged when q is at most the false discovery rate. Rows are ranked by the gap's interval "
            "bound on the worse side, not by the gap, so a cell of two prompts does not come first. Cells under the "
            "minimum are reported as too small and never tested. docs/slices.md.")


def result_slices_panel(outcome: object, measures: Sequence[str], key: str) -> None:
    """The panel for a decoding result on screen (the live tab): its own run (`planning.result_run`, not one whose
    rows it reused, whose cells would be another request's); a result read whole from earlier runs says so."""
    run_ids = list(getattr(outcome, "run_ids", None) or [])
    if not run_ids:
        return
    own = planning.result_run(common.get_store(), run_ids, outcome.plan.plan)  # type: ignore[attr-defined]
    if own is None:
        st.caption("Worst cells: this result's generations were all stored by earlier runs of other requests; "
                   "open one of them on the Run store page, or run a sweep, to rank its cells.")
        return
    slices_panel([own], measures, key)
