"""Named entities with character offsets, through spaCy's en_core_web_sm (offline preset)."""

from __future__ import annotations

import pytest

from fairness_core.models import availability, get_preset, load_preset
from fairness_core.models.ner import Entity

PRESET = "spacy-en-core-web-sm"


@pytest.fixture(scope="module")
def recognizer():
    if not availability(get_preset(PRESET)).usable:
        pytest.skip("spaCy en_core_web_sm is not installed here")
    return load_preset(PRESET)


def test_person_spans_with_offsets(recognizer) -> None:
    texts = ["Barack Obama met Angela Merkel in Paris.", "The nurse said she would help.", ""]
    found = recognizer.entities(texts)
    assert found == [[Entity(0, 12, "Barack Obama", "PERSON"), Entity(17, 30, "Angela Merkel", "PERSON")], [], []]
    for text, entities in zip(texts, found, strict=True):
        assert all(text[e.start : e.end] == e.text for e in entities)


def test_other_labels_on_request(recognizer) -> None:
    [entities] = recognizer.entities(["Barack Obama met Angela Merkel in Paris."], labels=("GPE", "PERSON"))
    assert [e.label for e in entities] == ["PERSON", "PERSON", "GPE"]
    assert entities[-1] == Entity(34, 39, "Paris", "GPE")
    with pytest.raises(ValueError, match="has no entity label PEOPLE"):
        recognizer.entities(["x"], labels=("PEOPLE",))


def test_the_preset_loads_once_with_only_the_ner_component(recognizer) -> None:
    assert get_preset(PRESET).task == "ner"
    assert load_preset(PRESET) is recognizer
    assert recognizer.nlp.pipe_names == ["ner"]
