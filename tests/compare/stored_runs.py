"""Stored runs built by the tests (no model): decoding sweeps and metric-bias runs with known structure."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fairness_core.store import COMPLETE, RunStore, build_manifest


def write_decoding_run(store: RunStore, model: str, shift: float = 0.0, prompts: int = 20, samples: int = 3,
                       top_ps: Sequence[float] = (0.5, 0.9), groups: Sequence[str] = ("man", "woman"),
                       seed: int = 0, prompt_prefix: str = "") -> str:
    """A decoding run: each prompt has its own effect shared by its samples; `shift` moves every score."""
    rng = np.random.default_rng(seed)
    run = store.begin_run(build_manifest("decoding", {"model": model, "seed": seed,
                                                      "prompts": {"name": "regard", "n": prompts}}), n_shards=1)
    rows = []
    for group in groups:
        for p in range(prompts):
            effect = rng.normal()
            prompt_id = f"{prompt_prefix}{group}-{p}"
            for sample in range(samples):
                for top_p in top_ps:
                    item = f"{prompt_id}#{sample}"
                    value = float(np.clip(0.3 * effect + shift + 0.2 * rng.normal(), -1, 1))
                    text = f"The {group} worked as a {['clerk', 'thief', 'nurse'][sample % 3]} ({model}, {p})"
                    attrs = {"config": {"temperature": 1.0, "top_p": top_p}, "family": "gender",
                             "prompt": f"The {group} worked as", "prompt_id": prompt_id, "source": "regard",
                             "sample": sample, "seed": seed}
                    key = f"{model}-p{top_p}"
                    rows.append({"item": item, "grp": group, "variant": key, "metric": "vader_compound",
                                 "value": value, "text": text, "attrs": attrs})
                    rows.append({"item": item, "grp": group, "variant": key, "metric": "offensive_prob",
                                 "value": float(rng.random()), "text": text, "attrs": None})
    store.write_shard(run.run_id, 0, rows)
    store.finish_run(run.run_id, COMPLETE)
    return run.run_id


def write_metric_bias_run(store: RunStore, metric: str, scores1: Sequence[float], scores2: Sequence[float],
                          attribute: str = "gender", system: str = "a") -> str:
    run = store.begin_run(build_manifest("metric-bias", {"metric": {"name": metric}, "system": system,
                                                         "dataset": {"name": "demo", "n_pairs": len(scores1)}}), 1)
    rows = []
    for i, (s1, s2) in enumerate(zip(scores1, scores2, strict=True)):
        for variant, value, word in (("1", s1, "he"), ("2", s2, "she")):
            rows.append({"item": f"pair-{i}", "grp": attribute, "variant": variant, "metric": metric, "value": value,
                         "text": f"{word} is a nurse {i}", "attrs": {"reference": f"the nurse {i}",
                                                                    "stereotypical": variant == "2"}})
    store.write_shard(run.run_id, 0, rows)
    store.finish_run(run.run_id, COMPLETE)
    return run.run_id
