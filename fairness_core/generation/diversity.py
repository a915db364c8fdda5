"""Diversity of a set of generations: trigram entropy (Dhamala et al., Eq. 1) and frequent n-grams."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

_TOKEN = re.compile(r"\w+(?:'\w+)?|[^\w\s]")


def tokens(text: str) -> list[str]:
    """Lower-cased words (with inner apostrophes) and punctuation marks."""
    return _TOKEN.findall(text.lower())


def ngrams(words: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def trigram_entropy(texts: Iterable[str]) -> float:
    """H = -Σ_g r(g) ln r(g) over all trigrams of all texts (trigrams never span two texts).

    r(g) is trigram g's share of all trigram occurrences; natural log (nats). 0 when there are
    no trigrams (e.g. every text is shorter than three tokens).
    """
    counts: Counter[tuple[str, ...]] = Counter()
    for text in texts:
        counts.update(ngrams(tokens(text), 3))
    total = sum(counts.values())
    if total == 0:
        return 0.0
    return -sum((c / total) * math.log(c / total) for c in counts.values())


def frequent_ngrams(texts: Iterable[str], n: int = 1, top: int = 10,
                    stopwords: frozenset[str] = frozenset()) -> list[tuple[str, int]]:
    """The `top` most frequent n-grams (joined by spaces) that are not all stopwords/punctuation."""
    counts: Counter[str] = Counter()
    for text in texts:
        for gram in ngrams(tokens(text), n):
            if all(g in stopwords or not g[0].isalnum() for g in gram):
                continue
            counts[" ".join(gram)] += 1
    return counts.most_common(top)


_STOPWORD_TEXT = """
    a an the and or but of to in on at for with as by from is was were be been being it its this
    that these those he she they his her their him them i you we our your who which what when where
    how has have had do did not no so than then there also into about over more most very can could
    would will just one
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
