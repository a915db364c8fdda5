"""Prompt sets for open-ended generation: regard templates, BOLD, and custom prompts per group.

A prompt set is a list of `PromptItem`s, each tagged with its group and the *family* of related
groups it is compared within (disparity is computed inside a family: man vs woman, not man vs
Muslim person). `content_hash` fingerprints everything that changes outputs, for run manifests.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from fairness_core.data.prompt_set import PromptError, PromptItem, PromptSet  # re-exported: one import for users
from fairness_core.data.quoting import quoted

TEMPLATES_PATH = Path(__file__).resolve().parents[2] / "data" / "decoding" / "regard_templates.json"

#: a prompts file is a list of short texts: a bigger file is not one
MAX_PROMPTS_BYTES = 5_000_000
#: one prompt: far more than any template or BOLD prompt, and within a small model's window (a longer prompt would
#: be cut to the window without a word)
MAX_PROMPT_CHARS = 2_000


def validate(prompt_set: PromptSet, expected_groups: Iterable[str] = ()) -> None:
    """Raise PromptError for an empty set, empty prompt texts, or an expected group with no prompts."""
    if not prompt_set.items:
        raise PromptError(f"the prompt set {prompt_set.name!r} is empty: give at least one prompt")
    blank = [item.prompt_id for item in prompt_set.items if not item.text.strip()]
    if blank:
        raise PromptError(f"{len(blank)} prompt(s) are empty (first: {blank[0]})")
    present = set(prompt_set.groups)
    without = [g for g in expected_groups if g not in present]
    if without:
        raise PromptError(f"group(s) without prompts: {', '.join(without)}")


def default_templates() -> tuple[list[str], dict[str, list[str]]]:
    """The project's ten regard-style templates and the paper's group families."""
    data = json.loads(TEMPLATES_PATH.read_text())
    return list(data["templates"]), {k: list(v) for k, v in data["families"].items()}


def regard_prompts(templates: Sequence[str] | None = None,
                   families: dict[str, Sequence[str]] | None = None) -> PromptSet:
    """Every template filled with every group ("The {group} worked as" -> "The woman worked as")."""
    default_t, default_f = default_templates()
    templates = [t.strip() for t in (default_t if templates is None else templates) if t.strip()]
    families = default_f if families is None else families
    if not templates:
        raise PromptError("no templates: give at least one line with {group}, e.g. 'The {group} worked as'")
    bad = [t for t in templates if "{group}" not in t]
    if bad:
        raise PromptError(f"template {quoted(bad[0])} has no {{group}} placeholder")
    items = []
    for family, groups in families.items():
        for group in groups:
            group = group.strip()
            if not group:
                continue
            for index, template in enumerate(templates):
                items.append(PromptItem(f"regard:{group}:{index}", group, family,
                                        template.replace("{group}", group), source=template))
    prompt_set = PromptSet("regard templates", tuple(items))
    validate(prompt_set)
    return prompt_set


def parse_custom(text: str, family: str = "custom") -> PromptSet:
    """Custom prompts: CSV/TSV with `group,prompt` (optional `family`) columns, or `group: prompt` lines.

    A JSON object `{group: [prompts]}` is accepted too.
    """
    stripped = text.strip()
    if not stripped:
        raise PromptError("the custom prompt list is empty: give lines like 'woman: The woman worked as'")
    rows: list[tuple[str, ...]] = []  # (group, prompt, family[, source])
    if stripped.startswith(("{", "[")):
        rows += _json_rows(stripped, family)
    else:
        first = stripped.splitlines()[0].lower()
        if "group" in first and ("prompt" in first or "text" in first) and ("," in first or "\t" in first):
            dialect = "excel-tab" if "\t" in first else "excel"
            header = next(csv.reader(io.StringIO(stripped.splitlines()[0]), dialect=dialect))
            names = [name.strip().lower() for name in header]
            repeated = sorted({name for name in names if name and names.count(name) > 1})
            if repeated:
                raise PromptError(f"the CSV header names the column {quoted(repeated[0])} more than once; keep one")
            for record in csv.DictReader(io.StringIO(stripped), dialect=dialect):
                record = {k.strip().lower(): (v or "").strip() for k, v in record.items() if k}
                rows.append((record.get("group", ""), record.get("prompt") or record.get("text", ""),
                             record.get("family") or family))
        else:
            for number, line in enumerate(stripped.splitlines(), start=1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                if ":" not in line:
                    raise PromptError(f"line {number} ({quoted(line.strip())}) is not 'group: prompt'")
                group, prompt = line.split(":", 1)
                rows.append((group.strip(), prompt.strip(), family))
    items, seen, repeated = [], set(), 0
    for index, (group, prompt, fam, *given) in enumerate(rows):
        if not group:
            raise PromptError(f"custom prompt {index + 1} ({quoted(prompt)}) has no group")
        if not prompt:
            raise PromptError(f"group {quoted(group)} has an empty prompt (entry {index + 1})")
        if len(prompt) > MAX_PROMPT_CHARS:
            raise PromptError(f"prompt {index + 1} of group {quoted(group)} has {len(prompt):,} characters; the limit "
                              f"is {MAX_PROMPT_CHARS:,} (a longer prompt would not fit the model's window)")
        if (group, prompt) in seen:  # a repeated prompt counts once: it would weigh twice in its group's rate
            repeated += 1
            continue
        seen.add((group, prompt))
        source = given[0] if given and "{group}" in given[0] else "custom"  # a counterfactual set's variants
        attributes = given[1] if len(given) > 1 else ()
        items.append(PromptItem(f"custom:{group}:{index}", group, fam, prompt, source=source, attributes=attributes))
    notes = (f"{repeated} repeated prompt(s) (same group and text) were dropped; each prompt counts once",) \
        if repeated else ()
    prompt_set = PromptSet("custom prompts", tuple(items), notes)
    validate(prompt_set)
    return prompt_set


def _kind(value: object) -> str:
    return {str: "text", bool: "true/false", int: "a number", float: "a number", dict: "an object", list: "a list",
            type(None): "null"}.get(type(value), type(value).__name__)


def _json_rows(text: str, family: str) -> list[tuple[str, ...]]:
    """`{group: [prompt, ...]}` or `[{"group": ..., "prompt": ..., "family": ...}, ...]`; anything else is refused."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise PromptError(f"custom prompts look like JSON but do not parse: {error}") from None
    rows: list[tuple[str, ...]] = []
    if isinstance(data, dict):
        for group, prompts in data.items():
            if not isinstance(prompts, list):
                raise PromptError(f"group {quoted(group)} must map to a list of prompt texts, e.g. {{{group!r}: "
                                  f"[\"The {group} worked as\"]}} (got {_kind(prompts)})")
            if not prompts:
                raise PromptError(f"group {quoted(group)} has no prompts")
            for position, prompt in enumerate(prompts, start=1):
                if not isinstance(prompt, str):
                    raise PromptError(f"prompt {position} of group {quoted(group)} must be text (got {_kind(prompt)})")
                rows.append((str(group), prompt, family))
        return rows
    if isinstance(data, list):
        for position, entry in enumerate(data, start=1):
            if not isinstance(entry, dict):
                raise PromptError(f"JSON entry {position} must be an object with 'group' and 'prompt' "
                                  f"(got {_kind(entry)})")
            for name in ("group", "prompt"):
                if not isinstance(entry.get(name), str):
                    raise PromptError(f"JSON entry {position} needs '{name}' as text "
                                      f"(got {_kind(entry.get(name))})")
            entry_family = entry.get("family", family)
            if not isinstance(entry_family, str):
                raise PromptError(f"JSON entry {position}: 'family' must be text (got {_kind(entry_family)})")
            source = entry.get("source")  # a counterfactual set written by `counterfactual --out` keeps its pairing
            attributes = entry.get("attributes")  # and a crossed one each variant's attributes (issue 46)
            if attributes is not None and (not isinstance(attributes, dict) or not attributes or not all(
                    isinstance(k, str) and isinstance(v, str) and k.strip() and v.strip()
                    for k, v in attributes.items())):
                raise PromptError(f"JSON entry {position}: 'attributes' must be an object of attribute: group texts, "
                                  "e.g. {\"gender\": \"woman\", \"race\": \"Black\"}")
            rows.append((entry["group"].strip(), entry["prompt"].strip(), entry_family.strip() or family,
                         *([source if isinstance(source, str) else ""] if isinstance(source, str) or attributes
                           else []),
                         *([tuple((k.strip(), v.strip()) for k, v in attributes.items())] if attributes else [])))
        return rows
    raise PromptError(f"custom prompts in JSON must be an object {{group: [prompts]}} or a list of "
                      f"{{group, prompt}} objects (got {_kind(data)})")


def decode_upload(name: str, data: bytes) -> str:
    """An uploaded or read prompts file as text; a binary or non-UTF-8 file is one sentence."""
    if len(data) > MAX_PROMPTS_BYTES:
        raise PromptError(f"{name} is {len(data) / 1e6:.0f} MB; a prompts file is at most "
                          f"{MAX_PROMPTS_BYTES / 1e6:.0f} MB")
    if b"\x00" in data[:4096]:
        raise PromptError(f"{name} is a binary file, not a text file of prompts")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise PromptError(f"{name} is not UTF-8 text (byte {error.start} cannot be read); save it as UTF-8") from None


def load_prompt_source(spec: str, per_group: int = 20, seed: int = 0) -> PromptSet:
    """`regard`, `bold:<domain>` or a file path (custom prompts), as the CLI's --prompts takes it."""
    if spec == "regard":
        return regard_prompts()
    if spec.startswith("bold:"):
        from fairness_core.data.bold import bold_prompts

        return bold_prompts(spec.split(":", 1)[1], per_group=per_group, seed=seed)
    path = Path(spec).expanduser()
    if not path.is_file():
        raise PromptError(f"--prompts {quoted(spec)} is neither 'regard', 'bold:<domain>' nor an existing file")
    try:
        if path.stat().st_size > MAX_PROMPTS_BYTES:
            raise PromptError(f"{spec} is {path.stat().st_size / 1e6:.0f} MB; a prompts file is at most "
                              f"{MAX_PROMPTS_BYTES / 1e6:.0f} MB")
        data = path.read_bytes()
    except OSError as error:
        raise PromptError(f"--prompts {quoted(spec)} cannot be read: {error.strerror}") from None
    prompt_set = parse_custom(decode_upload(path.name, data))
    return PromptSet(path.name, prompt_set.items, prompt_set.notes)
