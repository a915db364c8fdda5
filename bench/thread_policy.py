"""Model work on a shared machine: the model layer's thread policy (models/threads.py) at load ~0, 4 and 8.

The load generator: `--loads` busy-loop processes (each `while True: pass` in its own process, niced to 0 like the
work measured), started before a load level's measurements and stopped after them, so each level adds that many
runnable threads to whatever else the machine runs (the load average printed beside every figure says what the
machine really ran). Run it on an otherwise quiet machine: level 0 is then the quiet figure.

At each level, side by side in this process, medians of `--repeats` rounds (sides alternate):

* **BERTScore** (all-MiniLM-L6-v2, last layer) over the first `--documents` REALSumm documents (24 summaries each):
  ours (`metric_quality.score_metric`: the packed encoder under the policy) beside the `bert_score` library's
  `BERTScorer` on the same model files and layer (torch's default threads, as a user of the library gets them);
  the issue's goal is ours/library >= 1.0 at every load;
* **a live slider move's model call**: SmolLM2-135M-Instruct, the decoding page's 11 rows (one regard prompt per
  group), 15 new tokens, stopping at the first sentence (`generate_rows`, as the live path calls it), under the
  policy beside torch's default of every core (`FAIRNESS_TORCH_THREADS` = cores).

    .venv/bin/python -m bench.thread_policy [--loads 0 4 8] [--documents 10] [--repeats 3] [--moves 6]

On 2 quiet cores the three levels take ~10-15 minutes (most of it the loaded levels).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} cores"


def _busy_loop() -> None:  # pragma: no cover - runs in the load generator's processes
    while True:
        pass


@contextlib.contextmanager
def busy_loops(count: int, settle_s: float = 20.0) -> Iterator[None]:
    """`count` processes spinning in a busy loop for the block (then stopped); waits `settle_s` for the 1-minute
    load average to move towards the new level before the block runs."""
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_busy_loop, daemon=True) for _ in range(count)]
    for worker in workers:
        worker.start()
    try:
        if count:
            time.sleep(settle_s)
        yield
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.join(5)


def _timed(sides: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    walls: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(repeats):  # alternate sides so the load hits both alike
        for name, run in sides.items():
            started = time.perf_counter()
            run()
            walls[name].append(time.perf_counter() - started)
    return walls


def bertscore_sides(documents: int) -> dict[str, Callable[[], Any]]:
    from bert_score import BERTScorer

    from fairness_core import metric_quality as mq
    from fairness_core.models.presets import get_preset

    judgments = mq.load_judgments("realsumm")
    documents = max(3, documents)  # a judgments set needs 3 items (its intervals resample them)
    subset = mq.from_frame(judgments.frame[judgments.frame["item_id"].isin(judgments.items[:documents])],
                           name=f"realsumm-first-{documents}")
    candidates, references = subset.frame["candidate"].tolist(), subset.frame["reference"].tolist()
    metric = mq.build_metrics(["bertscore"])[0]
    scorer = BERTScorer(model_type=get_preset("all-minilm-l6-v2").spec().source,
                        num_layers=int(metric.encoder.num_layers))
    return {"BERTScore ours (policy)": lambda: mq.score_metric(subset, metric),
            "BERTScore bert_score library": lambda: scorer.score(candidates, references)}


def live_sides() -> dict[str, Callable[[], Any]]:
    from bench.live_call import PROMPTS
    from fairness_core.models import load_model, resolve_model
    from fairness_core.models.interfaces import DecodingConfig
    from fairness_core.models.sampling import row_seed
    from fairness_core.models.threads import FIXED_ENV, usable_cores

    lm = load_model(resolve_model("smollm2-135m-instruct", "causal-lm"))
    counter = iter(range(10**9))

    def move(fixed: int | None) -> None:
        top_p = 0.5 + (next(counter) % 9) * 0.05  # a new setting each move, as a slider gives
        if fixed:
            os.environ[FIXED_ENV] = str(fixed)
        try:
            lm.generate_rows(PROMPTS, [DecodingConfig(top_p=top_p, max_new_tokens=15)] * len(PROMPTS),
                             [row_seed(0, prompt, 0) for prompt in PROMPTS], 15, stop_at_sentence_end=True)
        finally:
            os.environ.pop(FIXED_ENV, None)

    move(None)  # warm-up: the prompts' prefill is kept from here on, as on a page after its first move
    return {"live move, policy": lambda: move(None),
            f"live move, {usable_cores()} threads (torch's default)": lambda: move(usable_cores())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, nargs="+", default=[0, 4, 8], help="busy-loop processes per level")
    parser.add_argument("--documents", type=int, default=10, help="REALSumm documents for BERTScore (at least 3)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--moves", type=int, default=6, help="live moves per side per level")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.pop("FAIRNESS_TORCH_THREADS", None)
    documents = max(3, args.documents)
    bert, live = bertscore_sides(documents), live_sides()
    print(f"BERTScore on the first {documents} REALSumm documents ({24 * documents} summaries), "
          f"medians of {args.repeats}; live moves: 11 rows x 15 tokens, medians of {args.moves}; {_load()}",
          flush=True)
    for level in args.loads:
        with busy_loops(level):
            print(f"-- {level} busy-loop processes; {_load()}", flush=True)
            walls = _timed(bert, args.repeats)
            ours, library = (statistics.median(w) for w in walls.values())
            print(f"   BERTScore ours {ours:6.1f} s, library {library:6.1f} s: ours/library speed "
                  f"{library / ours:.2f}x; {_load()}", flush=True)
            moves = _timed(live, args.moves)
            policy, default = (statistics.median(w) for w in moves.values())
            print(f"   live move (model call) policy {policy:5.2f} s, torch's default threads {default:5.2f} s: "
                  f"{default / policy:.2f}x; {_load()}", flush=True)


if __name__ == "__main__":
    main()
