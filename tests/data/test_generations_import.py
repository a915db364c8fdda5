"""Reading generations made elsewhere: tables (JSONL, CSV, Parquet) and lm-evaluation-harness --log_samples files,
checked in full; every bad file is one sentence naming the file, its line and field."""

from __future__ import annotations

import hashlib
import io
import json

import pytest

from fairness_core.data import generations as gen
from fairness_core.data.generations import GenerationsImportError, parse_mapping, read_generations

CSV = ("prompt,generation,group,system,config.top_p\n"
       "The man worked as,a doctor.,man,A,0.9\n"
       "The man worked as,a cook.,man,A,0.9\n"
       "The woman worked as,a nurse.,woman,A,0.9\n"
       "The woman worked as,a pilot.,woman,A,0.9\n")


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lm_eval_line(doc_id: int, prompt: str, responses: list[str], group: str, filter_key: str = "none",
                 gen_kwargs: dict | None = None, tracker: bool = True) -> str:
    """One line of lm-evaluation-harness's samples_<task>_<date>.jsonl for a generate_until task: the evaluator's
    `example` dict (doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics, hashes, the metric
    values) as EvaluationTracker.save_results_samples writes it (arguments re-keyed gen_args_i / arg_j); with
    `tracker=False` the older list form [[prompt, kwargs]] that versions before the tracker wrote."""
    kwargs = gen_kwargs if gen_kwargs is not None else {"until": ["\n\n"], "do_sample": False, "temperature": 0.0}
    doc = {"id": f"d{doc_id}", "prompt": prompt, "group": group}
    arguments: object = {"gen_args_0": {"arg_0": prompt, "arg_1": kwargs}} if tracker else [[prompt, kwargs]]
    record = {"doc_id": doc_id, "doc": doc, "target": "", "arguments": arguments, "resps": [responses],
              "filtered_resps": [responses[0]]}
    if tracker:
        record |= {"filter": filter_key, "metrics": ["bypass"], "doc_hash": _hash(json.dumps(doc, indent=2)),
                   "prompt_hash": _hash(prompt), "target_hash": _hash(""), "bypass": 999}
    return json.dumps(record, ensure_ascii=False)


LM_EVAL = "\n".join([
    lm_eval_line(0, "The man worked as", [" a doctor.", " a cook."], "man"),
    lm_eval_line(1, "The woman worked as", [" a nurse.", " a pilot."], "woman"),
    lm_eval_line(0, "The man worked as", [" a doctor.", " a cook."], "man", filter_key="take_first"),
    lm_eval_line(1, "The woman worked as", [" a nurse.", " a pilot."], "woman", filter_key="take_first"),
]) + "\n"


def test_a_csv_with_systems_and_settings() -> None:
    imported = read_generations("g.csv", CSV.encode())
    assert imported.format == "csv" and len(imported.rows) == 4
    assert imported.systems == [("A", (("top_p", 0.9),))]
    assert imported.families == {"custom": ["man", "woman"]}
    assert [row.sample for row in imported.rows] == [0, 1, 0, 1]  # repeated prompts are samples, in file order
    assert imported.sha256 == hashlib.sha256(CSV.encode()).hexdigest()


def test_jsonl_and_parquet_read_the_same_rows() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = [{"prompt": p, "generation": g, "group": grp, "family": "gender", "sample": s}
               for p, g, grp, s in (("The man was", "kind.", "man", 0), ("The man was", "cruel.", "man", 1),
                                    ("The woman was", "kind.", "woman", 0), ("The woman was", "loud.", "woman", 1))]
    jsonl = read_generations("g.jsonl", "\n".join(json.dumps(r) for r in records).encode())
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), sink)
    parquet = read_generations("g.parquet", sink.getvalue())
    assert (jsonl.format, parquet.format) == ("jsonl", "parquet")
    assert [(r.prompt, r.generation, r.group, r.family, r.sample) for r in jsonl.rows] == \
        [(r.prompt, r.generation, r.group, r.family, r.sample) for r in parquet.rows]
    assert [r.line for r in parquet.rows] == [1, 2, 3, 4]


def test_lm_eval_samples_one_document_per_filter_repeats_are_samples() -> None:
    imported = read_generations("samples_regard_2026-11-28T10-00-00.jsonl", LM_EVAL.encode(), system="smol")
    assert imported.format == "lm-eval"
    assert [(r.group, r.sample, r.generation) for r in imported.rows] == [
        ("man", 0, " a doctor."), ("man", 1, " a cook."), ("woman", 0, " a nurse."), ("woman", 1, " a pilot.")]
    assert imported.systems == [("smol", (("greedy", True),))]
    assert any("under another filter" in note for note in imported.notes)


def test_lm_eval_settings_group_fields_mappings_and_the_older_format() -> None:
    sampled = {"until": ["."], "do_sample": True, "temperature": 0.7, "top_p": 0.9}
    text = "\n".join(lm_eval_line(i, p, [" a.", " b."], g, gen_kwargs=sampled, tracker=False)
                     for i, (p, g) in enumerate((("The man said", "man"), ("The woman said", "woman"))))
    old = read_generations("samples_old.jsonl", text.encode(), fmt="lm-eval")
    assert old.systems == [("imported", (("temperature", 0.7), ("top_p", 0.9)))]
    mapping = parse_mapping("prompt,group,family\nThe man said,male,gender\nThe woman said,female,gender\n")
    mapped = read_generations("samples_old.jsonl", text.encode(), mapping=mapping)
    assert mapped.families == {"gender": ["male", "female"]}
    by_field = read_generations("s.jsonl", LM_EVAL.encode(), group_column="doc.id")
    assert by_field.groups == ["d0", "d1"]


@pytest.mark.parametrize("name, content, phrase", [
    ("g.csv", "prompt,generation\nThe man,a\n", "g.csv has no 'group' column (its columns: 'prompt', 'generation')"),
    ("g.csv", "prompt,generation,group\nThe man,a,man\nThe man,b,man\nThe woman,c,woman\n",
     "g.csv: group 'woman' of system 'imported' has one generation (line 4)"),
    ("g.csv", "prompt,generation,group,sample\nThe man,a,man,0\nThe man,b,man,0\n",
     "g.csv line 3 repeats prompt 'The man', sample 0 of system 'imported' (line 2)"),
    ("g.csv", "prompt,generation,group\nThe man,a,man\nThe man,  ,man\n", "g.csv line 3: field 'generation' is empty"),
    ("g.csv", "prompt,generation,group\nThe man,a,man\n,b,man\n", "g.csv line 3: field 'prompt' is empty"),
    ("g.csv", "prompt,generation,group\n", "g.csv has a header but no rows"),
    ("g.csv", "prompt,generation,group,sample\nThe man,a,man,-1\n", "line 2: field 'sample' must be a whole number"),
    ("g.csv", "prompt,generation,group,config.top_p\nThe man,a,man,7\n", "'config.top_p' '7' is not a valid top_p"),
    ("g.csv", "prompt,generation,group,config.beam\nThe man,a,man,2\n", "'config.beam' is not a decoding knob"),
    ("g.csv", "prompt,generation,group\nThe man,a\n", "g.csv line 2 has 2 field(s) where the header has 3"),
    ("g.jsonl", '{"prompt": "a", "generation": "b", "group": "g"}\n{"prompt": \n', "g.jsonl line 2 is not JSON"),
    ("g.jsonl", '{"prompt": 3, "generation": "b", "group": "g"}\n',
     "g.jsonl line 1: field 'prompt' must be text (got a number)"),
    ("g.jsonl", '["a", "b"]\n', "g.jsonl line 1 is not a JSON object"),
    ("g.csv", "", "g.csv is empty"),
    ("g.csv", "prompt,generation,group\nThe man," + "a" * 10_000_000 + ",man\n",  # issue 43 §3: a 10 MB line
     "g.csv line 2: field 'generation' has 10,000,000 characters; the limit is 20,000"),
    ("g.csv", "prompt,generation,group\n" + "p" * 2_001 + ",a,man\n",
     "g.csv line 2: field 'prompt' has 2,001 characters; the limit is 2,000"),
    ("s.jsonl", lm_eval_line(0, "ctx", ["x"], "g").replace('"arg_1": {', '"arg_1": " cont", "x": {'),
     "holds log-likelihood requests"),
    ("s.jsonl", lm_eval_line(0, "ctx", ["x"], "g").replace('"group": "g"', '"grp": "g"'),
     "s.jsonl line 1 has no field 'doc.group' for the group"),
])
def test_a_bad_file_is_one_sentence_naming_the_file_line_and_field(name: str, content: str, phrase: str) -> None:
    with pytest.raises(GenerationsImportError) as caught:
        read_generations(name, content.encode())
    assert phrase in str(caught.value), str(caught.value)


def test_bytes_that_are_not_text_or_too_many_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(GenerationsImportError, match=r"g\.csv is not UTF-8 text: line 3 holds byte"):
        read_generations("g.csv", b"prompt,generation,group\nThe man,a,man\nThe man,\xe9t\xe9,man\n")
    with pytest.raises(GenerationsImportError, match=r"g\.csv is a binary file"):
        read_generations("g.csv", b"prompt\x00\x01")
    monkeypatch.setattr(gen, "MAX_IMPORT_BYTES", 100)
    with pytest.raises(GenerationsImportError, match="an import is at most"):
        read_generations("g.csv", CSV.encode())
    with pytest.raises(GenerationsImportError, match=r"g\.parquet is not a readable Parquet file"):
        read_generations("g.parquet", b"PAR1 not really")


def test_a_huge_header_is_quoted_short_in_the_sentence() -> None:
    with pytest.raises(GenerationsImportError) as caught:
        read_generations("g.csv", ("x" * 1_000_000 + ",generation\nThe man,a\n").encode())
    assert len(str(caught.value)) < 400 and "(1,000,000 characters)" in str(caught.value)
