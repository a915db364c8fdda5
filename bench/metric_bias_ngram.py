"""n-gram metrics on ~950 pairs: seconds per metric and configuration, all five together.

Pairs: the CrowS-Pairs attributes of the paper (race, religion, physical appearance, age,
socioeconomic status): 943 pairs = 1,886 candidate-reference scorings per metric. Times are for the
metric scoring only (`NgramMetric.score`), measured in this process one after another.

    .venv/bin/python -m bench.metric_bias_ngram
"""

from __future__ import annotations

import argparse
import time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    from fairness_core.data import crows_pairs
    from fairness_core.metrics import metric_from_request
    from fairness_core.metrics.ngram import CONFIGS, NGRAM_METRICS

    dataset = crows_pairs.build()
    candidates = [p.candidate1 for p in dataset.pairs] + [p.candidate2 for p in dataset.pairs]
    references = [p.reference for p in dataset.pairs] + [p.reference_for(2) for p in dataset.pairs]
    print(f"{len(dataset)} pairs ({len(candidates)} scorings per metric), CrowS-Pairs paper attributes")
    for config in CONFIGS:
        metrics = {name: metric_from_request(name, config=config) for name in NGRAM_METRICS}
        # Pass 1 is cold (nltk loads WordNet and memoises its lookups for METEOR); pass 2 is warm.
        for label in ("cold", "warm"):
            total = 0.0
            parts = []
            for name, metric in metrics.items():
                started = time.perf_counter()
                metric.score(candidates, references)
                elapsed = time.perf_counter() - started
                total += elapsed
                parts.append(f"{name} {elapsed:.2f} s")
            print(f"{config:<22} {label}: all five {total:.2f} s  ({', '.join(parts)})")

if __name__ == "__main__":
    main()
