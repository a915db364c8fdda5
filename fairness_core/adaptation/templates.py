"""Template sets with an identity slot, identity-term groups, and importers for EEC and IPTTS files.

A *template* (the unit VBCM averages over, App. A.2.1) is a sentence with one identity slot
``{person}``; a *perturbation* is the template filled with one identity term of one group.

- The project's own EEC-style and IPTTS-style templates and identity-term lists live in
  ``data/adaptation/`` (written here; sources of the name lists are stated in that folder's JSON).
- ``import_eec(path)`` reads the Equity Evaluation Corpus CSV (Kiritchenko & Mohammad 2018;
  ``ID,Sentence,Template,Person,Gender,Race,Emotion,Emotion word``, 8,640 rows). Its template unit is
  (Template, Emotion word): 11 patterns, 7 of them × 20 emotion words, + 4 neutral = 144 templates, the
  number in the paper's Table 2. The file's own sentences are kept as they are.
- ``import_iptts(path)`` reads the "bias madlibs" CSV of Dixon et al. 2018 (``Text,Label,Template``). Its
  identity terms are the madlibs' people adjectives; the template unit is the text with the identity term
  taken out.

Both importers survive a UTF-8 BOM, CRLF line ends and quoted fields; a missing column is one sentence
naming the file and the column (``TemplateImportError``).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from fairness_core.data.quoting import quoted

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "adaptation"
SLOT = "{person}"
EEC_COLUMNS = ("ID", "Sentence", "Template", "Person", "Gender", "Race", "Emotion", "Emotion word")
IPTTS_COLUMNS = ("Text", "Label", "Template")


class TemplateImportError(ValueError):
    """A template/terms file that cannot be used; one sentence naming the file (and row/column)."""


@dataclass(frozen=True)
class Template:
    template_id: str
    text: str  # contains SLOT exactly once
    family: str = ""  # e.g. "eec:feels" (the pattern), "iptts:name_adj"
    attrs: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Perturbation:
    """One filled template: the unit a classifier scores."""

    template_id: str
    attribute: str
    group: str
    term: str
    text: str


@dataclass(frozen=True)
class TemplateSet:
    name: str
    templates: tuple[Template, ...]

    def content_hash(self) -> str:
        payload = json.dumps([[t.template_id, t.text] for t in self.templates], ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def subset(self, n: int | None, seed: int = 0) -> TemplateSet:
        """Up to `n` templates drawn with a seeded shuffle (kept in the set's order)."""
        import random

        if n is None or n >= len(self.templates):
            return self
        chosen = set(random.Random(f"{seed}:{self.name}").sample(range(len(self.templates)), n))
        return TemplateSet(f"{self.name} ({n} of {len(self.templates)})",
                           tuple(t for i, t in enumerate(self.templates) if i in chosen))


# ------------------------------------------------------------------------------- identity terms
@dataclass(frozen=True)
class IdentityTerms:
    """Groups of identity terms per attribute: ``{attribute: {group: (term, ...)}}``."""

    groups: dict[str, dict[str, tuple[str, ...]]]
    sources: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    def attribute(self, name: str) -> dict[str, tuple[str, ...]]:
        if name not in self.groups:
            raise TemplateImportError(f"no identity-term attribute {name!r}; known: {', '.join(self.groups)}")
        return self.groups[name]

    def record(self) -> dict[str, dict[str, list[str]]]:
        return {a: {g: list(t) for g, t in gs.items()} for a, gs in self.groups.items()}


def load_identity_terms(path: str | Path | None = None, text: str | None = None) -> IdentityTerms:
    """The project's terms (``data/adaptation/identity_terms.json``) or a user's JSON of the same shape:
    ``{"attributes": {attribute: {group: [term, ...]}}, "sources": {...}}`` (`text`: the JSON itself)."""
    path = Path(path) if path else DATA_DIR / "identity_terms.json"
    # typed text is named as what it is, never as the project's file it replaced
    name = "the identity terms (JSON)" if text is not None else str(path)
    try:
        data = json.loads(text if text is not None else path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as error:
        raise TemplateImportError(f"{name} is not readable JSON ({error.msg} at line {error.lineno}, column "
                                  f"{error.colno})") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else (error.strerror or "unreadable")
        raise TemplateImportError(f"{name} cannot be read as a JSON terms file ({reason})") from None
    attributes = data.get("attributes") if isinstance(data, dict) else None
    if not isinstance(attributes, dict) or not attributes:
        raise TemplateImportError(f"{name} has no 'attributes' object of {{attribute: {{group: [terms]}}}}")
    groups: dict[str, dict[str, tuple[str, ...]]] = {}
    for attribute, members in attributes.items():
        if not isinstance(members, dict):
            raise TemplateImportError(f"{name}: attribute {quoted(attribute)} must map groups to term lists")
        for group, terms in members.items():
            if not isinstance(terms, list) or not all(isinstance(t, str) and t.strip() for t in terms) or not terms:
                raise TemplateImportError(f"{name}: group {quoted(group)} of {quoted(attribute)} must be a "
                                          "non-empty list of terms")
        groups[attribute] = {g: tuple(" ".join(t.split()) for t in ts) for g, ts in members.items()}
    return IdentityTerms(groups, dict(data.get("sources", {})))


def default_identity_terms_text() -> str:
    """The project's identity terms file as text (attributes -> groups -> terms, with its sources), the page's
    starting point for editing."""
    return (DATA_DIR / "identity_terms.json").read_text(encoding="utf-8")


def parse_terms_text(text: str, attribute: str = "custom") -> IdentityTerms:
    """``group: term, term`` lines (the page's editable box) as one attribute."""
    groups: dict[str, tuple[str, ...]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if ":" not in line:
            raise TemplateImportError(f"terms line {number} ({quoted(line.strip())}) is not 'group: term, term'")
        group, terms = line.split(":", 1)
        found = tuple(t.strip() for t in terms.split(",") if t.strip())
        if not found:
            raise TemplateImportError(f"terms line {number}: group {quoted(group.strip())} has no terms")
        groups[group.strip()] = found
    if not groups:
        raise TemplateImportError("no identity terms given")
    return IdentityTerms({attribute: groups})


# ------------------------------------------------------------------------------- filling
def fill(template_text: str, term: str) -> str:
    """The template with the slot replaced by `term`; a sentence-initial term is capitalised."""
    position = template_text.find(SLOT)
    filled = template_text.replace(SLOT, term, 1)
    if position == 0 and term[:1].islower():
        filled = term[:1].upper() + filled[1:]
    return filled


def perturb(template_set: TemplateSet, groups: dict[str, Sequence[str]], attribute: str) -> list[Perturbation]:
    """Every template filled with every term of every group (App. A.2.1's S'_j, all groups)."""
    return [Perturbation(t.template_id, attribute, group, term, fill(t.text, term))
            for t in template_set.templates for group, terms in groups.items() for term in terms]


@functools.lru_cache(maxsize=4096)
def term_pattern(term: str) -> re.Pattern[str]:
    """Case-insensitive, whole-word match of a term (its inner spaces may be any whitespace)."""
    body = r"\s+".join(re.escape(part) for part in term.split())
    return re.compile(rf"(?<![\w]){body}(?![\w])", flags=re.IGNORECASE)


def slot_out(text: str, term: str) -> tuple[str | None, int]:
    """(template with the term's one occurrence replaced by the slot, number of occurrences found)."""
    matches = list(term_pattern(term).finditer(text))
    if len(matches) != 1:
        return None, len(matches)
    match = matches[0]
    return text[: match.start()] + SLOT + text[match.end():], 1


# ------------------------------------------------------------------------------- project templates
def _expand(data: dict[str, Any], prefix: str) -> list[Template]:
    templates = []
    fillers: dict[str, list[str]] = data.get("fillers", {})
    for pattern in data["patterns"]:
        text, name = pattern["text"], pattern["name"]
        keys = re.findall(r"\{(\w+)\}", text)
        keys = [k for k in keys if k != "person"]
        if not keys:
            templates.append(Template(f"{prefix}:{name}", text, f"{prefix}:{name}", {"pattern": name}))
            continue
        if len(keys) != 1:
            raise ValueError(f"pattern {name} has more than one filler slot")
        key = keys[0]
        for word_group, words in fillers[key].items():
            for word in words:
                templates.append(Template(f"{prefix}:{name}:{word}", text.replace("{" + key + "}", word),
                                          f"{prefix}:{name}", {"pattern": name, key: word, "class": word_group}))
    return templates


def project_templates(style: str) -> TemplateSet:
    """The project's EEC-style ("eec") or IPTTS-style ("iptts") templates, expanded with their words."""
    files = {"eec": "eec_style_templates.json", "iptts": "iptts_style_templates.json"}
    if style not in files:
        raise TemplateImportError(f"unknown project template style {style!r}; choose eec or iptts")
    data = json.loads((DATA_DIR / files[style]).read_text(encoding="utf-8"))
    return TemplateSet(f"project {style.upper()}-style templates", tuple(_expand(data, style)))


def parse_templates_text(text: str, name: str = "custom templates") -> TemplateSet:
    """One template per line, each with ``{person}`` exactly once."""
    templates = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = " ".join(line.split())
        if not line:
            continue
        if line.count(SLOT) != 1:
            raise TemplateImportError(f"template line {number} ({quoted(line)}) must contain {SLOT} exactly once")
        templates.append(Template(f"custom:{number}", line, "custom"))
    if not templates:
        raise TemplateImportError("no templates given")
    return TemplateSet(name, tuple(templates))


# ------------------------------------------------------------------------------- CSV reading
def read_csv_table(path: str | Path, data: bytes | None = None) -> pd.DataFrame:
    """A CSV as strings: UTF-8 with or without BOM, any line ends, quoted fields; errors name the file.

    `data`: the file's bytes when they do not come from disk (an upload named `path`)."""
    path = Path(path)
    try:
        raw = path.read_bytes() if data is None else data
    except OSError as error:
        raise TemplateImportError(f"{path} cannot be read ({error.strerror or type(error).__name__})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TemplateImportError(f"{path} is not UTF-8 text") from None
    if not text.strip():
        raise TemplateImportError(f"{path} is empty")
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))  # a long cell is data (default cap: 128 KiB)
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        rows = [row for row in reader]
    except csv.Error as error:
        raise TemplateImportError(f"{path} is not a readable CSV ({error})") from None
    header = [h.strip() for h in rows[0]]
    body = [row for row in rows[1:] if any(cell.strip() for cell in row)]
    width = len(header)
    for number, row in enumerate(body, start=2):
        if len(row) > width:
            raise TemplateImportError(f"{path} row {number} has {len(row)} fields but the header has {width}")
    padded = [row + [""] * (width - len(row)) for row in body]
    return pd.DataFrame(padded, columns=header, dtype=str)


def _require(frame: pd.DataFrame, columns: Iterable[str], path: str | Path, what: str) -> None:
    present = {c.strip().lower(): c for c in frame.columns}
    for column in columns:
        if column.lower() not in present:
            found = quoted(", ".join(map(str, frame.columns))) if len(frame.columns) else "none"
            raise TemplateImportError(f"{path} has no {column!r} column, which a {what} file needs "
                                      f"(columns found: {found})")


def _rename(frame: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """Header names matched case-insensitively to the canonical ones."""
    lookup = {c.lower(): c for c in columns}
    return frame.rename(columns={c: lookup[c.strip().lower()] for c in frame.columns if c.strip().lower() in lookup})


# ------------------------------------------------------------------------------- importers
@dataclass
class ImportedSet:
    """An imported file: its perturbations (the file's own sentences) and one template per unit."""

    format: str
    path: str
    n_rows: int
    perturbations: list[Perturbation]
    templates: TemplateSet
    groups: dict[str, dict[str, int]]  # attribute -> group -> rows
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The CLI contract: ``{"n_rows", "n_templates", "groups": {attribute: {group: count}}}``."""
        return {"n_rows": self.n_rows, "n_templates": len(self.templates.templates), "groups": self.groups}

    def content_hash(self) -> str:
        payload = json.dumps([asdict(p) for p in self.perturbations], ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def import_eec(path: str | Path, data: bytes | None = None) -> ImportedSet:
    """The Equity Evaluation Corpus CSV. Groups: attribute "gender" (Gender column) and "race" (Race column,
    rows without a race — the noun phrases — are not in it). Template unit: (Template, Emotion word)."""
    frame = read_csv_table(path, data)
    _require(frame, EEC_COLUMNS, path, "EEC")
    frame = _rename(frame, EEC_COLUMNS)
    if frame.empty:
        raise TemplateImportError(f"{path} has a header but no rows")
    perturbations, templates, notes = [], {}, []
    ids = frame["ID"].astype(str).str.strip()
    repeated = ids.duplicated(keep="first") & (ids != "")
    if repeated.any():  # a pasted row must not count twice in n_rows or the group counts
        notes.append(f"{int(repeated.sum())} row(s) repeat an ID given earlier in the file and were dropped "
                     f"(first: {quoted(ids[repeated].iloc[0])})")
        frame = frame[~repeated.to_numpy()].reset_index(drop=True)
    counts: dict[str, dict[str, int]] = {"gender": {}, "race": {}}
    not_slotted = 0
    for row in frame.to_dict(orient="records"):
        sentence = " ".join(str(row["Sentence"]).split())
        person = " ".join(str(row["Person"]).split())
        word = str(row["Emotion word"]).strip()
        template_id = f"eec:{str(row['Template']).strip()}|{word}"
        gender, race = str(row["Gender"]).strip(), str(row["Race"]).strip()
        if gender:
            counts["gender"][gender] = counts["gender"].get(gender, 0) + 1
            perturbations.append(Perturbation(template_id, "gender", gender, person, sentence))
        if race:
            counts["race"][race] = counts["race"].get(race, 0) + 1
            perturbations.append(Perturbation(template_id, "race", race, person, sentence))
        if template_id not in templates:
            slotted, _ = slot_out(sentence, person) if person else (None, 0)
            if slotted is None:
                not_slotted += 1
            else:
                templates[template_id] = Template(template_id, slotted, f"eec:{str(row['Template']).strip()}",
                                                  {"emotion": str(row["Emotion"]).strip(), "word": word})
    if not_slotted:
        notes.append(f"{not_slotted} template(s) had a first sentence without its Person string; the next "
                     "sentence of the template was used")
    counts = {a: g for a, g in counts.items() if g}
    return ImportedSet("eec", str(path), len(frame), perturbations,
                       TemplateSet(f"EEC ({Path(path).name})", tuple(templates.values())), counts, notes)


def iptts_identity_terms() -> list[str]:
    """The people adjectives of the bias madlibs (project-written: ``data/adaptation/iptts_identity_terms.json``)."""
    return list(json.loads((DATA_DIR / "iptts_identity_terms.json").read_text(encoding="utf-8"))["terms"])


def import_iptts(path: str | Path, terms: Sequence[str] | None = None, data: bytes | None = None) -> ImportedSet:
    """The IPTTS bias-madlibs CSV. Each row's identity term is the longest known term found in its text
    (whole words, case-insensitive); groups: attribute "identity" (one group per term). A row with no known
    term is kept out of the groups and counted in a note."""
    frame = read_csv_table(path, data)
    _require(frame, IPTTS_COLUMNS, path, "IPTTS (bias madlibs)")
    frame = _rename(frame, IPTTS_COLUMNS)
    if frame.empty:
        raise TemplateImportError(f"{path} has a header but no rows")
    known = sorted({" ".join(t.split()) for t in (terms or iptts_identity_terms())}, key=len, reverse=True)
    patterns = [(t, term_pattern(t)) for t in known]
    perturbations, templates = [], {}
    counts: dict[str, int] = {}
    labels: dict[str, int] = {}
    without = 0
    for row in frame.to_dict(orient="records"):
        text = " ".join(str(row["Text"]).split())
        label = str(row["Label"]).strip()
        labels[label] = labels.get(label, 0) + 1
        term = next((t for t, p in patterns if p.search(text)), None)
        if term is None:
            without += 1
            continue
        match = term_pattern(term).search(text)
        assert match is not None
        slotted = text[: match.start()] + SLOT + text[match.end():]
        key = hashlib.sha256(slotted.lower().encode()).hexdigest()[:12]
        template_id = f"iptts:{str(row['Template']).strip()}:{key}"
        counts[term] = counts.get(term, 0) + 1
        perturbations.append(Perturbation(template_id, "identity", term, match.group(0), text))
        templates.setdefault(template_id, Template(template_id, slotted, f"iptts:{str(row['Template']).strip()}",
                                                   {"label": label}))
    notes = [f"labels: {', '.join(f'{k} {v}' for k, v in labels.items())}"]
    if without:
        notes.append(f"{without} row(s) contain none of the {len(known)} known identity terms and are left out of "
                     "the groups")
    return ImportedSet("iptts", str(path), len(frame), perturbations,
                       TemplateSet(f"IPTTS ({Path(path).name})", tuple(templates.values())),
                       {"identity": counts} if counts else {}, notes)


IMPORTERS = {"eec": import_eec, "iptts": import_iptts}


def import_templates(fmt: str, path: str | Path, data: bytes | None = None) -> ImportedSet:
    """An EEC or IPTTS file as templates; one sentence naming the file when none can be read from it."""
    if fmt not in IMPORTERS:
        raise TemplateImportError(f"unknown template format {fmt!r}; choose one of {', '.join(IMPORTERS)}")
    imported = import_eec(path, data=data) if fmt == "eec" else import_iptts(path, data=data)
    if not imported.templates.templates:  # e.g. rows whose sentence never holds its Person string
        raise TemplateImportError(f"{Path(path).name} holds no usable {fmt.upper()} template in its "
                                  f"{imported.n_rows} row(s): {'; '.join(imported.notes) or 'no row fills a template'}")
    return imported
