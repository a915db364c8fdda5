"""The adaptation pipeline's request: built and validated from plain values (shared by the CLI and the page).

Everything that determines the results is here: the template set and its subsample, the identity terms
per attribute, the domain corpus and its sample, the chat model and its decoding, the prompt wording, the
number of domain examples, the classifiers under test, seeds and bootstrap settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_core.adaptation.noe import Corpus, bold_wikipedia, read_corpus
from fairness_core.adaptation.rewrite import PAPER_PROMPT, PromptTemplateError, check_prompt
from fairness_core.adaptation.templates import (
    DATA_DIR,
    IdentityTerms,
    TemplateImportError,
    TemplateSet,
    load_identity_terms,
    parse_templates_text,
    project_templates,
)
from fairness_core.data.quoting import quoted
from fairness_core.models.endpoint import model_record

#: The classifier under test reads a score in [0, 1] ("positive output probability", Sec. 3.1).
#: VADER's compound c in [-1, 1] is mapped linearly: (c + 1) / 2 (0 = most negative, 1 = most positive).
#: The Jigsaw classifier's "toxic" probability is read as is: unlike VADER and the profanity classifier it reacts to
#: identity words, so it is the offline default judge (issue 29).
CLASSIFIER_COLUMNS = {"vader": ("vader_compound", "(compound + 1) / 2"), "offensive": ("offensive_prob", "as is"),
                      "jigsaw-toxicity": ("jigsaw_toxic", "as is")}
DEFAULT_CLASSIFIERS = ("vader", "jigsaw-toxicity")


class AdaptationInputError(ValueError):
    """Bad adaptation input, found before any work starts; one sentence."""


@dataclass(frozen=True)
class Classifier:
    """A scorer of the registry and the column read as the score in [0, 1]."""

    scorer: str
    options: tuple[tuple[str, Any], ...] = ()
    column: str = ""
    mapping: str = "as is"  # "as is" | "(compound + 1) / 2"

    @property
    def label(self) -> str:
        return self.scorer if not self.column or self.scorer in CLASSIFIER_COLUMNS else f"{self.scorer}:{self.column}"

    def record(self) -> dict[str, Any]:
        return {"scorer": self.scorer, "options": dict(self.options), "column": self.column, "mapping": self.mapping}


def parse_classifier(text: str) -> Classifier:
    """``vader`` | ``offensive`` | ``scorer:column`` (any registry scorer; its column must lie in [0, 1])."""
    import fairness_core.scorers  # noqa: F401
    from fairness_core.scorers import SCORERS

    name, _, column = text.strip().partition(":")
    if name not in SCORERS:
        raise AdaptationInputError(f"unknown classifier {name!r}; registry scorers: {', '.join(sorted(SCORERS))}")
    if name in CLASSIFIER_COLUMNS and not column:
        default, mapping = CLASSIFIER_COLUMNS[name]
        return Classifier(name, (), default, mapping)
    return Classifier(name, (), column, "as is")


@dataclass(frozen=True)
class AdaptationRequest:
    templates: TemplateSet
    terms: IdentityTerms
    attributes: tuple[str, ...]
    corpus: Corpus
    model: str
    classifiers: tuple[Classifier, ...]
    anchor_names: tuple[str, ...]
    noun_groups: tuple[str, ...]  # groups whose terms are gendered nouns (App. A.1); the rest are names
    n_examples: int = 15
    temperature: float = 0.0  # 0 = greedy
    max_new_tokens: int = 102
    prompt: str = PAPER_PROMPT
    max_noes: int | None = 200
    ner: str = "spacy-en-core-web-sm"
    encoder: str = "all-minilm-l6-v2"
    seed: int = 0
    resamples: int = 1000
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: False: no chat model; the original templates are compared with the naturally occurring examples only
    rewrite: bool = True

    def kind_of(self, group: str) -> str:
        return "nouns" if group in self.noun_groups else "names"

    def groups(self, attribute: str) -> dict[str, tuple[str, ...]]:
        return self.terms.attribute(attribute)

    def kinds(self) -> list[str]:
        kinds = {self.kind_of(g) for a in self.attributes for g in self.groups(a)}
        return [k for k in ("names", "nouns") if k in kinds]

    def record(self) -> dict[str, Any]:
        """What goes into manifests (content hashes, not the texts)."""
        return {"templates": {"name": self.templates.name, "hash": self.templates.content_hash(),
                              "n": len(self.templates.templates)},
                "terms": {a: {g: list(t) for g, t in self.groups(a).items()} for a in self.attributes},
                "corpus": {"name": self.corpus.name, "hash": self.corpus.content_hash(), "n": len(self.corpus.texts)},
                "model": model_record(self.model), "n_examples": self.n_examples, "temperature": self.temperature,
                "max_new_tokens": self.max_new_tokens, "prompt": self.prompt, "max_noes": self.max_noes,
                "ner": self.ner, "encoder": self.encoder, "seed": self.seed, "resamples": self.resamples,
                "classifiers": [c.record() for c in self.classifiers], "anchor_names": list(self.anchor_names),
                "noun_groups": list(self.noun_groups), "rewrite": self.rewrite}


def load_templates(templates: str | TemplateSet, n_templates: int | None, seed: int) -> TemplateSet:
    if isinstance(templates, TemplateSet):
        chosen = templates
    elif templates in ("eec", "iptts"):
        chosen = project_templates(templates)
    else:
        path = Path(templates)
        if not path.is_file():
            raise AdaptationInputError(f"templates must be eec, iptts or a text file; {templates!r} is neither")
        try:
            chosen = parse_templates_text(path.read_text(encoding="utf-8-sig"), name=path.name)
        except (OSError, UnicodeDecodeError) as error:
            raise AdaptationInputError(f"{path} cannot be read ({type(error).__name__})") from None
    if n_templates is not None and n_templates <= 0:
        raise AdaptationInputError(f"the number of templates must be positive (got {n_templates})")
    return chosen.subset(n_templates, seed)


def load_domain(corpus: str | Corpus, corpus_format: str = "lines", corpus_field: str = "text",
                bold_domains: Sequence[str] = ("gender", "race", "profession", "religious_ideology",
                                               "political_ideology"),
                corpus_size: int | None = 2000, seed: int = 0) -> Corpus:
    if isinstance(corpus, Corpus):
        chosen = corpus
    elif corpus == "bold":
        chosen = bold_wikipedia(tuple(bold_domains))
    else:
        chosen = read_corpus(corpus, corpus_format, corpus_field)
    if corpus_size is not None and corpus_size <= 0:
        raise AdaptationInputError(f"the corpus sample size must be positive (got {corpus_size})")
    return chosen.sample(corpus_size, seed)


def build_request(templates: str | TemplateSet = "eec", n_templates: int | None = None,
                  attributes: Sequence[str] = ("gender", "nationality"), terms_path: str | None = None,
                  terms: IdentityTerms | None = None, corpus: str | Corpus = "bold", corpus_format: str = "lines",
                  corpus_field: str = "text",
                  bold_domains: Sequence[str] = ("gender", "race", "profession", "religious_ideology",
                                                 "political_ideology"),
                  corpus_size: int | None = 2000, max_noes: int | None = 200, model: str = "smollm2-135m-instruct",
                  n_examples: int = 15, temperature: float = 0.0, max_new_tokens: int = 102,
                  classifiers: Sequence[str] = DEFAULT_CLASSIFIERS, seed: int = 0, resamples: int = 1000,
                  prompt: str = PAPER_PROMPT, anchor_names: Sequence[str] | None = None,
                  noun_groups: Sequence[str] | None = None, rewrite: bool = True) -> AdaptationRequest:
    """Validate plain values into a request; every problem is one sentence (AdaptationInputError).

    `rewrite=False`: no chat model runs; the run compares the original templates with the naturally occurring
    examples (the comparison that needs no rewrite, and the one that answers offline)."""
    import json
    import math

    # numbers first: a bad flag is refused before the corpus or the templates are read
    if not (isinstance(temperature, int | float) and math.isfinite(temperature) and 0 <= temperature <= 5):
        raise AdaptationInputError(f"temperature must be a number between 0 (greedy) and 5 (got {temperature})")
    if not 0 < max_new_tokens <= 512:
        raise AdaptationInputError(f"max new tokens must be between 1 and 512 (got {max_new_tokens})")
    if not 0 <= resamples <= 100_000:
        raise AdaptationInputError(f"bootstrap resamples must be between 0 and 100,000 (got {resamples})")

    try:
        template_set = load_templates(templates, n_templates, seed)
        loaded_terms = terms or load_identity_terms(terms_path)
        domain = load_domain(corpus, corpus_format, corpus_field, bold_domains, corpus_size, seed)
        check_prompt(prompt)
    except (TemplateImportError, PromptTemplateError) as error:
        raise AdaptationInputError(str(error)) from None
    if not attributes:
        raise AdaptationInputError("choose at least one attribute of the identity terms")
    for attribute in attributes:
        if attribute not in loaded_terms.groups:
            raise AdaptationInputError(f"the identity terms have no attribute {quoted(attribute)}; they have "
                                       f"{', '.join(loaded_terms.groups)}")
        if len(loaded_terms.groups[attribute]) < 2:
            raise AdaptationInputError(f"attribute {quoted(attribute)} needs at least two groups to compare")
    if n_examples < 0 or n_examples > 50:
        raise AdaptationInputError(f"domain examples must be between 0 and 50 (got {n_examples})")
    if temperature < 0:
        raise AdaptationInputError(f"temperature must be 0 (greedy) or positive (got {temperature})")
    if max_new_tokens <= 0:
        raise AdaptationInputError(f"max new tokens must be positive (got {max_new_tokens})")
    if resamples < 0:
        raise AdaptationInputError(f"bootstrap resamples must be 0 or more (got {resamples})")
    if max_noes is not None and max_noes <= 0:
        raise AdaptationInputError(f"the NOE limit must be positive (got {max_noes})")
    if not classifiers:
        raise AdaptationInputError("choose at least one classifier under test")
    parsed = tuple(parse_classifier(c) for c in classifiers)
    if len({c.label for c in parsed}) != len(parsed):
        raise AdaptationInputError("a classifier is listed twice")
    if not model.strip():
        raise AdaptationInputError("choose a chat model for the rewriting")
    defaults = json.loads((DATA_DIR / "identity_terms.json").read_text(encoding="utf-8"))
    if noun_groups is None:
        noun_groups = [g for g, kind in defaults.get("kinds", {}).items() if kind == "nouns"]
    anchors = tuple(anchor_names or defaults["anchor_names"])
    return AdaptationRequest(template_set, loaded_terms, tuple(attributes), domain, model.strip(), parsed, anchors,
                             tuple(noun_groups), n_examples, float(temperature), int(max_new_tokens), prompt,
                             max_noes, seed=seed, resamples=resamples, rewrite=bool(rewrite))
