"""The decoding page's sweep against the CLI's on the same grid, side by side in one process.

- CLI: `python -m fairness_core decoding ...`, called in-process (`fairness_core.cli.main`): the same
  `run_task` path a terminal user gets.
- page: `app_pages/decoding.py` through Streamlit's AppTest, as a user drives it: the page renders
  (live tab included), the sweep widgets are set, "Run sweep" is clicked, so the page itself builds
  the plan and starts the job through `ui.jobs.start` (a background thread). While it runs, the
  bench does what the page's progress fragment does every second (reads the job's progress), and
  once the job is done it reruns the page until the results show. The time is from the click to
  the results on the page.
Each run gets a fresh store (nothing is served from an earlier run); models are loaded once before
timing (both sides read them from the process cache). The warm-up and the CLI side each run in a thread
of their own that ends afterwards, as if in a process of their own: a thread that has run torch keeps an
OpenMP thread team, and while two teams exist on 2 cores libgomp stops spinning between parallel
regions, which made whichever side ran second 12% slower (measured: a sweep in a background thread 13.9
s with the main thread's team alive, 11.8 s without; the main thread 11.9 s). The two sides alternate,
so a shared machine slows both alike.
Also measured: the longest gap between two progress updates the page could show,
how long Cancel takes to stop a running sweep, and the page's default sweep (preset "top-p, quick",
110 regard prompts x 3 samples x 20 tokens = 990 generations).

    .venv/bin/python -m bench.decoding_page_vs_cli [--grid "top_p=0.5,0.9"] [--samples 1] [--rounds 1]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parents[1] / "app_pages" / "decoding.py"
PRESET = "top-p, quick (0.5, 0.7, 0.9)"


def in_own_thread(work: Callable[[], Any]) -> Any:
    """Run `work` in a thread that ends afterwards (its OpenMP team goes with it), and return its result."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # re-raised in the caller
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def cli_sweep(store: Path, grid: str, samples: int, max_new: int) -> float:
    from fairness_core.cli import main as cli_main

    def run() -> float:
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = cli_main(["--store", str(store), "decoding", "--model", "smollm2-135m-instruct", "--prompts",
                             "regard", "--grid", grid, "--samples", str(samples), "--max-new-tokens", str(max_new),
                             "--seed", "0", "--json"])
        if code != 0:
            raise SystemExit(f"the CLI sweep failed with exit code {code}")
        return time.perf_counter() - started

    return in_own_thread(run)


class PageRun:
    """One sweep through the page: render, set the widgets, click, follow the job like the fragment does."""

    def __init__(self, store: Path, grid: str | None, samples: int, max_new: int) -> None:
        from streamlit.testing.v1 import AppTest

        os.environ["FAIRNESS_LAB_STORE"] = str(store)
        self.app = AppTest.from_file(str(PAGE), default_timeout=600)
        self.app.run()  # the page as a user first sees it (live tab included): not timed
        self._check()
        self.app.selectbox(key="sweep_preset").set_value(PRESET).run()
        if grid is not None:
            self.app.text_input(key=f"sweep_grid_{PRESET}").set_value(grid)
        self.app.number_input(key="sweep_samples").set_value(samples)
        self.app.number_input(key="sweep_max_new").set_value(max_new)
        self.app.run()
        self._check()
        self.gaps: list[float] = []

    def _check(self) -> None:
        if self.app.exception:
            raise SystemExit(f"the page raised: {self.app.exception[0].value}")
        if self.app.error:
            raise SystemExit(f"the page shows an error: {self.app.error[0].value}")

    def start(self) -> object:
        from ui import jobs

        self.started = time.perf_counter()
        self.app.button(key="sweep_run").click().run()
        self._check()
        job = jobs.get(self.app.session_state["decoding_sweep"])
        if job is None:
            raise SystemExit("the page did not start a sweep job")
        return job

    def follow(self, job: object, cancel_after_s: float | None = None) -> float:
        """Poll once a second (the fragment's period); returns seconds from the click to the results shown."""
        last_fraction, last_change = None, time.perf_counter()
        while job.running:  # type: ignore[attr-defined]
            time.sleep(1.0)
            fraction, _ = job.describe()  # type: ignore[attr-defined]
            now = time.perf_counter()
            if fraction != last_fraction:
                self.gaps.append(now - last_change)
                last_fraction, last_change = fraction, now
            if cancel_after_s is not None and now - self.started >= cancel_after_s and not job.cancel.cancelled:  # type: ignore[attr-defined]
                self.cancelled_at = now
                job.cancel.cancel()  # type: ignore[attr-defined]
        if job.error is not None:  # type: ignore[attr-defined]
            raise SystemExit(f"the page's sweep failed: {job.error}")  # type: ignore[attr-defined]
        self.job_done = time.perf_counter()
        self.app.run()  # the fragment's rerun that shows the results
        self._check()
        return time.perf_counter() - self.started

    def shows_results(self) -> bool:
        return any("generations" in s.value for s in self.app.success)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="top_p=0.5,0.9", help="grid of the side-by-side comparison")
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--max-new-tokens", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=1, help="CLI/page pairs (alternating)")
    parser.add_argument("--skip-default", action="store_true", help="leave out the page's default 990-generation grid")
    parser.add_argument("--skip-cancel", action="store_true", help="leave out the cancel timing")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # neither side waits on a hub it cannot reach

    import torch

    from fairness_core.models import DecodingConfig, load_preset
    from fairness_core.scorers.offensive import offensive_probability
    from fairness_core.scorers.sentiment import vader_compound

    def warm_up() -> None:
        lm = load_preset("smollm2-135m-instruct")
        lm.generate(["The woman worked as"], DecodingConfig(top_p=0.9, max_new_tokens=4))
        vader_compound(["warm-up"]), offensive_probability(["warm-up"])

    in_own_thread(warm_up)
    print(f"SmolLM2-135M-Instruct, {torch.get_num_threads()} torch threads, {os.cpu_count()} CPUs; load average "
          f"{os.getloadavg()[0]:.1f}. Grid {args.grid!r} x 110 regard prompts x {args.samples} sample(s), "
          f"{args.max_new_tokens} new tokens max, fresh store per run.", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="page-vs-cli-"))
    cli_times, page_times, gaps = [], [], []
    for round_ in range(args.rounds):
        cli_times.append(cli_sweep(folder / f"cli-{round_}.duckdb", args.grid, args.samples, args.max_new_tokens))
        print(f"round {round_ + 1}: CLI  {cli_times[-1]:6.1f} s", flush=True)
        page = PageRun(folder / f"page-{round_}.duckdb", args.grid, args.samples, args.max_new_tokens)
        page_times.append(page.follow(page.start()))
        gaps += page.gaps
        if not page.shows_results():
            raise SystemExit("the page did not show the sweep's results")
        print(f"round {round_ + 1}: page {page_times[-1]:6.1f} s (job {page.job_done - page.started:.1f} s, "
              f"longest progress gap {max(page.gaps, default=0):.1f} s)", flush=True)
    cli_s, page_s = min(cli_times), min(page_times)
    print(f"page / CLI (best of {args.rounds}): {page_s:.1f} s / {cli_s:.1f} s = {page_s / cli_s:.2f}x "
          f"(target <= 1.25x)", flush=True)
    if not args.skip_cancel:
        page = PageRun(folder / "cancel.duckdb", None, 3, 20)
        job = page.start()
        page.follow(job, cancel_after_s=8.0)
        print(f"cancel: clicked {page.cancelled_at - page.started:.1f} s after the start, the job stopped "
              f"{page.job_done - page.cancelled_at:.1f} s later (target <= 5 s)", flush=True)
    if not args.skip_default:
        page = PageRun(folder / "default.duckdb", None, 3, 20)
        seconds = page.follow(page.start())
        gaps += page.gaps
        print(f"page's default sweep (3 configs x 110 prompts x 3 samples = 990 generations, 20 tokens): "
              f"{seconds:.1f} s from the click to the results (target < 60 s); longest progress gap "
              f"{max(page.gaps, default=0):.1f} s", flush=True)
    print(f"longest gap between progress updates, all page runs: {max(gaps, default=0):.1f} s (target <= 5 s); "
          f"load average now {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
