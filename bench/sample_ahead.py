"""A live slider move with and without the settings next to the last move sampled ahead, side by side.

Drives app_pages/decoding.py through Streamlit's AppTest with its defaults (SmolLM2-135M-Instruct, one prompt per
group, one sample: 11 rows, 15 new tokens) against a fresh run store. A user reads each result before the next move
(`--think` seconds, 3 by default); the moves go down the top-p slider one notch at a time (0.85, 0.8, …), the way a
slider is dragged, and alternate between the two conditions:

* ahead: the move before it left sampling ahead on (`FAIRNESS_LAB_SAMPLE_AHEAD=1`), so its notch was sampled while
  the user read;
* plain: the move before it had it off, and the rows kept from earlier moves' sampling ahead (which reaches every
  notch) are dropped first: the move samples its rows itself, as every move did before.

Prints every move, the medians, their ratio and the load average:

    .venv/bin/python -m bench.sample_ahead [--pairs 4] [--think 3] [--jump 1]
    .venv/bin/python -m bench.sample_ahead --pairs 2 --jump 4 --think 12   # a jump of four notches
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

ENV = "FAIRNESS_LAB_SAMPLE_AHEAD"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4, help="(ahead, plain) move pairs to time")
    parser.add_argument("--think", type=float, default=3.0, help="seconds a user reads a result before moving")
    parser.add_argument("--jump", type=int, default=1,
                        help="notches per move (issue 45 §3: a jump of several notches; give the sampler --think "
                             "seconds to reach it, ~1.2 s of both cores per notch along the slider)")
    args = parser.parse_args(argv)
    if args.jump < 1 or 0.9 - 0.05 * args.jump * 2 * args.pairs < 0.05 - 1e-9:
        raise SystemExit(f"--jump {args.jump} × {2 * args.pairs} moves runs off the top-p slider (0.9 down to 0.05): "
                         "fewer --pairs or a smaller --jump")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("FAIRNESS_LAB_PREWARM", "0")
    from streamlit.testing.v1 import AppTest

    from ui.decoding_view import AHEAD

    page = str(Path(__file__).resolve().parents[1] / "app_pages" / "decoding.py")
    values = [round(0.9 - 0.05 * args.jump * (i + 1), 2) for i in range(2 * args.pairs)]
    conditions = ["ahead" if i % 2 == 0 else "plain" for i in range(len(values))]
    times: dict[str, list[float]] = {"ahead": [], "plain": []}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FAIRNESS_LAB_STORE"] = str(Path(tmp) / "live.duckdb")
        app = AppTest.from_file(page, default_timeout=300)
        app.session_state["dec_regard"] = ""  # no regard model offline; the probe is cached in the page anyway
        os.environ[ENV] = "1" if conditions[0] == "ahead" else "0"  # this run decides about the first move
        app.run()
        if app.exception:
            raise SystemExit(f"the page failed: {app.exception[0].message}")
        for index, (value, condition) in enumerate(zip(values, conditions, strict=True)):
            time.sleep(args.think)  # the user reads; sampling ahead (if on) runs now
            AHEAD.finished.wait(timeout=0)  # nothing waited for: a move that comes too early is simply slower
            if condition == "plain":  # earlier moves' further notches reach this one: drop what they kept
                AHEAD.make_way()
                _generator().rows.clear()
            following = conditions[index + 1] if index + 1 < len(conditions) else "plain"
            os.environ[ENV] = "1" if following == "ahead" else "0"  # what this move leaves for the next one
            started = time.perf_counter()
            app.slider(key="live_top_p").set_value(value).run()
            seconds = time.perf_counter() - started
            shown = " ".join(str(m.value) for m in app.markdown)
            if app.exception or "generated now" not in shown:
                raise SystemExit(f"move to top-p {value}: no new generations")
            if condition == "plain" and "sampled ahead" in shown:
                raise SystemExit(f"move to top-p {value}: the plain move was answered from rows sampled ahead")
            times[condition].append(seconds)
            print(f"top-p {value:.2f} ({condition}): {seconds:.2f} s  (load {os.getloadavg()[0]:.2f})", flush=True)
    ahead, plain = statistics.median(times["ahead"]), statistics.median(times["plain"])
    print(f"median move of {args.jump} notch(es): ahead {ahead:.2f} s, plain {plain:.2f} s = "
          f"{plain / ahead:.2f}x faster with sampling ahead (think {args.think:g} s; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)")


def _generator():
    """The page's default generator, as this process has it loaded (its record of rows sampled ahead)."""
    from fairness_core.models import load_model, resolve_model

    return load_model(resolve_model("smollm2-135m-instruct", "causal-lm"))


if __name__ == "__main__":
    main()
