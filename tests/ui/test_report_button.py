"""The report button's file name is built from safe characters only; a crafted run id never becomes a path."""

from __future__ import annotations

from ui.report import report_file_name


def test_report_file_names() -> None:
    assert report_file_name(["8eb9aca01d4cd76e"]) == "report-8eb9aca01d4cd76e.html"
    assert report_file_name(["8eb9aca01d4cd76e", "a", "b"]) == "report-8eb9aca01d4cd76e-and-2-more.html"
    crafted = report_file_name(["../../[x](http://example.invalid)"])
    assert crafted.startswith("report-") and crafted.endswith(".html") and "/" not in crafted and ".." not in crafted


def test_a_report_that_cannot_be_built_downloads_as_a_page_that_says_why(tmp_path) -> None:
    """Issue 26: the decoding sweep's "Download report" gave no file and no word (the error stayed in the server
    log). Whatever fails, the download is a small HTML page with the sentence."""
    from fairness_core.store import RunStore
    from ui.report import report_bytes

    RunStore(tmp_path / "runs.duckdb").query("SELECT 1")  # an empty store
    page = report_bytes(str(tmp_path / "runs.duckdb"), ("no-such-run",)).decode()
    assert "<h1>The report could not be written</h1>" in page
    assert f"no run &#x27;no-such-run&#x27; in {tmp_path / 'runs.duckdb'}; nothing was written" in page
