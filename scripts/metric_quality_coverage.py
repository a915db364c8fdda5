"""Coverage of metric-quality intervals on simulated judgments of REALSumm's shape (100 documents × 24 systems).

For each rule and resampling unit: the share of fresh datasets whose 95% interval contains the truth that unit
claims to speak of, and the mean width.

- documents (systems held fixed): fresh samples of documents for one fixed set of systems; the truth is the rule's
  value for those systems on the document population (`simulate.Design.truth`);
- systems (documents held fixed): fresh systems on one fixed set of documents; the truth is over the population of
  systems (`simulate.Design.population_truth`);
- both: fresh documents and fresh systems; the truth is over both populations.

Also, for contrast, the interval over documents alone when the systems are drawn afresh (what the system rule
reported before issue 33), and the pooled interval that resamples summaries as if they were independent.

    .venv/bin/python scripts/metric_quality_coverage.py [--datasets 400] [--resamples 1000] [--rules system]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--rules", nargs="*", default=["pooled", "document", "system"])
    parser.add_argument("--units", nargs="*", default=["documents", "systems", "both"])
    args = parser.parse_args()

    from fairness_core import metric_quality as mq
    from fairness_core.metric_quality.simulate import Design

    print(f"100 documents x 24 systems, {args.datasets} datasets, {args.resamples} resamples each, 95% percentile "
          "intervals")
    cases = []
    for rule in args.rules:
        for unit in args.units:
            design = Design(random_systems=unit != "documents", fixed_documents=unit == "systems")
            cases.append((rule, unit, design, unit != "documents", False))
    if "system" in args.rules:
        cases.append(("system", "documents", Design(random_systems=True), True, False))  # the old default
    if "pooled" in args.rules:
        cases.append(("pooled", "documents", Design(), False, True))  # summaries as if independent
    for rule, unit, design, population, naive in cases:
        started = time.perf_counter()
        truth = design.population_truth(rule) if population else design.truth(rule)
        hits, widths = 0, []
        for seed in range(args.datasets):
            judgments, scores = design.judgments(seed)
            if naive:  # every summary its own document: the naive bootstrap
                frame = judgments.frame.assign(item_id=[f"row{i}" for i in range(len(judgments))], system="one")
                judgments = mq.from_frame(frame, "naive")
            c = mq.correlate(judgments, scores, rule=rule, n_resamples=args.resamples, seed=seed, resample=unit)
            hits += c.ci_low <= truth <= c.ci_high
            widths.append(c.ci_high - c.ci_low)
        share = hits / args.datasets
        error = (share * (1 - share) / args.datasets) ** 0.5
        label = f"{rule}, {unit}" + (", systems drawn afresh" if population and unit == "documents" else "") + (
            ", summaries as independent" if naive else "")
        print(f"  {label:<46} truth {truth:.3f}  coverage {share:.3f} (s.e. {error:.3f})  mean width "
              f"{np.mean(widths):.3f}  ({time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
