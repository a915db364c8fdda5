"""How far a live slider move's model call is from the machine's floor: a decoding step reads every weight once.

A step of the live default (SmolLM2-135M-Instruct fp32, 11 rows) multiplies 11 rows by every weight matrix: ~3
GFLOP, but 538 MB of weights (the oneDNN-reordered linear layers, output layer included) streamed from memory, so
its floor is memory bandwidth, not arithmetic. This prints, each the best of `--repeats`, with the load average:

* the memory read bandwidth (a sum over a 512 MB tensor) on 1 and on every core;
* the bytes of weights a step reads, and the floor of one step and of a 15-token move at that bandwidth;
* one decoding step as the live path runs it (per-row sampling included): (a 15-token call - a 1-token call) / 14,
  rows not stopped early, under the thread policy and on every core;

    .venv/bin/python -m bench.decode_floor [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import time


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} cores"


def bandwidth(threads: int, repeats: int) -> float:
    """GB/s reading a 512 MB float32 tensor (its sum) on `threads` threads, best of `repeats`."""
    import torch

    from fairness_core.models.threads import set_this_thread

    data = torch.ones(128 * 2**20)  # 512 MB
    before = torch.get_num_threads()
    set_this_thread(threads)
    best = float("inf")
    try:
        for _ in range(repeats):
            started = time.perf_counter()
            data.sum()
            best = min(best, time.perf_counter() - started)
    finally:
        set_this_thread(before)
    return data.numel() * 4 / best / 1e9


def weight_bytes(model: object) -> int:
    import torch

    return sum(m.weight.numel() * m.weight.element_size() for m in model.modules()  # type: ignore[attr-defined]
               if isinstance(m, torch.nn.Linear))


def step_seconds(lm: object, threads: int | None, repeats: int) -> float:
    """One decoding step of the live default's 11 rows: (15-token call - 1-token call) / 14, best of `repeats`."""
    from bench.live_call import PROMPTS
    from fairness_core.models.interfaces import DecodingConfig
    from fairness_core.models.sampling import row_seed
    from fairness_core.models.threads import FIXED_ENV

    def call(tokens: int) -> float:
        configs = [DecodingConfig(top_p=0.9, max_new_tokens=tokens)] * len(PROMPTS)
        seeds = [row_seed(0, prompt, 0) for prompt in PROMPTS]
        started = time.perf_counter()
        lm.generate_rows(PROMPTS, configs, seeds, tokens)  # type: ignore[attr-defined]
        return time.perf_counter() - started

    if threads:
        os.environ[FIXED_ENV] = str(threads)
    try:
        call(1)  # the prompts' prefill is kept from here on, as after a page's first move
        return min((call(15) - call(1)) / 14 for _ in range(repeats))
    finally:
        os.environ.pop(FIXED_ENV, None)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from fairness_core.models import load_model, resolve_model
    from fairness_core.models.threads import usable_cores

    cores = usable_cores()
    lm = load_model(resolve_model("smollm2-135m-instruct", "causal-lm"))
    size = weight_bytes(lm.model)  # type: ignore[attr-defined]
    print(f"SmolLM2-135M-Instruct fp32: {size / 1e6:.0f} MB of linear-layer weights read per decoding step; "
          f"{_load()}", flush=True)
    for threads in sorted({1, cores}):
        rate = bandwidth(threads, args.repeats)
        print(f"  memory read, {threads} thread(s): {rate:5.1f} GB/s -> floor {size / rate / 1e6:5.1f} ms a step, "
              f"{15 * size / rate / 1e9:4.2f} s for 15 tokens; {_load()}", flush=True)
    for label, threads in (("thread policy", None), (f"{cores} threads", cores)):
        seconds = step_seconds(lm, threads, args.repeats)
        print(f"  one step of 11 rows ({label}): {seconds * 1e3:6.1f} ms = {size / seconds / 1e9:.2f} GB/s "
              f"of weights; 15 tokens {15 * seconds:.2f} s; {_load()}", flush=True)


if __name__ == "__main__":
    main()
