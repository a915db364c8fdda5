"""NLTK's WordNet loads once, without the identity synset map NLTK would build for WordNet 3.0 data."""

from __future__ import annotations

from fairness_core import nltk_wordnet


def test_wordnet_3_0_loads_without_a_map_and_answers_as_before() -> None:
    wordnet = nltk_wordnet.load()
    assert wordnet.get_version() == "3.0" and wordnet.map30 is None
    assert wordnet.morphy("dogs") == "dog"  # the adaptation page's spelling check
    assert {lemma.name() for synset in wordnet.synsets("feline") for lemma in synset.lemmas()} >= {"feline"}


def test_any_other_version_is_still_mapped() -> None:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    nltk_wordnet.load()

    class Loaded31:
        def get_version(self) -> str:
            return "3.1"

        def map_to_one(self, version: str) -> tuple[str, str]:
            return ("mapped", version)

    class Loaded30(Loaded31):
        def get_version(self) -> str:
            return "3.0"

    assert WordNetCorpusReader.map_wn(Loaded31(), "wordnet") == ("mapped", "wordnet")
    assert WordNetCorpusReader.map_wn(Loaded30(), "wordnet") is None
    assert WordNetCorpusReader.map_wn(Loaded30(), "omw-1.4") == ("mapped", "omw-1.4")
