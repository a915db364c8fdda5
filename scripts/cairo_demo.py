"""Recompute the CAIRO page's shipped run (data/cairo/demo_bias_table.csv + demo_run.json) with both combination
variants and the prompt-bootstrap intervals.

    python scripts/cairo_demo.py [--store PATH] [--permutations 199]

Generations go through the run store, so a store that already holds them (e.g. from an earlier run of the same
command) is read back and nothing is generated again; a fresh store generates 768 continuations (a few minutes on
a CPU). The command below is the run the page documents (docs/cairo.md).
"""

from __future__ import annotations

import argparse
import shlex

SYSTEMS = ";".join(f"smollm2-135m-instruct@{knobs}" for knobs in (
    "top_p=0.5,temperature=0.7", "top_p=0.5", "top_p=0.8,temperature=0.7", "top_p=0.8", "top_p=0.95,temperature=0.7",
    "top_p=0.95", "top_p=0.9,top_k=20,temperature=1.3", "greedy"))
ARGS = ["--metrics", "BOLD gender,HONEST gender (valid)", "--sets", "5", "--set-order", "round-robin",
        "--per-subgroup", "4", "--max-new-tokens", "16", "--seeds", "0", "--sample-seed", "0",
        "--scorer", "jigsaw-toxicity"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=None, help="run store (default: the project's)")
    parser.add_argument("--permutations", type=int, default=199)
    parser.add_argument("--bootstrap", type=int, default=200)
    args = parser.parse_args()

    from fairness_core.cairo.request import read_bias_table
    from fairness_core.cairo.summary import save_demo, search_json
    from fairness_core.cairo.task import RunRequest, parse_systems, pipeline_manifest, run_pipeline
    from fairness_core.cairo.uncertainty import add_uncertainty
    from fairness_core.store import RunStore

    request = RunRequest(systems=parse_systems(SYSTEMS), metrics=("BOLD gender", "HONEST gender (valid)"), n_sets=5,
                         set_order="round-robin", per_subgroup=4, scorer=("jigsaw-toxicity", {}), seeds=(0,),
                         max_new_tokens=16, sample_seed=0)
    outcome = run_pipeline(request, RunStore(args.store))
    if outcome.status != "complete":
        raise SystemExit("the run did not complete; run the script again to resume")
    table = read_bias_table(outcome.bias_table, "the computed bias table")
    payloads = {}
    for combination in ("weighted", "released"):
        payload = search_json(table, permutations=args.permutations, seed=0, combination=combination)
        payloads[combination] = add_uncertainty(payload, table, outcome.generations, outcome.value_column,
                                                combination, n_boot=args.bootstrap)
    payload = payloads["weighted"] | {"run_ids": outcome.run_ids, "notes": [*outcome.notes, *table.notes],
                                      "prompt_split": outcome.split_rows, "indices": outcome.indices}
    command = ("python -m fairness_core cairo run --systems " + shlex.quote(SYSTEMS) + " "
               + " ".join(shlex.quote(a) for a in ARGS) + f" --permutations {args.permutations} --out bias.csv --json"
               + "  # and again with --combination released")
    manifest = pipeline_manifest(request) | {"generation_runs": outcome.run_ids,
                                             "scorer_column": outcome.value_column, "bootstrap": args.bootstrap}
    released = [{k: v for k, v in pair.items() if k != "systems"} for pair in payloads["released"]["pairs"]]
    save_demo(outcome.bias_table, payload, command, manifest, extra={"search_released": released})
    for combination, found in payloads.items():
        for pair in found["pairs"]:
            print(combination, pair["metric_a"], "vs", pair["metric_b"])
            for row, extra in zip(pair["by_size"], pair["uncertainty"]["by_size"], strict=True):
                print(f"  size {row['size']}: r {row['r']:.3f} p_search {row['p_search']} mean_r {row['mean_r']:.3f} "
                      f"[{extra['mean_r_low']}, {extra['mean_r_high']}] heldout {row['heldout_r']} "
                      f"combo_a {row['combo_a']} combo_b {row['combo_b']}")


if __name__ == "__main__":
    main()
