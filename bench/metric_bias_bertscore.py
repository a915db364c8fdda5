"""BERTScore with all-MiniLM-L6-v2: our Encoder-based implementation vs the `bert_score` library.

Same model files, same layer, same pairs (WinoBias type1-dev + type1-test: 792 pairs, 1,584
candidate-reference scorings), measured side by side in this process, alternating sides over
`--repeats` rounds and keeping each side's best time (wall clock and process CPU time). The library
uses `BERTScorer` with the model loaded once outside the timing, at its default batch size (64) and
at 256. Both sides encode each distinct sentence once (the library dedups too); the work is the
encoder's linear layers. Ours runs them in the packed fp32 forward (fairness_core/models/packed_encoder.py:
no padding, fused query/key/value, oneDNN products with fused GELU and residual adds, no pooler, and
the first layer's query/key/value rows once per distinct (token, position): 4,612 of 41,459 here).
The last lines put both sides' linear-layer work and rate beside this machine's best fp32 matrix
product at the same shape, i.e. how far from the ceiling each is.

    .venv/bin/python -m bench.metric_bias_bertscore [--layer 6] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layer", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    import numpy as np
    from bert_score import BERTScorer

    from fairness_core.data import pairs, winobias
    from fairness_core.metrics.matching import BERTScore, BERTScoreOptions
    from fairness_core.models import load_preset
    from fairness_core.models.presets import get_preset

    dataset = pairs.merge([winobias.build("type1-dev"), winobias.build("type1-test")])
    candidates = [p.candidate1 for p in dataset.pairs] + [p.candidate2 for p in dataset.pairs]
    references = [p.reference for p in dataset.pairs] * 2
    n_pairs = len(dataset)
    source = get_preset("all-minilm-l6-v2").spec().source

    ours = BERTScore(BERTScoreOptions(layer=args.layer), model=load_preset("all-minilm-l6-v2"))
    sides = {
        "ours (packed fp32 encoder)": lambda: ours.score(candidates, references)["F"],
        "bert_score.BERTScorer (default batch 64)": _library(BERTScorer(model_type=source, num_layers=args.layer),
                                                            candidates, references),
        "bert_score.BERTScorer (batch 256)": _library(BERTScorer(model_type=source, num_layers=args.layer,
                                                                batch_size=256), candidates, references),
    }
    for run in sides.values():  # warm up (first-call allocations, lazy imports)
        run()
    wall = dict.fromkeys(sides, float("inf"))
    cpu = dict.fromkeys(sides, float("inf"))
    outputs = {}
    for _ in range(args.repeats):  # alternate sides so background load hits all of them alike
        for name, run in sides.items():
            started_wall, started_cpu = time.perf_counter(), time.process_time()
            outputs[name] = np.asarray(run())
            wall[name] = min(wall[name], time.perf_counter() - started_wall)
            cpu[name] = min(cpu[name], time.process_time() - started_cpu)
    ours_name, default_name, big_name = list(sides)
    print(f"{n_pairs} pairs, all-MiniLM-L6-v2 layer {args.layer}, best of {args.repeats} (wall s / CPU s)")
    for name in sides:
        print(f"  {name:<42} {wall[name]:6.2f} / {cpu[name]:6.2f}  {n_pairs / wall[name]:7.1f} pairs/s")
    for name in (default_name, big_name):
        print(f"speed ratio vs {name}: {wall[name] / wall[ours_name]:.2f}x pairs/s "
              f"(CPU time {cpu[name] / cpu[ours_name]:.2f}x)")
    diff = max(float(np.abs(outputs[ours_name] - outputs[name]).max()) for name in (default_name, big_name))
    print(f"max |F1 difference| ours vs library: {diff:.2e}")
    encoder = ours.encoder
    flops, shared_flops = _linear_flops(encoder, candidates + references, args.layer)
    peak = _peak_linear_gflops(int(encoder.model.config.hidden_size), int(encoder.model.config.intermediate_size))
    ceiling = wall[default_name] / (shared_flops / peak / 1e9)
    print(f"linear layers: the library {flops / 1e9:.0f} GFLOP per pass, ours {shared_flops / 1e9:.0f} (shared "
          f"first-layer rows); at the best times ours runs them at {shared_flops / wall[ours_name] / 1e9:.0f} GFLOP/s, "
          f"the library at {flops / wall[default_name] / 1e9:.0f}; this machine's best fp32 product at that shape: "
          f"{peak:.0f} GFLOP/s (ceiling {ceiling:.2f}x the library if nothing but ours' linear layers took time)")


def _linear_flops(encoder, texts, layer: int) -> tuple[float, float]:
    """2 x multiply-adds of the linear layers over the distinct sentences, unpadded: every token's rows (the
    library), and with the first query/key/value rows once per distinct (token, position) (ours)."""
    config = encoder.model.config
    ids = encoder.tokenizer(sorted({t.strip() for t in texts}))["input_ids"]
    tokens = sum(len(row) for row in ids)
    distinct = len({(token, position) for row in ids for position, token in enumerate(row)})
    hidden, inner = int(config.hidden_size), int(config.intermediate_size)
    every = 2.0 * tokens * layer * (4 * hidden * hidden + 2 * hidden * inner)
    return every, every - 2.0 * (tokens - distinct) * 3 * hidden * hidden


def _peak_linear_gflops(hidden: int, inner: int, rows: int = 2048) -> float:
    """Best of a few runs of torch's fastest fp32 product here (oneDNN, reordered weights) at that shape."""
    import torch

    x, weight, bias = torch.randn(rows, hidden), torch.randn(inner, hidden), torch.randn(inner)
    ops = torch.ops.mkldnn
    try:
        packed = ops._reorder_linear_weight(weight, rows)
        run = lambda: ops._linear_pointwise(x, packed, bias, "none", [], "")  # noqa: E731
        run()
    except (AttributeError, RuntimeError):
        run = lambda: torch.nn.functional.linear(x, weight, bias)  # noqa: E731
    best = float("inf")
    with torch.inference_mode():
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(10):
                run()
            best = min(best, (time.perf_counter() - started) / 10)
    return 2.0 * rows * hidden * inner / best / 1e9


def _library(scorer, candidates, references):
    return lambda: scorer.score(candidates, references)[2].numpy()


if __name__ == "__main__":
    main()
