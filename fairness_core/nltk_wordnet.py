"""NLTK's WordNet 3.0 (METEOR's synonym stage, the adaptation page's spelling check), loaded once per process.

NLTK 3.9+ builds a WordNet-3.0-to-loaded-version synset map on every load (`WordNetCorpusReader.map_wn`), for its
multilingual (OMW) lookups only. Its version check compares "3.0" with the name "wordnet", so it never matches and
the map is built even when the loaded data is 3.0 itself, where it is the identity: 4.9 of the 8.3 s a load takes
here. Neither user of WordNet in this project reads OMW data, and for 3.0 data an absent map (None) is what NLTK's
own lookups treat as "no mapping needed", so that one case is skipped; any other version is mapped as before.
"""

from __future__ import annotations

from typing import Any


def _skip_identity_map() -> None:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    original = WordNetCorpusReader.map_wn
    if getattr(original, "skips_identity", False):
        return

    def map_wn(self: Any, version: str = "wordnet") -> Any:
        if version == "wordnet" and self.get_version() == "3.0":
            return None
        return original(self, version)

    map_wn.skips_identity = True  # type: ignore[attr-defined]
    WordNetCorpusReader.map_wn = map_wn  # type: ignore[method-assign]


def load() -> Any:
    """NLTK's `wordnet` reader, loaded (LookupError where the set-up step has not installed it)."""
    from fairness_core import config

    config.ensure_nltk_path()
    _skip_identity_map()
    from nltk.corpus import wordnet

    wordnet.ensure_loaded()
    return wordnet
