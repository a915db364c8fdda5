"""The first visit of the day: when a page paints its controls, and when its default result is in.

Launches the app as `make run` does (`ui.serve`: the default generator loads from the server's start), with a fresh
store, and opens a page in headless Chromium the moment the server answers its health check (`--settle 0`, the
teacher's first click of the day) or S seconds later. A MutationObserver installed before the page's own scripts
stamps three moments (wall clock, so they line up with the server's launch):

- **shell**: Streamlit's own frame (the navigation) is drawn — the server answered and the app's script started;
- **paint**: the page's first real paint — its title and the control named by `--control` (decoding: the top-p
  slider) are on the screen, i.e. what the page is and what it will do;
- **result**: the default result's line (decoding: "top_p=0.9 —").

Times are given from the server answering its health check (the issue's reference: what a visitor can reach at
all) and from the launch. `--cold` first evicts the repository's virtual environment and model files from the file
cache (`vmtouch -e` or, without it, `os.posix_fadvise(DONTNEED)` on every file: no root needed), so imports read from
disk as on a first click after a reboot.

    .venv/bin/python -m bench.first_paint [--repeats 3] [--settle 0] [--cold] [--page decoding]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from bench.served_app import CHROMIUM_ARGS, REPO_ROOT, served_app, wait_healthy

#: page path -> (title, visible text of its first control, text of its default result)
PAGES = {
    "decoding": ("Decoding sliders", "top-p", "top_p=0.9 —"),
}

OBSERVER = """
window.__marks = {};
const want = %s;
const mark = (name) => { if (window.__marks[name] === undefined) window.__marks[name] = Date.now(); };
const look = () => {
  const text = document.body ? document.body.textContent : '';
  if (document.querySelector("[data-testid='stApp']")) mark('frontend');
  if (document.querySelector("[data-testid='stSidebarNav'], [data-testid='stSidebar']")) mark('shell');
  const title = [...document.querySelectorAll('h1')].some(h => h.textContent.includes(want.title));
  const control = [...document.querySelectorAll("[data-testid='stSlider'], [data-testid='stMultiSelect'], label")]
    .some(e => e.textContent.includes(want.control));
  if (title) mark('title');
  if (title && control) mark('paint');
  if (want.result && text.includes(want.result)) mark('result');
};
new MutationObserver(look).observe(document, {subtree: true, childList: true, characterData: true});
"""


def evict_file_cache(roots: list[Path]) -> int:
    """Drop the files under `roots` from the page cache (advice only; no root needed). Returns the files advised."""
    advised = 0
    for root in roots:
        for folder, _, files in os.walk(root):
            for name in files:
                path = os.path.join(folder, name)
                try:
                    descriptor = os.open(path, os.O_RDONLY)
                except OSError:
                    continue
                try:
                    os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
                    advised += 1
                except OSError:
                    pass
                finally:
                    os.close(descriptor)
    return advised


def visits(page_name: str, settle: float, cold: bool, timeout_s: float, count: int) -> list[dict[str, float]]:
    """Launch a server, then `count` visits one after the other (each a fresh browser session: the first is the
    first visit of the day, the others a server that has served a page)."""
    from playwright.sync_api import sync_playwright

    title, control, result = PAGES[page_name]
    if cold:
        caches = [REPO_ROOT / ".venv", Path.home() / ".cache" / "fairness-lab", Path.home() / ".cache" / "huggingface"]
        print(f"  evicted {evict_file_cache(caches)} files from the file cache", file=sys.stderr)
    want = {"title": title, "control": control, "result": result}
    found = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        launched = time.time()
        with served_app(8700, "paint.duckdb", wait=False) as base:
            wait_healthy(int(base.rsplit(":", 1)[1]), timeout_s=180, poll_s=0.05)  # when a visitor can connect
            answered = time.time()
            time.sleep(settle)
            for _ in range(count):
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                browser_page = context.new_page()
                browser_page.set_default_timeout(timeout_s * 1000)
                browser_page.add_init_script(OBSERVER % repr(want).replace("'", '"'))
                opened = time.time()
                browser_page.goto(f"{base}/{page_name}")
                browser_page.wait_for_function(
                    "window.__marks && window.__marks.result !== undefined && window.__marks.paint !== undefined")
                marks = browser_page.evaluate("window.__marks")
                context.close()
                out = {"health": answered - launched, "opened": opened - answered}
                for name in ("frontend", "shell", "title", "paint", "result"):
                    out[name] = marks[name] / 1000 - opened if name in marks else float("nan")
                found.append(out)
        browser.close()
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds between the health check answering and the visit (0: at once)")
    parser.add_argument("--cold", action="store_true", help="evict the venv and model files from the file cache first")
    parser.add_argument("--page", choices=sorted(PAGES), default="decoding")
    parser.add_argument("--visits", type=int, default=1,
                        help="visits per server, one after the other (the later ones: a server that served a page)")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args(argv)
    found: list[dict[str, float]] = []
    later: list[dict[str, float]] = []
    for _ in range(args.repeats):
        for index, visit in enumerate(visits(args.page, args.settle, args.cold, args.timeout, args.visits)):
            which = "first visit" if index == 0 else f"visit {index + 1} to the same server"
            (found if index == 0 else later).append(visit)
            print(f"{which}: server answered {visit['health']:.1f} s after launch; page opened "
                  f"{visit['opened']:.1f} s later; frontend {visit['frontend']:.2f} s, shell {visit['shell']:.2f} s, "
                  f"title {visit['title']:.2f} s, first paint {visit['paint']:.2f} s, result {visit['result']:.2f} s "
                  f"after opening; load average {os.getloadavg()[0]:.2f}", flush=True)
    for label, group in (("first visits", found), ("later visits", later)):
        if not group:
            continue
        med = {key: statistics.median(v[key] for v in group) for key in ("health", "shell", "paint", "result")}
        print(f"median of {len(group)} {label} ({'cold' if args.cold else 'warm'} file cache, settle "
              f"{args.settle:g} s, page {args.page}): server answered {med['health']:.1f} s after launch; first "
              f"paint {med['paint']:.2f} s, default result {med['result']:.2f} s after the page was opened")


if __name__ == "__main__":
    main()
