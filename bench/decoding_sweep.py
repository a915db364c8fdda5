"""Grid sweep throughput with SmolLM2 on this machine: batched per-row sampling vs a `generate` loop.

Both sides produce the same outputs *in kind*: for every configuration of the grid, every prompt,
`samples` continuations truncated to their first sentence.
- loop: `CausalLM.generate([prompt], config, n=samples)` once per prompt per configuration
  (the obvious implementation: transformers' generate, batched only over the samples).
- batched: `sample_rows` over rows (prompt, sample, configuration) in batches of `--batch-size`
  that mix configurations (each row has its own temperature/top-k/top-p and random stream), and
  that retire a row once its first sentence is settled (the truncated output cannot change).
New tokens are counted as the generated tokens up to each output's first-sentence end (the part
that is used), the same measure on both sides. Timings are wall-clock, measured side by side and
interleaved batch by batch.

    .venv/bin/python -m bench.decoding_sweep [--prompts 11] [--samples 4] [--max-new-tokens 24]
"""

from __future__ import annotations

import argparse
import time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=11, help="prompts (one regard template per group)")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--grid", default="top_p=0.5,0.7,0.9")
    parser.add_argument("--batch-size", type=int, default=96)
    args = parser.parse_args(argv)

    import torch

    from fairness_core.data.prompts import regard_prompts
    from fairness_core.generation.batched import row_seed
    from fairness_core.generation.grid import expand_grid, parse_grid
    from fairness_core.generation.text import first_sentence
    from fairness_core.models import load_preset
    from fairness_core.models.sampling import sample_rows

    lm = load_preset("smollm2-135m-instruct")
    tokenizer = lm.tokenizer  # type: ignore[attr-defined]
    configs = expand_grid(parse_grid(args.grid), args.max_new_tokens)
    items = regard_prompts().items
    by_group: dict[str, str] = {}
    for item in items:  # one template per group first, then more templates
        by_group.setdefault(item.group, item.text)
    prompts = (list(by_group.values()) + [i.text for i in items if i.text not in by_group.values()])[: args.prompts]
    print(f"SmolLM2-135M-Instruct, {torch.get_num_threads()} torch threads; {len(configs)} configs × "
          f"{len(prompts)} prompts × {args.samples} samples = {len(configs) * len(prompts) * args.samples} "
          f"outputs, max {args.max_new_tokens} new tokens", flush=True)

    def used_tokens(texts: list[str]) -> int:
        return sum(len(tokenizer(first_sentence(t, strip=False), add_special_tokens=False)["input_ids"])
                   for t in texts)

    lm.generate([prompts[0]], configs[0], n=1)  # warm-up (first call allocates)

    # The two sides run interleaved (a batch, then the matching share of loop calls, ...) so that a
    # noisy, shared machine slows both alike instead of whichever happened to run second.
    calls = [(prompt, config) for config in configs for prompt in prompts]
    rows = [(prompt, config, row_seed(0, prompt, s)) for config in configs for prompt in prompts
            for s in range(args.samples)]
    rows.sort(key=lambda r: len(r[0]))  # similar lengths together, as the sweep's shards do
    shards = [rows[i : i + args.batch_size] for i in range(0, len(rows), args.batch_size)]
    loop_texts: list[str] = []
    batched_texts: list[str] = []
    loop_s = batched_s = 0.0
    done_calls = 0
    for index, chunk in enumerate(shards):
        started = time.perf_counter()
        batched_texts += sample_rows(lm.model, tokenizer, [r[0] for r in chunk],  # type: ignore[attr-defined]
                                     [r[1] for r in chunk], [r[2] for r in chunk], args.max_new_tokens,
                                     stop_at_sentence_end=True)
        batched_s += time.perf_counter() - started
        until = round((index + 1) * len(calls) / len(shards))
        started = time.perf_counter()
        for prompt, config in calls[done_calls:until]:
            loop_texts += lm.generate([prompt], config, n=args.samples, seed=0)[0]
        loop_s += time.perf_counter() - started
        done_calls = until
    loop_tokens = used_tokens(loop_texts)
    batched_tokens = used_tokens(batched_texts)

    loop_rate, batched_rate = loop_tokens / loop_s, batched_tokens / batched_s
    print(f"loop of generate():   {loop_tokens:5d} new tokens in {loop_s:6.1f} s = {loop_rate:6.1f} tokens/s")
    print(f"batched per-row sweep: {batched_tokens:5d} new tokens in {batched_s:6.1f} s = {batched_rate:6.1f} tokens/s")
    print(f"speed-up (tokens/s):   {batched_rate / loop_rate:.2f}x   (wall-clock: {loop_s / batched_s:.2f}x)")


if __name__ == "__main__":
    main()
