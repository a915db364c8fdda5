"""Serve the dashboard with the default generator loading from the moment the server starts.

`streamlit run app.py` runs none of the app until a visitor opens a page, so the first visit of the day waited for
torch, transformers, the generator, the offline scorers and the pages' own imports, one after the other (about
8 of the 10 s the decoding page's first result took on a warm machine). This launcher starts that work in a
background thread of the server process (the same process caches the pages read), then hands over to Streamlit's
own command line, so a visitor who arrives once it is done waits only for the page and the first generation.

    python -m ui.serve [streamlit run options]          (what `make run` does)

FAIRNESS_LAB_PREWARM=0 turns the start-up load off, as it does the app's own pre-warm on the first visit.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"
DEFAULT_GENERATOR = "smollm2-135m-instruct"


def prewarm_enabled(environ: Mapping[str, str] | None = None) -> bool:
    return (os.environ if environ is None else environ).get("FAIRNESS_LAB_PREWARM", "1") != "0"


#: What the first paint of the home page and the decoding page imports (pandas, altair, scipy.stats, the pages'
#: helpers: ~1.6 s here), imported before the server listens (issue 45 §2). Imported by the background warm-up
#: instead, they competed for the interpreter with the visitor's own script, and the decoding page's controls painted
#: 2.9 s after it was opened; imported here, the server answers ~1.6 s later and nothing the page draws waits for them.
FIRST_PAINT_MODULES = ("ui.common", "ui.presenter", "ui.decoding_view", "ui.decoding_inputs", "ui.jobs",
                       "ui.plan_view", "ui.slices_view", "ui.live_cards", "ui.report", "fairness_core.decoding")


#: Streamlit's cache decorators check their options against the runtime's cache storage when a module is imported;
#: imported before the server starts, each logged "No runtime found, using MemoryCacheStorageManager" (four lines on
#: every `make run`). Only that check meets no runtime: the caches themselves are made on first call, in the runtime.
CACHE_CHECK_LOG = "streamlit.runtime.caching.cache_data_api"


def import_first_paint_modules() -> None:
    import logging

    importlib.import_module(CACHE_CHECK_LOG)  # Streamlit sets its loggers' levels when their modules load: first
    check_log = logging.getLogger(CACHE_CHECK_LOG)
    level = check_log.level
    check_log.setLevel(logging.ERROR)
    try:
        for name in FIRST_PAINT_MODULES:
            importlib.import_module(name)
    finally:
        check_log.setLevel(level)


#: The interpreter's switch interval while the warm-up loads the generator (issue 45 §2; `warm_up_switch_s`). Python
#: hands the GIL to a waiting thread only after the holder has run this long (5 ms by default), and the loader is
#: CPU-bound: the server's event loop gives the GIL up at every socket read and write of a first visit (the frontend's
#: files, the websocket) and each time waited up to the interval to get it back (the convoy effect). Shorter while
#: loading, then restored.
DEFAULT_WARM_UP_SWITCH_S = 0.0005


def warm_up_switch_s(environ: Mapping[str, str] | None = None) -> float:
    """`FAIRNESS_LAB_WARM_UP_SWITCH_S` (seconds, for comparing values with `bench.first_paint`), else the default; a
    value that is not a positive number is said on stderr and the default used."""
    text = (os.environ if environ is None else environ).get("FAIRNESS_LAB_WARM_UP_SWITCH_S")
    if text is None:
        return DEFAULT_WARM_UP_SWITCH_S
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < 1:
        print(f"FAIRNESS_LAB_WARM_UP_SWITCH_S={text!r} is not a number of seconds between 0 and 1; using "
              f"{DEFAULT_WARM_UP_SWITCH_S}", file=sys.stderr)
        return DEFAULT_WARM_UP_SWITCH_S
    return value


def warm_up() -> None:
    """What a first visit would otherwise wait for: the generator and its scorers (`decoding.prewarm`, the very
    load the app starts on a first visit, so the two never load twice), the decoding page's own modules, and the
    load gauges' first probes (only a gauge's first reading is taken while its caller waits, ~0.5 s; later ones
    are taken in the background). The probes come after the load, so they read the machine, not the loading."""
    from fairness_core.decoding import prewarm
    from ui import common, decoding_view, jobs

    default_switch = sys.getswitchinterval()
    sys.setswitchinterval(min(default_switch, warm_up_switch_s()))  # read here: the app imports this module again
    try:
        prewarm(DEFAULT_GENERATOR).join()
    finally:
        sys.setswitchinterval(default_switch)
    # then the first visit's own rows (the page's default live request), which it then reads instead of waiting for
    # a first generation (~3 s on a warm server: its first sampler call builds the kernels for its shapes)
    with contextlib.suppress(Exception):  # a store or model problem is the page's to report, in its own sentence
        decoding_view.sample_default_ahead(DEFAULT_GENERATOR, common.store_for_server())
    jobs.LOAD.slowdown()
    jobs.SHARE_LOAD.slowdown()


def main(argv: list[str] | None = None) -> None:
    # Streamlit before the warm-up: importing it sets plotly's theme, and plotly uses numpy and pandas whenever it
    # finds them in sys.modules, where a module another thread is still importing sits half made (`AttributeError:
    # partially initialized module 'pandas' has no attribute 'Series'`: the server died at start in 3 of 10 launches).
    from streamlit.web import cli

    if prewarm_enabled():
        import_first_paint_modules()
        threading.Thread(target=warm_up, name="warm-up-at-start", daemon=True).start()

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
