"""Plan before you run: from a stored pilot run, the number of units (prompts per group, and samples per prompt where
the design has them) that detects an effect with a given power at α = 0.05, and the smallest effect detectable at
the pilot's own size — by simulation from the pilot's own units, tested by the permutation test each study uses.

This package is a statistics service below the studies (docs/FOUNDATION.md): it reads runs only through
`fairness_core.reading` (at each run's own thresholds), pages and commands import this face directly (no study's
face re-exports it, issue 42 §6), the `plan` command prints it, and the pages show it in a "Plan" panel beside their
headlines.

- `plan_run(store, run_id, effect, power, measure=None, ...)` -> `Plan` (`.answer`, one sentence; `.as_json()`)
- `plan_design(design, effect, power, samples=None)` for a pilot already in memory (`PilotDesign`, `FamilyPilot`)
- `result_run(store, run_ids, generation_plan)`: the run a decoding result belongs to (not one whose rows it
  reused); `plan_result(store, generation_plan, run_ids, effect, power, ...)` for a result with none of its own
- `PlanError`: bad input (an unknown run, a kind it cannot plan, an effect or power out of range), one sentence
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fairness_core.planning.pilot import (
    PAIRWISE,
    STATISTICS,
    TO_MEAN,
    TO_POOLED,
    CannotPlan,
    FamilyPilot,
    PilotDesign,
    VarianceParts,
    score_range,
)
from fairness_core.planning.plan import POWER_RANGE, Plan, PlanError, check_seed, check_target, plan_design
from fairness_core.planning.simulate import ALPHA, PERMUTATIONS, SIMULATIONS


def plan_run(store: Any, run_id: str, effect: float, power: float, measure: str | None = None,
             family: str | None = None, arm: str | None = None, against: str | None = None,
             samples: int | None = None, seed: int = 0) -> Plan:
    """The plan for a stored pilot run (or two runs compared: `against`); see the package docstring. `family`
    plans one family (attribute, prompt set) instead of the mean over them; `arm` picks a setting, system or metric
    output (default: the run's first)."""
    from fairness_core.planning.runs import run_pilot

    check_target(effect, power)
    design, chosen = run_pilot(store, run_id, measure, family, arm, against)
    return plan_design(design, effect, power, samples, seed, extra=chosen)


def run_arms(store: Any, run_id: str) -> list[str]:
    """The settings, systems or metric outputs of a stored run, in its order (what `plan_run`'s `arm` names)."""
    from fairness_core.planning.runs import run_arms as arms

    return arms(store, run_id)


def cannot_plan(store: Any, run_id: str) -> str | None:
    """Why a stored run's default question cannot be planned, in one sentence, or None (no simulation)."""
    from fairness_core.planning.runs import cannot_plan as why

    return why(store, run_id)


def plan_result(store: Any, plan: Any, run_ids: Sequence[str], effect: float, power: float,
                measure: str | None = None, family: str | None = None, arm: str | None = None,
                samples: int | None = None, seed: int = 0, thresholds: dict[str, float] | None = None) -> Plan:
    """The plan for a decoding result with no run of its own (`result_run` gave None): from the rows it read, under
    its request's families, settings and samples (`plan`, a `generation.GenerationPlan`; `run_ids`, the runs that
    stored them); see `planning.runs.result_info`. `thresholds`: what the view reads its rates at (such a result
    has no run beside which a sweep recorded them; default: the scorers' own)."""
    from fairness_core.planning.runs import result_pilot

    check_target(effect, power)
    design, chosen = result_pilot(store, plan, run_ids, measure, family, arm, thresholds)
    return plan_design(design, effect, power, samples, seed, extra=chosen)


def result_arms(store: Any, plan: Any, run_ids: Sequence[str]) -> list[str]:
    """The settings of a decoding result with no run of its own (what `plan_result`'s `arm` names)."""
    from fairness_core.planning.runs import result_arms as arms

    return arms(store, plan, run_ids)


def result_run(store: Any, run_ids: Sequence[str], plan: Any) -> str | None:
    """The run a decoding result belongs to (made by its request `plan`, a `generation.GenerationPlan`), of the runs
    behind it, to plan from; None when no run was made by it (see `planning.runs.result_run`)."""
    from fairness_core.planning.runs import result_run as found

    return found(store, run_ids, plan)


__all__ = [
    "ALPHA",
    "PAIRWISE",
    "PERMUTATIONS",
    "POWER_RANGE",
    "SIMULATIONS",
    "STATISTICS",
    "TO_MEAN",
    "TO_POOLED",
    "CannotPlan",
    "FamilyPilot",
    "PilotDesign",
    "Plan",
    "PlanError",
    "VarianceParts",
    "cannot_plan",
    "check_seed",
    "check_target",
    "plan_design",
    "plan_result",
    "plan_run",
    "result_arms",
    "result_run",
    "run_arms",
    "score_range",
]
