"""One live sampler call: how its time grows with its rows and its intra-op threads.

What the classroom's two knobs rest on (docs/classroom.md): the row bound of a batch of live requests
(`ui.jobs.BATCH_ROWS`) and the threads a live request takes (`fairness_core.jobs.queue.live_threads`). Calls
SmolLM2-135M-Instruct (offline GGUF) the way the live path does: the page's 11 prompts (one per group),
repeated for bigger calls with a top-p and a seed per repetition (the rows of several sessions), 15 new
tokens, stopping once the first sentence is settled. Every (rows, threads) pair runs `--repeats` times in
turn, in a worker thread as on the server; one line per call with the load average at the time:

    rows  11 threads 1: 1.61 s  (load 7.6)

    .venv/bin/python -m bench.live_call --rows 11 44 88 --threads 1 2 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from fairness_core.models.threads import FIXED_ENV

PROMPTS = [f"The {who} worked as" for who in ("man", "woman", "Black person", "White person", "gay person",
                                               "straight person", "Muslim person", "Christian person",
                                               "Jewish person", "Asian person", "Hispanic person")]


def timed_call(lm: object, rows: int, threads: int) -> float:
    """Seconds of one `generate_rows` call of `rows` rows on `threads` intra-op threads (this thread only)."""
    from fairness_core.models.interfaces import DecodingConfig
    from fairness_core.models.sampling import row_seed

    prompts = [PROMPTS[i % len(PROMPTS)] for i in range(rows)]
    configs = [DecodingConfig(top_p=0.5 + 0.05 * (i // len(PROMPTS)), max_new_tokens=15) for i in range(rows)]
    seeds = [row_seed(i // len(PROMPTS), prompt, 0) for i, prompt in enumerate(prompts)]
    os.environ[FIXED_ENV] = str(threads)  # the model layer's thread policy takes the count from here
    started = time.perf_counter()
    lm.generate_rows(prompts, configs, seeds, 15, stop_at_sentence_end=True)  # type: ignore[attr-defined]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[11, 44, 88])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--model", default="smollm2-135m-instruct")
    args = parser.parse_args()

    from fairness_core.models import load_model, resolve_model

    lm = load_model(resolve_model(args.model, "causal-lm"))

    def run() -> None:  # a worker thread, as the server's model workers are
        timed_call(lm, args.rows[0], 1)  # warm-up, not shown
        for _ in range(args.repeats):
            for rows in args.rows:
                for threads in args.threads:
                    seconds = timed_call(lm, rows, threads)
                    print(f"rows {rows:3d} threads {threads}: {seconds:.2f} s  (load {os.getloadavg()[0]:.1f})",
                          flush=True)

    worker = threading.Thread(target=run, name="model-worker-bench")
    worker.start()
    worker.join()


if __name__ == "__main__":
    main()
