"""The torch port of the Jigsaw toxicity classifier equals the package's own model definition loaded through
Keras 3 (torch backend) on 200 texts: token ids exactly, the six probabilities within 1e-5."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import load_preset
from fairness_core.models.jigsaw import LABELS, MAXLEN, JigsawToxicity, KerasTokenizer, model_files

REFERENCE = Path(__file__).with_name("jigsaw_keras_reference.py")


def two_hundred_texts() -> list[str]:
    """Identity sentences, insults, empty and punctuation-only texts, texts past MAXLEN words (truncation),
    apostrophes, unicode and words beyond the 20,000-word vocabulary, then seeded random word salads."""
    fixed = ["You are an idiot", "Have a nice day", "I am a gay man", "I am a straight man", "", "!!!  ...",
             "I am a Muslim woman.", "I am a Christian woman.", "Being black is wonderful.",
             "Being white is wonderful.",
             "don't you dare, you STUPID pig!!!", "Café naïve – «quoted» 日本語 text", "http://example.com go away",
             " ".join(["word"] * 150) + " idiot", "idiot " + " ".join(["fine"] * 150), "tab\tand\nnewline text"]
    index = KerasTokenizer.from_pickle(model_files()[1]).word_index  # a third of these ids lie past 20,000
    words = [word for word, i in index.items() if i % 10 == 0 and i < 30_000] + ["zyzzyva", "qwertyuiop"]
    rng = random.Random(0)
    salads = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 140))) for _ in range(200 - len(fixed))]
    return fixed + salads


@pytest.fixture(scope="module")
def keras_reference() -> dict:
    texts = two_hundred_texts()
    done = subprocess.run([sys.executable, str(REFERENCE)], input=json.dumps(texts), capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_port_tokenises_like_the_keras_tokenizer(keras_reference: dict) -> None:
    tokenizer = KerasTokenizer.from_pickle(model_files()[1])
    texts = two_hundred_texts()
    assert [tokenizer.ids(t) for t in texts] == keras_reference["ids"]
    padded = tokenizer.padded(texts)
    assert padded.shape == (200, MAXLEN) and (padded[4] == 0).all()  # the empty text is all padding
    assert list(padded[13][-1:]) == tokenizer.ids("idiot")  # 151 words: the last 100 are kept


def test_the_port_gives_the_keras_models_probabilities_on_200_texts(keras_reference: dict) -> None:
    ours = JigsawToxicity().predict_proba(two_hundred_texts())
    theirs = np.asarray(keras_reference["batched"])
    assert ours.shape == theirs.shape == (200, len(LABELS))
    assert np.abs(ours - theirs).max() <= 1e-5
    assert ours[:, 0].min() < 0.1 and ours[:, 0].max() > 0.9  # the texts span the toxic range
    for text_scores, classified in zip(ours[:5], keras_reference["classify"], strict=True):  # the package's classify
        assert np.allclose(text_scores, [classified[label] for label in LABELS], atol=1e-5, rtol=0)


def test_it_sees_identity_where_vader_does_not() -> None:
    texts = ["I am a gay man", "I am a straight man", "I am a Muslim woman.", "I am a Christian woman."]
    toxic = load_preset("jigsaw-toxicity").predict_proba(texts)[:, 0]
    assert toxic[0] - toxic[1] > 0.3 and toxic[2] - toxic[3] > 0.1
    compound = load_preset("vader").compound(texts)
    assert compound[2] == compound[3] == 0.0  # VADER's lexicon has no religion words


def test_the_tokenizer_file_may_hold_only_the_tokenizer(tmp_path: Path) -> None:
    import pickle

    bad = tmp_path / "tokenizer.pickle"
    bad.write_bytes(pickle.dumps(subprocess.Popen))  # a pickle naming another class is refused, not run
    with pytest.raises(pickle.UnpicklingError, match="should not"):
        KerasTokenizer.from_pickle(bad)


def test_without_the_package_it_is_unavailable_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.models import jigsaw
    from fairness_core.models.interfaces import ModelUnavailableError
    from fairness_core.models.presets import UNAVAILABLE, availability, get_preset

    monkeypatch.setattr(jigsaw, "package_dir", lambda: None)
    with pytest.raises(ModelUnavailableError, match=r"toxic-comment-classifier==0\.3\.0 is not installed"):
        jigsaw.model_files()
    assert availability(get_preset("jigsaw-toxicity")).status == UNAVAILABLE
