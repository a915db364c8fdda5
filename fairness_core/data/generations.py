"""Generations made elsewhere, read from a file's bytes and checked in full before anything is stored.

Formats:
- a table (JSONL, CSV/TSV or Parquet) with columns `prompt`, `generation`, `group`, and optionally `family`,
  `system`, `sample` and `config.<knob>` (temperature, top_p, top_k: the decoding setting of that row's system);
- an lm-evaluation-harness `--log_samples` file (`samples_<task>_<date>.jsonl`): one JSON object per document with
  `doc_id`, `doc`, `arguments` (`{"gen_args_0": {"arg_0": prompt, "arg_1": generation kwargs}}`, or the older
  `[[prompt, kwargs]]`), `resps` (`[[text, ...]]`, one text per repeat) and `filtered_resps`. The raw responses
  (`resps`) are imported, not the filtered answer (a filter may keep only an extracted number); a document logged
  once per filter counts once. The group comes from a field of the record (`doc.<field>`, given as the group
  column) or from a prompt -> group mapping the user gives; the decoding setting from the generation kwargs.

Every problem is a `GenerationsImportError`: one sentence naming the file and its line (or row) and field.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fairness_core.data.prompt_set import ATTRIBUTE_JOINER
from fairness_core.data.prompts import MAX_PROMPT_CHARS
from fairness_core.data.quoting import quoted

FORMATS = ("auto", "jsonl", "csv", "parquet", "lm-eval")
#: a generations file bigger than this is not read (the decoding study's limit is 500,000 generations)
MAX_IMPORT_BYTES = 100_000_000
MAX_ROWS = 500_000
#: one generation's text: 20,000 characters is ~5,000 tokens, ten times what a scorer reads (512 tokens)
MAX_GENERATION_CHARS = 20_000
DEFAULT_FAMILY = "custom"
DEFAULT_SYSTEM = "imported"
CONFIG_KNOBS = ("temperature", "top_p", "top_k")
REQUIRED = ("prompt", "generation")


class GenerationsImportError(ValueError):
    """A generations file that cannot be imported; one sentence naming the file, its line and field."""


@dataclass(frozen=True)
class ImportedRow:
    line: int  # where the row is in the file (line of a text file, 1-based row of a Parquet file)
    system: str
    config: tuple[tuple[str, Any], ...]  # the system's decoding setting (sorted knob, value pairs)
    prompt: str
    generation: str
    group: str
    family: str
    sample: int
    #: (column, value) per group column where several were given (issue 46): the group is their values joined
    attributes: tuple[tuple[str, str], ...] = ()


@dataclass
class ImportedGenerations:
    name: str  # the file's name, as the user gave it
    sha256: str  # of the file's bytes: the same file is the same import
    format: str
    rows: list[ImportedRow]
    notes: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return "row" if self.format == "parquet" else "line"

    @property
    def systems(self) -> list[tuple[str, tuple[tuple[str, Any], ...]]]:
        return list(dict.fromkeys((row.system, row.config) for row in self.rows))

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(row.group for row in self.rows))

    @property
    def families(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for row in self.rows:
            members = found.setdefault(row.family, [])
            if row.group not in members:
                members.append(row.group)
        return found

    def record(self) -> dict[str, Any]:
        return {"file": self.name, "sha256": self.sha256, "format": self.format, "n": len(self.rows)}


# ------------------------------------------------------------------------------------------------ decoding bytes
def _text(name: str, data: bytes) -> str:
    if b"\x00" in data[:4096]:
        raise GenerationsImportError(f"{name} is a binary file, not JSONL or CSV text (a Parquet file ends in "
                                     ".parquet)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise GenerationsImportError(f"{name} is not UTF-8 text: line {line} holds byte {error.start} that cannot be "
                                     "read; save the file as UTF-8") from None


def detect_format(name: str, data: bytes) -> str:
    """jsonl, csv, parquet or lm-eval, from the bytes (Parquet's magic number, JSON objects with lm-eval's keys)
    and the name's extension."""
    if data[:4] == b"PAR1":
        return "parquet"
    lowered = name.lower()
    if lowered.endswith(".parquet"):
        return "parquet"
    head = data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
    if lowered.endswith((".csv", ".tsv", ".txt")):
        return "csv"
    if head.startswith(b"{") or lowered.endswith((".jsonl", ".json", ".ndjson")):
        first = head.split(b"\n", 1)[0]
        try:
            record = json.loads(first.decode("utf-8", "replace"))
        except ValueError:
            return "jsonl"
        if isinstance(record, dict) and "doc_id" in record and "resps" in record and "arguments" in record:
            return "lm-eval"
        return "jsonl"
    return "csv"


# ------------------------------------------------------------------------------------------------ tables
def _table_records(name: str, data: bytes, fmt: str) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """(line or row number, record) per data row, and the columns seen."""
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq

            table = pq.read_table(io.BytesIO(data))
        except Exception as error:  # pyarrow raises several types for a damaged file
            raise GenerationsImportError(f"{name} is not a readable Parquet file ({type(error).__name__}: "
                                         f"{str(error).splitlines()[0][:120] if str(error) else 'unreadable'})") \
                from None
        if table.num_rows > MAX_ROWS:
            raise GenerationsImportError(f"{name} has {table.num_rows:,} rows; an import is at most {MAX_ROWS:,}")
        columns = [str(c) for c in table.column_names]
        return [(index, record) for index, record in enumerate(table.to_pylist(), start=1)], columns
    text = _text(name, data)
    if not text.strip():
        raise GenerationsImportError(f"{name} is empty: a generations file has a prompt, a generation and a group "
                                     "per row")
    if fmt == "jsonl":
        records, columns = [], {}
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as error:
                raise GenerationsImportError(f"{name} line {number} is not JSON ({error.msg})") from None
            if not isinstance(record, dict):
                raise GenerationsImportError(f"{name} line {number} is not a JSON object with prompt, generation "
                                             "and group")
            records.append((number, record))
            columns.update(dict.fromkeys(record))
            if len(records) > MAX_ROWS:
                raise GenerationsImportError(f"{name} has more than {MAX_ROWS:,} rows; an import is at most "
                                             f"{MAX_ROWS:,}")
        return records, list(columns)
    first = text.splitlines()[0]
    dialect = "excel-tab" if "\t" in first and "," not in first else "excel"
    csv.field_size_limit(MAX_IMPORT_BYTES)  # a long generation is one cell, not a broken file
    reader = csv.reader(io.StringIO(text), dialect=dialect)
    try:
        header = [h.strip() for h in next(reader)]
        blank = [i for i, h in enumerate(header, start=1) if not h]
        if blank:
            raise GenerationsImportError(f"{name} line 1: column {blank[0]} of the header has no name")
        repeated = sorted({h for h in header if header.count(h) > 1})
        if repeated:
            raise GenerationsImportError(f"{name} line 1 names the column {quoted(repeated[0])} twice; keep one")
        records = []
        for cells in reader:
            number = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise GenerationsImportError(f"{name} line {number} has {len(cells)} field(s) where the header has "
                                             f"{len(header)}")
            records.append((number, dict(zip(header, cells, strict=True))))
            if len(records) > MAX_ROWS:
                raise GenerationsImportError(f"{name} has more than {MAX_ROWS:,} rows; an import is at most "
                                             f"{MAX_ROWS:,}")
    except csv.Error as error:
        raise GenerationsImportError(f"{name} line {reader.line_num} is not valid CSV ({error})") from None
    return records, header


def _kind(value: object) -> str:
    return {bool: "true/false", int: "a number", float: "a number", dict: "an object", list: "a list",
            type(None): "nothing"}.get(type(value), type(value).__name__)


def _field_text(name: str, where: str, number: int, record: Mapping[str, Any], key: str,
                required: bool = True) -> str:
    value = record.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        value = ""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key in ("group", "family", "system"):
        value = str(value)  # a group named 1 or 2 is a name
    if not isinstance(value, str):
        raise GenerationsImportError(f"{name} {where} {number}: field {quoted(key)} must be text (got "
                                     f"{_kind(value)})")
    if required and not value.strip():
        raise GenerationsImportError(f"{name} {where} {number}: field {quoted(key)} is empty")
    return value


def _sample(name: str, where: str, number: int, value: Any) -> int | None:
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        number_value = float(value)
    except (TypeError, ValueError):
        number_value = float("nan")
    if isinstance(value, bool) or not math.isfinite(number_value) or number_value != int(number_value) \
            or number_value < 0:
        raise GenerationsImportError(f"{name} {where} {number}: field 'sample' must be a whole number >= 0 (got "
                                     f"{quoted(value)})")
    return int(number_value)


def _config(name: str, where: str, number: int, record: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    found = []
    for key, value in record.items():
        if not str(key).startswith("config."):
            continue
        knob = str(key)[len("config."):]
        if knob not in CONFIG_KNOBS:
            raise GenerationsImportError(f"{name} {where} {number}: column {quoted(key)} is not a decoding knob; "
                                         f"config columns are {', '.join('config.' + k for k in CONFIG_KNOBS)}")
        if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
            continue
        try:
            number_value = float(value)
        except (TypeError, ValueError):
            number_value = float("nan")
        if isinstance(value, bool) or not math.isfinite(number_value) or number_value <= 0 or \
                (knob == "top_p" and number_value > 1) or (knob == "top_k" and number_value != int(number_value)):
            raise GenerationsImportError(f"{name} {where} {number}: {quoted(key)} {quoted(value)} is not a valid "
                                         f"{knob}")
        found.append((knob, int(number_value) if knob == "top_k" else number_value))
    return tuple(sorted(found))


# ------------------------------------------------------------------------------------------------ lm-eval
def _lm_eval_prompt(name: str, number: int, record: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(prompt, generation kwargs) of a samples record, from the tracker's {"gen_args_0": {"arg_0", "arg_1"}} or
    the older [[prompt, kwargs]]."""
    arguments = record.get("arguments")
    first: Any = None
    if isinstance(arguments, dict):
        entry = arguments.get("gen_args_0")
        if isinstance(entry, dict):
            first = [entry.get("arg_0"), entry.get("arg_1")]
    elif isinstance(arguments, list) and arguments and isinstance(arguments[0], (list, tuple)):
        first = [*arguments[0], None]
    if not first or not isinstance(first[0], str):
        raise GenerationsImportError(f"{name} line {number}: 'arguments' holds no prompt text (expected "
                                     "{'gen_args_0': {'arg_0': prompt, 'arg_1': generation kwargs}})")
    kwargs = first[1]
    if not isinstance(kwargs, dict):
        raise GenerationsImportError(f"{name} line {number} holds log-likelihood requests (its second argument is "
                                     f"{_kind(kwargs)}, not generation kwargs): a multiple-choice or perplexity task "
                                     "logs no generated text; import a generate_until task's samples")
    return first[0], kwargs


def _lm_eval_setting(kwargs: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The decoding setting lm-eval asked for: greedy unless do_sample (or a positive temperature) says otherwise."""
    temperature = kwargs.get("temperature")
    sampling = bool(kwargs.get("do_sample")) or (isinstance(temperature, (int, float)) and temperature > 0
                                                 and kwargs.get("do_sample") is not False)
    if not sampling:
        return (("greedy", True),)
    found = []
    for knob in CONFIG_KNOBS:
        value = kwargs.get(knob)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
            found.append((knob, int(value) if knob == "top_k" else float(value)))
    return tuple(sorted(found))


def _path_value(record: Mapping[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _lm_eval_records(name: str, data: bytes, group_column: str | None,
                     mapping: Mapping[str, tuple[str, str | None]] | None, family_column: str | None,
                     system: str | None) -> tuple[list[dict[str, Any]], list[str]]:
    records, _ = _table_records(name, data, "jsonl")
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    seen: dict[Any, tuple[int, list[str]]] = {}
    repeats = 0
    for number, record in records:
        for key in ("doc_id", "arguments", "resps"):
            if key not in record:
                raise GenerationsImportError(f"{name} line {number} has no {quoted(key)}: it is not an "
                                             "lm-evaluation-harness samples record")
        prompt, kwargs = _lm_eval_prompt(name, number, record)
        responses = record["resps"][0] if isinstance(record["resps"], list) and record["resps"] else None
        if isinstance(responses, str):
            responses = [responses]
        if not isinstance(responses, list) or not responses or not all(isinstance(r, str) for r in responses):
            raise GenerationsImportError(f"{name} line {number}: 'resps' holds no generated text (expected "
                                         "[[text, ...]])")
        doc_key = json.dumps([record.get("doc_id"), prompt], ensure_ascii=False)
        if doc_key in seen:  # the same document logged again under another filter: the raw responses are the same
            earlier_line, earlier = seen[doc_key]
            if earlier != responses:
                raise GenerationsImportError(f"{name} line {number} logs document {record.get('doc_id')} again "
                                             f"(line {earlier_line}) with other responses; import one run's file")
            repeats += 1
            continue
        seen[doc_key] = (number, responses)
        group: Any = None
        family: Any = None
        if mapping is not None:
            mapped = mapping.get(" ".join(prompt.split()))
            if mapped is None:
                raise GenerationsImportError(f"{name} line {number}: the prompt {quoted(prompt)} is not in the "
                                             "prompt -> group mapping")
            group, family = mapped
        elif group_column:
            group = _path_value(record, group_column)
            if group is None:
                raise GenerationsImportError(f"{name} line {number} has no field {quoted(group_column)} for the "
                                             "group")
        if family_column and family is None:
            family = _path_value(record, family_column)
        setting = _lm_eval_setting(kwargs)
        for sample, text in enumerate(responses):
            rows.append({"_line": number, "prompt": prompt, "generation": text, "group": group,
                         "family": family, "sample": sample, "system": system, "_config": setting})
    if repeats:
        notes.append(f"{repeats} record(s) log a document again under another filter; each document counts once "
                     "(its raw responses are imported, not a filter's extracted answer)")
    return rows, notes


# ------------------------------------------------------------------------------------------------ the reader
def parse_mapping(text: str, name: str = "mapping") -> dict[str, tuple[str, str | None]]:
    """A prompt -> group mapping: CSV with `prompt` and `group` (and optionally `family`) columns."""
    csv.field_size_limit(MAX_IMPORT_BYTES)
    reader = csv.DictReader(io.StringIO(text))
    names = [(n or "").strip().lower() for n in reader.fieldnames or []]
    if "prompt" not in names or "group" not in names:
        raise GenerationsImportError(f"the mapping {name} needs a header with 'prompt' and 'group' columns "
                                     f"(got {', '.join(quoted(n, 40) for n in names[:12]) or 'no header'})")
    mapping: dict[str, tuple[str, str | None]] = {}
    for record in reader:
        cells = {(k or "").strip().lower(): (v or "").strip() for k, v in record.items()}
        number = reader.line_num
        if not cells.get("prompt") or not cells.get("group"):
            raise GenerationsImportError(f"the mapping {name} line {number}: 'prompt' and 'group' must both be "
                                         "given")
        key = " ".join(cells["prompt"].split())
        if key in mapping and mapping[key][0] != cells["group"]:
            raise GenerationsImportError(f"the mapping {name} line {number} maps the prompt {quoted(key)} to a "
                                         "second group")
        mapping[key] = (cells["group"], cells.get("family") or None)
    if not mapping:
        raise GenerationsImportError(f"the mapping {name} has a header but no rows")
    return mapping


def read_generations(name: str, data: bytes, fmt: str = "auto", group_column: str | Sequence[str] | None = None,
                     mapping: Mapping[str, tuple[str, str | None]] | None = None, family: str = DEFAULT_FAMILY,
                     family_column: str | None = None, system: str | None = None,
                     attributes: Sequence[str] = ()) -> ImportedGenerations:
    """Read and check a generations file (its bytes, never a path). `group_column`: the table column (or lm-eval
    record field, dotted: `doc.gender`) that holds the group (default `group`), or several columns of a table, one
    attribute each (issue 46: `["gender", "race"]` gives the group "female × Black" of the family "gender × race",
    each row keeping its attributes); `mapping`: prompt -> (group, family) instead; `family`: the family of rows
    that name none; `system`: the system of rows that name none."""
    if fmt not in FORMATS:
        raise GenerationsImportError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    columns_asked = [group_column] if isinstance(group_column, str) or group_column is None else list(group_column)
    if len(columns_asked) > 1:
        return _several_attributes(name, data, fmt, [str(c) for c in columns_asked], mapping, family_column, system)
    group_column = columns_asked[0] if columns_asked else None
    if len(data) > MAX_IMPORT_BYTES:
        raise GenerationsImportError(f"{name} is {len(data) / 1e6:,.0f} MB; an import is at most "
                                     f"{MAX_IMPORT_BYTES / 1e6:.0f} MB (split it, or import per system)")
    if not data.strip():
        raise GenerationsImportError(f"{name} is empty: a generations file has a prompt, a generation and a group "
                                     "per row")
    fmt = detect_format(name, data) if fmt == "auto" else fmt
    digest = hashlib.sha256(data).hexdigest()
    notes: list[str] = []
    if fmt == "lm-eval":
        if not group_column and mapping is None:
            group_column = "doc.group"
        rows, notes = _lm_eval_records(name, data, group_column, mapping, family_column, system)
        where = "line"
    else:
        records, columns = _table_records(name, data, fmt)
        group_column = attributes[0] if attributes else (group_column or "group")
        where = "row" if fmt == "parquet" else "line"
        if not records:
            raise GenerationsImportError(f"{name} has a header but no rows")
        columns = [str(c).strip().lower() for c in columns]  # column names are matched case-insensitively
        group_column = group_column.lower()
        for needed in (*REQUIRED, *(() if mapping is not None else (attributes or (group_column,)))):
            if needed not in columns:
                shown = ", ".join(quoted(c, 40) for c in columns[:12]) + (" …" if len(columns) > 12 else "")
                raise GenerationsImportError(
                    f"{name} has no {quoted(needed)} column (its columns: {shown}); a generations "
                    f"file needs prompt, generation and {group_column}" + (" (or a prompt -> group mapping)"
                                                                           if needed == group_column else ""))
        rows = []
        for number, original in records:
            record = {str(k).strip().lower(): v for k, v in original.items()}
            prompt = _field_text(name, where, number, record, "prompt")
            row_family: Any = record.get((family_column or "family").lower())
            if mapping is not None:
                mapped = mapping.get(" ".join(prompt.split()))
                if mapped is None:
                    raise GenerationsImportError(f"{name} {where} {number}: the prompt {quoted(prompt)} is not in "
                                                 "the prompt -> group mapping")
                group, row_family = mapped[0], mapped[1] or row_family
            elif attributes:  # several attributes: the group is the combination of the row's values
                pairs = _attribute_values(name, where, number, record, attributes)
                group, row_family = ATTRIBUTE_JOINER.join(v for _, v in pairs), ATTRIBUTE_JOINER.join(attributes)
            else:
                group = record.get(group_column)
            rows.append({"_line": number, "prompt": prompt, "_attributes": pairs if attributes else (),
                         "generation": _field_text(name, where, number, record, "generation", required=False),
                         "group": group, "family": row_family, "sample": _sample(name, where, number,
                                                                                 record.get("sample")),
                         "system": record.get("system", system), "_config": _config(name, where, number, record)})
    return _checked(name, digest, fmt, where, rows, family, system, notes)


def _attribute_values(name: str, where: str, number: int, record: Mapping[str, Any], columns: Sequence[str]
                      ) -> tuple[tuple[str, str], ...]:
    """A row's value of each attribute column, each checked (present, text, not holding the joiner)."""
    pairs = []
    for column in columns:
        value = record.get(column)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
            record = {**record, column: str(value)}  # an age of 30 is a value, as a group named 1 is a name
        text = " ".join(_field_text(name, where, number, record, column).split())
        if ATTRIBUTE_JOINER.strip() in text:
            raise GenerationsImportError(f"{name} {where} {number}: field {quoted(column)} holds "
                                         f"{quoted(ATTRIBUTE_JOINER.strip())}, which joins attributes in a group's "
                                         "name; use another character")
        pairs.append((column, text))
    return tuple(pairs)


#: at most this many attribute columns: 4 attributes of 5 values are 625 cells already
MAX_ATTRIBUTE_COLUMNS = 4


def _several_attributes(name: str, data: bytes, fmt: str, columns: list[str],
                        mapping: Mapping[str, tuple[str, str | None]] | None, family_column: str | None,
                        system: str | None) -> ImportedGenerations:
    """A table whose rows name several attributes, one column each: every row's group is the combination of its
    values (an intersection), its family the combination of the columns, and its attributes are kept for
    marginals (`slices --by gender`)."""
    lowered = [" ".join(c.split()).lower() for c in columns]
    if any(not c for c in lowered):
        raise GenerationsImportError("a group column's name is empty; name each column, e.g. --group-column gender "
                                     "--group-column race")
    if len(set(lowered)) != len(lowered):
        repeated = next(c for c in lowered if lowered.count(c) > 1)
        raise GenerationsImportError(f"the group column {quoted(repeated)} is named twice; name each attribute once")
    if len(lowered) > MAX_ATTRIBUTE_COLUMNS:
        raise GenerationsImportError(f"{len(lowered)} group columns given; at most {MAX_ATTRIBUTE_COLUMNS} "
                                     "attributes are crossed at once")
    if mapping is not None or family_column:
        raise GenerationsImportError("several group columns make each row's group (their values) and family "
                                     "(their names) themselves; give them without a prompt -> group mapping or a "
                                     "family column")
    fmt = detect_format(name, data) if fmt == "auto" else fmt
    if fmt == "lm-eval":
        raise GenerationsImportError(f"{name} is an lm-evaluation-harness log: give one group field (e.g. "
                                     "doc.gender); several group columns are read from a table (JSONL, CSV, "
                                     "Parquet)")
    return read_generations(name, data, fmt, None, None, DEFAULT_FAMILY, None, system, attributes=lowered)


def _checked(name: str, digest: str, fmt: str, where: str, rows: Sequence[dict[str, Any]], family: str,
             system: str | None, notes: list[str]) -> ImportedGenerations:
    if not rows:
        raise GenerationsImportError(f"{name} holds no generation")
    out: list[ImportedRow] = []
    next_sample: dict[tuple[str, tuple, str], int] = {}
    seen: dict[tuple[str, tuple, str, int], int] = {}
    family_of: dict[str, tuple[str, int]] = {}
    for row in rows:
        number = row["_line"]
        record = {k: row[k] for k in ("group", "family", "system")}
        group = _field_text(name, where, number, record, "group")
        group = " ".join(group.split())
        row_family = " ".join(_field_text(name, where, number, record, "family", required=False).split()) or family
        row_system = " ".join(_field_text(name, where, number, record, "system", required=False).split()) or \
            system or DEFAULT_SYSTEM
        generation = row["generation"]
        if not isinstance(generation, str) or not generation.strip():
            raise GenerationsImportError(f"{name} {where} {number}: field 'generation' is empty; a row needs the "
                                         "text the model wrote")
        if len(generation) > MAX_GENERATION_CHARS:  # every other text field refuses what no scorer can read whole
            raise GenerationsImportError(f"{name} {where} {number}: field 'generation' has {len(generation):,} "
                                         f"characters; the limit is {MAX_GENERATION_CHARS:,} (the scorers read "
                                         "at most 512 tokens of a text)")
        prompt = " ".join(row["prompt"].split())
        if len(prompt) > MAX_PROMPT_CHARS:
            raise GenerationsImportError(f"{name} {where} {number}: field 'prompt' has {len(prompt):,} characters; "
                                         f"the limit is {MAX_PROMPT_CHARS:,}, as for typed prompts")
        key = (row_system, row["_config"], prompt)
        sample = row["sample"] if row["sample"] is not None else next_sample.get(key, 0)
        next_sample[key] = max(next_sample.get(key, 0), sample + 1)
        duplicate = seen.get((*key, sample))
        if duplicate is not None:
            raise GenerationsImportError(f"{name} {where} {number} repeats prompt {quoted(prompt)}, sample {sample} "
                                         f"of system {quoted(row_system)} ({where} {duplicate}); each (prompt, "
                                         "sample) appears once per system")
        seen[(*key, sample)] = number
        earlier = family_of.setdefault(group, (row_family, number))
        if earlier[0] != row_family:
            raise GenerationsImportError(f"{name} {where} {number}: group {quoted(group)} is in family "
                                         f"{quoted(row_family)} here and in {quoted(earlier[0])} on {where} "
                                         f"{earlier[1]}; a group belongs to one family")
        out.append(ImportedRow(number, row_system, row["_config"], prompt, generation, group, row_family, sample,
                               tuple(row.get("_attributes") or ())))
    counts: dict[tuple[str, str], list[int]] = {}
    for row in out:
        counts.setdefault((row.system, row.group), []).append(row.line)
    for (row_system, group), lines in counts.items():
        if len(lines) < 2:
            raise GenerationsImportError(f"{name}: group {quoted(group)} of system {quoted(row_system)} has one "
                                         f"generation ({where} {lines[0]}); a group needs at least two to be "
                                         "measured with an interval")
    imported = ImportedGenerations(name, digest, fmt, out, notes)
    lone = [f for f, members in imported.families.items() if len(members) < 2]
    if lone:
        imported.notes.append(f"family {quoted(lone[0])} has one group, so it has no disparity (a disparity "
                              "compares two or more groups of a family)")
    return imported
