"""A CAIRO run as a pilot: one system's Eq. 1 on an original prompt set, its prompts resampled, tested as CAIRO's page
tests it. Reads the session's pipeline store (`pipeline_runs`, built once per session for the Compare tests too);
the plans themselves cost under a second."""

from __future__ import annotations

from pathlib import Path

from fairness_core.planning import plan_run, run_arms
from tests.compare.pipeline_runs import copy_store


def test_a_cairo_run_plans_prompts_per_subgroup_of_one_prompt_set(pipeline_runs, tmp_path: Path) -> None:
    """Each of the run's three systems (a tiny random GPT-2, 3 prompts per subgroup) gets a plan, or — where its
    scores on the prompt set came out all equal, as a tiny model's can — the sentence for a constant."""
    store = copy_store(pipeline_runs, tmp_path / "runs.duckdb")
    systems = run_arms(store, pipeline_runs.cairo)
    plans = [plan_run(store, pipeline_runs.cairo, 0.05, 0.8, arm=system) for system in systems]
    assert len(systems) == 3 and [p.extra["arm"] for p in plans] == systems
    for plan in plans:
        assert len(plan.extra["families"]) == 1 and "original" in plan.extra["families"][0]
        assert any("not the number of systems" in note for note in plan.notes)
        if plan.why:
            assert "is the same" in plan.why and plan.n_units is None
            continue
        assert plan.unit == "prompt" and plan.pilot_units == 3 and plan.n_samples is None and plan.n_units >= 2
        assert "Eq. 1 interval" in plan.method and "prompts per subgroup" in plan.answer
