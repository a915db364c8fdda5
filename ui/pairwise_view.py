"""Compare's pairwise panel (issue 47 §1): which of two generation runs' answers an LLM judge prefers, each prompt's
two answers read in both orders (`audit.pairwise_preference`), with the judge's position bias beside the preference.
Computed when asked (the judge loads and reads 2 × pairs texts), kept for the session."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from fairness_core import audit
from ui import common

#: seconds of CPU per judgment with the offline SmolLM2 judge (docs/judges.md: ~0.25 s a text by likelihood, about
#: twice that for a written reply)
SECONDS_PER_JUDGMENT = {"likelihood": 0.25, "text": 0.5}
#: how the verdict is read: by the likelihood of the letters, or from the written reply (a served judge whose
#: endpoint returns no log-probabilities can only be read so)
READINGS = {"likelihood": "likelihood of A and B", "text": "its written reply"}


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
        read = st.radio("Read the judge's verdict by", list(READINGS), format_func=READINGS.get, horizontal=True,
                        key=f"{key}_read", help="A written reply is read by its first capital A or B standing alone "
                                                "(not the article 'A'); a pair with an unread reply is left out and "
                                                "counted.")
        wanted = (tuple(run_ids), model, read)
        if st.button("Judge the pairs", key=f"{key}_go"):
            with st.spinner("Judging each pair in both orders…"):
                try:
                    report = audit.pairwise_preference(store, run_ids[0], run_ids[1], {"model": model, "read": read})
                except audit.AuditInputError as error:
                    st.session_state.pop(key, None)
                    st.error(common.escape_markdown(str(error)))
                    return
            st.session_state[key] = (wanted, report.payload)
        found = st.session_state.get(key)
        if found is None or found[0] != wanted:
            st.caption(common.escape_markdown(
                f"About {SECONDS_PER_JUDGMENT[read]:g} s of CPU per judgment with the offline judge, two per pair."))
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
        if payload.get("read") == "text":
            left = payload["unparseable"]
            st.caption(common.escape_markdown(
                f"Read from the written replies ({payload['parse_rule']}): {left['replies']} of {left['of_replies']} "
                f"replies unread, {left['pairs_left_out']} of {left['of_pairs']} pairs left out."))
