"""The prompt-set types, on their own so that every prompt source (regard templates and custom prompts in
`data.prompts`, BOLD in `data.bold`) can build them without importing another source."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field


class PromptError(ValueError):
    """Bad prompt input (empty set, group without prompts, unreadable file); one clear sentence."""


@dataclass(frozen=True)
class PromptItem:
    prompt_id: str
    group: str
    family: str
    text: str
    source: str = ""  # template text, BOLD entity, or "custom"
    redact: tuple[str, ...] = field(default_factory=tuple)  # names removed from generations before scoring
    #: a prompt about several attributes at once (issue 46): (attribute, value) pairs in the family's order, e.g.
    #: (("gender", "woman"), ("race", "Black")) for the group "woman × Black" of the family "gender × race"; empty
    #: for a prompt of one attribute (its family and group say it)
    attributes: tuple[tuple[str, str], ...] = ()


#: how the values of several attributes are joined into one group name, and their names into a family's
ATTRIBUTE_JOINER = " × "


def item_record(item: PromptItem) -> dict:
    """An item as a plain record; `attributes` only where it has some, so a one-attribute set's hash (and every run
    stored before attributes existed) is unchanged."""
    record = asdict(item)
    if not item.attributes:
        record.pop("attributes")
    else:
        record["attributes"] = [list(pair) for pair in item.attributes]
    return record


@dataclass(frozen=True)
class PromptSet:
    name: str
    items: tuple[PromptItem, ...]
    notes: tuple[str, ...] = ()  # what reading the input dropped (repeated prompts), for the user

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(item.group for item in self.items))

    @property
    def families(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for item in self.items:
            members = found.setdefault(item.family, [])
            if item.group not in members:
                members.append(item.group)
        return found

    def content_hash(self) -> str:
        payload = json.dumps([item_record(item) for item in self.items], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def to_records(self) -> list[dict]:
        return [item_record(item) for item in self.items]

    def only_groups(self, groups: Sequence[str]) -> PromptSet:
        """Keep the listed groups (in the set's order); a listed group with no prompts is an error."""
        wanted = [g.strip() for g in groups if g.strip()]
        known = self.groups
        lowered = {g.lower(): g for g in known}
        missing = [g for g in wanted if g.lower() not in lowered]
        if missing:
            raise PromptError(
                f"group(s) {', '.join(repr(g) for g in missing)} have no prompts in {self.name}; "
                f"available: {', '.join(known)}"
            )
        keep = {lowered[g.lower()] for g in wanted}
        return PromptSet(self.name, tuple(item for item in self.items if item.group in keep), self.notes)
