"""Coverage of metric-quality intervals on simulated judgments of REALSumm's shape (100 documents × 24 systems).

For each rule: the share of fresh samples of documents whose 95% interval (documents resampled with all their
summaries) contains the rule's population value (`fairness_core.metric_quality.simulate.Design.truth`), and the
mean width. For the pooled rule, also the interval that resamples summaries as if they were independent (each
summary its own "document"), to show what ignoring the shared documents does.

    .venv/bin/python scripts/metric_quality_coverage.py [--datasets 400] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()

    from fairness_core import metric_quality as mq
    from fairness_core.metric_quality.simulate import Design

    design = Design()
    print(f"{design.n_items} documents x {design.n_systems} systems, {args.datasets} datasets, "
          f"{args.resamples} resamples each, 95% percentile intervals")
    for rule in (*mq.RULES, "pooled, summaries resampled as independent"):
        started = time.perf_counter()
        base = rule.split(",")[0]
        truth = design.truth(base)
        hits, widths = 0, []
        for seed in range(args.datasets):
            judgments, scores = design.judgments(seed)
            if base != rule:  # every summary its own document: the naive bootstrap
                frame = judgments.frame.assign(item_id=[f"row{i}" for i in range(len(judgments))], system="one")
                judgments = mq.from_frame(frame, "naive")
            c = mq.correlate(judgments, scores, rule=base, n_resamples=args.resamples, seed=seed)
            hits += c.ci_low <= truth <= c.ci_high
            widths.append(c.ci_high - c.ci_low)
        share = hits / args.datasets
        error = (share * (1 - share) / args.datasets) ** 0.5
        print(f"  {rule:<44} truth {truth:.3f}  coverage {share:.3f} (s.e. {error:.3f})  mean width "
              f"{np.mean(widths):.3f}  ({time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
