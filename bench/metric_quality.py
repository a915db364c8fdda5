"""Metric quality on REALSumm (100 documents × 24 systems = 2,400 summaries): time and agreement of metrics.

Default: BERTScore (all-MiniLM-L6-v2, last layer) over the 2,400 (summary, reference) pairs, ours
(`metric_quality.score_metric`, the packed fp32 encoder) beside the `bert_score` library's `BERTScorer` on the same
model files and layer, alternating sides over `--repeats` rounds and keeping each side's best wall and CPU time.
It also prints the work (tokens, linear-layer GFLOP) that explains why this takes tens of seconds, not seconds, on
2 cores: REALSumm's texts are ~5x longer than WinoBias sentences.

`--offline-set`: every metric that runs offline here, once each, with its Spearman (pooled rule, 95% interval over
documents) and wall time, the load average before and after (the machine is shared: read times with the load).

    .venv/bin/python -m bench.metric_quality [--repeats 2] [--offline-set] [--metrics bleu,rouge1,...]
"""

from __future__ import annotations

import argparse
import os
import time


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} cores"


def bertscore_ratio(repeats: int) -> None:
    import numpy as np
    from bert_score import BERTScorer

    from fairness_core import metric_quality as mq
    from fairness_core.models.presets import get_preset

    judgments = mq.load_judgments("realsumm")
    candidates, references = judgments.frame["candidate"].tolist(), judgments.frame["reference"].tolist()
    source = get_preset("all-minilm-l6-v2").spec().source
    metric = mq.build_metrics(["bertscore"])[0]
    layer = int(metric.encoder.num_layers)
    scorer = BERTScorer(model_type=source, num_layers=layer)
    sides = {
        "ours (score_metric, packed fp32 encoder)": lambda: mq.score_metric(judgments, metric),
        "bert_score.BERTScorer (default batch 64)": lambda: scorer.score(candidates, references)[2].numpy(),
    }
    tokenizer = metric.encoder.tokenizer
    distinct = sorted(set(candidates) | set(references))
    tokens = sum(len(ids) for ids in tokenizer(distinct, truncation=True)["input_ids"])
    print(f"REALSumm: {len(candidates):,} pairs, {len(distinct):,} distinct texts, {tokens:,} tokens to encode "
          f"(WinoBias type1 dev+test: 41,459); {_load()}", flush=True)
    wall = dict.fromkeys(sides, float("inf"))
    cpu = dict.fromkeys(sides, float("inf"))
    outputs = {}
    for _ in range(repeats):  # alternate sides so background load hits both alike
        for name, run in sides.items():
            started_wall, started_cpu = time.perf_counter(), time.process_time()
            outputs[name] = np.asarray(run(), dtype=float)
            wall[name] = min(wall[name], time.perf_counter() - started_wall)
            cpu[name] = min(cpu[name], time.process_time() - started_cpu)
    ours, library = list(sides)
    for name in sides:
        print(f"  {name:<44} {wall[name]:7.2f} s wall / {cpu[name]:7.2f} s CPU")
    print(f"speed ratio vs the library: {wall[library] / wall[ours]:.2f}x (CPU time {cpu[library] / cpu[ours]:.2f}x)")
    print(f"max |F1 difference| ours vs library: {float(np.abs(outputs[ours] - outputs[library]).max()):.2e}")
    config = metric.encoder.model.config
    hidden, inner = int(config.hidden_size), int(config.intermediate_size)
    flops = 2 * tokens * layer * (4 * hidden * hidden + 2 * hidden * inner)
    print(f"linear layers: {flops / 1e9:.0f} GFLOP per pass; at the best time ours runs them at "
          f"{flops / wall[ours] / 1e9:.0f} GFLOP/s including everything else; {_load()}")


def offline_set(names: list[str]) -> None:
    from fairness_core import metric_quality as mq

    judgments = mq.load_judgments("realsumm")
    print(f"REALSumm pooled Spearman with LitePyramid recall, 95% interval over 100 documents (1000 resamples, "
          f"seed 0); {_load()}", flush=True)
    total = 0.0
    for name in names:
        metric = mq.build_metrics([name])[0]
        try:
            metric.check_available()
        except mq.ModelUnavailableError as error:
            print(f"  {name:<14} unavailable here: {error}", flush=True)
            continue
        started = time.perf_counter()
        scores = mq.score_metric(judgments, metric)
        seconds = time.perf_counter() - started
        total += seconds
        c = mq.correlate(judgments, scores, n_resamples=1000, seed=0)
        model = getattr(metric, "model_id", "") or ""
        print(f"  {name:<14} {model:<24} spearman {c.spearman:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}]  "
              f"{seconds:8.1f} s  ({_load()})", flush=True)
    for column in judgments.stored_columns:
        c = mq.correlate(judgments, column, n_resamples=1000, seed=0)
        print(f"  {column:<40} spearman {c.spearman:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}]  (stored)")
    print(f"whole offline set: {total:.0f} s of scoring; {_load()}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--offline-set", action="store_true", help="time every offline metric instead")
    parser.add_argument("--metrics", default="bleu,rouge1,meteor,chrf,bertscore,moverscore,bartscore-lm")
    args = parser.parse_args(argv)
    if args.offline_set:
        offline_set([n.strip() for n in args.metrics.split(",") if n.strip()])
    else:
        bertscore_ratio(args.repeats)


if __name__ == "__main__":
    main()
