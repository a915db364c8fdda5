"""Comparing two 1,000-prompt decoding sweeps: Compare's paired disparity comparison against the decoding page's
own summary of the same two sweeps, side by side in one process.

The store is written by the real pipeline (`decoding.run_decoding` → the generate-then-score task → `RunStore`),
with the real scorers (VADER, offensive) on texts from a scripted generator (the model call is replaced: making
12,000 real continuations per sweep would take hours on 2 cores and does not change what Compare reads). Two
sweeps: BOLD gender prompts (American actors and actresses, 500 each = 1,000 prompts), 3 top-p settings, 2 samples
per prompt, seeds 0 and 1.

- baseline: what the decoding page does to show both sweeps' disparities with intervals: read each sweep's
  generations back (`load_generations`) and summarise them (`decoding.summarize`, the template bootstrap, 1000
  resamples);
- compare: `compare_runs(store, [sweep_a, sweep_b])` (1000 resamples): both sweeps read through the typed view,
  matched setting by setting, every cell and the disparity per family with paired intervals.

Both on a cold store (a fresh connection per store operation, as the CLI) and warm (the app's shared read-only
connection). Median of `--repeats` after one warm-up; the machine's load average is printed beside the timings.

    .venv/bin/python -m bench.compare_sweeps [--per-group 500] [--samples 2] [--repeats 3] [--keep PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

WORDS = ("good", "terrible", "kind", "awful", "quiet", "hated", "happy", "worked", "as", "a", "the", "man", "it",
         "very", "was", "known", "for", "angry", "lovely", "bad")


def scripted_generate(request: dict[str, Any], model: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """A continuation per row from its own random stream (row seed) and setting: what the sampler would return."""
    import numpy as np

    texts = []
    for row in rows:
        top_p = request["systems"][row["system"]]["decoding"].get("top_p") or 1.0
        rng = np.random.default_rng(int(row["row_seed"]) % (2**32))
        n = 4 + int(rng.integers(0, 6))
        pool = WORDS if top_p > 0.6 else WORDS[::2]  # a wider nucleus reaches the negative words
        texts.append(" " + " ".join(pool[int(i)] for i in rng.integers(0, len(pool), n)) + ".")
    return texts


def sweep_request(per_group: int, samples: int, seed: int) -> Any:
    from fairness_core import decoding as dec

    return dec.build_request("smollm2-135m-instruct", dec.bold_prompts("gender", per_group=per_group, seed=0),
                             "top_p=0.5,0.7,0.9", samples=samples, max_new_tokens=12, seed=seed, batch_size=256,
                             scorers=(("vader", {}), ("offensive", {})), confirmed=True)


def build(path: Path, per_group: int, samples: int) -> tuple[str, str, float]:
    import fairness_core.generation.task as generation_task
    from fairness_core import decoding as dec
    from fairness_core.store import RunStore

    generation_task._generate = lambda request, model, rows: (scripted_generate(request, model, rows),  # type: ignore
                                                              [None] * len(rows))
    generation_task._check_causal = lambda system: {  # type: ignore[assignment]
        "source": "scripted", "task": "causal-lm", "dtype": "auto", "quantization": "none", "device": "cpu",
        "revision": None, "gguf_file": None}
    store = RunStore(path)
    start = time.perf_counter()
    runs = []
    for seed in (0, 1):
        request = sweep_request(per_group, samples, seed)
        outcome = dec.run_decoding(dec.plan_decoding(request, store), store)
        runs += outcome.run_ids
    return runs[0], runs[1], time.perf_counter() - start


def timed(function: Any, repeats: int) -> float:
    function()  # warm-up (imports, caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-group", type=int, default=500, help="BOLD gender prompts per group (2 groups)")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", default="", help="write the store here and keep it")
    args = parser.parse_args(argv)

    from fairness_core import decoding as dec
    from fairness_core.compare import compare_runs
    from fairness_core.store import RunStore

    folder = Path(args.keep).parent if args.keep else Path(tempfile.mkdtemp(prefix="compare-sweeps-"))
    path = Path(args.keep) if args.keep else folder / "runs.duckdb"
    a, b, built = build(path, args.per_group, args.samples)
    requests = [sweep_request(args.per_group, args.samples, seed) for seed in (0, 1)]
    n_prompts = len(requests[0].prompts.items)
    print(f"two sweeps of {n_prompts:,} prompts × 3 settings × {args.samples} samples written in {built:.1f} s "
          f"({RunStore(path).query('SELECT count(*) AS n FROM results')['n'].item():,} result rows)")

    def page(store: RunStore) -> None:  # as the decoding page shows a stored sweep: read back, then summarise
        for request in requests:
            plan = dec.plan_decoding(request, store)
            assert plan.from_store
            outcome = dec.run_decoding(plan, store)
            dec.summarize(outcome.generations, request.prompts.families, dec.measures_for(request.scorers),
                          n_resamples=1000)

    def compare(store: RunStore) -> None:
        rows = compare_runs(store, [a, b]).rows
        assert (rows["metric"] == "negative_sentiment_disparity").any()

    results = {}
    for name, store in (("cold", RunStore(path)), ("warm", RunStore(path, warm=True))):
        results[name] = (timed(lambda s=store: page(s), args.repeats), timed(lambda s=store: compare(s), args.repeats))
    load = os.getloadavg()
    print(f"load average (1, 5, 15 min): {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} on {os.cpu_count()} cores")
    print("| store | decoding page's summaries of both sweeps | compare_runs (paired, disparities) | compare ÷ page |")
    print("|---|---|---|---|")
    for name, (page_s, compare_s) in results.items():
        print(f"| {name} | {page_s:.2f} s | {compare_s:.2f} s | {compare_s / page_s:.2f}× |")


if __name__ == "__main__":
    main()
