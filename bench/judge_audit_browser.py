"""The Judge audit page in a real browser, beside the home page in the same server: first paint with the Jigsaw
classifier loaded, and the default audit from click to chart.

Serves the app as `make run` does (fresh run store), opens the home page (the baseline: no model), then the Judge
audit page in a fresh tab (its script loads the Jigsaw classifier to check the judge before showing the design
caption "43 templates …"), then clicks "Audit the judge" and waits for the chart's headline. Prints seconds and the
ratio to the home page's first paint.

    .venv/bin/python -m bench.judge_audit_browser [--screenshot FILE]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench.served_app import CHROMIUM_ARGS, served_app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screenshot", type=Path, default=None)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with served_app(8300, "bench.duckdb") as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        started = time.perf_counter()
        page.goto(f"{base}/", wait_until="commit")
        page.get_by_text("What each page answers", exact=False).first.wait_for(timeout=180_000)
        home = time.perf_counter() - started

        audit = browser.new_page(viewport={"width": 1400, "height": 1100})
        started = time.perf_counter()
        audit.goto(f"{base}/judge_audit", wait_until="commit")
        audit.get_by_text("43 templates (20 toxic", exact=False).first.wait_for(timeout=180_000)
        first_paint = time.perf_counter() - started
        started = time.perf_counter()
        audit.get_by_role("button", name="Audit the judge").click()
        audit.get_by_text("Largest shift:", exact=False).first.wait_for(timeout=300_000)
        audited = time.perf_counter() - started
        if args.screenshot:
            audit.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
            audit.wait_for_timeout(1500)
            audit.screenshot(path=str(args.screenshot), full_page=True)
        browser.close()
    print(f"home page first paint (baseline, no model):          {home:6.2f} s")
    print(f"Judge audit first paint (Jigsaw classifier loaded): {first_paint:6.2f} s  ({first_paint / home:.1f}x home)")
    print(f"default audit, click to chart (2,150 texts, 1,000 resamples): {audited:6.2f} s")


if __name__ == "__main__":
    main()
