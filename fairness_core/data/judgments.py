"""Human judgments of generated texts: the data a metric is checked against ("does it agree with people?").

A judgments set is one row per (item, system): the candidate a system wrote for an item (a document to
summarise, a segment to translate), the item's reference (and optionally its source), and the human score of
that candidate. Three ways in, all giving the same `Judgments`:

* the shipped REALSumm copy (`data/realsumm/*.jsonl.gz`; Bhandari et al. 2020, via txsun1997/Metric-Fairness,
  MIT): 100 CNN/DailyMail documents × 24 systems, human = LitePyramid recall;
* a folder holding `realsumm_documents.jsonl` and `realsumm_summaries.jsonl` in that same format;
* a user's table (CSV, TSV or JSONL; a path or uploaded bytes): `item_id`, `system`, `candidate`, `reference`,
  optional `source`, optional `group` (e.g. a WMT language pair: its own items and its own systems), `human`;
  every other column holding only numbers (empty = missing) is a stored score.

The rules (bad input is one sentence naming the file, line and field; nothing is half-read): a human score
must be a finite number; an (item, system) appears once; every system scores every item (a correlation that
pools or averages over systems needs the same systems everywhere; with a `group` column: every system of a group
scores every item of that group, and an item belongs to one group); at least 3 items; the human scores must not
all be equal (a correlation with a constant is undefined); a reference must not be empty. An empty candidate
is data (a system may write nothing): kept and counted in a note.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairness_core import config
from fairness_core.data.quoting import quoted

REALSUMM = "realsumm"
DOCUMENTS_FILE = "realsumm_documents.jsonl"
SUMMARIES_FILE = "realsumm_summaries.jsonl"
#: the folder of the shipped copy (gzipped JSON Lines, LICENSE, README)
REALSUMM_DIR = config.project_data_dir() / "realsumm"
REALSUMM_LICENCE = ("REALSumm (Bhandari et al. 2020, github.com/neulab/REALSumm), from txsun1997/Metric-Fairness "
                    "(MIT licence, Copyright (c) 2022 Tianxiang Sun)")
REALSUMM_HUMAN = "LitePyramid recall"
#: the columns of a user's table; `source` and `group` are optional
TABLE_COLUMNS = ("item_id", "system", "candidate", "reference", "human")
OPTIONAL_COLUMNS = ("source", "group")
#: a judgments file larger than this is refused before parsing (REALSumm's summaries file is 1.4 MB)
MAX_FILE_BYTES = 50 * 1024 * 1024
MIN_ITEMS = 3
STORED_SUFFIX = " (stored)"
ROW_RULES = ("a human score must be a finite number; an (item, system) appears once; every system scores every "
             "item (of its group, with a group column; an item belongs to one group); at least 3 items; the human "
             "scores must not all be equal; a reference must not be empty; an empty candidate is kept (a system may "
             "write nothing) and counted")


class JudgmentDataError(ValueError):
    """Bad judgments data; the message is one sentence naming the file and, where it applies, the line."""


def stored_name(column: str) -> str:
    """A score stored with the data is reported as `<column> (stored)`, never told from a recomputed metric by
    case only (the same convention as the metric-bias study)."""
    return f"{column}{STORED_SUFFIX}"


@dataclass(frozen=True, eq=False)
class Judgments:
    """Human judgments of candidates, one row per (item, system), in a fixed order (items, then systems)."""

    name: str
    #: item_id, system, candidate, reference, source ("" when not given), human, one float column per stored
    #: score named "<name> (stored)", group ("" when not given: one group)
    frame: pd.DataFrame
    licence: str = "user-supplied"
    #: what the human score is (REALSumm: LitePyramid recall)
    human_label: str = "human score"
    origin: str = ""  # where it was read from, for the page and the CLI
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def data_hash(self) -> str:
        """SHA-256 of the rows' canonical JSON (texts, human and stored scores): any edit is a new version."""
        cached = self.__dict__.get("_data_hash")
        if cached is None:
            columns = ["item_id", "system", "candidate", "reference", "source", "human", *self.stored_columns]
            if self.n_groups > 1 or self.groups != [""]:  # a set without groups keeps the hash it always had
                columns.append("group")
            records = self.frame[columns].to_numpy(dtype=object).tolist()
            payload = json.dumps([columns, [[_canonical(v) for v in row] for row in records]], ensure_ascii=False)
            cached = hashlib.sha256(payload.encode("utf-8")).hexdigest()
            object.__setattr__(self, "_data_hash", cached)
        return cached

    @property
    def stored_columns(self) -> list[str]:
        """The frame's stored-score columns ("<name> (stored)"), in file order."""
        return [c for c in self.frame.columns if c.endswith(STORED_SUFFIX)]

    @property
    def items(self) -> list[str]:
        return list(dict.fromkeys(self.frame["item_id"]))

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(self.frame["system"]))

    @property
    def groups(self) -> list[str]:
        """The groups (e.g. WMT language pairs) in order of first appearance; [""] when the data has none."""
        return list(dict.fromkeys(self.frame["group"])) if "group" in self.frame else [""]

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    @property
    def group_codes(self) -> np.ndarray:
        """Per row: the index of its group in `groups` (all 0 without a group column)."""
        if "group" not in self.frame:
            return np.zeros(len(self.frame), dtype=np.int64)
        return self._cached("_group_codes", lambda: pd.Categorical(self.frame["group"], categories=self.groups)
                            .codes.astype(np.int64))

    @property
    def n_items(self) -> int:
        return int(self.frame["item_id"].nunique())

    @property
    def n_systems(self) -> int:
        return int(self.frame["system"].nunique())

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def human(self) -> np.ndarray:
        return self.frame["human"].to_numpy(dtype=float)

    def _cached(self, key: str, compute: Any) -> Any:
        """A derived array computed once (the frame of a Judgments is not edited after it is built)."""
        if key not in self.__dict__:
            object.__setattr__(self, key, compute())
        return self.__dict__[key]

    @property
    def item_codes(self) -> np.ndarray:
        """Per row: the index of its item in `items` (the unit the bootstrap resamples)."""
        return self._cached("_item_codes", lambda: pd.Categorical(self.frame["item_id"], categories=self.items)
                            .codes.astype(np.int64))

    @property
    def system_codes(self) -> np.ndarray:
        """Per row: its system's index; with groups, a system is (group, system): WMT's "Online-A" of de-en and of
        en-de are different systems."""
        def compute() -> np.ndarray:
            if self.n_groups == 1:
                return pd.Categorical(self.frame["system"], categories=self.systems).codes.astype(np.int64)
            keys = self.frame["group"] + "\u241f" + self.frame["system"]
            return pd.Categorical(keys, categories=list(dict.fromkeys(keys))).codes.astype(np.int64)

        return self._cached("_system_codes", compute)

    def describe(self) -> str:
        groups = f" in {self.n_groups:,} groups" if self.n_groups > 1 else ""
        return (f"{self.name}: {self.n_items:,} items × {self.n_systems:,} systems{groups} = {len(self):,} "
                f"candidates, human = {self.human_label} (version {self.data_hash[:12]}; licence: {self.licence})")


def _canonical(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return None if not math.isfinite(float(value)) else float(value)
    return value


# -- reading ------------------------------------------------------------------------------------------------
def _decode(data: bytes, name: str) -> str:
    if len(data) > MAX_FILE_BYTES:
        raise JudgmentDataError(f"{name}: file is {len(data) / 1e6:.0f} MB; the limit is "
                                f"{MAX_FILE_BYTES / 1e6:.0f} MB for a judgments file")
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise JudgmentDataError(f"{name}: is not a readable gzip file ({error})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise JudgmentDataError(f"{name}, line {line}: not UTF-8 text (byte 0x{data[error.start]:02x}); save the "
                                "file as UTF-8") from None
    return text.removeprefix("\ufeff")


def _read_path(path: Path) -> bytes:
    try:
        if path.is_dir():
            raise JudgmentDataError(f"{path}: is a folder, not a file")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise JudgmentDataError(f"{path}: file is {size / 1e6:.0f} MB; the limit is "
                                    f"{MAX_FILE_BYTES / 1e6:.0f} MB for a judgments file")
        return path.read_bytes()
    except OSError as error:
        raise JudgmentDataError(f"{path}: cannot read the file ({error.strerror or type(error).__name__})") from None


def _jsonl(text: str, name: str) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise JudgmentDataError(f"{name}, line {number}: is not valid JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise JudgmentDataError(f"{name}, line {number}: is not a JSON object")
        rows.append((number, record))
    return rows


def _number(value: Any) -> float | None:
    """A cell as a float: None when it is not a number; NaN when empty."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    if not text or text.lower() in ("nan", "na", "n/a", "null", "none"):
        return math.nan
    try:
        return float(text)
    except ValueError:
        return None


def _human(value: Any, name: str, line: int, column: str) -> float:
    number = _number(value)
    if number is None:
        raise JudgmentDataError(f"{name}, line {line}: field '{column}' is not a number ({str(value)[:40]!r})")
    if not math.isfinite(number):
        what = "empty" if number != number else "infinite"
        raise JudgmentDataError(f"{name}, line {line}: field '{column}' is {what}; every candidate needs a human "
                                "score")
    return number


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _rows_to_judgments(rows: list[dict[str, Any]], lines: list[int], name: str, stored: list[str],
                       licence: str, human_label: str, origin: str, where: str) -> Judgments:
    """Check the set-level rules and build the frame (rows already have texts and a finite human score)."""
    seen: dict[tuple[str, str], int] = {}
    for row, line in zip(rows, lines, strict=True):
        key = (row["item_id"], row["system"])
        if key in seen:
            raise JudgmentDataError(f"{where}, line {line}: item '{key[0]}' already has a candidate from system "
                                    f"'{key[1]}' (line {seen[key]}); each (item, system) appears once")
        seen[key] = line
    if not rows:
        raise JudgmentDataError(f"{where}: has no rows")
    items = list(dict.fromkeys(r["item_id"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    if len(items) < MIN_ITEMS:
        raise JudgmentDataError(f"{where}: has {len(items)} item(s); a correlation with an interval over items "
                                f"needs at least {MIN_ITEMS}")
    group_of: dict[str, tuple[str, int]] = {}
    for row, line in zip(rows, lines, strict=True):
        group = row.get("group", "")
        first = group_of.setdefault(row["item_id"], (group, line))
        if first[0] != group:
            raise JudgmentDataError(f"{where}, line {line}: item '{row['item_id']}' is in group '{group}' but in group "
                                    f"'{first[0]}' on line {first[1]}; an item belongs to one group (give each "
                                    "group's items their own ids)")
    groups = list(dict.fromkeys(group for group, _ in group_of.values()))
    for group in groups:
        members = [r for r in rows if r.get("group", "") == group]
        group_items = list(dict.fromkeys(r["item_id"] for r in members))
        within = f" of group '{group}'" if group else ""
        for system in dict.fromkeys(r["system"] for r in members):
            missing = [item for item in group_items if (item, system) not in seen]
            if missing:
                raise JudgmentDataError(f"{where}: system '{system}'{within} has candidates for "
                                        f"{len(group_items) - len(missing)} of {len(group_items)} items (none for item "
                                        f"'{missing[0]}'); every system must score every item{within}")
    humans = {r["human"] for r in rows}
    if len(humans) == 1:
        raise JudgmentDataError(f"{where}: every human score is {next(iter(humans)):g}; a correlation with a "
                                "constant is undefined")
    frame = pd.DataFrame(rows, columns=["item_id", "system", "candidate", "reference", "source", "human", *stored])
    if groups != [""]:
        frame["group"] = [r.get("group", "") for r in rows]
    # a fixed order (items, then systems, as first seen) so that arrays align across loads and runs
    order = {item: i for i, item in enumerate(items)}
    rank = {system: i for i, system in enumerate(systems)}
    frame = frame.iloc[np.lexsort((frame["system"].map(rank), frame["item_id"].map(order)))].reset_index(drop=True)
    frame["human"] = frame["human"].astype(float)
    for column in stored:
        frame[column] = frame[column].astype(float)
    notes = []
    empty = int((frame["candidate"] == "").sum())
    if empty:
        notes.append(f"{where}: {empty} empty candidate(s) kept (a system may write nothing); metrics score them "
                     "as they are")
    for column in stored:
        missing = int(frame[column].isna().sum())
        if missing:
            notes.append(f"{where}: stored column {column} has no value for {missing} candidate(s); they are left "
                         "out of its correlation (and counted)")
    return Judgments(name, frame, licence, human_label, origin, tuple(notes))


def read_realsumm(documents: bytes | Path, summaries: bytes | Path, name: str = REALSUMM,
                  licence: str = REALSUMM_LICENCE, origin: str = "") -> Judgments:
    """The REALSumm release format: documents (doc_id, source, reference) and summaries (doc_id, system, summary,
    litepyramid_recall, stored {column: score})."""
    doc_name = documents.name if isinstance(documents, Path) else DOCUMENTS_FILE
    sum_name = summaries.name if isinstance(summaries, Path) else SUMMARIES_FILE
    doc_text = _decode(_read_path(documents) if isinstance(documents, Path) else documents, doc_name)
    sum_text = _decode(_read_path(summaries) if isinstance(summaries, Path) else summaries, sum_name)
    docs: dict[str, tuple[str, str, int]] = {}
    for line, record in _jsonl(doc_text, doc_name):
        doc_id = _text(record.get("doc_id"))
        if not doc_id:
            raise JudgmentDataError(f"{doc_name}, line {line}: field 'doc_id' is empty")
        if doc_id in docs:
            raise JudgmentDataError(f"{doc_name}, line {line}: document '{doc_id}' repeats line {docs[doc_id][2]}")
        reference = _text(record.get("reference"))
        if not reference:
            raise JudgmentDataError(f"{doc_name}, line {line}: field 'reference' is empty")
        docs[doc_id] = (_text(record.get("source")), reference, line)
    rows, lines = [], []
    stored: list[str] = []
    for line, record in _jsonl(sum_text, sum_name):
        doc_id, system = _text(record.get("doc_id")), _text(record.get("system"))
        for column, value in (("doc_id", doc_id), ("system", system)):
            if not value:
                raise JudgmentDataError(f"{sum_name}, line {line}: field '{column}' is empty")
        if doc_id not in docs:
            raise JudgmentDataError(f"{sum_name}, line {line}: document '{doc_id}' is not in {doc_name}")
        scores = record.get("stored") or {}
        if not isinstance(scores, Mapping):
            raise JudgmentDataError(f"{sum_name}, line {line}: field 'stored' is not an object of scores")
        row = {"item_id": doc_id, "system": system, "candidate": _text(record.get("summary")),
               "reference": docs[doc_id][1], "source": docs[doc_id][0],
               "human": _human(record.get("litepyramid_recall"), sum_name, line, "litepyramid_recall")}
        for column, value in scores.items():
            number = _number(value)
            if number is None:
                raise JudgmentDataError(f"{sum_name}, line {line}: stored score '{column}' is not a number "
                                        f"({str(value)[:40]!r})")
            key = stored_name(str(column))
            if key not in stored:
                stored.append(key)
            row[key] = number
        rows.append(row)
        lines.append(line)
    for row in rows:
        for key in stored:
            row.setdefault(key, math.nan)
    return _rows_to_judgments(rows, lines, name, stored, licence, REALSUMM_HUMAN, origin, sum_name)


def load_realsumm() -> Judgments:
    """The shipped copy (data/realsumm/, gzipped)."""
    folder = REALSUMM_DIR
    documents, summaries = folder / f"{DOCUMENTS_FILE}.gz", folder / f"{SUMMARIES_FILE}.gz"
    for path in (documents, summaries):
        if not path.is_file():
            raise JudgmentDataError(f"{path} is missing; the REALSumm copy ships in data/realsumm/")
    return read_realsumm(_read_path(documents), _read_path(summaries), origin="data/realsumm/ (shipped copy)")


def read_realsumm_dir(folder: Path) -> Judgments:
    """A folder with realsumm_documents.jsonl and realsumm_summaries.jsonl (or their .gz)."""
    found = []
    for stem in (DOCUMENTS_FILE, SUMMARIES_FILE):
        options = [folder / stem, folder / f"{stem}.gz"]
        path = next((p for p in options if p.is_file()), None)
        if path is None:
            raise JudgmentDataError(f"{folder}: has no {stem} (a judgments folder holds {DOCUMENTS_FILE} and "
                                    f"{SUMMARIES_FILE})")
        found.append(path)
    licence = "as given by the folder's owner (REALSumm format)"
    return read_realsumm(found[0], found[1], name=folder.name or str(folder), licence=licence, origin=str(folder))


def _table_rows(text: str, name: str) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    suffix = Path(name.removesuffix(".gz")).suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        rows = [(line, {str(k).strip().lower() if str(k).strip().lower() in (*TABLE_COLUMNS, *OPTIONAL_COLUMNS) else
                        str(k).strip(): v for k, v in record.items()}) for line, record in _jsonl(text, name)]
        header = list(dict.fromkeys(k for _, r in rows for k in r))
        return header, rows
    delimiter = "\t" if suffix in (".tsv", ".tab") else ","
    csv.field_size_limit(MAX_FILE_BYTES)
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        raw_header = next(reader, [])
        header = [h.strip().lower() if h.strip().lower() in (*TABLE_COLUMNS, *OPTIONAL_COLUMNS) else h.strip()
                  for h in raw_header]
        repeated = sorted({h for h in header if h and header.count(h) > 1})
        if repeated:
            raise JudgmentDataError(f"{name}, line 1: column '{repeated[0]}' appears more than once in the header")
        rows = []
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                raise JudgmentDataError(f"{name}, line {reader.line_num}: has {len(row)} fields but the header has "
                                        f"{len(header)}")
            rows.append((reader.line_num, {h: (row[i] if i < len(row) else "") for i, h in enumerate(header) if h}))
    except csv.Error as error:
        raise JudgmentDataError(f"{name}: is not a readable CSV ({error})") from None
    return [h for h in header if h], rows


def read_table(data: bytes | Path, name: str | None = None) -> Judgments:
    """A user's judgments table (CSV / TSV / JSONL, optionally gzipped): item_id, system, candidate, reference,
    [source], human, and any all-numeric columns as stored scores."""
    name = name or (data.name if isinstance(data, Path) else "upload.csv")
    text = _decode(_read_path(data) if isinstance(data, Path) else data, name)
    header, records = _table_rows(text, name)
    missing = [c for c in TABLE_COLUMNS if c not in header]
    if missing:
        found = quoted(", ".join(header)) if header else "nothing"  # a 10 MB header line is quoted, not echoed
        raise JudgmentDataError(f"{name}, line 1: missing column{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(missing)} (the header has {found}; needed: "
                                f"{', '.join(TABLE_COLUMNS)}, optional source, group)")
    if not records:
        raise JudgmentDataError(f"{name}: has a header but no rows")
    extra = [h for h in header if h not in (*TABLE_COLUMNS, *OPTIONAL_COLUMNS)]
    numeric = [h for h in extra if all(_number(r.get(h)) is not None for _, r in records)]
    rows, lines = [], []
    for line, record in records:
        texts = {c: _text(record.get(c)) for c in ("item_id", "system", "candidate", "reference", "source")}
        if "group" in header:
            texts["group"] = _text(record.get("group"))
        for column in ("item_id", "system", "reference", *(("group",) if "group" in header else ())):
            if not texts[column]:
                raise JudgmentDataError(f"{name}, line {line}: field '{column}' is empty")
        row: dict[str, Any] = dict(texts) | {"human": _human(record.get("human"), name, line, "human")}
        for column in numeric:
            row[stored_name(column)] = _number(record.get(column))
        rows.append(row)
        lines.append(line)
    judgments = _rows_to_judgments(rows, lines, Path(name).stem.removesuffix(".jsonl").removesuffix(".csv"),
                                   [stored_name(c) for c in numeric], "user-supplied", "human score", name, name)
    notes = list(judgments.notes)
    text_columns = [h for h in extra if h not in numeric]
    if text_columns:
        notes.append(f"{name}: column(s) {', '.join(text_columns)} hold text, so they are not stored scores")
    if numeric:
        notes.append(f"{name}: {len(numeric)} stored score column(s) available as metrics "
                     f"({', '.join(stored_name(c) for c in numeric)})")
    references = judgments.frame.groupby("item_id", sort=False)["reference"].nunique()
    if (references > 1).any():
        notes.append(f"{name}: {int((references > 1).sum())} item(s) have different references on different rows; "
                     "each candidate is scored against its own row's reference")
    return Judgments(judgments.name, judgments.frame, judgments.licence, judgments.human_label, judgments.origin,
                     tuple(notes))


def from_frame(frame: pd.DataFrame, name: str, stored: Iterable[str] = (), licence: str = "project-written",
               human_label: str = "human score") -> Judgments:
    """Judgments from an in-memory table with the table columns (simulations, tests): the same checks."""
    columns = list(frame.columns)
    for column in TABLE_COLUMNS:
        if column not in columns:
            raise JudgmentDataError(f"{name}: missing column '{column}'")
    rows, lines = [], []
    stored = list(stored)
    for line, record in enumerate(frame.to_dict("records"), start=1):
        row = {c: _text(record.get(c)) for c in ("item_id", "system", "candidate", "reference", "source")}
        if "group" in columns:
            row["group"] = _text(record.get("group"))
        row["human"] = _human(record.get("human"), name, line, "human")
        for column in stored:
            row[stored_name(column)] = _number(record.get(column))
        rows.append(row)
        lines.append(line)
    return _rows_to_judgments(rows, lines, name, [stored_name(c) for c in stored], licence, human_label, name, name)
