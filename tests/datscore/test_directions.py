"""The 8 directions centred on Hypo, their languages and BARTScore's facets."""

from __future__ import annotations

import pytest

from fairness_core.translation import directions as D


def test_eight_directions_centred_on_the_hypothesis() -> None:
    assert len(D.DIRECTIONS) == 8 and len(set(D.LABELS)) == 8
    assert all(D.HYPO in (d.source, d.target) for d in D.DIRECTIONS)
    partners = {d.source if d.target == D.HYPO else d.target for d in D.DIRECTIONS}
    assert partners == {D.SRC, D.REF, D.TRANS1, D.TRANS2}
    assert sum(d.into_hypo for d in D.DIRECTIONS) == 4  # each partner once each way
    assert [d.label for d in D.REFERENCE_ONLY] == ["Ref→Hypo", "Hypo→Ref", "Trans2→Hypo", "Hypo→Trans2"]
    assert D.direction_from_label("Trans1→Hypo") == D.Direction(D.TRANS1, D.HYPO)
    with pytest.raises(ValueError, match="unknown direction"):
        D.direction_from_label("Src→Ref")


def test_augmentation_languages_follow_section_4_1() -> None:
    assert D.augmentation_languages("fr", "en") == ("en", "es")  # to-English
    assert D.augmentation_languages("en", "de") == ("es", "en")  # from-English
    assert D.augmentation_languages("fr", "de") == ("en", "en")  # stated extension (no English side)
    assert D.entity_languages("en", "de") == {"Src": "en", "Ref": "de", "Hypo": "de", "Trans1": "es", "Trans2": "en"}
    with pytest.raises(ValueError, match="both 'en'"):
        D.augmentation_languages("en", "en")


def test_bartscore_facets() -> None:
    facets = D.bartscore_facets({"Ref→Hypo": -1.0, "Hypo→Ref": -3.0, "Src→Hypo": -2.5})
    assert facets == {"P": -1.0, "R": -3.0, "F": -2.0, "faithfulness": -2.5}
    assert "faithfulness" not in D.bartscore_facets({"Ref→Hypo": -1.0, "Hypo→Ref": -3.0})
