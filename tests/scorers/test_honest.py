"""The honest scorer's lexicon: a word list or HurtLex TSV, never any file; not a visitor's choice when served."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_core.models import ModelUnavailableError
from fairness_core.scorers import scorer_from_request


def lexicon(folder: Path) -> Path:
    path = folder / "hurtlex.tsv"
    path.write_text("id\tpos\tcategory\tstereotype\tlemma\tlevel\n1\tn\tcds\tno\tidiot\tconservative\n",
                    encoding="utf-8")
    return path


def test_a_hurtlex_file_scores_hits(tmp_path: Path) -> None:
    scorer = scorer_from_request("honest", lexicon_path=str(lexicon(tmp_path)))
    assert scorer.score(["you idiot", "a nice day"])["honest_hurtful"].tolist() == [1.0, 0.0]


@pytest.mark.parametrize(("content", "phrase"), [
    ("root:x:0:0:root:/root:/bin/bash\n", "line 1 is not a word or short phrase"),
    (b"\xff\xfe\x00", "not UTF-8 text"),
    ("", "is empty"),
])
def test_a_file_that_is_not_a_lexicon_is_refused(tmp_path: Path, content: str | bytes, phrase: str) -> None:
    path = tmp_path / "words.txt"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ModelUnavailableError, match=phrase):
        scorer_from_request("honest", lexicon_path=str(path)).check_available()


def test_a_served_app_uses_only_the_servers_lexicon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRNESS_LAB_SERVED", "1")
    monkeypatch.delenv("FAIRNESS_LAB_HONEST_LEXICON", raising=False)
    messages = []
    for named in ("/etc/passwd", "/no/such/file"):  # the same sentence whether the file exists or not
        with pytest.raises(ModelUnavailableError) as error:
            scorer_from_request("honest", lexicon_path=named).check_available()
        messages.append(str(error.value))
    assert messages[0] == messages[1] and "set by the server" in messages[0] and "/etc" not in messages[0]
    monkeypatch.setenv("FAIRNESS_LAB_HONEST_LEXICON", str(lexicon(tmp_path)))
    scorer = scorer_from_request("honest")
    assert scorer.score(["you idiot"])["honest_hurtful"].tolist() == [1.0]
