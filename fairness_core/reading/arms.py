"""Which arms of two stored runs are set side by side, and what differs between them and what both hold, in words.

A run is read as arms (`reading.rows`); a comparison, the planner's difference of two runs and `check`'s paired
criteria set arms side by side:

- two runs: their arms are matched on what they share — the same system (two runs of one system: other prompts,
  seeds or samples), else the same decoding setting (two models at one setting), else the same metric output;
  when nothing matches and one run has a single arm, that arm is set against each arm of the other (two settings
  of one model; a live move against each setting of a sweep); two runs of one arm each always meet;
- one run of several arms (a sweep): its first arm (the grid's first setting) against each of the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fairness_core.reading.rows import INPUT_SUFFIX, Arm, ReadError, RunRows
from fairness_core.store import RunInfo

#: at most this many arm pairs per pair of runs (a 20-setting sweep against another 20-setting one of other settings
#: would be 400 comparisons: then compare matching settings, or one setting, instead)
MAX_ARM_PAIRS = 60


@dataclass(frozen=True)
class Contrast:
    """One matched pair of arms: what differs between them and what both share, in words."""

    arm_a: Arm
    arm_b: Arm
    differs: str  # everything that differs: "prompts regard → regard (live subset); top_p 0.5 → 0.95"
    held: str  # "model gpt2, prompts regard templates (8 prompts), 3 sample(s) each, seed 0"
    matched_by: str  # "same system", "same decoding setting", "one against each", "within one run", ...
    arms_differ: str = ""  # what differs between the two arms themselves ("top_p 0.5 → 0.95"): the rows' `contrast`

    @property
    def label(self) -> str:
        return self.arms_differ or self.differs

    def as_json(self) -> dict[str, Any]:
        return {"run_a": self.arm_a.run_id, "run_b": self.arm_b.run_id, "arm_a": self.arm_a.label,
                "arm_b": self.arm_b.label, "differs": self.differs, "arms_differ": self.arms_differ, "held": self.held,
                "matched_by": self.matched_by}


def run_fields(info: RunInfo, inputs: dict[str, dict[str, Any]] | None = None) -> dict[str, str]:
    """What a run was asked for, in words, as the contrast texts name it (prompts, samples, seed, data, ...);
    `inputs` (`RunRows.inputs`) are the requests of the runs it read, whose generation length is its own."""
    from fairness_core.store.catalog import describe_manifest

    described = describe_manifest(info.manifest)
    request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
    fields: dict[str, str] = {}
    if described["dataset"]:
        name = "prompts" if isinstance(request, dict) and "prompts" in request else "data"
        fields[name] = " ".join(v for v in (described["dataset"], f"version {described['version']}"
                                            if described["version"] else "") if v)
    if described["size"]:
        fields["size"] = described["size"]
    if described["seed"]:
        fields["seed"] = described["seed"]
    if isinstance(request, dict) and isinstance(request.get("max_new_tokens"), int):
        fields["max new tokens"] = str(request["max_new_tokens"])
    for upstream in (inputs or {}).values():
        # a DATScore directions run scores translations of this length: "max new tokens 32 → 16", not their hash
        decoding = upstream.get("decoding") if isinstance(upstream.get("decoding"), dict) else {}
        length = upstream.get("max_new_tokens", decoding.get("max_new_tokens"))
        if isinstance(length, int) and "max new tokens" not in fields:
            fields["max new tokens"] = str(length)
    return fields


def _describe(fields_a: dict[str, str], fields_b: dict[str, str], setting_a: tuple, setting_b: tuple
              ) -> tuple[str, str]:
    """(what differs, what is held), in words."""
    differs, held = [], []
    knobs_a, knobs_b = dict(setting_a), dict(setting_b)
    for name in dict.fromkeys([*fields_a, *fields_b]):
        a, b = fields_a.get(name, ""), fields_b.get(name, "")
        if a == b:
            if a:
                held.append(f"{name} {a}")
        elif name == "setting" and setting_a and setting_b and not (knobs_a.get("greedy") or knobs_b.get("greedy")):
            changed = [k for k in dict.fromkeys([*knobs_a, *knobs_b]) if knobs_a.get(k) != knobs_b.get(k)
                       and k != "quantization"]
            differs += [f"{k} {_knob(knobs_a.get(k))} → {_knob(knobs_b.get(k))}" for k in changed] or [
                f"setting {a or '—'} → {b or '—'}"]
        else:
            differs.append(f"{name} {a or '—'} → {b or '—'}")
    return "; ".join(differs) or "nothing recorded (the same request)", ", ".join(held)


def _arm_differences(x: Arm, y: Arm) -> str:
    """What differs between two arms themselves (setting, model, metric, configuration), "" when nothing does."""
    differs, _ = _describe(x.fields, y.fields, x.setting, y.setting)
    return "" if differs.startswith("nothing recorded") else differs


def _knob(value: Any) -> str:
    if value is None:
        return "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def match_arms(a: RunRows, b: RunRows | None) -> list[Contrast]:
    """The pairs of arms a comparison sets side by side (module docstring), with what differs and what is held."""
    fields_a = run_fields(a.info, a.inputs)
    if b is None or b.info.run_id == a.info.run_id:
        if len(a.arms) < 2:
            raise ReadError(f"run {a.info.run_id} measured one thing ({a.arms[0].label if a.arms else 'nothing'}); "
                               "name a second run to compare it with")
        base = a.arms[0]
        return [Contrast(base, other, *_describe(fields_a | base.fields, fields_a | other.fields, base.setting,
                                                 other.setting), "within one run",
                         _arm_differences(base, other)) for other in a.arms[1:]]
    fields_b = run_fields(b.info, b.inputs)
    pairs: list[tuple[Arm, Arm]] = []
    matched_by = ""
    for rule, same in (("the same " + ("system" if any(arm.setting for arm in a.arms) else "metric output" if any(
                            "metric" in arm.fields for arm in a.arms) else "measurement"), lambda x, y: x.key == y.key),
                       ("same decoding setting", lambda x, y: bool(x.setting) and x.setting == y.setting),
                       ("the primary metric outputs", lambda x, y: "metric" in x.fields and x.primary and y.primary
                        and len([p for p in a.arms if p.primary]) == 1 == len([p for p in b.arms if p.primary]))):
        pairs = [(x, y) for x in a.arms for y in b.arms if same(x, y)]
        if pairs:
            matched_by = rule
            break
    if not pairs and a.arms and b.arms:
        if len(a.arms) == 1 or len(b.arms) == 1:
            pairs, matched_by = [(x, y) for x in a.arms for y in b.arms], "one against each"
        elif len(a.arms) * len(b.arms) <= MAX_ARM_PAIRS:
            pairs, matched_by = [(x, y) for x in a.arms for y in b.arms], "each against each (no setting in common)"
        else:
            raise ReadError(f"runs {a.info.run_id} and {b.info.run_id} have {len(a.arms)} and {len(b.arms)} "
                               "settings and none in common; compare each with a run of one setting, or runs with "
                               "settings in common")
    contrasts = []
    for x, y in pairs:
        differs, held = _describe(fields_a | x.fields, fields_b | y.fields, x.setting, y.setting)
        if differs.startswith("nothing recorded"):
            differs = "; ".join(manifest_differences(a.info, b.info, inputs_a=a.inputs, inputs_b=b.inputs)) or differs
        contrasts.append(Contrast(x, y, differs, held, matched_by, _arm_differences(x, y)))
    return contrasts


def _flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """A manifest's request as dotted paths to short texts (a list of records by their label or name)."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, item in value.items():
            out |= _flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return out
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, dict) and (v.get("label") or v.get("name")) for v in value) and value:
            return {prefix: ", ".join(str(v.get("label") or v.get("name")) for v in value)}
        return {prefix: ", ".join(str(v) for v in value)}
    return {prefix: str(value)}


def manifest_differences(a: RunInfo, b: RunInfo, limit: int = 4, inputs_a: dict[str, dict[str, Any]] | None = None,
                         inputs_b: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """What two runs' requests set differently ("decoding.max_new_tokens 4 → 6"); hashes of inputs are named only
    when nothing else differs (then the inputs themselves differ). An input both runs name by its manifest hash and
    both still have (`RunRows.inputs`) is compared by what was asked of it ("translations.decoding.max_new_tokens
    32 → 16"), not by its hash."""
    flat_a = _flatten(a.manifest.get("request", {}) if isinstance(a.manifest, dict) else {})
    flat_b = _flatten(b.manifest.get("request", {}) if isinstance(b.manifest, dict) else {})
    for name in set(inputs_a or {}) & set(inputs_b or {}):
        flat_a.pop(f"{name}{INPUT_SUFFIX}", None)
        flat_b.pop(f"{name}{INPUT_SUFFIX}", None)
        flat_a |= _flatten((inputs_a or {})[name], name)
        flat_b |= _flatten((inputs_b or {})[name], name)
    changed = [k for k in dict.fromkeys([*flat_a, *flat_b]) if flat_a.get(k) != flat_b.get(k)
               and not k.startswith("work")]
    plain = [k for k in changed if "hash" not in k and "sha" not in k and "identity" not in k]
    shown = []
    for key in (plain or changed)[:limit]:
        before, after = (_short(flat_a.get(key, "—")), _short(flat_b.get(key, "—")))
        shown.append(f"{key} {before} → {after}")
    return shown


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
