"""Two runs' units that hold the same prompt meet (`reading.shared_units`, issue 43 §4): a regard template and a
counterfactual set of one of its prompts are one unit in a comparison, whatever each run called it; and a run that
reads a CrowS-Pairs run's sentence scores reads the page's two measures (`reading.rows.read_stereotype_scores`)."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import pytest

from fairness_core.reading import RunRows, read_run, shared_units
from fairness_core.store import RunInfo, RunStore, build_manifest


def rows(run_id: str, members: dict[str, list[str]] | None) -> RunRows:
    info = RunInfo(run_id, "generation", {}, "", "complete", 1, 1, 0, datetime(2026, 1, 1), None, {}, None)
    frame = None if members is None else pd.DataFrame(
        [(unit, text) for unit, texts in members.items() for text in texts], columns=["unit", "member"])
    return RunRows(info, [], pd.DataFrame(), ["family", "group"], "prompt", members=frame)


def test_units_holding_the_same_prompt_become_the_first_runs_unit() -> None:
    regard = rows("a", {"template|The {group} worked as": ["The man worked as", "The woman worked as"],
                        "template|The {group} was known for": ["The man was known for"]})
    mine = rows("b", {"template|{group} variants of: The man worked as": ["The man worked as", "The woman worked as"],
                      "template|{group} variants of: The woman liked to eat": ["The man liked to eat"]})
    assert shared_units(regard, mine) == {"template|{group} variants of: The man worked as":
                                          "template|The {group} worked as"}
    assert shared_units(regard, regard) == {}  # one run against itself: its own units
    assert shared_units(regard, rows("c", None)) == {}  # a kind without prompts


def test_a_unit_holding_prompts_of_two_units_of_the_other_run_joins_all_three() -> None:
    a = rows("a", {"u1": ["x"], "u2": ["y"], "u3": ["z"]})
    b = rows("b", {"v": ["x", "y"], "w": ["q"]})
    assert shared_units(a, b) == {"u2": "u1", "v": "u1"}


def test_a_crows_pairs_run_is_read_as_pct_stereotype_and_likelihood_diff(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.duckdb")
    manifest = build_manifest("stereotype-scores", {"benchmark": "crows-pairs", "data": {"name": "crows", "n": 3}})
    info = store.begin_run(manifest, 1)
    scores = {"p1": (-10.0, -12.0), "p2": (-9.0, -5.0), "p3": (-4.0, -4.0)}  # d = +2, −4, 0 (a tie: not more)
    store.write_shard(info.run_id, 0, [
        {"item": item, "grp": None, "variant": variant, "metric": "logprob", "value": value, "text": None,
         "attrs": {}} for item, pair in scores.items() for variant, value in zip(("more", "less"), pair, strict=True)])
    store.finish_run(info.run_id, "complete")
    read = read_run(store, store.get_run(info.run_id))
    means = read.sums.groupby("metric")["total"].mean()
    assert means["pct_stereotype"] == pytest.approx(100 / 3)
    assert means["likelihood_diff"] == pytest.approx(2.0)
    assert read.unit_name == "item" and set(read.sums["unit"]) == {"p1", "p2", "p3"}
