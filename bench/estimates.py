"""Sweep time estimates against the real time, on this machine as it is and under a background load we add.

Issue 23: the decoding sweep's estimate said "about 50 s" and the sweep took 583 s because another job shared
the 2 cores. Estimates now scale the documented cost (or a rate measured here) by the machine's slowdown,
probed at the moment (`fairness_core.jobs.load`), and a running sweep's figure is revised from its progress.
This bench runs a small sweep through the decoding page's own code path — the caption's figure
(`ui.decoding_view.sweep_estimate`), the job (`ui.jobs.start` with the page's units and documented cost, the
work `fairness_core.decoding.run_decoding`) and the progress line (`BackgroundJob.describe`, what the page's
progress bar shows every second) — first as the machine is, then with `--busy` processes spinning on the CPU,
each time in a fresh store, and prints the first shown figure, the revised ones and the real time.

The within-2x check lives here, not in a test: the project never puts timing assertions in tests.

    .venv/bin/python -m bench.estimates [--busy 2] [--configs top_p=0.5,0.9] [--samples 2] [--max-new-tokens 20]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPIN = "while True:\n    pass\n"


def _sweep(args: argparse.Namespace, seed: int, condition: str) -> dict:
    """One sweep as the page runs it: (the first shown estimate, revised figures, real seconds)."""
    from fairness_core import decoding as dec
    from fairness_core.jobs import get_executor
    from fairness_core.store import RunStore
    from ui import jobs
    from ui.decoding_view import sweep_estimate, sweep_estimate_s, sweep_units

    templates, families = dec.default_templates()
    prompts = dec.regard_prompts(templates[: args.templates], families)
    store = RunStore(Path(tempfile.mkdtemp(prefix="bench-estimates-")) / "runs.duckdb")
    request = dec.build_request("smollm2-135m-instruct", prompts, args.grid, samples=args.samples,
                                max_new_tokens=args.max_new_tokens, seed=seed)
    plan = dec.plan_decoding(request, store)
    generations = plan.plan.n_to_generate
    slowdown = jobs.machine_slowdown()
    shown = sweep_estimate(generations, args.max_new_tokens)  # the caption next to "Run sweep"
    first_s = sweep_estimate_s(generations, args.max_new_tokens)  # the figure in that caption
    key = jobs.key_for("sweep", {"request": plan.manifest(), "store": str(store.path), "bench": condition})
    executor = get_executor("local")
    started = time.monotonic()
    job = jobs.start(key, lambda on_progress, cancel: dec.run_decoding(plan, store, on_progress, cancel,
                                                                       executor=executor),
                     label="Sweep", units=sweep_units(generations, args.max_new_tokens),
                     seconds_per_unit=dec.LIMITS.sweep_seconds_per_token)
    lines: list[tuple[float, str]] = []
    while not job.ended.wait(args.every):
        lines.append((time.monotonic() - started, job.describe()[1]))
        if time.monotonic() - started > args.max_seconds:
            job.cancel.cancel()  # keep the bench short: the real time is then at least this
    real_s = time.monotonic() - started
    if job.cancel.cancelled:
        print(f"  [{condition}] cancelled after {real_s:.0f} s (--max-seconds): the real time is longer", flush=True)
    if job.error is not None:
        raise job.error
    print(f"  [{condition}] load average {os.getloadavg()[0]:.1f}, slowdown probed {slowdown:.1f}x; "
          f"{generations} generations x {args.max_new_tokens} tokens", flush=True)
    print(f"  [{condition}] caption before Run: {shown}", flush=True)
    for at, line in lines[:: max(1, len(lines) // 6)]:
        print(f"  [{condition}]   {at:6.1f} s: {line}", flush=True)
    ratio = first_s / real_s
    print(f"  [{condition}] first shown {first_s:.1f} s, real {real_s:.1f} s: ratio {ratio:.2f} "
          f"({'within' if 0.5 <= ratio <= 2 else 'OUTSIDE'} 2x)", flush=True)
    return {"first_s": first_s, "real_s": real_s, "ratio": ratio, "slowdown": slowdown,
            "units": sweep_units(generations, args.max_new_tokens)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=2, help="busy processes for the loaded run (2 cores here)")
    parser.add_argument("--grid", default="top_p=0.5,0.9")
    parser.add_argument("--templates", type=int, default=1, help="regard templates (11 groups each)")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=20)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between reads of the progress line")
    parser.add_argument("--max-seconds", type=float, default=240, help="cancel a sweep that runs longer")
    args = parser.parse_args(argv)

    from fairness_core.jobs.load import LoadGauge
    from fairness_core.models import load_preset
    from ui import jobs

    load_preset("smollm2-135m-instruct")  # the page's live tab has loaded it before anyone runs a sweep
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} before the bench", flush=True)

    jobs.LOAD = LoadGauge()  # probe now, as a fresh server would
    jobs._RATES.clear()
    as_is = _sweep(args, seed=1, condition="as is")

    busy = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
    try:
        time.sleep(2)
        jobs.LOAD = LoadGauge()  # the gauge of a page opened now (a running server's is at most 20 s old)
        measured = jobs._RATES.copy()
        jobs._RATES.clear()  # first, as a fresh server: the documented cost, scaled
        loaded = _sweep(args, seed=2, condition=f"+{args.busy} busy")
        jobs._RATES.clear()
        jobs._RATES.update(measured)  # and what the page says after one sweep measured here without the load
        rescaled = jobs.estimate_s("sweep", loaded["units"])
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(f"summary: as is {as_is['first_s']:.1f} s shown / {as_is['real_s']:.1f} s real ({as_is['ratio']:.2f}); "
          f"+{args.busy} busy {loaded['first_s']:.1f} s shown / {loaded['real_s']:.1f} s real ({loaded['ratio']:.2f})"
          + (f"; from the as-is sweep's measured rate, rescaled to the load: {rescaled:.1f} s "
             f"({rescaled / loaded['real_s']:.2f})" if rescaled else ""), flush=True)


if __name__ == "__main__":
    main()
