"""The offline demo set: project-written references with hypotheses degraded by known operations.

`data/datscore/synthetic_fr_en.csv` holds 30 French sources, English references and a second correct English
translation (`hypo_good`). Each source gets 6 hypotheses, level 0..5, by applying these operations to
`hypo_good` *cumulatively* (level k has the first k):

1. word drop — the longest word that is neither the entity nor the auxiliary is removed;
2. swap — two adjacent unprotected words nearest the middle change places;
3. entity change — the entity word is replaced (`entity` -> `entity_swap`);
4. negation — "not" is inserted after the first auxiliary (is, was, will, has, can, must, ...);
5. untranslated span — the last third of the words is replaced by as many words from the end of the
   French source (the same number of words, so the span changes the language, not the length).

Length: the levels are balanced in words (level 0 has n words; word drop takes one away, negation adds one
back, the untranslated span keeps the count: n, n−1, n−1, n−1, n, n). Before issue 18 the span took a third
of the *source's* words and the hypotheses grew longer with degradation (in LM tokens 10–11 at levels 0–3,
13.3 at level 5), so any sum over tokens rewarded short hypotheses for the wrong reason. Token counts still
differ (French words split into more tokens), so the meta-evaluation also reports length as a covariate:
the τ of "fewer hypothesis tokens is better" alone (`metaeval.length_baseline`).

Known quality order: within a source, fewer degradations is better, so every pair (level i, level j), i < j,
is a relative-ranking judgement "i better than j" (15 per source). This order is built in, not judged by
people: τ against it is **synthetic** and labelled so everywhere.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from fairness_core.datscore.request import Segment, SegmentSet

DATA_FILE = Path(__file__).resolve().parents[2] / "data" / "datscore" / "synthetic_fr_en.csv"
SRC_LANG, TGT_LANG = "fr", "en"
AUXILIARIES = ("is", "are", "was", "were", "will", "has", "have", "had", "can", "could", "must", "would",
               "should", "does", "did", "do")
OPERATIONS = ("word drop", "swap", "entity change", "negation", "untranslated span")
NAME = "synthetic fr→en (project-written, degraded by known operations)"


def _aux_index(words: list[str]) -> int:
    for i, word in enumerate(words):
        if word.lower().strip(".,") in AUXILIARIES:
            return i
    raise ValueError(f"no auxiliary verb in {' '.join(words)!r}: negation needs one")


def degrade(hypo: str, src: str, entity: str, entity_swap: str) -> list[str]:
    """The 6 hypotheses (level 0 = `hypo`, level k = the first k operations of OPERATIONS applied)."""
    words = hypo.split()
    if entity not in words:
        raise ValueError(f"entity {entity!r} is not a word of {hypo!r}")
    levels = [" ".join(words)]
    # word labels keep protected words recognisable while others move or vanish
    entity_at, aux_at = words.index(entity), _aux_index(words)
    items = [(w, i in (entity_at, aux_at), i == entity_at, i == aux_at) for i, w in enumerate(words)]

    # 1. word drop: the longest unprotected word (first of equals)
    free = [i for i, item in enumerate(items) if not item[1]]
    drop = max(free, key=lambda i: (len(items[i][0].strip(".,")), -i))
    items = items[:drop] + items[drop + 1 :]
    levels.append(" ".join(w for w, *_ in items))

    # 2. swap: adjacent unprotected words nearest the middle, the sentence end (punctuation) left in place
    middle = (len(items) - 1) / 2
    candidates = [i for i in range(len(items) - 2) if not items[i][1] and not items[i + 1][1]]
    if not candidates:
        raise ValueError(f"no two adjacent movable words in {hypo!r}")
    i = min(candidates, key=lambda k: (abs(k + 0.5 - middle), k))
    items[i], items[i + 1] = items[i + 1], items[i]
    levels.append(" ".join(w for w, *_ in items))

    # 3. entity change
    items = [(entity_swap, p, e, a) if e else (w, p, e, a) for w, p, e, a in items]
    levels.append(" ".join(w for w, *_ in items))

    # 4. negation after the auxiliary
    at = next(k for k, item in enumerate(items) if item[3])
    items = [*items[: at + 1], ("not", True, False, False), *items[at + 1 :]]
    words_now = [w for w, *_ in items]
    levels.append(" ".join(words_now))

    # 5. untranslated span: the last third of the words becomes as many words from the end of the French source
    source_words = src.split()
    k = min(math.ceil(len(words_now) / 3), len(source_words))
    levels.append(" ".join(words_now[: len(words_now) - k] + source_words[len(source_words) - k :]))
    return levels


def load(path: Path | str = DATA_FILE) -> SegmentSet:
    """Segments `<group>-h<level>` with the known within-source ranking (better_id, worse_id, group)."""
    segments: list[Segment] = []
    ranking: list[tuple[str, str, str]] = []
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            group = row["group_id"]
            levels = degrade(row["hypo_good"], row["src"], row["entity"], row["entity_swap"])
            ids = [f"{group}-h{level}" for level in range(len(levels))]
            segments += [Segment(i, row["src"], row["ref"], text, None, group) for i, text in zip(ids, levels,
                                                                                                 strict=True)]
            ranking += [(ids[a], ids[b], group) for a in range(len(ids)) for b in range(a + 1, len(ids))]
    return SegmentSet(NAME, tuple(segments), synthetic=True, ranking=tuple(ranking))


def level_of(segment_id: str) -> int:
    return int(segment_id.rsplit("-h", 1)[1])
