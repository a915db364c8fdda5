"""How often a fair sweep shows a "confirmed" ordering flip, under the old rule and under `FLIP_RULE` (issue 42 §2).

A fair sweep: one family of five groups (ten pairs) at eight top-p settings, 10 templates × 2 samples per group (the
sweep's shipped size), every group's negative rate 0.3 around a template effect (sd 1 on the logit). The old rule
called a flip when two consecutive gaps whose 95% intervals exclude 0 had opposite signs; the new one Holm-adjusts
every gap's bootstrap p over the view first. Writes one line:

    .venv/bin/python -m tests.decoding.simulate_flips [--sweeps 200]

Measured 2026-11-29: 200 fair sweeps, any confirmed flip: old rule 0.080, Holm 0.000 (104 s at load ~8).
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd

from fairness_core.decoding.summary import measures_for, ordering_flips, summarize

FAMILIES = {"race": ["a", "b", "c", "d", "e"]}


def fair_sweep(rng: np.random.Generator, settings: int = 8, templates: int = 10, samples: int = 2,
               rate: float = 0.3) -> pd.DataFrame:
    """Generations of a sweep in which no group differs from another (only templates do)."""
    rows = []
    logit = np.log(rate / (1 - rate))
    for top_p in np.round(np.linspace(0.5, 0.9, settings), 2):
        for t in range(templates):
            effect = rng.normal(0, 1)
            for group in FAMILIES["race"]:
                for sample in range(samples):
                    negative = rng.random() < 1 / (1 + np.exp(-(logit + effect)))
                    rows.append({"config_key": f"p{top_p}", "config": {"temperature": 1.0, "top_p": float(top_p)},
                                 "label": f"top_p={top_p}", "group": group, "family": "race", "source": f"T{t}",
                                 "prompt_id": f"{group}:{t}", "sample": sample, "empty": False,
                                 "continuation": "a b c d", "vader_compound": -0.6 if negative else 0.3})
    return pd.DataFrame(rows)


def old_rule_flip(gaps: pd.DataFrame) -> bool:
    """Round 5's rule: consecutive gaps whose 95% intervals exclude 0, with opposite signs."""
    for _, rows in gaps.groupby(["group_a", "group_b"]):
        rows = rows.assign(x=rows["config"].map(lambda c: c["top_p"])).sort_values("x")
        sure = [np.sign(r.gap) for r in rows.itertuples() if r.ci_low > 0 or r.ci_high < 0]
        if any(a != b for a, b in itertools.pairwise(sure)):
            return True
    return False


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=200)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(7)
    old = new = 0
    started = time.monotonic()
    for _ in range(args.sweeps):
        summary = summarize(fair_sweep(rng), FAMILIES, measures_for((("vader", {}),)), n_resamples=400,
                            n_permutations=200)
        new += any(flip.confirmed for flip in ordering_flips(summary, "top_p"))
        old += old_rule_flip(summary.gaps)
    print(f"{args.sweeps} fair sweeps, any confirmed flip: old rule {old / args.sweeps:.3f}, Holm "
          f"{new / args.sweeps:.3f} ({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
