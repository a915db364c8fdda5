"""`CausalLM.chat`: the tokenizer's chat template when there is one, the plain format otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fairness_core.models import DecodingConfig, ModelSpec, load_model

CONVERSATION = [{"role": "system", "content": "Rewrite kindly."}, {"role": "user", "content": "The nurse said"}]
CONFIG = DecodingConfig(top_k=20, max_new_tokens=6)

# A ChatML-like template, as SmolLM2-Instruct's, small enough to read.
TEMPLATE = (
    "{% for message in messages %}<s>{{ message['role'] }}\n{{ message['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def plain_lm(tiny_gpt2: Path):
    return load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))


@pytest.fixture(scope="module")
def templated_lm(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory):
    """The tiny GPT-2 again, with a chat template set on its tokenizer."""
    from transformers import AutoTokenizer

    directory = tmp_path_factory.mktemp("tiny-gpt2-chat")
    shutil.copytree(tiny_gpt2, directory, dirs_exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.chat_template = TEMPLATE
    tokenizer.save_pretrained(directory)
    return load_model(ModelSpec(str(directory), "causal-lm"))


def test_a_model_without_a_template_gets_the_plain_format(plain_lm) -> None:
    assert not plain_lm.has_chat_template
    assert plain_lm.format_chat(CONVERSATION) == "System: Rewrite kindly.\nUser: The nurse said\nAssistant:"
    replies = plain_lm.chat([CONVERSATION, CONVERSATION[1:]], CONFIG, n=2, seed=4)
    assert [len(r) for r in replies] == [2, 2]
    assert replies[0] == plain_lm.generate([plain_lm.format_chat(CONVERSATION)], CONFIG, n=2, seed=4)[0]


def test_the_chat_template_opens_the_assistant_turn(templated_lm) -> None:
    assert templated_lm.has_chat_template
    prompt = templated_lm.format_chat(CONVERSATION)
    assert prompt == "<s>system\nRewrite kindly.</s>\n<s>user\nThe nurse said</s>\n<s>assistant\n"
    replies = templated_lm.chat([CONVERSATION], CONFIG, n=2, seed=4)
    assert [len(r) for r in replies] == [2]
    assert replies == templated_lm.chat([CONVERSATION], CONFIG, n=2, seed=4)  # seeded
    # The templated prompt is sampled as is (its special tokens are already in the text).
    from fairness_core.models.sampling import row_seed, sample_rows

    seeds = [row_seed(4, prompt, j) for j in range(2)]
    direct = sample_rows(templated_lm.model, templated_lm.tokenizer, [prompt] * 2, [CONFIG] * 2, seeds, 6,
                         add_special_tokens=False)
    assert replies[0] == direct


def test_a_reply_does_not_depend_on_the_other_conversations(templated_lm) -> None:
    alone = templated_lm.chat([CONVERSATION], CONFIG, n=2, seed=1)[0]
    together = templated_lm.chat([CONVERSATION[1:], CONVERSATION, CONVERSATION[:1]], CONFIG, n=2, seed=1)[1]
    assert alone == together


@pytest.mark.parametrize("messages", [[{"role": "robot", "content": "hi"}], [{"role": "user"}]])
def test_malformed_messages_are_refused_in_one_sentence(plain_lm, templated_lm, messages) -> None:
    for lm in (plain_lm, templated_lm):
        with pytest.raises(ValueError, match="message 0 must have a role in system, user, assistant"):
            lm.chat([messages], CONFIG)


def test_chat_reports_every_decoding_step_and_stops_when_the_callback_raises(templated_lm) -> None:
    """How a job's Cancel reaches a long chat generation: the model layer knows no jobs, it calls `on_progress`."""
    assert templated_lm.reports_steps
    seen: list[tuple[int, int]] = []
    replies = templated_lm.chat([CONVERSATION] * 3, CONFIG, n=2, seed=0, on_progress=lambda d, t: seen.append((d, t)))
    assert replies == templated_lm.chat([CONVERSATION] * 3, CONFIG, n=2, seed=0)  # the callback changes nothing
    assert seen and {total for _, total in seen} == {6} and seen[-1][0] == 6

    class Stop(Exception):
        pass

    def stop(done: int, total: int) -> None:
        raise Stop

    with pytest.raises(Stop):
        templated_lm.chat([CONVERSATION], CONFIG, on_progress=stop)
