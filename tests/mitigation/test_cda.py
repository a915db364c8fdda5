"""Counterfactual data augmentation (Eq. 4): c2 swaps every gendered word, r neutralises it, nothing else moves."""

from __future__ import annotations

import pytest

from fairness_core.mitigation import cda


@pytest.mark.parametrize("c1, c2, r", [
    ("He told her that his mother was an actress.", "She told him that her father was an actor.",
     "The person told the person that the person's parent was a performer."),
    ("She gave her book to him because he asked her.", "He gave his book to her because she asked him.",
     "The person gave the person's book to the person because the person asked the person."),
    ("An actor met the waitress.", "An actress met the waiter.", "A performer met the server."),
    ("It was hers, not his.", "It was his, not hers.", "It was the person's, not the person's."),
    ("The KING thanked himself.", "The QUEEN thanked herself.", "The MONARCH thanked themselves."),
])
def test_triples_swap_and_neutralise_every_gendered_word(c1, c2, r):
    triple = cda.augment(c1)
    assert (triple.c1, triple.c2, triple.r) == (c1, c2, r)


def test_a_sentence_without_gendered_words_gives_no_triple():
    assert cda.augment("The weather was nice and the train left on time.") is None
    # excluded on purpose: not gendered in everyday use, or needs a name
    assert cda.augment("The tailor thanked the host and said: miss the bus, sir.") is None


def test_the_swap_table_is_symmetric_and_every_word_has_a_neutral_term():
    table = cda.swap_table()
    assert len(table) > 150
    assert not set(table) & cda.EXCLUDED
    for word, other in table.items():
        assert word in cda.NEUTRAL
        assert table.get(other) is not None
    assert table["actor"] == "actress" and table["actress"] == "actor" and table["wives"] == "husbands"
