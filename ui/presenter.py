"""Presenter view for a teacher: a large, readable layout (a sidebar toggle) and the current view as a short link.

The pages keep their selections in the URL (`ui.common.UrlParam`, defaults left out), so the link is the page's
address plus those parameters: a student who opens it sees exactly what the teacher shows. The app draws the
toggle and a slot for the link in the sidebar (`controls`); `ui.common.sync_url` refreshes the link each time a
page writes its state to the URL, so the link never lags a slider move.

    presenter.controls()                                   # app.py, in the sidebar, before the page runs
    share_link("http://host:8501/decoding", {"top_p": "0.5"})  # 'http://host:8501/decoding?top_p=0.5'
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

import streamlit as st

PRESENTER_KEY = "presenter_view"
_LINK_SLOT = "_presenter_link_slot"

#: Larger type and full width for a projector; Streamlit's own theme otherwise (nothing hidden or restyled).
LARGE_LAYOUT_CSS = """<style>
.stMainBlockContainer, .block-container { max-width: 100%; padding-left: 2rem; padding-right: 2rem; }
.stMain p, .stMain li, .stMain label, .stMain .stMarkdown, .stMain [data-testid="stCaptionContainer"] {
  font-size: 1.35rem !important; line-height: 1.5; }
.stMain h1 { font-size: 3rem !important; } .stMain h2, .stMain h3 { font-size: 2.1rem !important; }
.stMain [data-testid="stDataFrame"] { font-size: 1.2rem; }
</style>"""


def share_link(base_url: str | None, query: Mapping[str, str]) -> str:
    """The view's address with its URL state; a relative '?…' link when the address is not known."""
    base = (base_url or "").split("?", 1)[0]
    encoded = urlencode(sorted((str(k), str(v)) for k, v in query.items()))
    return f"{base}?{encoded}" if encoded else (base or "?")


def enabled() -> bool:
    return bool(st.session_state.get(PRESENTER_KEY, False))


def controls() -> None:
    """The sidebar toggle; when it is on, the large layout and a slot the share link is written into."""
    st.toggle("Presenter view", key=PRESENTER_KEY,
              help="Large, readable text for a projector, and a short link that opens exactly this view.")
    if not enabled():
        st.session_state.pop(_LINK_SLOT, None)
        return
    st.markdown(LARGE_LAYOUT_CSS, unsafe_allow_html=True)  # fixed text of ours, no visitor input in it
    st.caption("Students open exactly this view with:")
    st.session_state[_LINK_SLOT] = st.empty()
    refresh_link()


def refresh_link() -> None:
    """Write the current view's link into the sidebar slot (no-op unless the presenter view is on)."""
    slot = st.session_state.get(_LINK_SLOT)
    if slot is None or not enabled():
        return
    url = getattr(st.context, "url", None)
    slot.code(share_link(url, st.query_params.to_dict()), language=None)
