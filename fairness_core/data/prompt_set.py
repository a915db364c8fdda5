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
        payload = json.dumps([asdict(item) for item in self.items], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def to_records(self) -> list[dict]:
        return [asdict(item) for item in self.items]

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
