"""Live decoding in a real browser: from a top-p slider move to the first new words, and to the measured result.

Serves the app as `make run` does (fresh run store, the app's start-up pre-warm on), opens the
decoding page in headless Chromium and moves the top-p slider with the keyboard, one 0.05 step at a
time, waiting for each setting's result before the next move. A MutationObserver in the page stamps
two moments after each move: the first card showing text being written ("writing…", streamed from
the sampler), and the result header of the new setting (generations scored, table computed). The
first visit is timed from opening the page to the default setting's header: with `--settle 0` (the default)
the page is opened as soon as the server is launched (the worst case: a visitor waits for torch, the model and
the scorers to load), with `--settle S` S seconds after the server answers (a server started before the class:
`ui.serve` has loaded them meanwhile). Nothing is compared with a baseline here: the targets are absolute.

With `--think S` the user reads each result S seconds before the next move: the server samples the next notches
meanwhile (`fairness_core.decoding.prefetch`); `--no-ahead` serves with that off, for the side-by-side figure.

    .venv/bin/python -m bench.decoding_live_browser [--moves 4] [--settle 0] [--think 0] [--notches 1] [--no-ahead]
        [--screenshots DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bench.served_app import CHROMIUM_ARGS, served_app

TARGET_SECONDS = 3.0
#: Records when "writing…" first shows and when a header with `window.__want` (e.g. "top_p=0.85 —") shows.
OBSERVER = """
window.__marks = {};
new MutationObserver(() => {
  const text = document.body.textContent;
  const now = performance.now();
  if (window.__want && !window.__marks.writing && text.includes('writing…')) window.__marks.writing = now;
  if (window.__want && !window.__marks.header && text.includes(window.__want)) window.__marks.header = now;
}).observe(document.body, {subtree: true, childList: true, characterData: true});
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=4)
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds between the server answering and the first visit (0: visit while it starts)")
    parser.add_argument("--screenshots", type=Path, default=None, help="folder for a mid-stream and a final shot")
    parser.add_argument("--think", type=float, default=0.0,
                        help="seconds a user reads each result before the next move (the server samples the next "
                             "notches meanwhile, unless --no-ahead)")
    parser.add_argument("--no-ahead", action="store_true", help="serve with sampling ahead off")
    parser.add_argument("--notches", type=int, default=1,
                        help="notches each move jumps (the key is pressed that often at once: one move)")
    args = parser.parse_args(argv)
    if round(0.9 - 0.05 * args.notches * args.moves, 2) < 0.05:
        parser.error(f"--moves {args.moves} of --notches {args.notches} go past the top-p slider's end (0.05)")
    if args.no_ahead:
        os.environ["FAIRNESS_LAB_SAMPLE_AHEAD"] = "0"  # the server inherits it
    from playwright.sync_api import sync_playwright

    with served_app(8600, "live.duckdb", wait=args.settle > 0) as base, sync_playwright() as playwright:
        time.sleep(args.settle)
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(300_000)
        first_visit = _first_visit(page, base)
        moves = []
        for step in range(args.moves):
            time.sleep(args.think)
            moves.append(_move(page, 0.9 - 0.05 * args.notches * (step + 1), args.screenshots, step == 0,
                               args.notches))
        browser.close()
    writing = [w for w, _ in moves]
    complete = [c for _, c in moves]
    when = f"{args.settle:g} s after the server answered" if args.settle else "while the server starts"
    print(f"first visit, opened {when} (page opened -> default setting's result): {first_visit:.1f} s; "
          f"load average {os.getloadavg()[0]:.2f}")
    print("moves, first words streamed: " + ", ".join(f"{w:.2f} s" for w in writing))
    print("moves, full measured result: " + ", ".join(f"{c:.2f} s" for c in complete))
    ahead = "off" if args.no_ahead else "on"
    print(f"median: first words {statistics.median(writing):.2f} s, full result {statistics.median(complete):.2f} s "
          f"(= {statistics.median(complete) / TARGET_SECONDS:.2f}x the {TARGET_SECONDS:.0f} s target); think "
          f"{args.think:g} s, {args.notches} notch(es) a move, sampling ahead {ahead}")


def _first_visit(page, base: str) -> float:
    started = time.monotonic()
    for _ in range(120):  # the server may still be starting
        try:
            page.goto(f"{base}/decoding")
            break
        except Exception:  # connection refused until streamlit listens
            time.sleep(0.5)
    page.get_by_text("top_p=0.9 —").wait_for()
    return time.monotonic() - started


def _move(page, value: float, screenshots: Path | None, shoot: bool, notches: int = 1) -> tuple[float, float]:
    """Press ArrowLeft `notches` times at once on the top-p slider (one value reaches the server when the keys are
    released); (seconds to the first streamed words, to the result)."""
    want = f"top_p={value:.2f}".rstrip("0").rstrip(".") + " —"
    page.evaluate(OBSERVER if not page.evaluate("!!window.__marks") else "window.__marks = {}")
    page.evaluate(f"window.__want = {want!r}")
    slider = page.locator("[data-testid='stSlider']").filter(has_text="top-p").get_by_role("slider")
    slider.focus()
    started = page.evaluate("performance.now()")
    for _ in range(notches):
        page.keyboard.press("ArrowLeft")
    if screenshots is not None and shoot:
        # a move sampled ahead shows its whole result at once: no cards being written to shoot
        page.wait_for_function("window.__marks.writing !== undefined || window.__marks.header !== undefined")
        if page.evaluate("window.__marks.header === undefined"):
            writing = page.get_by_text("writing…").first
            writing.evaluate("e => e.scrollIntoView({block: 'center'})")  # Streamlit scrolls inside its main block
            screenshots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshots / "decoding-live-streaming.png"))
    page.wait_for_function("window.__marks.header !== undefined")
    marks = page.evaluate("window.__marks")
    if screenshots is not None and shoot:
        page.wait_for_timeout(500)
        page.get_by_text(want).evaluate("e => e.scrollIntoView({block: 'start'})")
        screenshots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshots / "decoding-live-result.png"))
    page.evaluate("window.__want = null")
    writing = marks.get("writing", marks["header"])
    return (writing - started) / 1000, (marks["header"] - started) / 1000


if __name__ == "__main__":
    main()
