"""Scores made elsewhere, evaluated here: the file's bytes (never a path) -> {"item\\tvariant": score} for the selected
items, keyed as the task's rows are, so an imported run is stored and summarised exactly like a scored one.

Formats:
- StereoSet's own predictions file (`eval_generative_models.py` writes it, `evaluation.py` reads it):
  {"intrasentence": [{"id": sentence id, "score": number}], "intersentence": [...]}; higher = more likely.
- lm-evaluation-harness `--log_samples` (`samples_<task>_<date>.jsonl`) of a loglikelihood task: one JSON object
  per document with `doc` and `filtered_resps` (or `resps`), one `[loglikelihood, is_greedy]` per choice, numbers
  or numeric strings. CrowS-Pairs documents are matched by their two sentences (whitespace collapsed; choice 0 =
  sent_more, as lm-eval's `crows_pairs` orders them), BBQ documents by (category, example_id) with the three
  answers in order.
- BBQ's jsonl with a prediction field: the items' own lines plus `prediction` (the answer's index 0-2, or its
  text); each answer then scores 1 if predicted, else 0 (a file of predictions carries no likelihoods).

Every problem is one sentence naming the file: not the format, an id that is not the benchmark's, a selected
item without a score, a score that is not a finite number.
"""

from __future__ import annotations

import json
import math
from typing import Any

from fairness_core.stereotypes import data as D

FORMATS = ("stereoset", "lm-eval", "bbq-prediction")


class PredictionsError(ValueError):
    """A predictions file that cannot be evaluated; one sentence naming the file."""


def _number(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool):
        value = None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise PredictionsError(f"--predictions {name}: the score of {where} is not a finite number ({value!r})")
    return float(value)


def _wanted(benchmark: str, items: tuple[Any, ...]) -> list[str]:
    if benchmark == "stereoset":
        return [f"{sid}\t{label}" for c in items for label, (sid, _) in c.sentences.items()]
    if benchmark == "crows-pairs":
        return [f"{p.item}\t{side}" for p in items for side in ("more", "less")]
    return [f"{i.item}\tans{k}" for i in items for k in range(3)]


def parse_predictions(benchmark: str, data: bytes, items: tuple[Any, ...], name: str) -> tuple[dict[str, float], str]:
    """(scores for the selected items, the format read)."""
    try:
        text = bytes(data).decode("utf-8-sig")  # a BOM (Windows editors) is not part of the JSON
    except UnicodeDecodeError:
        raise PredictionsError(f"--predictions {name} is not UTF-8 text") from None
    if benchmark == "stereoset":
        scores, fmt = _stereoset(text, name), "stereoset"
    else:
        scores, fmt = _jsonl(benchmark, text, name)
    wanted = _wanted(benchmark, items)
    missing = [key for key in wanted if key not in scores]
    if missing:
        raise PredictionsError(f"--predictions {name} has no score for {len(missing)} of the {len(wanted)} scores "
                               f"the selection needs (first: {missing[0].replace(chr(9), ' ')})")
    return {key: scores[key] for key in wanted}, fmt


def _stereoset(text: str, name: str) -> dict[str, float]:
    try:
        payload = json.loads(text)
    except json.JSONDecodeError:
        raise PredictionsError(f"--predictions {name} is not JSON (StereoSet's predictions file is one JSON "
                               "object)") from None
    if not isinstance(payload, dict) or not set(payload) & set(D.STEREOSET_SPLITS):
        raise PredictionsError(f"--predictions {name} is not a StereoSet predictions file (no 'intrasentence' or "
                               "'intersentence' list of {\"id\", \"score\"})")
    label_of = {sid: label for c in D.stereoset() for label, (sid, _) in c.sentences.items()}
    scores: dict[str, float] = {}
    for split in D.STEREOSET_SPLITS:
        entries = payload.get(split, [])
        if not isinstance(entries, list):
            raise PredictionsError(f"--predictions {name}: '{split}' is not a list")
        for position, entry in enumerate(entries):
            if not isinstance(entry, dict) or "id" not in entry or "score" not in entry:
                raise PredictionsError(f"--predictions {name}: {split} entry {position} lacks 'id' or 'score'")
            if entry["id"] not in label_of:
                raise PredictionsError(f"--predictions {name}: {split} id {entry['id']!r} is not a sentence of "
                                       "StereoSet's dev set")
            if isinstance(entry["score"], str):  # StereoSet's own files hold numbers: a string is a mistake
                raise PredictionsError(f"--predictions {name}: the score of {split} id {entry['id']!r} is not a "
                                       f"finite number ({entry['score']!r})")
            scores[f"{entry['id']}\t{label_of[entry['id']]}"] = _number(entry["score"], name,
                                                                         f"{split} id {entry['id']!r}")
    return scores


def _lines(text: str, name: str) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise PredictionsError(f"--predictions {name} line {number} is not JSON (a .jsonl file: one JSON object "
                                   "per line)") from None
        if not isinstance(record, dict):
            raise PredictionsError(f"--predictions {name} line {number} is not a JSON object")
        records.append((number, record))
    if not records:
        raise PredictionsError(f"--predictions {name} is empty")
    return records


def _choice_lls(record: dict[str, Any], name: str, number: int, expected: int) -> list[float]:
    responses = record.get("filtered_resps", record.get("resps"))
    if not isinstance(responses, list) or len(responses) != expected:
        raise PredictionsError(f"--predictions {name} line {number}: lm-eval's filtered_resps should hold {expected} "
                               f"[loglikelihood, is_greedy] entries")
    values = []
    for k, response in enumerate(responses):
        while isinstance(response, list) and response and isinstance(response[0], list):  # resps: [[ll, greedy]]
            response = response[0]
        first = response[0] if isinstance(response, list) and response else response
        values.append(_number(first, name, f"line {number} choice {k}"))
    return values


def _jsonl(benchmark: str, text: str, name: str) -> tuple[dict[str, float], str]:
    records = _lines(text, name)
    sample = records[0][1]
    if "doc" in sample and ("filtered_resps" in sample or "resps" in sample):
        fmt = "lm-eval"
    elif benchmark == "bbq" and "prediction" in sample:
        fmt = "bbq-prediction"
    else:
        wanted = ("an lm-eval --log_samples file (doc, filtered_resps)" if benchmark == "crows-pairs" else
                  "an lm-eval --log_samples file (doc, filtered_resps) or BBQ's jsonl with a prediction field")
        raise PredictionsError(f"--predictions {name} is not {wanted} for {benchmark}")
    scores: dict[str, float] = {}
    if benchmark == "crows-pairs":
        by_text: dict[tuple[str, str], list[str]] = {}
        for pair in D.crows_pairs():  # a few pairs occur twice in the CSV: one document scores every copy
            by_text.setdefault((pair.sent_more, pair.sent_less), []).append(pair.item)
        for number, record in records:
            doc = record.get("doc")
            key = (" ".join(str(doc.get("sent_more", "")).split()), " ".join(str(doc.get("sent_less", "")).split())) \
                if isinstance(doc, dict) else None
            if key not in by_text:
                raise PredictionsError(f"--predictions {name} line {number} is not a pair of the shipped CrowS-Pairs "
                                       "file (its sent_more and sent_less match no pair)")
            more, less = _choice_lls(record, name, number, 2)
            for item in by_text[key]:
                scores[f"{item}\tmore"], scores[f"{item}\tless"] = more, less
        return scores, fmt
    named = {str((r.get("doc") if fmt == "lm-eval" else r).get("category")) for _, r in records
             if isinstance(r.get("doc") if fmt == "lm-eval" else r, dict)}
    # only the categories the file names are read (each is thousands of lines)
    items = {item.item: item for category in D.BBQ_CATEGORIES if category in named for item in D.bbq(category)}
    for number, record in records:
        doc = record.get("doc") if fmt == "lm-eval" else record
        item_id = f"{doc.get('category')}-{doc.get('example_id')}" if isinstance(doc, dict) else None
        if item_id not in items:
            raise PredictionsError(f"--predictions {name} line {number}: (category, example_id) is not a BBQ item")
        if fmt == "lm-eval":
            values = _choice_lls(record, name, number, 3)
        else:
            values = _one_hot(record.get("prediction"), items[item_id], name, number)
        for k, value in enumerate(values):
            scores[f"{item_id}\tans{k}"] = value
    return scores, fmt


def _one_hot(prediction: Any, item: D.BBQItem, name: str, number: int) -> list[float]:
    if isinstance(prediction, int) and not isinstance(prediction, bool) and prediction in (0, 1, 2):
        index = prediction
    elif isinstance(prediction, str) and prediction.strip() in [a.strip() for a in item.answers]:
        index = [a.strip() for a in item.answers].index(prediction.strip())
    elif isinstance(prediction, str) and prediction.strip() in ("ans0", "ans1", "ans2"):
        index = int(prediction.strip()[-1])
    else:
        raise PredictionsError(f"--predictions {name} line {number}: prediction {prediction!r} is neither 0-2, "
                               "ans0-ans2 nor one of the item's answers")
    return [1.0 if k == index else 0.0 for k in range(3)]
