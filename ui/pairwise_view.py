"""Compare's pairwise panel (issue 47 §1): which of two generation runs' answers an LLM judge prefers, each prompt's
two answers read in both orders (`audit.pairwise_preference`), with the judge's position bias beside the preference.
Computed when asked (the judge loads and reads 2 × pairs texts), kept for the session."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from fairness_core import audit
from ui import common

#: seconds of CPU per judgment with the offline SmolLM2 judge (docs/judges.md: ~0.25 s a text by likelihood)
SECONDS_PER_JUDGMENT = 0.25


def pairwise_panel(store: object, run_ids: Sequence[str], key: str = "cmp_pairwise") -> None:
    """Under Compare, for exactly two generation runs."""
    if len(run_ids) != 2:
        return
    infos = [store.get_run(run_id) for run_id in run_ids]  # type: ignore[attr-defined]
    if any(info is None or info.kind != "generation" for info in infos):
        return
    with st.expander("Which run's answers does an LLM judge prefer? (pairwise, both orders)"):
        st.caption("The judge reads each prompt's two answers twice, first one run's then the other's first; a "
                   "win counts only when both orders agree (a flip is a tie: Zheng et al. 2023), so a judge that "
                   "always picks the first answer prefers neither. The offline SmolLM2-135M-Instruct is a weak judge, "
                   "good for seeing the machinery (and its position bias), not for a verdict on quality.")
        model = st.text_input("Judge model (preset, hub id or local folder)", audit.DEFAULT_JUDGE_MODEL,
                              key=f"{key}_model", max_chars=500).strip() or audit.DEFAULT_JUDGE_MODEL
        wanted = (tuple(run_ids), model)
        if st.button("Judge the pairs", key=f"{key}_go"):
            with st.spinner("Judging each pair in both orders…"):
                try:
                    report = audit.pairwise_preference(store, run_ids[0], run_ids[1], {"model": model})
                except audit.AuditInputError as error:
                    st.session_state.pop(key, None)
                    st.error(common.escape_markdown(str(error)))
                    return
            st.session_state[key] = (wanted, report.payload)
        found = st.session_state.get(key)
        if found is None or found[0] != wanted:
            st.caption(common.escape_markdown(
                f"About {SECONDS_PER_JUDGMENT:g} s of CPU per judgment with the offline judge, two per pair."))
            return
        payload = found[1]
        st.markdown(common.escape_markdown(audit.preference_sentence(payload)))
        rows = [{"number": name, "value": payload[key_]["value"], "95% low": payload[key_]["ci_low"],
                 "95% high": payload[key_]["ci_high"]}
                for name, key_ in (("run A preferred (a flip counts half)", "x_preferred"),
                                   ("run A's balanced probability", "x_balanced"),
                                   ("verdict flips with the order", "flip_share"),
                                   ("first position wins", "first_position_wins"))]
        st.dataframe(pd.DataFrame(rows).round(3), hide_index=True, width="stretch", key=f"{key}_table")
        verdicts = payload["verdicts"]

        def p_of(name: str) -> str:
            value = verdicts[name]["p_holm"]
            return "n/a" if value is None else f"{value:.3g}"

        st.caption(common.escape_markdown(
            f"Intervals: {payload['interval']} ({payload['n_pairs']} pairs). Two verdicts on this screen, Holm-"
            f"adjusted: a preference (p = {p_of('preference')}) and a first-position bias "
            f"(p = {p_of('first_position')})."))
