"""The report button's file name is built from safe characters only; a crafted run id never becomes a path."""

from __future__ import annotations

from ui.report import report_file_name


def test_report_file_names() -> None:
    assert report_file_name(["8eb9aca01d4cd76e"]) == "report-8eb9aca01d4cd76e.html"
    assert report_file_name(["8eb9aca01d4cd76e", "a", "b"]) == "report-8eb9aca01d4cd76e-and-2-more.html"
    crafted = report_file_name(["../../[x](http://example.invalid)"])
    assert crafted.startswith("report-") and crafted.endswith(".html") and "/" not in crafted and ".." not in crafted
