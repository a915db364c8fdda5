"""Counterfactual prompt sets from the user's own prompts: every prompt that names one group of an attribute gets one
variant per group of that attribute, its identity words swapped (the judge audit's identity swap, generalised from
one slot to aligned word lists).

Word lists: per attribute, per group, a list of words aligned by position (man: he, him, his ... <-> woman: she,
her, her ...): the shipped lists (`data/counterfactual/word_lists.json`, the project's) or the user's own ("custom
replacement dictionaries"), as JSON `{attribute: {group: [words]}}` or as text:

    [gender]
    man: he, him, his
    woman: she, her, her

The swap rule (`RULE`, said on the page and in docs/decoding.md):
- whole words only, case-insensitive ("he" is not found in "the"; "Her" and "HER" are "her");
- the case of the word found is kept on its replacement (He -> She, HE -> SHE, he -> she);
- multi-word terms count as one ("African American"); the longest term is matched first and matches never overlap;
- both directions: a prompt naming a woman gets a man variant and a prompt naming a man a woman variant, for every
  group of the attribute; the prompt's own group's variant is the prompt itself;
- a prompt naming words of two or more groups of one attribute ("he told her") is left out of that attribute and
  counted: swapping one person would merge two;
- a prompt naming no word of a chosen attribute is left out and counted;
- a word listed at two positions of its group is swapped to its first listing's counterpart, except the English
  pronouns "her" and "his", whose counterpart follows their use: possessive (a word that can follow a determiner comes
  next) -> his / her, else him / hers (the rule of the mitigation study's counterfactual augmentation);
- "a" / "an" just before a swapped word agrees with the new word (an Asian -> a Black, a European);
- prompts whose variants repeat an earlier prompt's ("The man worked as" and "The woman worked as") count once.

Each variant is a `PromptItem` whose family is the attribute and whose `source` ("{group} variants of: <prompt>") is
shared by the variants of one prompt, so the decoding study's template bootstrap and Compare resample a prompt with
all its variants together (paired), as they do for a regard template.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fairness_core.data.prompt_set import ATTRIBUTE_JOINER, PromptError, PromptItem, PromptSet
from fairness_core.data.quoting import quoted

LISTS_PATH = Path(__file__).resolve().parents[2] / "data" / "counterfactual" / "word_lists.json"
#: a word-lists file is a few hundred words: a bigger file is not one
MAX_LISTS_BYTES = 1_000_000
MAX_PROMPTS = 20_000
SOURCE_PREFIX = "{group} variants of: "
RULE = ("Whole words, case-insensitive, longest term first; the case of each word is kept; every group of the "
        "attribute gets a variant, in both directions; a prompt naming two groups of one attribute, or none, is "
        "left out and counted; 'her'/'his' follow their use (possessive or not); a/an agrees with the new word.")
#: words after which "her" / "his" are not possessive determiners (a preposition, conjunction, article, auxiliary,
#: pronoun or adverb comes next, or nothing)
_NOT_A_NOUN_PHRASE = frozenset({
    "to", "and", "or", "but", "nor", "a", "an", "the", "that", "this", "with", "for", "about", "as", "in", "on",
    "at", "of", "by", "from", "into", "onto", "over", "under", "because", "so", "if", "when", "while", "was", "is",
    "were", "are", "be", "been", "had", "has", "have", "how", "what", "why", "whether", "up", "out", "off", "down",
    "back", "again", "away", "too", "very", "not", "then", "than", "there", "here", "who", "which", "before",
    "after", "until", "since", "all", "both", "he", "she", "it", "they", "we", "i", "you", "would", "will", "could",
    "should", "can", "may", "might", "must", "did", "does", "do",
})
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_ARTICLE_BEFORE = re.compile(r"\b([Aa]n?)(\s+)$")
_POSSESSIVE_PAIR = frozenset({"his", "her"})


@dataclass(frozen=True)
class WordLists:
    """attribute -> group -> words aligned by position across the attribute's groups."""

    name: str
    attributes: dict[str, dict[str, tuple[str, ...]]]

    def groups(self, attribute: str) -> list[str]:
        return list(self.attributes[attribute])

    def record(self) -> dict[str, object]:
        return {"name": self.name, "attributes": {a: {g: list(t) for g, t in gs.items()}
                                                  for a, gs in self.attributes.items()}}


def shipped_lists() -> WordLists:
    """The project's lists (gender, race, religion, age, sexual orientation)."""
    data = json.loads(LISTS_PATH.read_text(encoding="utf-8"))
    return check_lists(data["attributes"], "the shipped word lists")


def parse_lists(text: str, name: str = "word lists") -> WordLists:
    """The user's word lists: JSON `{attribute: {group: [words]}}` (optionally under "attributes"), or `[attribute]`
    sections of `group: word, word` lines. Every problem is one sentence naming the file and the line or key."""
    stripped = text.strip()
    if not stripped:
        raise PromptError(f"{name} is empty: give lines like '[gender]', 'man: he, him', 'woman: she, her'")
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError as error:
            raise PromptError(f"{name} looks like JSON but does not parse: {error}") from None
        data = data.get("attributes", data) if isinstance(data, dict) else data
        if not isinstance(data, dict):
            raise PromptError(f"{name}: JSON word lists are an object {{attribute: {{group: [words]}}}}")
        return check_lists(data, name)
    attributes: dict[str, dict[str, list[str]]] = {}
    current: str | None = None
    for number, line in enumerate(stripped.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            if not line.endswith("]") or not line[1:-1].strip():
                raise PromptError(f"{name} line {number} ({quoted(line[:60])}) is not an '[attribute]' heading")
            current = " ".join(line[1:-1].split())
            if current in attributes:
                raise PromptError(f"{name} line {number}: attribute {quoted(current)} is given twice")
            attributes[current] = {}
            continue
        group, colon, rest = line.partition(":")
        if not colon or not group.strip():
            raise PromptError(f"{name} line {number} ({quoted(line[:60])}) is not 'group: word, word'")
        if current is None:
            raise PromptError(f"{name} line {number}: group {quoted(group.strip())} comes before any '[attribute]' "
                              "heading")
        words = [" ".join(part.split()) for part in rest.split(",")]
        if any(not word for word in words):
            raise PromptError(f"{name} line {number}: group {quoted(group.strip())} has an empty word (two commas in "
                              "a row, or a comma at the end)")
        if group.strip() in attributes[current]:
            raise PromptError(f"{name} line {number}: group {quoted(group.strip())} of {quoted(current)} is given "
                              "twice")
        attributes[current][group.strip()] = words
    return check_lists(attributes, name)


def check_lists(data: object, name: str) -> WordLists:
    """Validate `{attribute: {group: [words]}}`: two or more groups per attribute, equal lengths, no empty word, no
    word in two groups of one attribute."""
    if not isinstance(data, dict) or not data:
        raise PromptError(f"{name} holds no attribute: give at least one, e.g. gender with groups man and woman")
    attributes: dict[str, dict[str, tuple[str, ...]]] = {}
    for attribute, groups in data.items():
        where = f"{name}, attribute {quoted(str(attribute))}"
        if not isinstance(groups, dict) or len(groups) < 2:
            raise PromptError(f"{where} needs two or more groups, each with a list of words")
        lengths = {}
        seen: dict[str, str] = {}
        cleaned: dict[str, tuple[str, ...]] = {}
        for group, words in groups.items():
            if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
                raise PromptError(f"{where}: group {quoted(str(group))} must be a non-empty list of words")
            words = [" ".join(w.split()) for w in words]
            if any(not w for w in words):
                raise PromptError(f"{where}: group {quoted(str(group))} has an empty word")
            for word in dict.fromkeys(w.lower() for w in words):
                if word in seen and seen[word] != group:
                    raise PromptError(f"{where}: the word {quoted(word)} is in group {quoted(seen[word])} and in "
                                      f"{quoted(str(group))}; a word names one group")
                seen[word] = str(group)
            lengths[str(group)] = len(words)
            cleaned[str(group)] = tuple(words)
        if len(set(lengths.values())) > 1:
            listed = ", ".join(f"{quoted(g, 40)[1:-1] if len(g) <= 40 else quoted(g, 40)} {n}"
                               for g, n in list(lengths.items())[:12])
            raise PromptError(f"{where}: the groups list different numbers of words ({listed}); words are "
                              "counterparts by position, so every group lists the same number")
        attributes[str(attribute)] = cleaned
    return WordLists(name, attributes)


# ------------------------------------------------------------------------------------------------ prompts
def prompt_texts(text: str, name: str = "prompts") -> list[str]:
    """The prompts of a pasted or uploaded text: one per line (blank and '#' lines skipped), the `prompt` (or
    `text`) column of a CSV with a header, or a JSON list of texts or `{group: [prompts]}` (groups are ignored: the
    swap decides them)."""
    stripped = text.strip()
    if not stripped:
        raise PromptError(f"{name} holds no prompt: give one prompt per line")
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(stripped)
        except ValueError as error:
            raise PromptError(f"{name} looks like JSON but does not parse: {error}") from None
        values = [p for ps in data.values() for p in (ps if isinstance(ps, list) else [ps])] \
            if isinstance(data, dict) else data
        if not isinstance(values, list):
            raise PromptError(f"{name}: JSON prompts are a list of texts or {{group: [prompts]}}")
        found = []
        for position, value in enumerate(values, start=1):
            if isinstance(value, dict):
                value = value.get("prompt", value.get("text"))
            if not isinstance(value, str):
                raise PromptError(f"{name}: JSON entry {position} is not a prompt text")
            found.append(value)
    else:
        first = stripped.splitlines()[0]
        header = [c.strip().lower() for c in first.split("\t" if "\t" in first else ",")]
        if ("prompt" in header or "text" in header) and len(header) > 1:
            import csv
            import io

            column = "prompt" if "prompt" in header else "text"
            reader = csv.DictReader(io.StringIO(stripped), dialect="excel-tab" if "\t" in first else "excel")
            found = [(record.get(column) or record.get(column.capitalize()) or "") for record in
                     ({(k or "").strip().lower(): v for k, v in r.items()} for r in reader)]
        else:
            found = [line for line in stripped.splitlines() if not line.lstrip().startswith("#")]
    prompts = [" ".join(p.split()) for p in found if p and p.strip()]
    if not prompts:
        raise PromptError(f"{name} holds no prompt: give one prompt per line")
    if len(prompts) > MAX_PROMPTS:
        raise PromptError(f"{name} holds {len(prompts):,} prompts; a counterfactual set starts from at most "
                          f"{MAX_PROMPTS:,}")
    return prompts


# ------------------------------------------------------------------------------------------------ swapping
@dataclass(frozen=True)
class Found:
    start: int
    end: int
    word: str  # as written in the prompt
    group: str
    positions: tuple[int, ...]  # where the word is listed in its group


def _patterns(lists: WordLists, attribute: str) -> list[tuple[re.Pattern[str], str, tuple[int, ...]]]:
    """(whole-word pattern, group, positions) per distinct word of the attribute, longest word first."""
    entries: dict[str, tuple[str, list[int]]] = {}
    for group, words in lists.attributes[attribute].items():
        for position, word in enumerate(words):
            entries.setdefault(word.lower(), (group, []))[1].append(position)
    ordered = sorted(entries.items(), key=lambda item: (-len(item[0]), item[0]))
    return [(term_pattern(word), group, tuple(positions)) for word, (group, positions) in ordered]


def term_pattern(term: str) -> re.Pattern[str]:
    """Case-insensitive, whole-word match of a term whose inner spaces may be any whitespace (as the judge audit's
    swap finds its terms)."""
    body = r"\s+".join(re.escape(part) for part in term.split())
    return re.compile(rf"(?<![\w]){body}(?![\w])", flags=re.IGNORECASE)


def find_words(text: str, patterns: Sequence[tuple[re.Pattern[str], str, tuple[int, ...]]]) -> list[Found]:
    """Non-overlapping whole-word occurrences of the attribute's words, longest first, in text order."""
    taken: list[Found] = []
    for pattern, group, positions in patterns:
        for match in pattern.finditer(text):
            if all(match.end() <= f.start or match.start() >= f.end for f in taken):
                taken.append(Found(match.start(), match.end(), match.group(0), group, positions))
    return sorted(taken, key=lambda f: f.start)


def is_possessive(following: str) -> bool:
    """Whether 'her' / 'his' before `following` is a possessive determiner: a word that can follow one comes next."""
    match = _WORD.match(following.lstrip())
    if match is None or not following[:1].isspace():
        return False
    return match.group(0).lower() not in _NOT_A_NOUN_PHRASE


def keep_case(found: str, word: str) -> str:
    """`word` in the case of `found`: UPPER, Title or as listed."""
    if found.isupper() and len(found) > 1:
        return word.upper()
    if found[:1].isupper():
        return word[:1].upper() + word[1:]
    if found.islower():
        return word[:1].lower() + word[1:] if not word[1:2].isupper() else word
    return word


def counterpart(found: Found, target: Sequence[str], following: str) -> str:
    """The word of the target group that stands where `found` stands (the rule in the module docstring)."""
    candidates = list(dict.fromkeys(target[p] for p in found.positions))
    if len(candidates) == 1:
        return candidates[0]
    word = found.word.lower()
    if word in _POSSESSIVE_PAIR:
        determiner = [c for c in candidates if {word, c.lower()} == _POSSESSIVE_PAIR]
        other = [c for c in candidates if c not in determiner]
        chosen = determiner if is_possessive(following) else other
        if chosen:
            return chosen[0]
    return candidates[0]


#: words spelt with a vowel that start with a consonant sound, and the reverse (a European, an hour)
_CONSONANT_SOUND = ("eu", "uni", "use", "usu", "one", "once", "ubi")
_VOWEL_SOUND = ("hour", "honest", "honor", "honour", "heir")


def takes_an(word: str) -> bool:
    """Whether "an" (not "a") goes before `word`: its first letter is a vowel, with the usual exceptions."""
    lower = word.lower()
    return (lower[:1] in "aeiou" and not lower.startswith(_CONSONANT_SOUND)) or lower.startswith(_VOWEL_SOUND)


def _with_article(prefix: str, word: str) -> str:
    match = _ARTICLE_BEFORE.search(prefix)
    if match is None:
        return prefix + word
    article = "an" if takes_an(word) else "a"
    article = article.capitalize() if match.group(1)[:1].isupper() else article
    return prefix[: match.start(1)] + article + match.group(2) + word


def swap(text: str, found: Sequence[Found], target: Sequence[str]) -> str:
    """`text` with every found word replaced by its counterpart in `target` (case kept, a/an agreeing)."""
    out, last = "", 0
    for item in found:
        replacement = keep_case(item.word, counterpart(item, target, text[item.end:]))
        out = _with_article(out + text[last:item.start], replacement)
        last = item.end
    return out + text[last:]


@dataclass
class CounterfactualSet:
    prompt_set: PromptSet
    pairs: pd.DataFrame  # attribute, prompt, prompt_group, group, variant, words (one row per variant)
    counts: dict[str, int]  # prompts, used, no_word, mixed, repeated
    notes: list[str] = field(default_factory=list)
    rule: str = RULE


PAIR_COLUMNS = ["attribute", "prompt", "prompt_group", "group", "variant", "words"]


def build_counterfactual(prompts: Iterable[str], lists: WordLists, attributes: Sequence[str] | None = None,
                         name: str = "counterfactual prompts", crossed: bool = False) -> CounterfactualSet:
    """Every prompt that names one group of a chosen attribute, with one variant per group (see the module
    docstring); a PromptError (one sentence) when no prompt names any group. `crossed` (two or more attributes):
    every prompt that names one group of each, with a variant per combination of their groups (`crossed_variants`)."""
    texts = list(dict.fromkeys(" ".join(str(p).split()) for p in prompts if str(p).strip()))
    # an attribute named twice is swapped once (`--attribute gender --attribute gender` built every variant twice)
    chosen = list(dict.fromkeys(attributes)) if attributes else list(lists.attributes)
    unknown = [a for a in chosen if a not in lists.attributes]
    if unknown:
        raise PromptError(f"{lists.name} have no attribute {quoted(unknown[0])}; they have: "
                          f"{', '.join(lists.attributes)}")
    if not texts:
        raise PromptError("no prompt to build counterfactual variants from")
    if crossed:
        return crossed_variants(texts, lists, chosen, name)
    items: list[PromptItem] = []
    rows: list[dict[str, object]] = []
    named = set()
    mixed = {a: 0 for a in chosen}
    repeated = 0
    for attribute in chosen:
        patterns = _patterns(lists, attribute)
        groups = lists.attributes[attribute]
        seen: set[tuple[str, ...]] = set()
        for index, text in enumerate(texts):
            found = find_words(text, patterns)
            if not found:
                continue
            named.add(index)
            if len({f.group for f in found}) > 1:
                mixed[attribute] += 1
                continue
            variants = {group: swap(text, found, words) for group, words in groups.items()}
            key = tuple(variants.values())
            if key in seen:
                repeated += 1
                continue
            seen.add(key)
            source = SOURCE_PREFIX + text
            for group, variant in variants.items():
                items.append(PromptItem(f"cf:{attribute}:{index}:{group}", group, attribute, variant, source=source))
                rows.append({"attribute": attribute, "prompt": text, "prompt_group": found[0].group, "group": group,
                             "variant": variant, "words": ", ".join(f.word for f in found)})
    no_word = len(texts) - len(named)
    counts = {"prompts": len(texts), "used": len({r["prompt"] for r in rows}), "no_word": no_word,
              "mixed": sum(mixed.values()), "repeated": repeated, "variants": len(items)}
    notes = [f"{counts['used']} of {len(texts)} prompt(s) name one group of {', '.join(chosen)} and got "
             f"{len(items)} variant(s)"]
    if no_word:
        notes.append(f"{no_word} prompt(s) name no word of {', '.join(chosen)} and were left out")
    for attribute, count in mixed.items():
        if count:
            notes.append(f"{count} prompt(s) name words of two or more {attribute} groups and were left out of "
                         f"{attribute} (swapping one person would merge two)")
    if repeated:
        notes.append(f"{repeated} prompt(s) give the same variants as an earlier prompt and count once")
    if not items:
        raise PromptError(f"none of the {len(texts)} prompt(s) names exactly one group of {', '.join(chosen)} in "
                          f"{lists.name}; give prompts that mention one (e.g. 'The woman said that')")
    prompt_set = PromptSet(name, tuple(items), tuple(notes))
    return CounterfactualSet(prompt_set, pd.DataFrame(rows, columns=PAIR_COLUMNS), counts, notes)


def crossed_variants(texts: Sequence[str], lists: WordLists, chosen: Sequence[str], name: str) -> CounterfactualSet:
    """Groups of several attributes at once (issue 46): each prompt that names exactly one group of every chosen
    attribute ("The Black woman said that") gets a variant per combination of their groups (2 genders × 3 races: 6),
    each item carrying its attributes, its group the combination ("woman × Black") and its family the attributes'
    names ("gender × race"); the variants share the prompt's source, so they stay paired as a template's groups do."""
    if len(chosen) < 2:
        raise PromptError("crossing needs two or more attributes (e.g. gender and race); with one, its groups are "
                          "the variants already")
    family = ATTRIBUTE_JOINER.join(chosen)
    items: list[PromptItem] = []
    rows: list[dict[str, object]] = []
    seen: set[tuple[str, ...]] = set()
    missing = mixed = repeated = 0
    for index, text in enumerate(texts):
        found = {attribute: find_words(text, _patterns(lists, attribute)) for attribute in chosen}
        if any(not words for words in found.values()):
            missing += 1
            continue
        if any(len({f.group for f in words}) > 1 for words in found.values()):
            mixed += 1
            continue
        variants = {}
        for combination in itertools.product(*(list(lists.attributes[a]) for a in chosen)):
            variant = text
            for attribute, group in zip(chosen, combination, strict=True):
                # words of the next attribute are found again in the text as swapped so far (positions moved)
                variant = swap(variant, find_words(variant, _patterns(lists, attribute)),
                               lists.attributes[attribute][group])
            variants[combination] = variant
        key = tuple(variants.values())
        if key in seen:
            repeated += 1
            continue
        seen.add(key)
        source = SOURCE_PREFIX + text
        prompt_group = ATTRIBUTE_JOINER.join(found[a][0].group for a in chosen)
        for combination, variant in variants.items():
            group = ATTRIBUTE_JOINER.join(combination)
            items.append(PromptItem(f"cf:{family}:{index}:{group}", group, family, variant, source=source,
                                    attributes=tuple(zip(chosen, combination, strict=True))))
            rows.append({"attribute": family, "prompt": text, "prompt_group": prompt_group, "group": group,
                         "variant": variant, "words": ", ".join(f.word for a in chosen for f in found[a])})
    used = len({r["prompt"] for r in rows})
    counts = {"prompts": len(texts), "used": used, "no_word": missing, "mixed": mixed, "repeated": repeated,
              "variants": len(items)}
    notes = [f"{used} of {len(texts)} prompt(s) name one group of each of {', '.join(chosen)} and got "
             f"{len(items)} variant(s), one per combination of their groups"]
    if missing:
        notes.append(f"{missing} prompt(s) do not name every one of {', '.join(chosen)} and were left out (crossing "
                     "swaps each attribute's words)")
    if mixed:
        notes.append(f"{mixed} prompt(s) name words of two or more groups of one attribute and were left out")
    if repeated:
        notes.append(f"{repeated} prompt(s) give the same variants as an earlier prompt and count once")
    if not items:
        raise PromptError(f"none of the {len(texts)} prompt(s) names one group of each of {', '.join(chosen)} in "
                          f"{lists.name}; give prompts that mention one of each (e.g. 'The Black woman said that')")
    return CounterfactualSet(PromptSet(name, tuple(items), tuple(notes)), pd.DataFrame(rows, columns=PAIR_COLUMNS),
                             counts, notes)


def read_lists_file(path: str | Path | None, data: bytes | None = None, name: str | None = None) -> WordLists:
    """The shipped lists (no path, no data), or a user's file (a path on the CLI, an upload's bytes on the page)."""
    if path is None and data is None:
        return shipped_lists()
    shown = name or (Path(path).name if path is not None else "word lists")
    if data is None:
        try:
            target = Path(path)  # type: ignore[arg-type]
            if target.is_dir():
                raise PromptError(f"{shown} is a folder; give a word-lists file (JSON or [attribute] sections)")
            if target.stat().st_size > MAX_LISTS_BYTES:
                raise PromptError(f"{shown} is {target.stat().st_size / 1e6:.0f} MB; a word-lists file is at most "
                                  f"{MAX_LISTS_BYTES / 1e6:.0f} MB")
            data = target.read_bytes()
        except FileNotFoundError:
            raise PromptError(f"the word-lists file {path} does not exist") from None
        except OSError as error:
            raise PromptError(f"the word-lists file {path} cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_LISTS_BYTES:
        raise PromptError(f"{shown} is {len(data) / 1e6:.0f} MB; a word-lists file is at most "
                          f"{MAX_LISTS_BYTES / 1e6:.0f} MB")
    if b"\x00" in data[:4096]:
        raise PromptError(f"{shown} is a binary file, not word lists")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise PromptError(f"{shown} is not UTF-8 text (byte {error.start} cannot be read); save it as UTF-8") \
            from None
    return parse_lists(text, shown)
