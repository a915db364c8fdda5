"""User text stays text in a real browser (issue 23): a markdown link and image typed into the decoding page's
template box, and a repeated pair id in an uploaded metric-bias CSV, are shown literally in the error that quotes
them: no live link, no image, and no request to the linked host."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]
EVIL = "[phish](https://evil.example/phish) ![x](https://evil.example/x.png)"


def watch_evil(page) -> list[str]:
    """Every request to evil.example (aborted, so nothing leaves the machine)."""
    seen: list[str] = []

    def record(route) -> None:
        seen.append(route.request.url)
        route.abort()

    page.route("**/*evil.example*/**", record)
    page.route("**://evil.example/**", record)
    return seen


def assert_text_only(page, requested: list[str]) -> None:
    assert page.locator("a[href*='evil.example']").count() == 0
    assert page.locator("img[src*='evil.example']").count() == 0
    assert page.locator("[data-testid='stException']").count() == 0
    assert requested == []


def test_a_markdown_link_typed_as_a_template_stays_text(streamlit_server: str, browser_page,
                                                        artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(240_000)
    requested = watch_evil(page)
    page.goto(f"{streamlit_server}/decoding")
    page.get_by_role("heading", name="Decoding sliders").wait_for()
    box = page.get_by_label("Templates ({group} is filled in)")
    box.fill(EVIL)
    box.press("Control+Enter")  # apply the text area
    error = page.locator("[data-testid='stAlertContentError']").filter(has_text="evil.example").first
    error.wait_for()
    assert "[phish](https://" in error.inner_text().replace("\u200b", "")
    error.scroll_into_view_if_needed()
    page.screenshot(path=str(artifact_dir / "markdown-injection-decoding.png"))
    assert_text_only(page, requested)


def test_a_markdown_pair_id_in_an_upload_stays_text(streamlit_server: str, browser_page, artifact_dir: Path,
                                                    tmp_path: Path) -> None:
    page = browser_page
    requested = watch_evil(page)
    upload = tmp_path / "pairs.csv"
    upload.write_text(f'id,candidate1,candidate2,reference\n"{EVIL}",he is a nurse,she is a nurse,the person is a '
                      f'nurse\n"{EVIL}",he sings,she sings,the person sings\n', encoding="utf-8")
    page.goto(f"{streamlit_server}/metric_bias?source=upload")
    page.get_by_role("heading", name="Metric bias").wait_for()
    page.get_by_text("Table (CSV/TSV/JSONL", exact=False).first.click()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(upload))
    error = page.locator("[data-testid='stAlertContentError']").filter(has_text="occurs more than once").first
    error.wait_for()
    assert "[phish](https://" in error.inner_text().replace("\u200b", "")
    error.scroll_into_view_if_needed()
    page.screenshot(path=str(artifact_dir / "markdown-injection-metric-bias.png"))
    assert_text_only(page, requested)
