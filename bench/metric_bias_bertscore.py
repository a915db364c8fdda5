"""BERTScore with all-MiniLM-L6-v2: our Encoder-based implementation vs the `bert_score` library.

Same model files, same layer, same pairs (WinoBias type1-dev + type1-test: 792 pairs, 1,584
candidate-reference scorings), measured side by side in this process, alternating sides over
`--repeats` rounds and keeping each side's best time (wall clock and process CPU time: this machine
is shared, and CPU time is the steadier measure of work). The library uses `BERTScorer` with the
model loaded once outside the timing, at its default batch size (64) and at ours (256), so the
table shows where the speed comes from. Both sides encode each distinct sentence once (the library
dedups too); the work is dominated by the encoder's linear layers, so the gain is from running
bigger batches, not from skipping work.

    .venv/bin/python -m bench.metric_bias_bertscore [--layer 6] [--repeats 2]
"""

from __future__ import annotations

import argparse
import time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layer", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2)
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
        "ours (Encoder, 256 sentences/pass)": lambda: ours.score(candidates, references)["F"],
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


def _library(scorer, candidates, references):
    return lambda: scorer.score(candidates, references)[2].numpy()


if __name__ == "__main__":
    main()
