"""A run's own statistical settings: what its study read it with, so every view shows the run's numbers.

Some settings change a run's numbers without changing its rows: the threshold a rate is read at (VADER compound
≤ −0.25 counts as negative by default; `decoding --threshold -0.5` reads the same scores at −0.5), the bootstrap's
resamples and its seed. They are not part of the run's identity (its manifest hash): moving a threshold must not
make a new run of stored generations. So they are recorded *beside* the run (`RunStore.record_read_settings`,
outside the hash) by the study that read it — the decoding sweep records its request's thresholds and resamples for
the run its request made — and every other view reads the run with them: Compare's per-run columns, the report,
the planner's pilot, `slices`. A caller may still pass its own (`settings_of(..., thresholds=..., n_resamples=...)`);
`ReadSettings.source` says where each came from, and every view says which it used.

The record is the latest read of the run by its study (the same request run again with another threshold reads
the same run: the record then says the newer threshold). Recording is best-effort: a read-only store (a shared
copy) or one held busy past the lock timeout is read as it is, and its runs read as they were recorded. A run no
study recorded anything for (made before this record existed, an import, a metric-bias run) is read with the lab's
defaults, and its settings say so.

The rest of the settings follow from the run's kind and are the same for every run of that kind (docs/statistics.md):
the estimator, the resampled unit, the interval, the test, its level and the multiplicity rule of its verdicts.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fairness_core.bias.disparity import ALPHA, FAMILY_RULE
from fairness_core.reading.intervals import DEFAULT_RESAMPLES  # when the run recorded none (CLI, page, Compare)
from fairness_core.store import RunInfo, RunStore, StoreError

#: where settings came from, in words (`ReadSettings.source`)
RECORDED = "recorded with the run"
DEFAULTS = "the lab's defaults (the run recorded none)"
GIVEN = "given for this view"
#: one sentence each, per kind of run: how its per-run numbers are computed (`ReadSettings.estimator`, ...)
GENERATION_DESIGN = {
    "estimator": "each cell's mean over its generations (a rate: the share at or past its threshold); a disparity "
                 "is the mean absolute pairwise difference of a family's group rates (Dhamala et al. 2022)",
    "unit": "prompt (a template shared by a family's groups is one unit)",
    "interval": "95% percentile bootstrap over units, templates whole and other prompts within their group",
    "test": "permutation test of the group labels (within templates; whole prompts between groups)",
    "multiplicity": FAMILY_RULE,
}
OTHER_DESIGN = {
    "estimator": "each cell's mean over its rows",
    "unit": "the kind's unit (a pair, a text, a segment)",
    "interval": "95% percentile Poisson bootstrap over units",
    "test": "none per run (Compare tests differences between runs)",
    "multiplicity": "none per run",
}


class SettingsError(ValueError):
    """A setting out of range (a threshold outside its scale, resamples below 1); one sentence."""


@dataclass(frozen=True)
class ReadSettings:
    """How one run is read: the settings that change its numbers, and the design that follows from its kind."""

    #: rate measure name -> the threshold it is read at (the scorer's declared `Measure.threshold` unless recorded
    #: or given otherwise); a measure not listed is read at its declared threshold
    thresholds: tuple[tuple[str, float], ...] = ()
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    source: str = DEFAULTS  # where the thresholds and resamples came from (RECORDED, DEFAULTS, GIVEN)
    alpha: float = ALPHA
    design: tuple[tuple[str, str], ...] = tuple(GENERATION_DESIGN.items())

    def threshold(self, measure: Any) -> float:
        """The threshold a rate measure (`scorers.base.Measure`) is read at here."""
        return float(dict(self.thresholds).get(measure.name, measure.threshold))

    @property
    def threshold_map(self) -> dict[str, float]:
        return dict(self.thresholds)

    @property
    def estimator(self) -> str:
        return dict(self.design)["estimator"]

    @property
    def unit(self) -> str:
        return dict(self.design)["unit"]

    @property
    def interval(self) -> str:
        return dict(self.design)["interval"]

    @property
    def test(self) -> str:
        return dict(self.design)["test"]

    @property
    def multiplicity(self) -> str:
        return dict(self.design)["multiplicity"]

    def words(self) -> str:
        """The settings that may differ between runs, in words: "negative_sentiment_rate at −0.5; 200 resamples,
        seed 0 (recorded with the run)"."""
        shown = [f"{name} at {_signed(value)}" for name, value in self.thresholds]
        thresholds = "; ".join(shown) if shown else "every rate at its scorer's threshold"
        return f"{thresholds}; {self.n_resamples:,} resamples, seed {self.seed} ({self.source})"

    def as_json(self) -> dict[str, Any]:
        return {"thresholds": dict(self.thresholds), "n_resamples": self.n_resamples, "seed": self.seed,
                "source": self.source, "alpha": self.alpha, **dict(self.design)}


def _signed(value: float) -> str:
    return f"{value:g}".replace("-", "\u2212")


def check_settings(thresholds: Mapping[str, float] | None, n_resamples: int | None) -> None:
    """One sentence for a threshold that is not a finite number or resamples below 1."""
    for name, value in (thresholds or {}).items():
        if not isinstance(value, (int, float)) or not math.isfinite(float(value)):
            raise SettingsError(f"the threshold of {name} must be a finite number (got {value!r})")
    if n_resamples is not None and (not isinstance(n_resamples, int) or n_resamples < 1):
        raise SettingsError(f"bootstrap resamples must be a whole number of at least 1 (got {n_resamples!r})")


def recordable(thresholds: Mapping[str, float] | None, n_resamples: int) -> dict[str, Any]:
    """What a study records beside a run it read (`RunStore.record_read_settings`)."""
    check_settings(thresholds, n_resamples)
    return {"thresholds": {str(k): float(v) for k, v in sorted((thresholds or {}).items())},
            "n_resamples": int(n_resamples)}


def record_settings(store: RunStore, run_ids: Sequence[str], thresholds: Mapping[str, float] | None,
                    n_resamples: int) -> None:
    """Record, beside each of `run_ids` (the runs a study's request made), the thresholds and resamples it read
    them with (module docstring)."""
    settings = recordable(thresholds, n_resamples)
    for run_id in dict.fromkeys(run_ids):
        if store.read_settings(run_id) == settings:  # a read-only look first: most reads record nothing new
            continue
        if not os.access(store.path, os.W_OK):
            return  # a read-only store (a shared copy) is read as it is: its runs then read with their records
        try:
            store.record_read_settings(run_id, settings)
        except StoreError:  # busy past the lock timeout: the views say "the lab's defaults" rather than fail a read
            return


def run_seed(info: RunInfo) -> int:
    """The seed the run was generated with (its page seeds the summary's bootstrap with it), 0 if none recorded."""
    request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
    seeds = request.get("seeds") if isinstance(request, dict) else None
    try:
        return int(seeds[0]) if seeds else 0
    except (TypeError, ValueError, KeyError):
        return 0


def settings_of(store: RunStore | None, info: RunInfo, thresholds: Mapping[str, float] | None = None,
                n_resamples: int | None = None) -> ReadSettings:
    """The settings a run is read with: what the caller gives, else what was recorded beside the run, else the
    defaults (module docstring). Nothing is written."""
    check_settings(thresholds, n_resamples)
    recorded: dict[str, Any] = {}
    if store is not None and info.kind == "generation":
        recorded = store.read_settings(info.run_id)
    # every rate of the run at the threshold it is read at, the scorer's own where nothing else is said: two runs'
    # settings are then compared value by value (`differing_thresholds`)
    own = rate_thresholds(info) | {str(k): float(v) for k, v in (recorded.get("thresholds") or {}).items()}
    own_resamples = recorded.get("n_resamples")
    if not isinstance(own_resamples, int) or own_resamples < 1:
        own_resamples = DEFAULT_RESAMPLES
    chosen = own | {str(k): float(v) for k, v in (thresholds or {}).items()}
    chosen_resamples = int(n_resamples) if n_resamples is not None else own_resamples
    source = GIVEN if (chosen, chosen_resamples) != (own, own_resamples) else RECORDED if recorded else DEFAULTS
    design = GENERATION_DESIGN if info.kind in ("generation", "decoding") else OTHER_DESIGN
    return ReadSettings(tuple(sorted(chosen.items())), chosen_resamples, run_seed(info), source,
                        design=tuple(design.items()))


def rate_thresholds(info: RunInfo) -> dict[str, float]:
    """Each rate measure the run's scorers declare, at the threshold the scorer declares (registry look-up; no
    model loads). A retired `decoding` run counts negative sentiment only."""
    from fairness_core.scorers import SCORERS

    if info.kind == "decoding":
        from fairness_core.scorers.sentiment import DEFAULT_NEGATIVE_THRESHOLD

        return {"negative_sentiment_rate": DEFAULT_NEGATIVE_THRESHOLD}
    request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
    found: dict[str, float] = {}
    for scorer in (request.get("scorers") or []) if isinstance(request, dict) else []:
        cls = SCORERS.get(scorer.get("name")) if isinstance(scorer, dict) else None
        for measure in getattr(cls, "measures", ()):
            if measure.kind == "rate":
                found.setdefault(measure.name, float(measure.threshold))
    return found


def differing_thresholds(settings: Mapping[str, ReadSettings], measures: Sequence[str] = ()) -> str:
    """One sentence when runs set side by side were read with different thresholds (their rates are then not the
    same quantity), "" when they agree. `settings`: run id -> its settings; `measures`: the rates to look at
    (default: every one any run names)."""
    names = list(measures) or sorted({name for s in settings.values() for name, _ in s.thresholds})
    for name in names:
        values = {run_id: s.threshold_map[name] for run_id, s in settings.items() if name in s.threshold_map}
        if len(set(values.values())) > 1:  # a rate only one run measures lines up with nothing: not a mismatch
            shown = ", ".join(f"run {run_id} at {_signed(v)}" for run_id, v in values.items())
            return (f"the runs were read with different {name} thresholds ({shown}), so their rates count different "
                    "generations: a difference between them mixes the threshold with what the runs changed")
    return ""


def with_resamples(settings: ReadSettings, n_resamples: int) -> ReadSettings:
    return replace(settings, n_resamples=int(n_resamples))


__all__ = ["DEFAULTS", "DEFAULT_RESAMPLES", "GIVEN", "RECORDED", "ReadSettings", "SettingsError", "check_settings",
           "differing_thresholds", "rate_thresholds", "record_settings", "recordable", "run_seed", "settings_of",
           "with_resamples"]
