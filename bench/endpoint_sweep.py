"""Endpoint throughput: one generation sweep through a local OpenAI-compatible server, in-flight 1 vs 8,
and the per-request overhead against the in-process sampler, side by side in one run.

The server is `transformers serve` on the dequantised SmolLM2-135M-Instruct folder (the cache
`fairness_core.models.loading.gguf_converted_dir` makes), linked into a temporary folder whose
`generation_config.json` samples (`models.endpoint.sampling_folder`, as `python -m fairness_core serve`
does; the cache's own config decodes greedily and the server would ignore top_p). The sweep:
the first regard prompts x top_p {0.5, 0.9} x samples, every row with its own seed, `max_new_tokens` each
(the server always writes max_new_tokens: nothing stops at a sentence end).

  endpoint, in-flight 1   - `EndpointLM.generate_rows`, one request at a time
  endpoint, in-flight 8   - the same rows (other seeds), eight requests out at once
  in-process, one row     - `HFCausalLM.generate_rows` on one row at a time (what a request costs the
                            server's model, without HTTP): the first `--in-process-rows` rows
  in-process, batched     - the same sampler on every row in one batched call (the lab's own path)

Tokens/s counts the completion tokens the server reports (in-process: rows x max_new_tokens, which is
what the sampler writes when no row stops early). Per-request overhead = endpoint seconds per request at
in-flight 1 minus in-process seconds per single row. The load average is printed: on a shared machine
other processes change every number, and the ratios are only comparable within one run.

    .venv/bin/python -m bench.endpoint_sweep [--generations 200] [--max-new-tokens 12] [--continuous-batching]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=200, help="rows of the sweep (prompts x 2 x samples)")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=12)
    parser.add_argument("--in-process-rows", type=int, default=24, help="rows timed one at a time in-process")
    parser.add_argument("--continuous-batching", action="store_true", help="start the server with it")
    args = parser.parse_args(argv)

    from fairness_core.data.prompts import load_prompt_source
    from fairness_core.models import DecodingConfig, get_preset, load_model
    from fairness_core.models.endpoint import Endpoint, EndpointLM, sampling_folder
    from fairness_core.models.loading import gguf_converted_dir
    from fairness_core.models.sampling import row_seed
    from tests.endpoint_servers import TransformersServer

    spec = get_preset("smollm2-135m-instruct").spec()
    folder = gguf_converted_dir(spec.resolved())
    per_config = max(1, args.generations // (2 * args.samples))
    prompts = [item.text for item in load_prompt_source("regard").items[:per_config]]
    rows = [(prompt, DecodingConfig(top_p=top_p), sample) for top_p in (0.5, 0.9) for prompt in prompts
            for sample in range(args.samples)]
    texts = [prompt for prompt, _, _ in rows]
    configs = [config for _, config, _ in rows]

    def seeds(offset: int) -> list[int]:
        return [row_seed(offset, prompt, sample) for prompt, _, sample in rows]

    print(f"sweep: {len(rows)} generations ({len(prompts)} regard prompts x top_p 0.5, 0.9 x {args.samples} samples), "
          f"{args.max_new_tokens} new tokens each; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as scratch:
        served = sampling_folder(folder, Path(scratch) / "smollm2-sampling")
        server = TransformersServer(served, Path(scratch),
                                    ("--continuous-batching",) if args.continuous_batching else ())
        try:
            started = time.perf_counter()
            server.wait_ready()
            print(f"server: transformers serve{' --continuous-batching' if args.continuous_batching else ''} "
                  f"healthy after {time.perf_counter() - started:.1f} s")
            results = {}
            for in_flight, offset in ((1, 1), (8, 2)):
                lm = EndpointLM(Endpoint(server.base_url, str(served), max_in_flight=in_flight))
                lm.generate_rows(texts[:2], configs[:2], [0, 0], args.max_new_tokens)  # model load, warm-up
                before = lm.usage.completion_tokens
                started = time.perf_counter()
                lm.generate_rows(texts, configs, seeds(offset), args.max_new_tokens)
                seconds = time.perf_counter() - started
                results[in_flight] = (seconds, lm.usage.completion_tokens - before)
        finally:
            server.stop()

    lm_local = load_model(spec)
    lm_local.generate_rows(texts[:2], configs[:2], [0, 0], args.max_new_tokens)  # warm-up
    n_single = min(args.in_process_rows, len(rows))
    started = time.perf_counter()
    for i in range(n_single):
        lm_local.generate_rows([texts[i]], [configs[i]], [seeds(3)[i]], args.max_new_tokens)
    single_s = (time.perf_counter() - started) / n_single
    started = time.perf_counter()
    lm_local.generate_rows(texts, configs, seeds(3), args.max_new_tokens)
    batched_s = time.perf_counter() - started

    print(f"\n{'path':<28}{'seconds':>9}{'tokens':>8}{'tokens/s':>10}{'s/generation':>14}")
    for in_flight, (seconds, tokens) in results.items():
        print(f"{f'endpoint, in-flight {in_flight}':<28}{seconds:>9.2f}{tokens:>8}{tokens / seconds:>10.1f}"
              f"{seconds / len(rows):>14.3f}")
    local_tokens = len(rows) * args.max_new_tokens
    print(f"{'in-process, one row':<28}{single_s * n_single:>9.2f}{n_single * args.max_new_tokens:>8}"
          f"{args.max_new_tokens / single_s:>10.1f}{single_s:>14.3f}   ({n_single} rows)")
    print(f"{'in-process, batched':<28}{batched_s:>9.2f}{local_tokens:>8}{local_tokens / batched_s:>10.1f}"
          f"{batched_s / len(rows):>14.3f}")
    (s1, t1), (s8, t8) = results[1], results[8]
    print(f"\nin-flight 8 / in-flight 1 tokens/s: {(t8 / s8) / (t1 / s1):.2f}x")
    print(f"per-request overhead (endpoint in-flight 1 minus in-process one row): "
          f"{(s1 / len(rows) - single_s) * 1000:.0f} ms")
    print(f"in-process batched / endpoint in-flight 8 tokens/s: {(local_tokens / batched_s) / (t8 / s8):.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
