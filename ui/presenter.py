"""Presenter view for a teacher: a large, readable layout (a sidebar toggle) and the current view as a short link.

The pages keep their selections in the URL (`ui.common.UrlParam`, defaults left out), so the link is the page's
address plus those parameters and `presenter=1`: a student who opens it sees exactly what the teacher shows, in the
same large layout. The app draws the toggle and a slot for the link in the sidebar (`controls`);
`ui.common.sync_url` refreshes the link each time a page writes its state to the URL, so the link never lags a
slider move.

The address in the link is one students can open: `$FAIRNESS_LAB_PUBLIC_URL` when the server's owner set it, else the
address the teacher's browser used, except that `localhost` (which on a student's machine is the student's machine)
becomes this machine's network address when the server listens on the network (`student_address`).

    presenter.controls()                                   # app.py, in the sidebar, before the page runs
    share_link("http://host:8501/decoding", {"top_p": "0.5"})  # 'http://host:8501/decoding?top_p=0.5'
"""

from __future__ import annotations

import ipaddress
import math
import re
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import pandas as pd
import streamlit as st

from fairness_core import config

PRESENTER_KEY = "presenter_view"
#: the query parameter that turns the presenter view on for whoever opens the link
PRESENTER_PARAM = "presenter"
_LINK_SLOT = "_presenter_link_slot"

#: Larger type for a projector by raising the root font size: Streamlit sizes text, inputs, sliders, buttons,
#: spacing and its tables' cells in rem, so all of them grow together and nothing overlaps (enlarging the text alone
#: pushed slider values onto their tracks and left inputs and tables small; CSS zoom made tables and charts overflow
#: the page, as Streamlit sizes them to the width it measures). Full width; Streamlit's own theme otherwise.
SCALE = 1.35
LARGE_LAYOUT_CSS = f"""<style>
html {{ font-size: {SCALE * 100:.0f}% !important; }}
.stMainBlockContainer, .block-container {{ max-width: 100%; padding-left: 2rem; padding-right: 2rem;
                                           padding-top: 2.5rem; }}
</style>"""


def share_link(base_url: str | None, query: Mapping[str, str]) -> str:
    """The view's address with its URL state; a relative '?…' link when the address is not known."""
    base = (base_url or "").split("?", 1)[0]
    encoded = urlencode(sorted((str(k), str(v)) for k, v in query.items()))
    return f"{base}?{encoded}" if encoded else (base or "?")


def _loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain", ""):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host.lower().endswith(".localhost")
    return address.is_loopback or address.is_unspecified


def network_address() -> str | None:
    """This machine's address on its network (the interface of its default route), or None without one.

    A UDP socket's `connect` only picks the route; nothing is sent (the address is a documentation one, RFC 5737)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            found = probe.getsockname()[0]
    except OSError:
        return None
    return None if _loopback(found) else found


def student_address(browser_url: str | None, public_url: str = "", server_address: str | None = None,
                    lan_address: str | None = None) -> tuple[str | None, str | None]:
    """(the page's address as students can open it, one sentence for the teacher or None).

    `browser_url` is the address the teacher's browser used (`st.context.url`); `public_url` the configured one (its
    scheme, host and port replace the browser's, the page path is kept); `server_address` Streamlit's
    `server.address` (None or "" or 0.0.0.0: every interface); `lan_address` this machine's network address.
    """
    if not browser_url:
        return None, None
    page = urlsplit(browser_url)
    if public_url:
        public = urlsplit(public_url if "://" in public_url else f"http://{public_url}")
        if public.scheme in ("http", "https") and public.hostname:
            path = public.path.rstrip("/") + page.path
            return urlunsplit((public.scheme, public.netloc, path, "", "")), None
        return browser_url, (f"{config.PUBLIC_URL_ENV} is not an http(s) address ({public_url[:80]!r}), so the "
                             "link uses the address this browser opened.")
    if not _loopback(page.hostname or ""):
        return browser_url, None
    listens = (server_address or "").strip()
    host = lan_address if _loopback(listens) and listens in ("", "0.0.0.0", "::") else (
        None if _loopback(listens) else listens)
    if host is None:
        return browser_url, (f"This link says {page.hostname}, which on a student's machine is that machine: start "
                             "the app with --server.address 0.0.0.0 so the network can reach it, or set "
                             f"{config.PUBLIC_URL_ENV} to the address students use.")
    netloc = f"[{host}]" if ":" in host else host
    if page.port:
        netloc += f":{page.port}"
    return urlunsplit((page.scheme, netloc, page.path, "", "")), (
        f"You opened the app as {page.hostname}; the link uses this machine's network address instead. Set "
        f"{config.PUBLIC_URL_ENV} if students reach it by another name.")


def enabled() -> bool:
    return bool(st.session_state.get(PRESENTER_KEY, False))


@contextmanager
def folded(label: str, expander: bool = False) -> Iterator[None]:
    """Where a page draws its controls. In presenter view a closed expander, so the result is the first thing on a
    projector's screen (at 1280 x 720 the first screen of a page was all controls, issue 35 §5); otherwise as the
    page always drew them: an open expander (`expander`) or in place."""
    if enabled():
        with st.expander(label, expanded=False):
            yield
    elif expander:
        with st.expander(label, expanded=True):
            yield
    else:
        yield


def results_first() -> Any:
    """Where a page draws its result: in presenter view a container made now, above the controls that follow it,
    so the result is on a projector's first screen; otherwise in place (after the controls)."""
    return st.container() if enabled() else nullcontext()


def _cell(value: Any, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def compact(frame: pd.DataFrame, labels: Mapping[str, str] | None = None,
            intervals: Mapping[str, tuple[str, str]] | None = None, digits: int = 2) -> pd.DataFrame:
    """A result table narrow enough for a projector: each estimate with its 95% interval in one cell
    ("0.25 [0.10, 0.40]") instead of three columns, numbers to `digits` places, columns named by `labels`
    (the short headers the page shows), text only (so a static table wraps its headers to the width)."""
    intervals = dict(intervals or {})
    bounds = {c for pair in intervals.values() for c in pair}
    out: dict[str, list[str]] = {}
    for column in frame.columns:
        if column in bounds:
            continue
        values = [_cell(v, digits) for v in frame[column]]
        if column in intervals:
            low, high = intervals[column]
            if low in frame and high in frame:
                values = [f"{v} [{_cell(lo, digits)}, {_cell(hi, digits)}]" if v != "—" and lo == lo and hi == hi
                          else v for v, lo, hi in zip(values, frame[low], frame[high], strict=True)]
        out[(labels or {}).get(column, column)] = values
    return pd.DataFrame(out, index=frame.index)


def table(frame: pd.DataFrame, labels: Mapping[str, str] | None = None,
          intervals: Mapping[str, tuple[str, str]] | None = None, digits: int = 2, **dataframe: Any) -> None:
    """A result table: the page's interactive `st.dataframe` (`dataframe` are its arguments), or in presenter view a
    static table of the `compact` frame, whose headers wrap and whose cells fit the width (the decoding table was
    cut at "offens" and the metric-bias table at "roug" on a 1280 x 720 projector)."""
    if not enabled():
        st.dataframe(frame, **dataframe)
        return
    shown = compact(frame, labels, intervals, digits)
    st.table(shown if dataframe.get("hide_index") is False or not _plain_index(frame) else
             shown.reset_index(drop=True).style.hide(axis="index"))


def _plain_index(frame: pd.DataFrame) -> bool:
    """True when the index is a plain row number (nothing a reader needs to see)."""
    return isinstance(frame.index, pd.RangeIndex)


def controls() -> None:
    """The sidebar toggle (on when the page was opened with a presenter link); when it is on, the large layout and a
    slot the share link is written into."""
    if st.query_params.get(PRESENTER_PARAM) == "1" and not enabled():  # a presenter link (or the home page's)
        st.session_state[PRESENTER_KEY] = True
    st.toggle("Presenter view", key=PRESENTER_KEY, on_change=_follow_toggle,
              help="Large, readable layout for a projector, and a link that opens exactly this view (presenter "
                   "view included) on the students' machines.")
    if not enabled():
        st.session_state.pop(_LINK_SLOT, None)
        return
    st.query_params[PRESENTER_PARAM] = "1"  # a reload keeps the view, and the link carries it
    st.markdown(LARGE_LAYOUT_CSS, unsafe_allow_html=True)  # fixed text of ours, no visitor input in it
    st.caption("Students open exactly this view with:")
    st.session_state[_LINK_SLOT] = st.empty()
    refresh_link()


def _follow_toggle() -> None:
    """The address follows the toggle before the script runs, so a switched-off view is not turned on again."""
    if st.session_state.get(PRESENTER_KEY):
        st.query_params[PRESENTER_PARAM] = "1"
    elif PRESENTER_PARAM in st.query_params:
        del st.query_params[PRESENTER_PARAM]


def refresh_link() -> None:
    """Write the current view's link into the sidebar slot (no-op unless the presenter view is on)."""
    slot = st.session_state.get(_LINK_SLOT)
    if slot is None or not enabled():
        return
    address, note = student_address(getattr(st.context, "url", None), config.public_url(),
                                    st.get_option("server.address"), network_address())
    with slot.container():
        st.code(share_link(address, st.query_params.to_dict()), language=None, wrap_lines=True)
        if note:  # it quotes the browser's host name: escaped (ui.common imports this module, so not its helper)
            st.caption(re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:@])", r"\\\1", note))  # markdown: developer text
