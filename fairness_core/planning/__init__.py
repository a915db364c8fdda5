"""Plan before you run: from a stored pilot run, the number of units (prompts per group, and samples per prompt where
the design has them) that detects an effect with a given power at α = 0.05, and the smallest effect detectable at
the pilot's own size — by simulation from the pilot's own units, tested by the permutation test each study uses.

This package is a statistics service: each study's face offers it (`decoding`, `metric_bias`, `cairo`, `audit`),
the `plan` command prints it, and the pages show it in a "Plan" panel beside their headlines.

- `plan_run(store, run_id, effect, power, measure=None, ...)` -> `Plan` (`.answer`, one sentence; `.as_json()`)
- `plan_design(design, effect, power, samples=None)` for a pilot already in memory (`PilotDesign`, `FamilyPilot`)
- `PlanError`: bad input (an unknown run, a kind it cannot plan, an effect or power out of range), one sentence
"""

from __future__ import annotations

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
from fairness_core.planning.plan import POWER_RANGE, Plan, PlanError, check_target, plan_design
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
    "check_target",
    "plan_design",
    "plan_run",
    "run_arms",
    "score_range",
]
