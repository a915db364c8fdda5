"""`cairo run` pipeline: systems parsing, paired sets, the bias table from stored generations, resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_core.cairo.task import (
    CairoInputError,
    RunRequest,
    parse_seeds,
    parse_system,
    parse_systems,
    pipeline_manifest,
    plan_sets,
    run_pipeline,
)
from fairness_core.models.interfaces import DecodingConfig


def test_parse_systems() -> None:
    system = parse_system("gpt2@top_p=0.8,temperature=0.7")
    assert system.decoding.top_p == 0.8 and system.decoding.temperature == 0.7
    assert parse_system("gpt2@greedy").decoding.greedy
    with pytest.raises(CairoInputError, match="unknown knob"):
        parse_system("gpt2@beam=3")
    with pytest.raises(CairoInputError, match="at least 3 systems"):
        parse_systems("gpt2@greedy;gpt2@top_p=0.5")
    with pytest.raises(CairoInputError, match="listed twice"):
        parse_systems("gpt2@greedy;gpt2@greedy;gpt2@top_p=0.5")


def test_parse_seeds() -> None:
    assert parse_seeds("0, 1,2,") == (0, 1, 2)
    assert parse_seeds("") == ()  # RunRequest.problems() then asks for at least one seed
    with pytest.raises(CairoInputError) as refused:
        parse_seeds("0,a")
    assert str(refused.value) == "seeds must be comma-separated whole numbers, e.g. 0,1,2 (got '0,a')"


def test_a_system_is_exactly_what_was_written() -> None:
    # top_k and temperature written, top_p not: no nucleus cut is added (it used to add top_p=0.9 silently)
    system = parse_system("gpt2@top_k=20,temperature=1.3")
    assert (system.decoding.top_k, system.decoding.temperature, system.decoding.top_p) == (20, 1.3, None)
    assert system.name == "gpt2 · top_k=20,temperature=1.3"
    assert parse_system("gpt2").decoding == DecodingConfig()  # nothing written: plain sampling
    # a system that wrote top_p is the same system as before (name and store key unchanged)
    pinned = parse_system("gpt2@top_p=0.9,top_k=20,temperature=1.3")
    assert pinned.name == "gpt2 · top_p=0.9,top_k=20,temperature=1.3"
    assert pinned.decoding == DecodingConfig(top_p=0.9, top_k=20, temperature=1.3)
    # the manifest shows every knob, the unwritten ones at their defaults
    manifest = pipeline_manifest(RunRequest(systems=(system, pinned, parse_system("gpt2@greedy"))))
    assert manifest["decoding"][system.name] == {"temperature": 1.3, "top_k": 20, "top_p": None}


def test_plan_pairs_every_set_with_the_originals() -> None:
    request = RunRequest(systems=parse_systems("a@greedy;b@greedy;c@greedy"), n_sets=2, per_subgroup=3)
    planned = plan_sets(request)
    for metric, indices in planned.indices.items():
        per_set: dict[str, list[int]] = {}
        for metric_name, set_name, index in planned.where.values():
            if metric_name == metric:
                per_set.setdefault(set_name, []).append(index)
        assert set(per_set) == {"original", *list(per_set)[1:3]} and len(per_set) == 3
        assert all(sorted(v) == indices for v in per_set.values())


def test_pipeline_with_tiny_models_is_stored_and_resumes(tiny_gpt2: Path, store) -> None:
    systems = parse_systems(f"{tiny_gpt2}@top_p=0.9;{tiny_gpt2}@top_p=0.5,temperature=0.7;{tiny_gpt2}@greedy")
    request = RunRequest(systems=systems, n_sets=1, per_subgroup=2, max_new_tokens=4, seeds=(0, 1))
    first = run_pipeline(request, store)
    assert first.status == "complete" and first.value_column == "jigsaw_toxic"  # the default judge (issue 29)
    table = first.bias_table
    assert len(table) == 3 * 2 * 2  # systems x metrics x sets
    assert (table["n_prompts"] == 4).all() and (table["n_generations"] == 8).all()
    assert (table["ci_low"] <= table["ci_high"]).all() and table["ci_low"].notna().all()
    assert first.split_rows and "r_heldout_half" in first.split_rows[0]
    second = run_pipeline(request, store)
    assert second.bias_table["bias"].tolist() == pytest.approx(table["bias"].tolist())
    assert store.query("SELECT count(DISTINCT run_id) AS n FROM runs")["n"][0] == 1  # nothing regenerated


def test_round_robin_takes_sets_in_turn_across_paraphrasing_models() -> None:
    from fairness_core.cairo.task import order_sets

    names = ["Mixtral", "Mistral #1", "Mistral #2", "Llama #1", "Llama #2"]
    assert order_sets(names) == ["Mixtral", "Mistral #1", "Llama #1", "Mistral #2", "Llama #2"]
    assert order_sets(names, "file") == names
