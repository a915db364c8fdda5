"""The synthetic demo set: known degradations applied cumulatively, and the known order it gives."""

from __future__ import annotations

from fairness_core.datscore import synthetic


def test_thirty_sources_six_levels_fifteen_pairs_each() -> None:
    data = synthetic.load()
    assert data.synthetic and "synthetic" in data.name
    assert len(data.segments) == 180 and len(data.ranking) == 30 * 15
    assert all(synthetic.level_of(b) < synthetic.level_of(w) and b.split("-")[0] == w.split("-")[0] == g
               for b, w, g in data.ranking)


def test_each_level_adds_its_operation() -> None:
    levels = synthetic.degrade("The train to Lyon will depart at eight o'clock tomorrow morning.",
                               "Le train pour Lyon partira à huit heures demain matin.", "Lyon", "Marseille")
    assert levels[0] == "The train to Lyon will depart at eight o'clock tomorrow morning."
    assert levels[1] == "The train to Lyon will depart at eight o'clock morning."  # longest word dropped
    assert levels[2] != levels[1] and sorted(levels[2].split()) == sorted(levels[1].split())  # a swap
    assert levels[3] == levels[2].replace("Lyon", "Marseille")
    assert levels[4] == levels[3].replace("will", "will not")
    assert levels[5].endswith("huit heures demain matin.")  # the untranslated span


def test_every_written_row_degrades_into_distinct_hypotheses() -> None:
    data = synthetic.load()
    by_group: dict[str, list[str]] = {}
    for segment in data.segments:
        by_group.setdefault(segment.group or "", []).append(segment.hypo)
    assert len(by_group) == 30
    for hypos in by_group.values():
        assert len(set(hypos)) == 6 and " not " in hypos[4]


def test_levels_are_balanced_in_words() -> None:
    """Issue 18 §2.1: degradation must not make hypotheses longer. Word drop takes one word, negation adds one
    back, the untranslated span replaces words one for one: n, n−1, n−1, n−1, n, n words in every source."""
    data = synthetic.load()
    by_group: dict[str, list[int]] = {}
    for segment in data.segments:
        by_group.setdefault(segment.group or "", []).append(len(segment.hypo.split()))
    for counts in by_group.values():
        n = counts[0]
        assert counts == [n, n - 1, n - 1, n - 1, n, n]
