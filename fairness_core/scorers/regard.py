"""Negative regard from a regard classifier (default hub id sasha/regardv3, preset "regard-v3").

No regard model ships offline, so `regard_scorer` returns (None, reason) when the model cannot be
loaded and pages show "unavailable here" instead of a number.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fairness_core.models import ModelUnavailableError, TextClassifier

DEFAULT_REGARD_MODEL = "regard-v3"


def negative_label_index(labels: Sequence[str], negative_label: str | None = None) -> int:
    """Column of the negative class: the given label, else the one whose name contains 'neg'."""
    lowered = [label.lower() for label in labels]
    if negative_label is not None:
        if negative_label.lower() not in lowered:
            raise ValueError(f"the regard classifier has no label {negative_label!r} (labels: {', '.join(labels)})")
        return lowered.index(negative_label.lower())
    matches = [i for i, label in enumerate(lowered) if "neg" in label]
    if len(matches) != 1:
        raise ValueError(f"cannot tell which label is negative regard among {', '.join(labels)}; name it")
    return matches[0]


def load_regard_classifier(model: str = DEFAULT_REGARD_MODEL) -> tuple[TextClassifier | None, str]:
    """(classifier, "") or (None, one-sentence reason it is unavailable here)."""
    from fairness_core.models import load_model, resolve_model
    from fairness_core.models.presets import hub_reachable
    from fairness_core.models.spec import hub_cached_revision

    try:
        spec = resolve_model(model, "classifier")
        # Ask the hub only when it can answer: offline, transformers would retry for ~30 s first.
        if not spec.is_local and hub_cached_revision(spec.source) is None and not hub_reachable():
            return None, (f"regard unavailable here: {spec.source} is not in the local Hugging Face cache "
                          "and the hub cannot be reached")
        classifier = load_model(spec)
    except (ModelUnavailableError, ValueError) as error:
        return None, f"regard unavailable here: {error}"
    return classifier, ""  # type: ignore[return-value]


def negative_regard_probability(classifier: TextClassifier, texts: Sequence[str],
                                negative_label: str | None = None) -> np.ndarray:
    column = negative_label_index(classifier.labels, negative_label)
    return classifier.predict_proba(list(texts))[:, column]
