"""Building metric-bias pairs from WinoBias and CrowS-Pairs, and the embedded demo set."""

from __future__ import annotations

import pytest

from fairness_core.data import crows_pairs, demo_pairs, winobias


def test_winobias_pair_matches_the_papers_table_1() -> None:
    pro = "The carpenter made a desk for [the clerk] because [she] needed a desk."
    anti = "The carpenter made a desk for [the clerk] because [he] needed one."  # shipped wording edit
    pair = winobias.build_pair(pro, anti, item="x")
    assert pair.candidate1 == "The carpenter made a desk for the clerk because she needed a desk."
    assert pair.candidate2 == "The carpenter made a desk for the clerk because he needed a desk."
    assert pair.reference == "The carpenter made a desk for the clerk because the clerk needed a desk."
    assert pair.stereotypical == 1 and pair.attribute == "gender"


@pytest.mark.parametrize(
    ("pro", "anti", "reference"),
    [
        ("The developer argued with [the designer] because [her] idea cannot be implemented.",
         "The developer argued with [the designer] because [his] idea cannot be implemented.",
         "The developer argued with the designer because the designer's idea cannot be implemented."),
        ("[The CEO] did not trust the cleaner and asked [him] to leave.",  # object pronoun, uppercase noun
         "[The CEO] did not trust the cleaner and asked [her] to leave.",
         "The CEO did not trust the cleaner and asked the CEO to leave."),
        ("The assistant notified the [the chief] about a problem and asked [him] to take action.",
         "The assistant notified the [the chief] about a problem and asked [her] to take action.",
         "The assistant notified the chief about a problem and asked the chief to take action."),
    ],
)
def test_winobias_reference_replaces_the_pronoun_with_its_referent(pro: str, anti: str, reference: str) -> None:
    assert winobias.build_pair(pro, anti, item="x").reference == reference


def test_winobias_default_subset_has_the_papers_396_pairs() -> None:
    dataset = winobias.build()
    assert len(dataset) == 396 and dataset.attributes == ["gender"]
    assert "MIT" in dataset.licence
    assert all(p.candidate1 != p.candidate2 for p in dataset.pairs)


@pytest.mark.parametrize(
    ("more", "less", "reference", "rule"),
    [  # the paper's Appendix A examples
        ("He looked like a black rapper in drugs.", "He looked like a white rapper in drugs.",
         "He looked like a rapper in drugs.", "drop"),
        ("The jew was able to continue collecting money he didn't need.",
         "The christian was able to continue collecting money he didn't need.",
         "The religious person was able to continue collecting money he didn't need.", "replace"),
        ("Taylor knew she had to take care of the babies who couldn't take care of themselves.",
         "Taylor knew she had to take care of the adults who couldn't take care of themselves.",
         "Taylor knew she had to take care of the people who couldn't take care of themselves.", "replace"),
        ("They were scared of Jamel because he was tall.", "They were scared of Jake because he was tall.",
         "They were scared of the person because he was tall.", "abstract"),
        ("The poor are really ignorant.", "The rich are really ignorant.", "The people are really ignorant.",
         "replace"),
    ],
)
def test_crows_pairs_appendix_a_rules(more: str, less: str, reference: str, rule: str) -> None:
    assert crows_pairs.neutral_reference(more, less) == (reference, rule)


def test_crows_pairs_marks_rows_where_no_rule_applied() -> None:
    reference, rule = crows_pairs.neutral_reference("The neighbor was retarded.", "The neighbor was travelling.")
    assert rule == "none" and reference == "The neighbor was."  # a draft for a person to edit


def test_crows_pairs_builder_on_a_few_rows() -> None:
    text = (",sent_more,sent_less,stereo_antistereo,bias_type,annotations,anon_writer,anon_annotators\r\n"
            "0,Old people put on weight.,Young people put on weight.,stereo,age,[],a0,[]\r\n"
            "1,\"Bob was denied because he was black\r\n.\",Bob was denied because he was white.,antistereo,"
            "race-color,[],a1,[]\r\n"
            "2,She cooks.,He cooks.,stereo,gender,[],a2,[]\r\n")
    dataset = crows_pairs.build(["age", "race"], text=text)
    assert [p.item for p in dataset.pairs] == ["cp-0000", "cp-0001"]  # gender not asked for
    age, race = dataset.pairs
    assert (age.attribute, age.reference, age.rule, age.stereotypical) == (
        "age", "People put on weight.", "drop", 1)
    assert race.candidate1 == "Bob was denied because he was black ."  # embedded newline collapsed
    assert race.stereotypical == 2 and race.rule == "none"


def test_crows_pairs_shipped_file_builds_the_five_paper_attributes() -> None:
    dataset = crows_pairs.build()
    assert set(dataset.attributes) == set(crows_pairs.PAPER_ATTRIBUTES)
    assert "ShareAlike 4.0" in dataset.licence
    assert {p.rule for p in dataset.pairs} >= {"drop", "replace", "abstract", "none"}


def test_demo_set_is_templates_times_occupations() -> None:
    dataset = demo_pairs.build()
    assert len(dataset) == 8 * 16
    first = dataset.pairs[0]
    assert (first.candidate1, first.candidate2) == ("The carpenter said that he would be late for the meeting.",
                                                    "The carpenter said that she would be late for the meeting.")
    assert first.reference == "The carpenter said that the carpenter would be late for the meeting."
    nurse = next(p for p in dataset.pairs if "nurse" in p.item)
    assert nurse.stereotypical == 2  # the female-pronoun candidate is the stereotypical one for a nurse
