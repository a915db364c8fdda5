"""Likelihood scoring of the stereotype benchmarks (issue 45 §4): the model layer's path beside the plain padded
forward pass, in one process, with the work each does, the compute floor and how far each is from it.

For each benchmark (CrowS-Pairs, StereoSet intrasentence, BBQ) it takes the first `--texts` texts the benchmark
scores, in the order the study scores them (so a BBQ context's three answers, and the items that share a context,
are together as in a whole run), and times three paths, alternating over `--repeats` rounds under the same thread
policy (medians of wall and CPU time; the load average with every figure):

* **plain**: one padded forward pass per batch of 16 length-sorted texts (context + continuation whole), full
  logits and log-softmax at every position (`plain_padded`: bench/lm_scoring.py's `before_loglikelihood` on token
  ids, the path the issue measured at ~100 tokens/s);
* **stems**: `models/lm_scoring.py`'s cached-stem path alone (a context shared by several continuations runs once,
  its keys/values copied; token-budget batches) — the path before issue 45;
* **packed**: what `CausalLM.loglikelihood` runs now: the packed prefix trie of `models/tree_scoring.py` where it
  costs less (every distinct token prefix once, short texts packed into rows with a tree attention mask).

Work is counted in FLOPs of the linear layers: 2 x (the body's linear weights: SmolLM2-135M's 30 layers x 3.54M =
106M) per token through the body, plus 2 x 576 x 49,152 (the output layer) per position projected onto the
vocabulary; attention, norms and the embedding lookup are not counted. "GFLOPS" = those FLOPs of the path / its
wall time. The **floor** is the FLOPs of the tokens that must be computed / the machine's matmul rate, measured in
the same process just before each path runs (the model's own MLP layer, oneDNN, on 2,048 rows, with the threads
the policy gives; and per CPU second on one thread, which a busy machine changes little: the path's CPU seconds
against that floor say how far it is whatever the load): two floors are printed, the issue's ("each context once":
a context shared by several continuations computed once, every continuation token through body and output layer)
and the trie's (each distinct token prefix once, each distinct scored position projected once — the least exact
work).

`--whole` also builds the whole benchmark's plan (tokenising every text, no model pass: ~1 min for BBQ) and
estimates the whole run from the measured packed throughput: (whole plan's cost / slice plan's cost) x the slice's
median wall time, at this load.

    .venv/bin/python -m bench.stereotype_scoring [--benchmark crows-pairs|stereoset|bbq|all] [--texts 240]
        [--repeats 3] [--no-plain] [--whole]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import numpy as np

SUBSETS = {"crows-pairs": None, "stereoset": "intrasentence", "bbq": None}


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f} (1/5 min) on {os.cpu_count()} cores"


def flop_per_token(config: Any) -> tuple[float, float]:
    """(FLOPs per token through the body's linear layers, FLOPs per position through the output layer)."""
    hidden, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    kv = hidden * config.num_key_value_heads // config.num_attention_heads
    return 2.0 * layers * (2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * inner), 2.0 * hidden * config.vocab_size


def work(pairs: list[tuple[list[int], list[int]]], config: Any, tokens_per_batch: int = 2048) -> dict[str, float]:
    """Tokens and GFLOP of each path, and of the two floors."""
    from fairness_core.models import lm_scoring as L
    from fairness_core.models import tree_scoring as T

    body, head = flop_per_token(config)
    tupled = [(tuple(c), tuple(t)) for c, t in pairs]
    texts = sum(len(c) + len(t) for c, t in pairs)
    scored = sum(len(t) for _, t in pairs)
    padded = 0
    from fairness_core.models.hf import length_sorted_batches

    for start in range(0, len(pairs), 32):  # the plain path: chunks of 32, batches of 16, padded, logits everywhere
        chunk = pairs[start:start + 32]
        for batch in length_sorted_batches([len(c) + len(t) for c, t in chunk], 16):
            padded += len(batch) * max(len(chunk[i][0]) + len(chunk[i][1]) for i in batch)
    stems, rows = L._plan(tupled, share=True)
    stem_tokens = len(stems[0].ids) + sum(len(s.ids) - len(stems[0].ids) for s in stems[1:])
    stem_tokens += sum(len(b) * max(len(r.ids) for r in b) for b in L._batches(rows, tokens_per_batch))
    plan = T.build_plan(tupled)
    packed_tokens = sum(len(b) * max(len(plan.rows[r]) for r in b) for b in T._batches(plan.rows, tokens_per_batch))
    distinct_scored = len({plan.nodes[k][p] for k, (c, t) in enumerate(pairs) for p in range(len(c), len(c) + len(t))})
    contexts = {tuple(c) for c, _ in pairs}
    context_once = sum(len(c) for c in contexts) + scored
    return {"texts": len(pairs), "text_tokens": texts, "scored": scored,
            "plain_tokens": padded, "plain_gflop": padded * (body + head) / 1e9,
            "stems_tokens": stem_tokens, "stems_gflop": (stem_tokens * body + scored * head) / 1e9,
            "packed_tokens": packed_tokens, "packed_gflop": (packed_tokens * body + distinct_scored * head) / 1e9,
            "floor_context_tokens": context_once, "floor_context_gflop": (context_once * body + scored * head) / 1e9,
            "floor_trie_tokens": len(plan.trie),
            "floor_trie_gflop": (len(plan.trie) * body + distinct_scored * head) / 1e9,
            "packed_cost": T.plan_cost(plan, config.hidden_size, tokens_per_batch)}


def plain_padded(lm: Any, pairs: list[tuple[list[int], list[int]]], batch_size: int = 16) -> list[np.ndarray]:
    """The plain computation: `HFCausalLM.loglikelihood` before issue 37 (bench/lm_scoring.py's
    `before_loglikelihood`) on token ids — chunks of 32 texts, length-sorted padded batches of 16, context +
    continuation whole, full logits and log-softmax at every position."""
    import torch

    from fairness_core.models.hf import length_sorted_batches

    out: list[np.ndarray] = []
    pad = lm.tokenizer.pad_token_id or 0
    for start in range(0, len(pairs), 32):
        chunk = pairs[start:start + 32]
        results: list[np.ndarray] = [np.zeros(0)] * len(chunk)
        for batch in length_sorted_batches([len(c) + len(t) for c, t in chunk], batch_size):
            sequences = [chunk[i][0] + chunk[i][1] for i in batch]
            width = max(len(s) for s in sequences)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, sequence in enumerate(sequences):
                ids[row, : len(sequence)] = torch.tensor(sequence)
                mask[row, : len(sequence)] = 1
            with torch.no_grad():
                logprobs = torch.log_softmax(lm.model(input_ids=ids, attention_mask=mask).logits.float(), dim=-1)
            for row, index in enumerate(batch):
                context, continuation = chunk[index]
                positions = torch.arange(len(context) - 1, len(context) - 1 + len(continuation))
                results[index] = logprobs[row, positions, torch.tensor(continuation)].double().numpy()
        out += results
    return out


def matmul_rate(model: Any, repeats: int = 5, cpu: bool = False) -> float:
    """GFLOPS of the model's own first MLP layer (the kernel the scoring runs) on 2,048 rows: per wall second under
    the thread policy, or (`cpu`) per CPU second on one thread — the rate a busy machine does not change much, so
    a path's CPU seconds against the floor's say how far it is from the floor whatever the load."""
    import torch

    from fairness_core.models.threads import model_threads

    layer = model.model.layers[0].mlp.up_proj
    x = torch.randn(2048, layer.in_features)
    times = []
    clock = time.process_time if cpu else time.perf_counter
    saved = torch.get_num_threads()
    with torch.inference_mode(), model_threads():
        if cpu:
            torch.set_num_threads(1)
        layer(x)
        for _ in range(repeats):
            started = clock()
            layer(x)
            times.append(clock() - started)
        torch.set_num_threads(saved)
    return 2 * 2048 * layer.in_features * layer.out_features / statistics.median(times) / 1e9


def benchmark_pairs(lm: Any, benchmark: str, limit: int | None) -> list[tuple[list[int], list[int]]]:
    from fairness_core import stereotypes as S
    from fairness_core.stereotypes import task as T

    request = S.build_request(benchmark, model="smollm2-135m-instruct", subset=SUBSETS[benchmark], limit=None)
    texts = T.scoring_requests(request)
    texts = texts if limit is None else texts[:limit]
    return [lm.scoring_ids(context, continuation) for _, _, context, continuation in texts]


def side_by_side(lm: Any, benchmark: str, n_texts: int, repeats: int, plain: bool, whole: bool) -> None:
    from fairness_core.models import lm_scoring as L
    from fairness_core.models.threads import model_threads

    pairs = benchmark_pairs(lm, benchmark, n_texts)
    w = work(pairs, lm.model.config)
    print(f"\n{benchmark}{' ' + SUBSETS[benchmark] if SUBSETS[benchmark] else ''}: the first {w['texts']:,} texts, "
          f"{w['text_tokens']:,} tokens ({w['scored']:,} scored); SmolLM2-135M-Instruct fp32; {_load()}", flush=True)
    for name in ("plain", "stems", "packed", "floor_context", "floor_trie"):
        print(f"  work {name:<14} {w[name + '_tokens']:>9,} tokens through the body {w[name + '_gflop']:>9,.0f} GFLOP")

    def run_plain() -> list[np.ndarray]:
        return plain_padded(lm, pairs)

    def run_stems() -> list[np.ndarray]:
        saved, L._packed_share = L._packed_share, lambda *a, **k: None
        try:
            return [s.logprobs for s in L.continuation_scores(lm.model, pairs)]
        finally:
            L._packed_share = saved

    def run_packed() -> list[np.ndarray]:
        return [s.logprobs for s in L.continuation_scores(lm.model, pairs)]

    sides = {"packed": run_packed, "stems": run_stems} | ({"plain": run_plain} if plain else {})
    wall: dict[str, list[float]] = {n: [] for n in sides}
    cpu: dict[str, list[float]] = {n: [] for n in sides}
    rates: list[float] = []
    cpu_rates: list[float] = []
    outputs: dict[str, list[np.ndarray]] = {}
    for round_number in range(repeats):
        for name, run in sides.items():
            rates.append(matmul_rate(lm.model))
            cpu_rates.append(matmul_rate(lm.model, cpu=True))
            started_wall, started_cpu = time.perf_counter(), time.process_time()
            with model_threads():
                outputs[name] = run()
            wall[name].append(time.perf_counter() - started_wall)
            cpu[name].append(time.process_time() - started_cpu)
            print(f"    round {round_number + 1} {name:<7} {wall[name][-1]:7.1f} s wall {cpu[name][-1]:7.1f} s CPU "
                  f"(matmul rate {rates[-1]:.0f} GFLOPS; {_load()})", flush=True)
    rate = statistics.median(rates)
    floor_context = w["floor_context_gflop"] / rate
    floor_trie = w["floor_trie_gflop"] / rate
    print(f"  matmul rate (median of {len(rates)}) {rate:.0f} GFLOPS -> floor {floor_context:.1f} s (each context "
          f"once), {floor_trie:.1f} s (each distinct prefix once)")
    cpu_rate = statistics.median(cpu_rates)
    cpu_floor_context, cpu_floor_trie = w["floor_context_gflop"] / cpu_rate, w["floor_trie_gflop"] / cpu_rate
    print(f"  one-thread matmul rate per CPU second (median) {cpu_rate:.0f} GFLOPS -> CPU floor "
          f"{cpu_floor_context:.1f} s (each context once), {cpu_floor_trie:.1f} s (trie)")
    for name in sides:
        median_wall, median_cpu = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"  {name:<7} median {median_wall:7.1f} s wall {median_cpu:7.1f} s CPU: "
              f"{w['text_tokens'] / median_wall:6.0f} text tokens/s, {w[name + '_gflop'] / median_wall:5.0f} GFLOPS "
              f"of its own work; wall {median_wall / floor_context:.2f}x the context-once floor, "
              f"{median_wall / floor_trie:.2f}x the trie floor; CPU {median_cpu / cpu_floor_context:.2f}x and "
              f"{median_cpu / cpu_floor_trie:.2f}x")
    for name in sides:
        if name != "packed":
            ratio = statistics.median(wall[name]) / statistics.median(wall["packed"])
            cpu_ratio = statistics.median(cpu[name]) / statistics.median(cpu["packed"])
            gap = max(float(np.abs(a - b).max()) for a, b in zip(outputs["packed"], outputs[name], strict=True)
                      if len(a))
            print(f"  packed vs {name}: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU; largest |log-prob difference| of a "
                  f"token {gap:.1e}")
    print(f"  ({_load()})", flush=True)
    if whole:
        started = time.perf_counter()
        every = benchmark_pairs(lm, benchmark, None)
        all_work = work(every, lm.model.config)
        scale = all_work["packed_cost"] / w["packed_cost"]
        estimate = scale * statistics.median(wall["packed"])
        print(f"  whole {benchmark}: {all_work['texts']:,} texts, {all_work['text_tokens']:,} tokens; through the "
              f"body: plain {all_work['plain_tokens']:,}, packed {all_work['packed_tokens']:,}, floors "
              f"{all_work['floor_context_tokens']:,} (each context once) / {all_work['floor_trie_tokens']:,} (trie); "
              f"(plan built in {time.perf_counter() - started:.0f} s)")
        cpu_estimate = scale * statistics.median(cpu["packed"])
        context_cpu_min = all_work["floor_context_gflop"] / cpu_rate / 60
        print(f"  CPU: packed ~{cpu_estimate / 60:.1f} min of CPU (one thread's rate; two threads ran ~1.2x one "
              f"thread's rate on the 2-core machine); CPU floors {context_cpu_min:.1f} min (each context once), "
              f"{all_work['floor_trie_gflop'] / cpu_rate / 60:.1f} min (trie); packed = "
              f"{cpu_estimate / (all_work['floor_context_gflop'] / cpu_rate):.2f}x / "
              f"{cpu_estimate / (all_work['floor_trie_gflop'] / cpu_rate):.2f}x of them")
        print(f"  estimate at this slice's throughput: packed {estimate / 60:.1f} min; floors "
              f"{all_work['floor_context_gflop'] / rate / 60:.1f} min (each context once) and "
              f"{all_work['floor_trie_gflop'] / rate / 60:.1f} min (trie) at {rate:.0f} GFLOPS; packed = "
              f"{estimate / (all_work['floor_context_gflop'] / rate):.2f}x the context-once floor; {_load()}",
              flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", choices=("crows-pairs", "stereoset", "bbq", "all"), default="all")
    parser.add_argument("--texts", type=int, default=240, help="texts timed side by side per benchmark")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-plain", action="store_true", help="leave out the plain padded pass (slow)")
    parser.add_argument("--whole", action="store_true", help="estimate the whole benchmark from the slice")
    parser.add_argument("--threads", type=int, default=None, help="fix torch's threads (default: the policy)")
    args = parser.parse_args(argv)
    if args.threads:
        os.environ["FAIRNESS_TORCH_THREADS"] = str(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from fairness_core.models import load_model, resolve_model

    started_cpu = time.process_time()
    lm = load_model(resolve_model("smollm2-135m-instruct", "causal-lm"))
    body, head = flop_per_token(lm.model.config)
    print(f"SmolLM2-135M-Instruct: {body / 2e6:.0f}M body linear weights ({body / 1e6:.0f} MFLOP a token), output "
          f"layer {head / 2e6:.0f}M ({head / 1e6:.0f} MFLOP a scored position); {_load()}", flush=True)
    for benchmark in (("crows-pairs", "stereoset", "bbq") if args.benchmark == "all" else (args.benchmark,)):
        side_by_side(lm, benchmark, args.texts, args.repeats, not args.no_plain, args.whole)
    print(f"\nprocess CPU {time.process_time() - started_cpu:.0f} s; {_load()}")


if __name__ == "__main__":
    main()
