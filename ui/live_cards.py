"""Live decoding cards: one card per group that fills in while the model writes (decoding page, live mode)."""

from __future__ import annotations

import math
import time

import pandas as pd
import streamlit as st

from fairness_core.jobs import CancelToken
from ui import common

try:  # Streamlit's rerun/stop requests (RerunException, StopException) derive from it
    from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException
except ImportError:  # pragma: no cover - another Streamlit layout: its control exceptions are BaseExceptions too
    ScriptControlException = BaseException  # type: ignore[misc,assignment]


class LiveCards:
    """One card per group that fills in while the model writes: each generation's text so far (from the
    sampler, through `run_decoding(on_partial=...)`), then "scoring" once it is finished; the final cards,
    with their negative/neutral labels, replace them when the measures are in.

    Drawing gives Streamlit a chance to act on a newer slider move: it raises its rerun request inside
    the drawing call. The request is kept, the generation is cancelled at its next step (stored as
    "cancelled by the user"), and `resume_interruption()` hands the request back to Streamlit afterwards,
    so a stale setting never finishes generating."""

    REDRAW_EVERY_S = 0.15  # the browser gets a delta per redraw: a few per second reads as live text

    def __init__(self, groups: list[str], slots: dict[str, object]) -> None:
        self.groups = groups
        self.slots = slots
        self.rows: dict[str, dict[str, dict]] = {group: {} for group in groups}
        self.dirty: set[str] = set()
        self.drawn_at = -math.inf  # never drawn yet (0.0 would be 'recently' on a just-booted clock)
        self.cancel = CancelToken()
        self.interruption: BaseException | None = None

    def resume_interruption(self) -> None:
        if self.interruption is not None:
            raise self.interruption

    def show_stored(self, stored: pd.DataFrame) -> None:
        for _, row in stored.iterrows():
            self.rows.setdefault(row["group"], {})[row["generation_id"]] = {"shown": row["scored_text"],
                                                                            "state": "stored"}
        self._draw(set(self.groups))

    def update(self, partial: dict) -> None:
        if self.interruption is not None or partial.get("kind") != "generation":
            return
        if partial.get("group") not in self.rows:
            return
        state = "scoring" if partial["done"] else "writing"
        self.rows[partial["group"]][partial["id"]] = {"shown": partial["shown"], "state": state}
        self.dirty.add(partial["group"])
        now = time.monotonic()
        if now - self.drawn_at >= self.REDRAW_EVERY_S or partial["done"]:
            try:
                self._draw(self.dirty)
            except ScriptControlException as control:  # Streamlit's rerun/stop request (a newer slider move)
                self.interruption = control
                self.cancel.cancel()
            self.drawn_at = now

    def _draw(self, groups: set[str]) -> None:
        badges = {"writing": ":blue-badge[writing…]", "scoring": ":gray-badge[scoring…]",
                  "stored": ":gray-badge[stored]"}
        for group in sorted(groups & set(self.slots), key=self.groups.index):
            with self.slots[group].container(border=True):  # type: ignore[attr-defined]
                st.markdown(f"**{common.escape_markdown(group)}**")
                for row in self.rows[group].values():
                    badge = badges[row["state"]]
                    st.markdown(f"{badge} {common.escape_markdown(row['shown'])}")  # markdown: developer text
        self.dirty -= groups
