"""Grid sweep throughput with SmolLM2 on this machine: batched per-row sampling vs a `generate` loop.

All sides produce the same outputs *in kind*: for every configuration of the grid, every prompt,
`samples` continuations truncated to their first sentence.
- loop: `CausalLM.generate([prompt], config, n=samples)` once per prompt per configuration
  (the obvious implementation with the model layer: one call per setting, batched only over the
  samples, generating the full `--max-new-tokens`).
- drained batches: `sample_rows` over rows (prompt, sample, configuration) in batches of
  `--batch-size` that mix configurations (each row has its own temperature/top-k/top-p and random
  stream) and retire a row once its first sentence is settled; each batch drains completely before
  the next starts (`refill=False`, the schedule before continuous batching).
- continuous: the same rows through `--batch-size` slots, a finished row's slot refilled with the
  next waiting row (`refill=True`, the default).
The two batched sides give identical texts (checked). New tokens are counted as the generated
tokens up to each output's first-sentence end (the part that is used), the same measure on every
side. Timings are wall-clock, measured side by side in one process (in `--rounds` interleaved
rounds); the ratios are the result, absolute rates move with the machine's load.

    .venv/bin/python -m bench.decoding_sweep [--prompts 11] [--samples 4] [--max-new-tokens 24] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=11, help="prompts (one regard template per group)")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--grid", default="top_p=0.5,0.7,0.9")
    parser.add_argument("--batch-size", type=int, default=96, help="rows in flight (the sweep's default)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="interleaved rounds, each side computing 1/rounds of the grid per round (keep "
                             "rows per round above --batch-size, or there is nothing to refill)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: the model layer's policy)")
    args = parser.parse_args(argv)

    if args.threads:  # the model layer's thread policy (models/threads.py) takes a fixed count from here
        os.environ["FAIRNESS_TORCH_THREADS"] = str(args.threads)

    from fairness_core.data.prompts import regard_prompts
    from fairness_core.generation.grid import expand_grid, parse_grid
    from fairness_core.generation.text import first_sentence
    from fairness_core.models import load_preset
    from fairness_core.models.sampling import row_seed, sample_rows

    lm = load_preset("smollm2-135m-instruct")
    tokenizer = lm.tokenizer  # type: ignore[attr-defined]
    configs = expand_grid(parse_grid(args.grid), args.max_new_tokens)
    items = regard_prompts().items
    by_group: dict[str, str] = {}
    for item in items:  # one template per group first, then more templates
        by_group.setdefault(item.group, item.text)
    prompts = (list(by_group.values()) + [i.text for i in items if i.text not in by_group.values()])[: args.prompts]
    load = os.getloadavg()[0]
    threads = args.threads or "policy-chosen"
    print(f"SmolLM2-135M-Instruct, {threads} torch threads, {os.cpu_count()} CPUs, load average "
          f"{load:.1f}; {len(configs)} configs x {len(prompts)} prompts x {args.samples} samples = "
          f"{len(configs) * len(prompts) * args.samples} outputs, max {args.max_new_tokens} new tokens, "
          f"batch size {args.batch_size}", flush=True)

    def used_tokens(texts: list[str]) -> int:
        return sum(len(tokenizer(first_sentence(t, strip=False), add_special_tokens=False)["input_ids"])
                   for t in texts)

    lm.generate([prompts[0]], configs[0], n=1)  # warm-up (first call allocates)

    calls = [(prompt, config) for config in configs for prompt in prompts]
    rows = [(prompt, config, row_seed(0, prompt, s)) for config in configs for prompt in prompts
            for s in range(args.samples)]
    rows.sort(key=lambda r: len(r[0]))  # similar lengths together, as the sweep's shards do
    texts: dict[str, list[str]] = {"loop": [], "drained": [], "continuous": []}
    seconds = dict.fromkeys(texts, 0.0)

    def batched(chunk: list, refill: bool) -> list[str]:
        return sample_rows(lm.model, tokenizer, [r[0] for r in chunk], [r[1] for r in chunk],  # type: ignore[attr-defined]
                           [r[2] for r in chunk], args.max_new_tokens, stop_at_sentence_end=True,
                           batch_size=args.batch_size, refill=refill)

    # Each side computes its share of the grid in turn, so load changes hit all sides.
    for index in range(args.rounds):
        chunk = rows[index * len(rows) // args.rounds : (index + 1) * len(rows) // args.rounds]
        for name, refill in (("drained", False), ("continuous", True)):
            started = time.perf_counter()
            texts[name] += batched(chunk, refill)
            seconds[name] += time.perf_counter() - started
        started = time.perf_counter()
        for prompt, config in calls[index * len(calls) // args.rounds : (index + 1) * len(calls) // args.rounds]:
            texts["loop"] += lm.generate([prompt], config, n=args.samples, seed=0)[0]
        seconds["loop"] += time.perf_counter() - started
        print(f"round {index + 1}/{args.rounds}: " + ", ".join(f"{k} {v:.1f} s" for k, v in seconds.items()),
              flush=True)
    if texts["drained"] != texts["continuous"]:
        raise SystemExit("continuous batching changed a text: it must not")
    rates = {name: used_tokens(texts[name]) / seconds[name] for name in texts}
    labels = {"loop": "loop of generate()", "drained": "batched, drained batches",
              "continuous": "batched, continuous (refill)"}
    for name in texts:
        print(f"{labels[name]:30s} {used_tokens(texts[name]):5d} new tokens in {seconds[name]:6.1f} s = "
              f"{rates[name]:6.1f} tokens/s")
    for name in ("drained", "continuous"):
        print(f"speed-up of {labels[name]} over the loop (tokens/s): {rates[name] / rates['loop']:.2f}x   "
              f"(wall-clock: {seconds['loop'] / seconds[name]:.2f}x)")
    print(f"continuous over drained (same texts): {seconds['drained'] / seconds['continuous']:.2f}x wall-clock; "
          f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
