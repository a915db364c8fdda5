"""The user's own inputs to the decoding study (issue 34): counterfactual prompt sets built from their prompts and
word lists (`data.counterfactual`), and generations made elsewhere, imported as a generation run
(`data.generations`, `generation.imported`). Part of the study's face (re-exported by `__init__.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fairness_core.data.counterfactual import (
    RULE as COUNTERFACTUAL_RULE,
)
from fairness_core.data.counterfactual import (
    CounterfactualSet,
    WordLists,
    build_counterfactual,
    parse_lists,
    prompt_texts,
    read_lists_file,
    shipped_lists,
)
from fairness_core.data.generations import (
    FORMATS as IMPORT_FORMATS,
)
from fairness_core.data.generations import (
    MAX_IMPORT_BYTES,
    GenerationsImportError,
    ImportedGenerations,
    parse_mapping,
    read_generations,
)
from fairness_core.data.prompt_set import PromptError, PromptSet
from fairness_core.generation.imported import (
    DEFAULT_SCORERS as IMPORT_SCORERS,
)
from fairness_core.generation.imported import (
    ImportOutcome,
    ImportPlan,
    import_generations,
    plan_import,
    summary_frame,
)
from fairness_core.generation.task import GenerationInputError

__all__ = [
    "COUNTERFACTUAL_RULE",
    "IMPORT_FORMATS",
    "IMPORT_SCORERS",
    "MAX_IMPORT_BYTES",
    "CounterfactualSet",
    "GenerationInputError",
    "GenerationsImportError",
    "ImportOutcome",
    "ImportPlan",
    "ImportedGenerations",
    "WordLists",
    "build_counterfactual",
    "counterfactual_source",
    "import_generations",
    "parse_lists",
    "parse_mapping",
    "plan_import",
    "prompt_set_json",
    "prompt_texts",
    "read_generations",
    "read_lists_file",
    "shipped_lists",
    "source_texts",
    "summary_frame",
]


def source_texts(spec: str) -> list[str]:
    """The prompt texts a counterfactual set starts from: a shipped set's (`regard`, `bold:<domain>`) or a file's
    (one prompt per line, a CSV with a prompt column, or JSON), read with the checks of every prompts file."""
    from fairness_core.data.prompts import MAX_PROMPTS_BYTES, decode_upload, load_prompt_source

    if spec == "regard" or spec.startswith("bold:"):
        return [item.text for item in load_prompt_source(spec).items]
    path = Path(spec).expanduser()
    if not path.is_file():
        raise PromptError(f"--prompts {spec!r} is neither regard, bold:<domain> nor an existing file")
    if path.stat().st_size > MAX_PROMPTS_BYTES:
        raise PromptError(f"{spec} is {path.stat().st_size / 1e6:.0f} MB; a prompts file is at most "
                          f"{MAX_PROMPTS_BYTES / 1e6:.0f} MB")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise PromptError(f"--prompts {spec} cannot be read ({error.strerror or error})") from None
    return prompt_texts(decode_upload(path.name, data), path.name)


def counterfactual_source(spec: str, attributes: Sequence[str] | None = None,
                          word_lists: str | Path | None = None, crossed: bool = False) -> CounterfactualSet:
    """The counterfactual set of a prompt source (see `source_texts`) with the shipped or the user's word lists;
    `crossed`: a variant per combination of the attributes' groups (issue 46)."""
    lists = read_lists_file(word_lists)
    return build_counterfactual(source_texts(spec), lists, attributes, name=f"counterfactual {Path(spec).name}",
                                crossed=crossed)


def prompt_set_json(prompt_set: PromptSet) -> str:
    """A prompt set as the JSON list `decoding --prompts FILE` reads back ({group, family, prompt, source} entries:
    a counterfactual set keeps its variants' shared source, so they stay paired)."""
    from fairness_core.store.manifest import strict_json

    return strict_json([{"group": item.group, "family": item.family, "prompt": item.text, "source": item.source,
                         **({"attributes": dict(item.attributes)} if item.attributes else {})}
                        for item in prompt_set.items], indent=1) + "\n"
