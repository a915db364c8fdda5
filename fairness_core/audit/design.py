"""What a judge audit scores: every template filled with every identity term.

A `Design` is a table of texts, one per (template, term), with the term's group, the template's toxic / non-toxic
label where it has one (IPTTS and the built-in set), a neutral reference (the template with the identity slot
left out) for metrics that compare a candidate with a reference, and the template's **cluster**: the unit the
intervals resample. Templates written from one pattern with different filler words ("Being {person} is
wonderful." / "... is kind.") share how the judge reacts to a term in that pattern, so they are not independent:
the cluster of a built-in template is its pattern (11 patterns make the 43 templates), of an IPTTS row its
`Template` column, of an EEC sentence its template; a user's template or a swapped text is its own cluster. It
comes from:
- templates with a ``{person}`` slot (built-in IPTTS-style set or a user's file) x identity terms;
- an IPTTS or EEC file through the template importers (`fairness_core.adaptation.templates`): the file's own
  sentences;
- generated texts: each text that mentions exactly one identity term becomes a template, filled with every term
  (the demographic word swapped; texts with none or several terms are counted and left out).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from fairness_core.adaptation.templates import SLOT, ImportedSet, fill, load_identity_terms, term_pattern

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "audit"
LABELS = {"toxic": "toxic", "bad": "toxic", "1": "toxic", "true": "toxic",
          "non-toxic": "non-toxic", "nontoxic": "non-toxic", "not toxic": "non-toxic", "not_bad": "non-toxic",
          "0": "non-toxic", "false": "non-toxic", "": ""}
TEXT_COLUMNS = ["template_id", "term", "group", "text", "reference", "label", "cluster"]
#: the columns the content hash covers (the cluster is derived from the template ids' source)
HASHED_COLUMNS = ["template_id", "term", "group", "text", "reference", "label"]


class AuditInputError(ValueError):
    """Bad audit input (a file, a row, a field), found before anything is scored; one sentence."""


@dataclass(frozen=True)
class LabelledTemplate:
    template_id: str
    text: str  # with SLOT exactly once
    label: str = ""  # toxic | non-toxic | "" (unlabelled)
    cluster: str = ""  # the pattern it was written from ("" = its own cluster)


@dataclass
class Design:
    name: str
    source: str  # builtin | templates | iptts | eec | texts
    texts: pd.DataFrame  # TEXT_COLUMNS, one row per (template, term)
    groups: dict[str, tuple[str, ...]]  # group -> terms, in the order given
    notes: list[str] = field(default_factory=list)

    @property
    def n_templates(self) -> int:
        return int(self.texts["template_id"].nunique())

    @property
    def n_clusters(self) -> int:
        return int(self.texts["cluster"].nunique())

    @property
    def cluster_unit(self) -> str:
        """What a cluster is, in words: what the intervals resample."""
        if self.n_clusters == self.n_templates:
            return "templates"
        return {"builtin": "patterns", "iptts": "IPTTS templates", "eec": "EEC templates"}.get(self.source,
                                                                                                "template families")

    def labels(self) -> pd.Series:
        """template_id -> label (toxic, non-toxic or empty)."""
        return self.texts.drop_duplicates("template_id").set_index("template_id")["label"]

    def content_hash(self) -> str:
        payload = json.dumps(self.texts[HASHED_COLUMNS].to_numpy().tolist(), ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def record(self) -> dict[str, Any]:
        labels = self.labels()
        return {"name": self.name, "source": self.source, "hash": self.content_hash(),
                "n_templates": self.n_templates, "n_clusters": self.n_clusters, "resampled": self.cluster_unit,
                "n_texts": len(self.texts),
                "n_toxic_templates": int((labels == "toxic").sum()),
                "n_non_toxic_templates": int((labels == "non-toxic").sum()),
                "groups": {g: list(t) for g, t in self.groups.items()}}


# ------------------------------------------------------------------------------------------------ terms
def parse_terms(text: str, name: str = "terms") -> dict[str, tuple[str, ...]]:
    """`group: term, term` lines (# comments and blank lines skipped), or the adaptation study's JSON
    (attributes -> groups -> terms). An empty term, a line without a group, a term in two groups: one sentence."""
    if text.lstrip().startswith("{"):
        from fairness_core.adaptation.templates import TemplateImportError

        try:
            loaded = load_identity_terms(name, text=text)
        except TemplateImportError as error:
            raise AuditInputError(str(error)) from None
        several = len(loaded.groups) > 1
        groups = {(f"{a}/{g}" if several else g): terms for a, gs in loaded.groups.items() for g, terms in gs.items()}
    else:
        groups = {}
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            group, colon, rest = line.partition(":")
            if not colon or not group.strip():
                raise AuditInputError(f"terms file {name} line {number} ({line[:60]!r}) is not 'group: term, term'")
            parts = [" ".join(t.split()) for t in rest.split(",")]
            if any(not part for part in parts):
                raise AuditInputError(f"terms file {name} line {number}: group {group.strip()!r} has an empty term "
                                      "(two commas in a row, or a comma at the end)")
            if group.strip() in groups:
                raise AuditInputError(f"terms file {name} line {number}: group {group.strip()!r} is given twice")
            groups[group.strip()] = tuple(parts)
    seen: dict[str, str] = {}
    for group, terms in groups.items():
        for term in terms:
            if term.lower() in seen:
                raise AuditInputError(f"terms file {name}: term {term!r} is in group {seen[term.lower()]!r} and "
                                      f"again in {group!r}")
            seen[term.lower()] = group
    if len(seen) < 2:
        raise AuditInputError(f"terms file {name} gives {len(seen)} term(s); an audit compares at least two")
    return groups


def term_groups(groups: dict[str, tuple[str, ...]]) -> dict[str, str]:
    return {term: group for group, terms in groups.items() for term in terms}


# ------------------------------------------------------------------------------------------------ templates
def reference_of(template: str) -> str:
    """The template with the identity slot left out: the neutral reference a metric compares a text with."""
    text = " ".join(template.replace(SLOT, " ").split())
    text = re.sub(r"\s+([.,!?;:])", r"\1", text)
    return text[:1].upper() + text[1:]


def builtin_templates() -> list[LabelledTemplate]:
    """The built-in IPTTS-style set (`data/audit/madlibs_templates.json`), expanded with its filler words."""
    data = json.loads((DATA_DIR / "madlibs_templates.json").read_text(encoding="utf-8"))
    out = []
    for pattern in data["patterns"]:
        filler = pattern.get("filler")
        cluster = f"builtin:{pattern['name']}"
        if filler is None:
            out.append(LabelledTemplate(cluster, pattern["text"], pattern["label"], cluster))
            continue
        slot = "{adjective}" if "{adjective}" in pattern["text"] else "{verb}"
        for word in data["fillers"][filler]:
            out.append(LabelledTemplate(f"{cluster}:{word}", pattern["text"].replace(slot, word), pattern["label"],
                                        cluster))
    return out


def parse_labelled_templates(text: str, name: str = "templates") -> list[LabelledTemplate]:
    """One template per line with {person} once; an optional label after a tab (toxic / non-toxic)."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        body, tab, label = line.partition("\t")
        body = " ".join(body.split())
        if not body or body.startswith("#"):
            continue
        count = body.count(SLOT)
        if count == 0:
            raise AuditInputError(f"templates file {name} line {number} ({body[:60]!r}) has no {SLOT} placeholder "
                                  "for the identity term")
        if count > 1:
            raise AuditInputError(f"templates file {name} line {number} has {SLOT} {count} times; a template takes "
                                  "one identity term")
        key = " ".join(label.split()).lower() if tab else ""
        if key not in LABELS:
            raise AuditInputError(f"templates file {name} line {number}: label {label.strip()!r} is not toxic or "
                                  "non-toxic")
        out.append(LabelledTemplate(f"custom:{number}", body, LABELS[key]))
    if not out:
        raise AuditInputError(f"templates file {name} holds no template")
    return out


def design_from_templates(templates: Sequence[LabelledTemplate], groups: dict[str, tuple[str, ...]],
                          name: str, source: str = "templates") -> Design:
    rows = [{"template_id": t.template_id, "term": term, "group": group, "text": fill(t.text, term),
             "reference": reference_of(t.text), "label": t.label, "cluster": t.cluster or t.template_id}
            for t in templates for group, terms in groups.items() for term in terms]
    notes = []
    distinct = {t.text for t in templates}
    if len(distinct) < len(templates):
        notes.append(f"{len(templates) - len(distinct)} template(s) repeat an earlier one and were dropped")
        keep, seen = [], set()
        for t in templates:
            if t.text not in seen:
                seen.add(t.text)
                keep.append(t.template_id)
        rows = [r for r in rows if r["template_id"] in set(keep)]
    return Design(name, source, pd.DataFrame(rows, columns=TEXT_COLUMNS), groups, notes)


def design_from_import(imported: ImportedSet, groups: dict[str, tuple[str, ...]] | None) -> Design:
    """The importer's perturbations (the file's own sentences). IPTTS: each row's term grouped by `groups` (the
    built-in grouping of the madlibs adjectives by default); EEC: the person's race and gender as the group."""
    slotted = {t.template_id: t for t in imported.templates.templates}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    if imported.format == "iptts":
        groups = groups or parse_terms((DATA_DIR / "identity_terms.txt").read_text(encoding="utf-8"), "built-in")
        lookup = {term.lower(): group for term, group in term_groups(groups).items()}
        dropped = 0
        for p in imported.perturbations:
            group = lookup.get(p.group.lower())
            if group is None:
                dropped += 1
                continue
            template = slotted.get(p.template_id)
            label = LABELS.get(str(template.attrs.get("label", "")).strip().lower(), "") if template else ""
            rows.setdefault((p.template_id, p.group), {
                "template_id": p.template_id, "term": p.group, "group": group, "text": p.text,
                "reference": reference_of(template.text) if template else p.text, "label": label,
                "cluster": (template.family if template and template.family else p.template_id)})
        notes = list(imported.notes)
        if dropped:
            notes.append(f"{dropped} row(s) whose identity term is in no group of the terms file were left out")
        found = {r["term"] for r in rows.values()}
        groups = {g: tuple(t for t in ts if t in found) for g, ts in groups.items()}
    else:
        people: dict[tuple[str, str], dict[str, str]] = {}
        for p in imported.perturbations:
            entry = people.setdefault((p.template_id, p.term), {"text": p.text})
            entry[p.attribute] = p.group
        groups = {}
        for (template_id, person), entry in people.items():
            group = " ".join(x for x in (entry.get("race", ""), entry.get("gender", "")) if x)
            template = slotted.get(template_id)
            rows[(template_id, person)] = {"template_id": template_id, "term": person, "group": group,
                                           "text": entry["text"], "label": "",
                                           "reference": reference_of(template.text) if template else entry["text"],
                                           "cluster": template.family if template and template.family else
                                           template_id}
            if person not in groups.get(group, ()):
                groups[group] = (*groups.get(group, ()), person)
        notes = list(imported.notes)
    groups = {g: t for g, t in groups.items() if t}
    if not rows:
        raise AuditInputError(f"{imported.path} gives no text with a known identity term")
    frame = pd.DataFrame(list(rows.values()), columns=TEXT_COLUMNS)
    return Design(imported.templates.name, imported.format, frame, groups, notes)


# ------------------------------------------------------------------------------------------------ swaps
def find_terms(text: str, terms: Sequence[str]) -> list[tuple[int, int, str]]:
    """Non-overlapping whole-word occurrences of the terms (longest term first: 'african american' before
    'african'), as (start, end, term) in text order."""
    taken: list[tuple[int, int, str]] = []
    for term in sorted(terms, key=len, reverse=True):
        for match in term_pattern(term).finditer(text):
            if all(match.end() <= s or match.start() >= e for s, e, _ in taken):
                taken.append((match.start(), match.end(), term))
    return sorted(taken)


def design_from_swaps(texts: Sequence[str], groups: dict[str, tuple[str, ...]], name: str) -> Design:
    """Generated texts with their identity word swapped for every term of the list (Dhamala et al. §6.3.2 swap
    the texts they score to test their classifiers). Rule: a text mentioning exactly one term becomes a template
    (the term's one occurrence slotted out); texts with no term or several are counted and left out, and a text
    given twice counts once."""
    terms = list(term_groups(groups))
    unique = list(dict.fromkeys(" ".join(str(t).split()) for t in texts))
    unique = [t for t in unique if t]
    duplicates = len([t for t in texts if " ".join(str(t).split())]) - len(unique)
    templates, none, several = [], 0, 0
    for number, text in enumerate(unique, start=1):
        found = find_terms(text, terms)
        if not found:
            none += 1
            continue
        if len(found) > 1:
            several += 1
            continue
        start, end, _ = found[0]
        templates.append(LabelledTemplate(f"text:{number}", text[:start] + SLOT + text[end:], ""))
    notes = [f"{len(templates)} of {len(unique)} distinct text(s) mention exactly one identity term and were swapped"]
    if none:
        notes.append(f"{none} text(s) mention none of the {len(terms)} terms and were left out")
    if several:
        notes.append(f"{several} text(s) mention several terms and were left out (a swap must change one word)")
    if duplicates:
        notes.append(f"{duplicates} repeated text(s) counted once")
    if not templates:
        raise AuditInputError(f"none of the {len(unique)} text(s) of {name} mentions exactly one of the {len(terms)} "
                              "identity terms; give terms that occur in them")
    design = design_from_templates(templates, groups, name, source="texts")
    design.notes[:0] = notes
    return design
