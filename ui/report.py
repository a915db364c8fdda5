"""The "Download report" button every page can show: one self-contained HTML file of the page's runs.

The file is built only when the button is clicked (Streamlit calls `data` lazily), so a page pays nothing for
the button; `fairness_core.compare.build_report` makes it (plotly.js inline, opens offline).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import streamlit as st

from fairness_core.store import RunStore
from ui import common


def report_file_name(run_ids: Sequence[str]) -> str:
    """`report-<first id>[-and-N-more].html`, built from safe characters only (a run id is never a path)."""
    first = run_ids[0]
    stem = first if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", first) else hashlib.sha256(first.encode()).hexdigest()[:16]
    more = f"-and-{len(run_ids) - 1}-more" if len(run_ids) > 1 else ""
    return f"report-{stem}{more}.html"


def report_bytes(store_path: str, run_ids: tuple[str, ...]) -> bytes:
    """The report's bytes; if it cannot be built, a one-page HTML file that says why (a download that fails inside
    Streamlit's media handler gives the user nothing and no word: issue 26 found the decoding sweep's did)."""
    import html

    from fairness_core.compare import ReportError, build_report
    from fairness_core.store import StoreError

    try:
        return build_report(RunStore(store_path, warm=True), list(run_ids)).encode("utf-8")
    except (ReportError, StoreError, ValueError) as error:
        sentence = str(error)
    except Exception as error:  # any other failure still reaches the user as a sentence, with its type
        sentence = f"the report could not be built ({type(error).__name__}: {error})"
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Report not written</title></head>"
            f"<body><h1>The report could not be written</h1><p>{html.escape(sentence)}</p><p>Runs: "
            f"{html.escape(', '.join(run_ids))}</p></body></html>").encode()


def report_button(run_ids: str | Sequence[str] | None, key: str, label: str = "Download report") -> None:
    """A download button for the report of these runs (none when there is no run yet)."""
    ids = [run_ids] if isinstance(run_ids, str) else [r for r in (run_ids or []) if r]
    ids = list(dict.fromkeys(ids))
    if not ids:
        return
    store = common.get_store()
    st.download_button(label, data=lambda: report_bytes(str(store.path), tuple(ids)),
                       file_name=report_file_name(ids), mime="text/html", key=key, on_click="ignore",
                       icon=":material/summarize:",
                       help="One HTML file with the numbers and their intervals, charts that draw offline, the "
                            "deviations from the paper, the data's licence, every run's manifest and examples.")
