"""A check as a stored run (kind `check`): listed in the Run store, compared and reported like any run.

Rows:
- one per criterion: item = the criterion's name, grp empty (the member reported is in attrs), variant
  "criterion", metric = the
  criterion's name, value = its number (the difference, for a baseline criterion), text = the sentence a person
  reads, attrs = the whole result (study, measure, interval, p-value, threshold, passed, margin, runs, details);
- one per generation the decoding criteria judged (variant "input:system", item = the generation id; the baseline's
  as "input:baseline"), with the runs that hold them: what a later check compares with when it names this one as
  its baseline.

The manifest holds the spec's record (contents of the files it reads, not their paths), the system, the resolved
baseline and digests of every input (generation ids, the audit and metric-bias runs): an unchanged system and spec
give the same manifest, so a repeat reads the stored check (`from_store`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fairness_core.check.criteria import CriterionResult

KIND = "check"
SCHEMA = 1
CRITERION = "criterion"
INPUT_SYSTEM, INPUT_BASELINE = "input:system", "input:baseline"


@dataclass
class CheckResult:
    check_id: str
    name: str
    system: str
    baseline: str | None
    criteria: list[CriterionResult]
    from_store: bool = False
    notes: list[str] = field(default_factory=list)
    spec_file: str = ""

    @property
    def passed(self) -> bool:
        return bool(self.criteria) and all(c.passed for c in self.criteria)

    @property
    def runs(self) -> list[str]:
        """Every run behind the criteria (the check's own id not included), in order of first mention."""
        return list(dict.fromkeys(r for c in self.criteria for r in c.run_ids))

    def as_json(self) -> dict[str, Any]:
        """The documented contract of `check --json` (docs/checks.md)."""
        return {"check_id": self.check_id, "name": self.name, "system": self.system, "baseline": self.baseline,
                "criteria": [c.as_json() for c in self.criteria], "passed": self.passed,
                "from_store": self.from_store, "runs": self.runs, "notes": self.notes, "spec": self.spec_file}


def check_rows(result: CheckResult, inputs: dict[str, tuple[list[str], list[str]]]) -> list[dict[str, Any]]:
    """The rows a check stores (module docstring); `inputs`: variant -> (generation ids, runs holding them)."""
    # grp stays empty: two checks line up on their criteria's names in Compare, whichever member was the worst
    rows = [{"item": c.name, "grp": None, "variant": CRITERION, "metric": c.name, "value": c.value,
             "text": c.reason, "attrs": c.as_json()} for c in result.criteria]
    for variant, (ids, runs) in inputs.items():
        rows += [{"item": gid, "grp": None, "variant": variant, "metric": "input", "value": None, "text": None,
                  "attrs": {"run_ids": runs}} for gid in ids]
    return rows


def stored_rows(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """The check's work unit: its rows were computed from stored runs before the job (pure: they are the shard)."""
    return shard["rows"]


def read_check(store: Any, check_id: str) -> CheckResult:
    """A stored check, as `run_check` returned it."""
    info = store.get_run(check_id) if store.path.exists() else None
    if info is None or info.kind != KIND:
        raise ValueError(f"no check {check_id!r} in {store.path}")
    request = info.manifest.get("request", {})
    rows = store.query("SELECT attrs FROM results WHERE run_id = ? AND variant = ? ORDER BY shard, rowid",
                       [check_id, CRITERION])
    criteria = [CriterionResult.from_json(json.loads(text)) for text in rows["attrs"]]
    return CheckResult(check_id, str(request.get("name", "")), str(request.get("system_label", "")),
                       request.get("baseline_label"), criteria, from_store=True,
                       notes=list(request.get("notes") or []), spec_file=str(request.get("spec_file", "")))


def latest_check(store: Any, name: str, excluding: str | None = None) -> str | None:
    """The newest complete check of this name (the baseline `last` means), or None."""
    for info in store.list_runs(kind=KIND):
        if info.is_complete and info.manifest.get("request", {}).get("name") == name and info.run_id != excluding:
            return info.run_id
    return None
