"""The 8 generation directions of DATScore, centred on the hypothesis, and their languages.

DATScore (paper: ../shared/seeds/datscore_data-augmented-translation-score.txt, Section 3, Fig. 1) scores a
hypothesis Hypo against four texts: the source Src, the reference Ref, and two *augmented translations*:
Trans1 = Src translated by the backbone, Trans2 = Ref translated by the backbone. Every direction connects
Hypo with one of them, both ways, so there are 8:

    Src→Hypo, Hypo→Src, Ref→Hypo, Hypo→Ref, Trans1→Hypo, Hypo→Trans1, Trans2→Hypo, Hypo→Trans2

BARTScore's facets are three of them (Section 3): precision P = Ref→Hypo, recall R = Hypo→Ref,
F = (P + R) / 2, faithfulness = Src→Hypo.

Languages of the augmented translations (Section 4.1): to-English (target en) Trans1 = en, Trans2 = es;
from-English (source en) Trans1 = es, Trans2 = en. Both are "English, unless the text already is English,
then Spanish" (Trans1 = es if the source is English else en; Trans2 = es if the target is English else en);
for a pair without English (not in the paper) that rule gives Trans1 = Trans2 = en — a stated extension
(docs/datscore.md).

Without a source (Section 5, other NLG tasks; and the Metric bias page, whose pairs have none) DATScore keeps
the 4 directions Hypo↔Ref and Hypo↔Trans2.
"""

from __future__ import annotations

from dataclasses import dataclass

SRC, REF, TRANS1, TRANS2, HYPO = "Src", "Ref", "Trans1", "Trans2", "Hypo"
ENTITIES = (SRC, REF, TRANS1, TRANS2, HYPO)
ARROW = "→"


@dataclass(frozen=True)
class Direction:
    """X→Y: the backbone reads X and scores Y token by token (Eq. 1)."""

    source: str
    target: str

    @property
    def label(self) -> str:
        return f"{self.source}{ARROW}{self.target}"

    @property
    def into_hypo(self) -> bool:
        """True when the hypothesis is the scored side (its tokens get log-probs and entropies)."""
        return self.target == HYPO


#: the 8 directions in the paper's order (Fig. 2): each partner into Hypo, then Hypo into it
DIRECTIONS: tuple[Direction, ...] = tuple(
    d for partner in (SRC, REF, TRANS1, TRANS2) for d in (Direction(partner, HYPO), Direction(HYPO, partner))
)
LABELS: tuple[str, ...] = tuple(d.label for d in DIRECTIONS)
#: Section 5: without a source, only the reference side
REFERENCE_ONLY: tuple[Direction, ...] = tuple(d for d in DIRECTIONS if SRC not in (d.source, d.target)
                                              and TRANS1 not in (d.source, d.target))

#: BARTScore facets as directions (Section 3)
PRECISION, RECALL, FAITHFULNESS = f"{REF}{ARROW}{HYPO}", f"{HYPO}{ARROW}{REF}", f"{SRC}{ARROW}{HYPO}"


def direction_from_label(label: str) -> Direction:
    for direction in DIRECTIONS:
        if direction.label == label:
            return direction
    raise ValueError(f"unknown direction {label!r}; the 8 directions are {', '.join(LABELS)}")


def augmentation_languages(src_lang: str, tgt_lang: str) -> tuple[str, str]:
    """(Trans1 language, Trans2 language) for a pair (Section 4.1).

    to-English: (en, es); from-English: (es, en); neither side English: (en, en) (stated extension: each
    augmented text goes into English unless it already is English, then into Spanish).
    """
    src, tgt = src_lang.strip().lower(), tgt_lang.strip().lower()
    if src == tgt:
        raise ValueError(f"source and target language are both {src!r}; DATScore evaluates translations")
    return ("es" if src == "en" else "en"), ("es" if tgt == "en" else "en")


def entity_languages(src_lang: str, tgt_lang: str) -> dict[str, str]:
    """The language of each text: Src in the source language, Ref and Hypo in the target, Trans1/Trans2 per
    `augmentation_languages`."""
    trans1, trans2 = augmentation_languages(src_lang, tgt_lang)
    return {SRC: src_lang, REF: tgt_lang, HYPO: tgt_lang, TRANS1: trans1, TRANS2: trans2}


def bartscore_facets(scores: dict[str, float]) -> dict[str, float]:
    """BARTScore's facets from direction scores (Section 3): P = Ref→Hypo, R = Hypo→Ref, F = (P + R) / 2,
    faithfulness = Src→Hypo (absent without a source)."""
    precision, recall = scores[PRECISION], scores[RECALL]
    facets = {"P": precision, "R": recall, "F": (precision + recall) / 2}
    if FAITHFULNESS in scores:
        facets["faithfulness"] = scores[FAITHFULNESS]
    return facets


def direction_texts(direction: Direction, texts: dict[str, str], languages: dict[str, str]
                    ) -> tuple[str, str, str, str]:
    """(X text, Y text, X language, Y language) of one direction for one segment."""
    return (texts[direction.source], texts[direction.target], languages[direction.source],
            languages[direction.target])
