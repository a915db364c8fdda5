"""Rewriting a filled template into the domain's style (Quiroga et al. 2025 Sec. 3.4, App. A.4).

For each template t_j and each kind of identity term (names or gendered nouns — "separate template sets
are generated depending on whether the identity term corresponds to a name or a gendered noun", Sec. 3.4)
the template is filled with one *anchor* term, the chat LM is shown n domain examples and asked, with the
App. A.4 prompt (verbatim by default), to rewrite it keeping the term exactly once. The reply is
re-templated by putting the slot back where the anchor term is. A reply that is empty, loses the anchor
or repeats it is rejected and counted; a template is in the adapted set only when every kind it needs was
accepted (so each template's background β_j is over the same groups in both sets).

Stated choices (the paper leaves them open):
- anchor for names: a name from ``anchor_names`` (common U.S. male names, as App. A.4 describes), drawn
  per template with the seed; anchor for nouns: a noun of the attribute's noun groups, drawn the same way;
- examples: n sentences drawn per template (seeded) from the domain sentences without a PERSON mention;
- reply cleaning: the first non-empty line, surrounding quotes and a leading "Rewrite:"/"Here is..." label
  removed. Nothing else is changed;
- one more rejection than the paper's: a reply that *quotes* the original sentence inside other words
  ('The sentence "Kevin feels angry" is a domain-specific text ...') talks about the sentence instead of
  rewriting it — small models do this often — and is rejected as "quoted the original". A reply that is
  just the original sentence again is kept (an unadapted rewrite is still a rewrite).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from fairness_core.adaptation.templates import SLOT, fill, slot_out, term_pattern

#: App. A.4, Figure 6 — wording verbatim; [n], the numbered examples, [template(identity-term)] and
#: [identity-term] are the placeholders.
PAPER_PROMPT = (
    "I want you to rewrite a text in the style of a specific domain.\n\n"
    "The following {n} texts are examples of this specific domain:\n\n"
    "{examples}\n\n"
    "Can you rewrite the following sentence {sentence} as domain-specific text? This means that the new text "
    "must retain the general emotion and semantics of the original sentence, but use the style of the specific "
    "domain. You should also include {term} explicitly only once in the new text.\n\n"
    "Output only the rewrite text, without any introduction or explanation."
)
PLACEHOLDERS = ("{n}", "{examples}", "{sentence}", "{term}")

LOST, REPEATED, EMPTY, ACCEPTED = "lost the identity term", "repeated the identity term", "empty reply", "accepted"
QUOTED = "quoted the original (commentary, not a rewrite)"
UNCHANGED = "unchanged (the template itself, up to case, spacing and punctuation)"
STATUSES = (ACCEPTED, LOST, REPEATED, QUOTED, UNCHANGED, EMPTY)
_LABEL = re.compile(r"^\s*(?:rewrite(?:d)?(?: text)?|here(?:'s| is)[^:]*|domain-specific text|answer)\s*:\s*",
                    flags=re.IGNORECASE)
_QUOTES = "\"'“”‘’`"


class PromptTemplateError(ValueError):
    """A user's prompt wording without one of the placeholders."""


def check_prompt(prompt: str) -> None:
    missing = [p for p in PLACEHOLDERS if p not in prompt]
    if missing:
        raise PromptTemplateError(f"the rewriting prompt must contain {', '.join(missing)} "
                                  f"(placeholders: {', '.join(PLACEHOLDERS)})")


def build_prompt(sentence: str, term: str, examples: Sequence[str], wording: str = PAPER_PROMPT) -> str:
    """The App. A.4 prompt for one filled template."""
    numbered = "\n".join(f"{i}. {text}" for i, text in enumerate(examples, start=1))
    return (wording.replace("{n}", str(len(examples))).replace("{examples}", numbered)
            .replace("{sentence}", f"\"{sentence}\"").replace("{term}", f"\"{term}\""))


def pick_examples(pool: Sequence[str], n: int, template_id: str, seed: int) -> list[str]:
    """n domain examples for one template, drawn with a seeded shuffle of the pool."""
    if n <= 0 or not pool:
        return []
    rng = random.Random(f"{seed}:examples:{template_id}")
    return rng.sample(list(pool), min(n, len(pool)))


def pick_anchor(candidates: Sequence[str], template_id: str, kind: str, seed: int) -> str:
    return random.Random(f"{seed}:anchor:{kind}:{template_id}").choice(list(candidates))


def clean_reply(reply: str) -> str:
    """First non-empty line; a leading label and wrapping quotes removed; whitespace collapsed."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    text = _LABEL.sub("", lines[0]).strip()
    if len(lines) > 1 and not text:
        text = lines[1]
    while len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    return " ".join(text.split())


@dataclass(frozen=True)
class Rewrite:
    template_id: str
    kind: str  # names | nouns
    anchor: str
    original: str  # the template filled with the anchor
    reply: str  # raw model reply
    cleaned: str
    status: str  # accepted | lost … | repeated … | empty reply
    adapted_template: str | None  # the cleaned reply with the slot back, when accepted
    occurrences: int = 0

    @property
    def accepted(self) -> bool:
        return self.status == ACCEPTED


def judge(template_id: str, kind: str, anchor: str, template_text: str, reply: str) -> Rewrite:
    """Accept a reply that holds the anchor exactly once (re-templated), else say why it is rejected."""
    cleaned = clean_reply(reply)
    original = fill(template_text, anchor)
    if not cleaned:
        return Rewrite(template_id, kind, anchor, original, reply, cleaned, EMPTY, None, 0)
    if _core(cleaned) == _core(original):  # an "adapted" template equal to its original adapts nothing
        return Rewrite(template_id, kind, anchor, original, reply, cleaned, UNCHANGED, None,
                       contains_term(cleaned, anchor))
    if quotes_original(cleaned, original):
        count = contains_term(cleaned, anchor)
        return Rewrite(template_id, kind, anchor, original, reply, cleaned, QUOTED, None, count)
    slotted, count = slot_out(cleaned, anchor)
    if slotted is None:
        status = LOST if count == 0 else REPEATED
        return Rewrite(template_id, kind, anchor, original, reply, cleaned, status, None, count)
    if slotted.count(SLOT) != 1:  # the reply itself contained the literal slot text
        return Rewrite(template_id, kind, anchor, original, reply, cleaned, REPEATED, None, 2)
    return Rewrite(template_id, kind, anchor, original, reply, cleaned, ACCEPTED, slotted, 1)


def _core(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def quotes_original(cleaned: str, original: str) -> bool:
    """The reply holds the original sentence inside quotation marks and is more than that sentence."""
    core = _core(original)
    if not core or _core(cleaned) == core:
        return False
    quoted = re.findall(r"[\"“”«»]([^\"“”«»]+)[\"“”«»]", cleaned)
    return any(_core(q) == core for q in quoted)


def contains_term(text: str, term: str) -> int:
    return len(term_pattern(term).findall(text))
