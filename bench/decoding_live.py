"""Live decoding: seconds from a slider move to new generations on the page, through Streamlit's AppTest.

Drives app_pages/decoding.py with its defaults (SmolLM2-135M-Instruct, regard templates, one prompt per
group and one sample: 11 rows in one sampler call, 15 new tokens) against a fresh run store, so every
move really generates. Reports the first visit (model load — and on a fresh machine the one-time GGUF
conversion — plus the first generation) and each top-p move, with the median move as a ratio of the
3-second target.

    .venv/bin/python -m bench.decoding_live [--moves 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 3.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=4, help="top-p slider moves to time")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from streamlit.testing.v1 import AppTest

    page = str(Path(__file__).resolve().parents[1] / "app_pages" / "decoding.py")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FAIRNESS_LAB_STORE"] = str(Path(tmp) / "live.duckdb")
        app = AppTest.from_file(page, default_timeout=300)
        app.session_state["dec_regard"] = ""  # no regard model offline; the probe is cached in the page anyway
        started = time.perf_counter()
        app.run()
        first = time.perf_counter() - started
        if app.exception:
            raise SystemExit(f"the page failed: {app.exception[0].message}")
        moves = []
        for value in [0.85, 0.8, 0.75, 0.7, 0.65, 0.6][: args.moves]:
            started = time.perf_counter()
            app.slider(key="live_top_p").set_value(value).run()
            moves.append(time.perf_counter() - started)
            shown = " ".join(str(m.value) for m in app.markdown)
            assert f"top\\_p={value:g}".replace(".", "\\.") in shown and "generated now" in shown, "no new generations"
        replay_started = time.perf_counter()
        app.slider(key="live_top_p").set_value(0.85).run()  # a setting seen before: read back from the store
        replay = time.perf_counter() - replay_started
    median = statistics.median(moves)
    print(f"first visit (load + first generation): {first:.1f} s; load average {os.getloadavg()[0]:.2f}")
    print("slider moves (new generations): " + ", ".join(f"{m:.2f} s" for m in moves))
    print(f"median move {median:.2f} s = {median / TARGET_SECONDS:.2f}x the {TARGET_SECONDS:.0f} s target; "
          f"a setting seen before {replay:.2f} s")


if __name__ == "__main__":
    main()
