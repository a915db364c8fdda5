"""CAIRO combination search: z-normalised chunked matrix products vs a plain scipy.stats.pearsonr loop.

Both sides compute the same thing for one metric pair: for every size, the best Pearson r over all pairs
of same-size combinations (original + any subset of the other sets; a combination's bias = mean of its
sets' bias vectors) and the mean r over those pairs.
- loop: build every combination vector, then `scipy.stats.pearsonr(x, y)` for every same-size pair;
- fast: `fairness_core.cairo.search.search_size` for every size.
Measured side by side in one process on the same random table at a size where the loop finishes
(`--loop-sets`), then the fast search alone on the issue's size (`--sets` = 15 other sets, 10 systems:
all 2^15 × 2^15 combinations, C(30, 15) = 155,117,520 same-size pairs). The loop's time at the full
size is extrapolated from its per-pair time (said so in the output). Last, the beam heuristic's gap
to the exhaustive best r at the full size.

    .venv/bin/python -m bench.cairo_search [--sets 15] [--systems 10] [--loop-sets 8] [--beam 64]
"""

from __future__ import annotations

import argparse
import itertools
import math
import time


def _loop(a, b) -> list[tuple[float, float]]:
    import numpy as np
    from scipy import stats

    def combos(sets, size):
        out = []
        for chosen in itertools.combinations(range(1, len(sets.names)), size - 1):
            out.append(sets.values[[0, *chosen]].mean(axis=0))
        return out

    results = []
    for size in range(1, 2 + min(a.n_others, b.n_others)):
        rs = [stats.pearsonr(x, y).statistic for x in combos(a, size) for y in combos(b, size)]
        results.append((max(rs), float(np.mean(rs))))
    return results


def _fast(a, b) -> list[tuple[float, float]]:
    from fairness_core.cairo.search import search_size

    return [(found.r, found.mean_r) for found in
            (search_size(a, b, size) for size in range(1, 2 + min(a.n_others, b.n_others)))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=15, help="other prompt sets per metric (besides the original)")
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--loop-sets", type=int, default=8, help="other sets for the side-by-side with the loop")
    parser.add_argument("--repeats", type=int, default=2, help="side-by-side timings: best of this many")
    parser.add_argument("--beam", type=int, default=64, help="beam width of the heuristic")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import numpy as np

    from fairness_core.cairo.search import MetricSets, beam_search, search_size

    rng = np.random.default_rng(args.seed)

    def table(others: int) -> MetricSets:
        names = tuple(["original", *[f"set{i}" for i in range(1, others + 1)]])
        return MetricSets(names, rng.random((others + 1, args.systems)))

    # Side by side where the loop finishes.
    a, b = table(args.loop_sets), table(args.loop_sets)
    pairs_small = math.comb(2 * args.loop_sets, args.loop_sets)
    from scipy import stats

    stats.pearsonr(a.values[0], b.values[0])  # warm-up: the first call imports and allocates
    loop_s = fast_s = float("inf")
    for _ in range(args.repeats):  # interleaved, best of N: a busy shared machine slows both alike
        start = time.perf_counter()
        loop_results = _loop(a, b)
        loop_s = min(loop_s, time.perf_counter() - start)
        start = time.perf_counter()
        fast_results = _fast(a, b)
        fast_s = min(fast_s, time.perf_counter() - start)
    worst = max(max(abs(x[0] - y[0]), abs(x[1] - y[1])) for x, y in zip(loop_results, fast_results, strict=True))
    print(f"{args.loop_sets} other sets per metric, {args.systems} systems: {pairs_small:,} same-size pairs",
          flush=True)
    print(f"  scipy.stats.pearsonr loop (best of {args.repeats}): {loop_s:8.3f} s  "
          f"({loop_s / pairs_small * 1e6:.1f} µs/pair)")
    print(f"  z-normalised chunked products: {fast_s:8.4f} s  -> {loop_s / fast_s:,.0f}x faster; "
          f"max |difference| in best/mean r {worst:.1e} (float32 scan)", flush=True)

    # The size, fast side only.
    a, b = table(args.sets), table(args.sets)
    pairs_full = math.comb(2 * args.sets, args.sets)
    start = time.perf_counter()
    full = [search_size(a, b, size) for size in range(1, args.sets + 2)]
    full_s = time.perf_counter() - start
    loop_full_s = loop_s / pairs_small * pairs_full
    print(f"{args.sets} other sets per metric (2^{args.sets} combinations each), {args.systems} systems: "
          f"{pairs_full:,} same-size pairs over {args.sets + 1} sizes")
    print(f"  z-normalised chunked products: {full_s:8.2f} s ({pairs_full / full_s / 1e6:,.0f} M pairs/s); the loop "
          f"would take about {loop_full_s / 3600:,.1f} h at its measured µs/pair (extrapolated) -> "
          f"{loop_full_s / full_s:,.0f}x", flush=True)

    # The released code's variant (pooled Eq. 1, multisets, one combination for both metrics; sizes 1-6) on the
    # same number of sets, 2 subgroups.
    from fairness_core.cairo.search import PooledSets, released_size

    def pooled(others: int) -> PooledSets:
        names = tuple(["original", *[f"set{i}" for i in range(1, others + 1)]])
        shape = (others + 1, args.systems, 2)
        return PooledSets(names, rng.random(shape), rng.integers(4, 40, size=shape).astype(float))

    pa, pb = pooled(args.sets), pooled(args.sets)
    start = time.perf_counter()
    released = [released_size(pa, pb, size) for size in range(1, min(6, args.sets + 1) + 1)]
    released_s = time.perf_counter() - start
    print(f"  released variant (pooled Eq. 1, multisets, sizes 1-6): {released_s:.2f} s for "
          f"{sum(r.n_pairs for r in released):,} combinations", flush=True)

    # Beam heuristic's gap at the full size.
    start = time.perf_counter()
    beam = beam_search(a, b, args.sets + 1, width=args.beam)
    beam_s = time.perf_counter() - start
    gaps = [f.r - h.r for f, h in zip(full, beam, strict=True)]
    print(f"  beam search (width {args.beam}): {beam_s:.2f} s; gap to the exhaustive best r: mean {np.mean(gaps):.4f}, "
          f"max {max(gaps):.4f} (size {1 + int(np.argmax(gaps))}), zero at {sum(g < 1e-12 for g in gaps)} of "
          f"{len(gaps)} sizes")


if __name__ == "__main__":
    main()
