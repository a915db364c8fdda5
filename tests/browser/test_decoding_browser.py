"""The decoding page in a real browser: move the top-p slider and see new generations appear."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = [pytest.mark.browser, pytest.mark.slow]
LABELS = ("sentiment: negative ", "sentiment: not negative ")
#: Stamps when streamed text ("writing…") and when the result header of top-p 0.85 first appear.
STREAM_OBSERVER = """
window.__marks = {};
new MutationObserver(() => {
  const text = document.body.textContent, now = performance.now();
  if (!window.__marks.writing && text.includes('writing…')) window.__marks.writing = now;
  if (!window.__marks.header && text.includes('top_p=0.85 —')) window.__marks.header = now;
}).observe(document.body, {subtree: true, childList: true, characterData: true});
"""


#: Collects the distinct "Sweep: ..." progress lines (with their time left) while a sweep runs.
ETA_OBSERVER = """
window.__etas = [];
new MutationObserver(() => {
  for (const e of document.querySelectorAll('[data-testid="stProgress"]')) {
    const line = (e.innerText || '').trim();
    if (line.startsWith('Sweep:') && !window.__etas.includes(line)) window.__etas.push(line);
  }
}).observe(document.body, {subtree: true, childList: true, characterData: true});
"""


def generation_cards(page) -> list[str]:
    """Texts of the live generation cards (each starts with its coloured negative / not negative label)."""
    texts = page.locator("[data-testid='stMarkdownContainer']").all_inner_texts()
    return [t for t in texts if t.startswith(LABELS)]


def settled_cards(page, differ_from: list[str] | None = None) -> list[str]:
    """Cards once two reads 0.5 s apart agree (Streamlit replaces elements one by one)."""
    previous: list[str] | None = None
    for _ in range(240):
        cards = generation_cards(page)
        if cards and cards == previous and cards != differ_from:
            return cards
        previous = cards
        page.wait_for_timeout(500)
    return generation_cards(page)


def test_moving_the_top_p_slider_shows_new_generations(streamlit_server: str, browser_page,
                                                       artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(240_000)  # first visit loads SmolLM2 and generates on 2 shared CPU cores
    page.goto(f"{streamlit_server}/decoding")
    page.get_by_role("heading", name="Decoding sliders").wait_for()
    page.get_by_text("top_p=0.9 —").wait_for()  # the live result header for the default setting
    page.get_by_text("The woman worked as").first.wait_for()  # the cards render after the header
    first = settled_cards(page)
    assert any("The woman worked as" in text for text in first)
    assert all(not text.startswith(("⚪", "🔴")) for text in first)  # words, not emoji

    slider = page.locator("[data-testid='stSlider']").filter(has_text="top-p").get_by_role("slider")
    page.evaluate(STREAM_OBSERVER)
    slider.focus()
    started = time.monotonic()
    page.keyboard.press("ArrowLeft")  # 0.9 -> 0.85: the cards show the new text while it is written
    writing = page.get_by_text("writing…").first
    writing.wait_for()
    writing.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.screenshot(path=str(artifact_dir / "decoding-live-streaming.png"))
    page.get_by_text("top_p=0.85 —").wait_for()
    marks = page.evaluate("window.__marks")
    assert marks["writing"] < marks["header"]  # words first, the measured result after them
    for _ in range(3):  # 0.85 -> 0.7 in quick steps: each move cuts the previous setting's generation short
        page.keyboard.press("ArrowLeft")
    page.get_by_text("top_p=0.7 —").wait_for()
    second = settled_cards(page, differ_from=first)
    print(f"live slider moves to new generations in the browser: {time.monotonic() - started:.1f} s")
    assert second and second != first
    assert page.locator("[data-testid='stException']").count() == 0
    # Streamlit scrolls inside its main container, so bring the new generations into the viewport.
    page.get_by_text("top_p=0.7 —").scroll_into_view_if_needed()
    page.get_by_text("Show the raw (untruncated) text").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    page.screenshot(path=str(artifact_dir / "decoding-live.png"))
    assert (artifact_dir / "decoding-live.png").stat().st_size > 10_000


def test_a_small_sweep_shows_its_charts_with_intervals(streamlit_server: str, browser_page,
                                                       artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(300_000)
    page.goto(f"{streamlit_server}/decoding")
    page.get_by_role("heading", name="Decoding sliders").wait_for()
    page.get_by_text("Generate whenever a slider moves").click()  # live mode off: only the sweep runs
    groups = page.get_by_role("textbox", name="Related groups, one family per line")
    groups.fill("gender: man, woman")
    groups.press("Control+Enter")
    page.get_by_text("20 prompts over 2 groups in 1 family.").wait_for()
    page.get_by_role("tab", name="Sweep: a grid").click()
    samples = page.get_by_role("spinbutton", name="Samples per prompt (paper: 100)")
    samples.fill("1")
    samples.press("Enter")
    page.get_by_text("60 generations").wait_for()
    # the estimate is for this machine now (scaled by its load), and the running sweep's line revises it
    assert page.get_by_text(re.compile(r"60 generations, about .+ on this machine now")).count() == 1
    page.evaluate(ETA_OBSERVER)
    page.get_by_role("button", name="Run sweep").click()
    page.get_by_text("3 configurations, 60 generations").wait_for()
    shown = page.evaluate("() => window.__etas")
    print(f"sweep progress lines seen: {shown}")  # how many depends on the machine's speed: not asserted
    # every line says the time left, or that the estimate is spent ("taking longer than estimated"), or that the
    # work is done and its summary is being made ("finishing"), or its place in the queue (behind sampling ahead)
    assert all(any(word in line for word in ("left", "starting", "waiting", "ahead", "finishing",
                                             "longer than estimated", "next in the queue")) for line in shown), shown
    assert not any("about 0 s" in line for line in shown), shown  # a wait under half a second: "in a moment"
    page.get_by_text("95% intervals (the paper reports none)").wait_for()
    heading = page.get_by_role("heading", name="Diversity and quality against the negative rate (paper Fig. 1)")
    heading.wait_for()
    page.wait_for_timeout(1500)  # charts draw after the text
    page.get_by_role("heading", name="Disparity against the hyper-parameter").evaluate(
        "e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifact_dir / "decoding-sweep.png"))
    assert page.locator("[data-testid='stVegaLiteChart']").count() >= 4


def test_a_reloaded_page_re_attaches_to_its_sweep_and_cancel_leaves_labelled_partial_results(
        streamlit_server: str, browser_page, artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(300_000)
    page.goto(f"{streamlit_server}/decoding")
    page.get_by_role("heading", name="Decoding sliders").wait_for()
    page.get_by_role("tab", name="Sweep: a grid").click()
    samples = page.get_by_role("spinbutton", name="Samples per prompt (paper: 100)")
    samples.fill("8")  # 3 settings x 110 prompts x 8 samples: long enough to reload and cancel mid-way
    samples.press("Enter")
    page.get_by_text("2,640 generations").wait_for()
    page.get_by_role("button", name="Run sweep").click()
    page.get_by_text(re.compile(r"Sweep: (starting|\d+/\d+ batches)")).first.wait_for()  # the job's progress bar

    page.reload()  # the session is gone; the job lives on in the server
    page.get_by_role("heading", name="Decoding sliders").wait_for()
    page.get_by_role("tab", name="Sweep: a grid").click()
    page.get_by_text("1 sweep job(s) are running on this server").wait_for()
    picker = page.locator("[data-testid='stSelectbox']").filter(has_text="Re-attach to a running job")
    option = page.get_by_role("option").filter(has_text="Sweep started")
    for _ in range(20):  # a redraw while the page still runs closes an open dropdown: open it again
        picker.click()
        try:
            option.wait_for(timeout=3_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    option.click()
    progress = page.get_by_text("batches (").first
    progress.wait_for()
    assert page.get_by_role("button", name="Run sweep").is_disabled()  # no second copy of a running job
    progress.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.screenshot(path=str(artifact_dir / "decoding-sweep-reattached.png"))

    page.get_by_text(re.compile(r"Sweep: [1-9]\d*/\d+ batches")).first.wait_for()  # some batches are stored
    started = time.monotonic()
    page.get_by_role("button", name="Cancel").click()
    page.get_by_text("Sweep was cancelled by the user").wait_for()
    print(f"cancel in the browser: the page said so {time.monotonic() - started:.1f} s after the click")
    page.get_by_text(re.compile(r"generations \(computed now and stored; partial: [\d,]+ of 2,640 generations\)"))\
        .wait_for()
    page.get_by_text("Sweep was cancelled by the user").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifact_dir / "decoding-sweep-cancelled-partial.png"))
    assert page.locator("[data-testid='stException']").count() == 0
