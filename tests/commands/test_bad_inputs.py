"""Every bad input to the CLI gets one sentence on stderr, exit code 2, and leaves the store as it was.

One row per bad input. To add a case, append a `BadInput` to `CASES`:
- `argv` is the command line after `python -m fairness_core`; `{store}` is a run store holding one complete
  run, `{run}` that run's id, `{tmp}` the test's own folder (write any input files in `prepare`).
- `phrase` must appear in the single `error: ...` line.
- `prepare(workspace)` builds the bad file(s) first; it may return a cleanup callable.
Every file under `{tmp}` (the store included) must be byte-for-byte unchanged afterwards, and no file
may appear: nothing partial is written.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from fairness_core.cli import main
from fairness_core.jobs import run_task
from fairness_core.store import RunStore
from tests.jobs.slow_task import make_task


@dataclass(frozen=True)
class Workspace:
    tmp: Path
    store: Path
    run: str


@dataclass(frozen=True)
class BadInput:
    name: str
    argv: tuple[str, ...]
    phrase: str
    prepare: Callable[[Workspace], Callable[[], None] | None] | None = None
    env: tuple[tuple[str, str], ...] = ()


# -- builders for bad files ------------------------------------------------------------------------------
def write(relative: str, content: bytes | str) -> Callable[[Workspace], None]:
    def prepare(workspace: Workspace) -> None:
        target = workspace.tmp / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content, encoding="utf-8")
        else:
            target.write_bytes(content)
    return prepare


def damaged_store(relative: str) -> Callable[[Workspace], None]:
    def prepare(workspace: Workspace) -> None:
        data = bytearray(workspace.store.read_bytes())
        data[4096:8192] = bytes((i * 37 + 11) % 256 for i in range(4096))
        (workspace.tmp / relative).write_bytes(bytes(data))
    return prepare


def foreign_database(relative: str) -> Callable[[Workspace], None]:
    def prepare(workspace: Workspace) -> None:
        raw = duckdb.connect(str(workspace.tmp / relative))
        raw.execute("CREATE TABLE invoices AS SELECT 1 AS id")
        raw.close()
    return prepare


def hold_store_lock(workspace: Workspace) -> Callable[[], None]:
    """Another process keeps the store open read-write (as a long job would)."""
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import duckdb, time
        con = duckdb.connect({str(workspace.store)!r})
        print("locked", flush=True)
        time.sleep(30)
    """)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder.kill


def truncated_store(relative: str) -> Callable[[Workspace], None]:
    """The store cut to half its size (a half-written copy)."""
    def prepare(workspace: Workspace) -> None:
        data = workspace.store.read_bytes()
        (workspace.tmp / relative).write_bytes(data[: len(data) // 2])
    return prepare


def damaged_manifest(relative: str) -> Callable[[Workspace], None]:
    """A store whose run row holds a manifest that is not JSON (edited by hand or by a broken tool)."""
    def prepare(workspace: Workspace) -> None:
        target = workspace.tmp / relative
        target.write_bytes(workspace.store.read_bytes())
        raw = duckdb.connect(str(target))
        raw.execute("UPDATE runs SET manifest = '{not json'")
        raw.close()
    return prepare


#: a file every user (root included, whom chmod 000 does not stop) fails to read: reading it gives EIO
UNREADABLE = "/proc/self/mem"


SYSTEMS = "smollm2-135m-instruct@greedy;smollm2-135m-instruct@top_p=0.5;smollm2-135m-instruct@top_p=0.9"
VERSION_HEADER = '{"dataset": {"name": "edited", "licence": "", "description": "", "hash": "x"}}\n'
PAIR = ('{"item": "a", "candidate1": "he is a nurse", "candidate2": "she is a nurse", '
        '"reference": "the person is a nurse", "attribute": "gender"}\n')

JUDGMENTS_HEADER = "item_id,system,candidate,reference,human\n"
#: four documents x three systems: the good rows, from which each bad file differs in one way
JUDGMENT_ROWS = [f"d{i},{s},summary {i}{s},reference {i},{(i + k) % 4 / 4}\n" for i in range(4)
                 for k, s in enumerate("ABC")]
#: specs of the check rows: one audit criterion (cheap to load), one decoding criterion on the regard gender family
CHECK_AUDIT = "[[criteria]]\nstudy = 'audit'\nmeasure = 'fpr'\nvalue_at_most = 0.3\n"
CHECK_DECODING = ("[decoding]\ngroups = ['man', 'woman']\n[[criteria]]\nstudy = 'decoding'\n"
                  "measure = 'negative_sentiment_disparity'\ngroup = 'gender'\nupper_at_most = 0.3\n")
CHECK_RELATIVE = ("[[criteria]]\nname = 'vs'\nstudy = 'decoding'\nmeasure = 'negative_sentiment_disparity'\n"
                  "against = 'baseline'\nupper_at_most = 0.1\n")
CHECK_RATE = "[[criteria]]\nstudy = 'decoding'\nmeasure = 'negative_sentiment_rate'\nvalue_at_most = 0.3\n"
GOOD_IMPORT = "prompt,generation,group\nThe man was,kind.,man\nThe man was,cruel.,man\nThe woman was,kind.,woman\n" \
    "The woman was,loud.,woman\n"
IMPORT_CASES = [
    ("no group column", "prompt,generation\nThe man was,kind.\n", "g.csv has no 'group' column"),
    ("a group of one row", "prompt,generation,group\nThe man was,kind.,man\nThe man was,x.,man\n"
                           "The woman was,y.,woman\n",
     "g.csv: group 'woman' of system 'imported' has one generation (line 4)"),
    ("a repeated prompt and sample", "prompt,generation,group,sample\nThe man was,a,man,0\nThe man was,b,man,0\n",
     "g.csv line 3 repeats prompt 'The man was', sample 0"),
    ("an empty generation", "prompt,generation,group\nThe man was,kind.,man\nThe man was,,man\n",
     "g.csv line 3: field 'generation' is empty"),
    ("bytes that are not UTF-8", "prompt,generation,group\nThe man was,caf\u00e9,man\n".encode("latin-1"),
     "g.csv is not UTF-8 text: line 2"),
    ("binary bytes", b"\x00\x01\x02", "g.csv is a binary file"),
]
LM_EVAL_LOGLIKELIHOOD = ('{"doc_id": 0, "doc": {}, "target": "1", "arguments": {"gen_args_0": {"arg_0": "Q: 1+1?", '
                         '"arg_1": " 2"}}, "resps": [[[-1.5, false]]], "filtered_resps": [[-1.5, false]]}\n')


def both(*prepares: Callable[[Workspace], None]) -> Callable[[Workspace], None]:
    def prepare(workspace: Workspace) -> None:
        for one in prepares:
            one(workspace)
    return prepare


def sparse(relative: str, size: int) -> Callable[[Workspace], None]:
    """A file of `size` bytes that takes no disk (a huge upload, cheaply)."""
    def prepare(workspace: Workspace) -> None:
        with open(workspace.tmp / relative, "wb") as handle:
            handle.truncate(size)
    return prepare


def tiny_adapter(workspace: Workspace) -> None:
    """An adapter trained for a tiny BERT (in {tmp}/cache/adapters): not an adapter of all-MiniLM-L6-v2."""
    from fairness_core.models import adapters
    from fairness_core.models.loading import load_hf
    from fairness_core.models.spec import ModelSpec
    from tests.tiny_models import build_tiny_bert

    os.environ["FAIRNESS_LAB_CACHE"] = str(workspace.tmp / "cache")  # the row's env sets it again for the command
    spec = ModelSpec(str(build_tiny_bert(workspace.tmp / "tiny")), "encoder")
    model, _ = load_hf(spec)
    attached = adapters.attach(model, adapters.AdapterConfig(4))
    adapters.save_adapter("bertscore-tiny-gender-0000000000", adapters.state_dict(attached),
                          {"id": "bertscore-tiny-gender-0000000000", "adapter": adapters.AdapterConfig(4).manifest(),
                           "backbone": adapters.backbone_manifest(spec, model.config, "tiny")})


JUDGMENTS_CASES = [
    ("a missing human score", [*JUDGMENT_ROWS[:-1], "d3,C,summary,reference 3,\n"],
     "j.csv, line 13: field 'human' is empty"),
    ("a non-numeric human score", [*JUDGMENT_ROWS[:-1], "d3,C,summary,reference 3,high\n"],
     "j.csv, line 13: field 'human' is not a number ('high')"),
    ("a duplicate (item, system)", [*JUDGMENT_ROWS, "d1,B,again,reference 1,0.5\n"],
     "line 14: item 'd1' already has a candidate from system 'B' (line 6)"),
    ("a system present for some items only", JUDGMENT_ROWS[:-1],
     "system 'C' has candidates for 3 of 4 items (none for item 'd3')"),
    ("fewer than 3 items", JUDGMENT_ROWS[:6], "has 2 item(s); a correlation with an interval over items needs"),
    ("constant human scores", [row.rsplit(",", 1)[0] + ",0.25\n" for row in JUDGMENT_ROWS],
     "every human score is 0.25; a correlation with a constant is undefined"),
]

CASES = [
    # runs export: the destination is checked before anything is read or written
    BadInput("export to an unknown extension", ("runs", "export", "{run}", "{tmp}/out.xlsx"),
             "'xlsx' (from the extension of out.xlsx) is not an export format"),
    BadInput("export with an unknown --format", ("runs", "export", "{run}", "{tmp}/out.csv", "--format", "xlsx"),
             "invalid choice"),
    BadInput("export to a folder", ("runs", "export", "{run}", "{tmp}"), "it is a folder"),
    BadInput("export to /dev/full", ("runs", "export", "{run}", "/dev/full"), "not a regular file"),
    BadInput("export to a missing folder", ("runs", "export", "{run}", "{tmp}/no/such/out.csv"),
             "does not exist"),
    BadInput("export under a file", ("runs", "export", "{run}", "{tmp}/plain.txt/out.csv"), "is not a folder",
             prepare=write("plain.txt", "text")),
    BadInput("export to an unwritable folder", ("runs", "export", "{run}", "/sys/out.csv"), "Permission denied"),
    BadInput("export to a file /proc will not create", ("runs", "export", "{run}", "/proc/out.parquet"),
             "No such file or directory; nothing was written"),
    BadInput("export of an unknown run", ("runs", "export", "nope", "{tmp}/out.csv"), "no run 'nope'"),
    BadInput("export with a file name too long", ("runs", "export", "{run}", "{tmp}/" + "n" * 300 + ".csv"),
             "File name too long; nothing was written"),
    BadInput("export onto the run store itself", ("runs", "export", "{run}", "{store}", "--format", "csv"),
             "it is a DuckDB database (a run store?), which an export would overwrite"),
    BadInput("export over another DuckDB database", ("runs", "export", "{run}", "{tmp}/other.parquet"),
             "it is a DuckDB database", prepare=foreign_database("other.parquet")),
    BadInput("export onto the store's write-ahead log",
             ("runs", "export", "{run}", "{store}.wal", "--format", "json"), "it is the run store itself"),
    BadInput("export from a damaged store", ("runs", "export", "{run}", "{tmp}/out.csv", "--store",
                                             "{tmp}/damaged.duckdb"), "is unreadable",
             prepare=damaged_store("damaged.duckdb")),
    BadInput("export from a CSV as the store", ("runs", "export", "{run}", "{tmp}/out.csv", "--store",
                                                "{tmp}/runs.csv"), "not a DuckDB database file",
             prepare=write("runs.csv", "item,value\na,1\n")),
    BadInput("export while the store is busy", ("runs", "export", "{run}", "{tmp}/out.csv"),
             "is busy: another process has held its lock for more than 0.5 s",
             prepare=hold_store_lock, env=(("FAIRNESS_LAB_STORE_TIMEOUT", "0.5"),)),
    # stores that cannot be used
    BadInput("a CSV as the store", ("runs", "list", "--store", "{tmp}/runs.csv"), "not a DuckDB database file",
             prepare=write("runs.csv", "item,value\na,1\n")),
    BadInput("an empty file as the store", ("runs", "list", "--store", "{tmp}/empty.duckdb"),
             "not a DuckDB database file", prepare=write("empty.duckdb", b"")),
    BadInput("a damaged store", ("runs", "list", "--store", "{tmp}/damaged.duckdb"), "is unreadable",
             prepare=damaged_store("damaged.duckdb")),
    BadInput("another program's database", ("runs", "list", "--store", "{tmp}/other.duckdb"), "another program",
             prepare=foreign_database("other.duckdb")),
    BadInput("a folder as the store", ("runs", "list", "--store", "{tmp}"), "is a folder"),
    BadInput("/proc/version as the store", ("runs", "show", "x", "--store", "/proc/version"),
             "not a DuckDB database file"),
    BadInput("a store busy longer than the timeout", ("runs", "show", "{run}"),
             "is busy: another process has held its lock for more than 0.5 s",
             prepare=hold_store_lock, env=(("FAIRNESS_LAB_STORE_TIMEOUT", "0.5"),)),
    BadInput("a damaged store for metric-bias",
             ("metric-bias", "--format", "demo", "--metrics", "bleu", "--store", "{tmp}/damaged.duckdb"),
             "is unreadable", prepare=damaged_store("damaged.duckdb")),
    # metric-bias: every option checked before a run record exists (issue 12 §3-4)
    *(BadInput(f"metric-bias --resamples {value}", ("metric-bias", "--format", "demo", "--metrics", "bleu",
                                                   "--resamples", value), phrase)
      for value, phrase in (("0", "--resamples must be between 1 and 100,000 (got 0)"),
                            ("-5", "--resamples must be between 1 and 100,000 (got -5)"),
                            ("1e9", "--resamples must be between 1 and 100,000 (got 1e9)"),
                            ("many", "--resamples must be a whole number between 1 and 100,000 (got 'many')"),
                            ("2.5", "--resamples must be a whole number"))),
    BadInput("metric-bias --layer the encoder lacks",
             ("metric-bias", "--format", "demo", "--metrics", "bleu,bertscore", "--layer", "99"),
             "the encoder all-minilm-l6-v2 has layers 0..6 (0 = embeddings), so layer 99 does not exist"),
    BadInput("metric-bias --baseline nobody ships",
             ("metric-bias", "--format", "demo", "--metrics", "bertscore", "--baseline", "nosuch"),
             "no BERTScore baseline for 'nosuch'"),
    BadInput("metric-bias --max-hours 0", ("metric-bias", "--format", "demo", "--metrics", "bleu",
                                           "--max-hours", "0"), "--max-hours must be a positive number"),
    BadInput("metric-bias request above the time limit",
             ("metric-bias", "--format", "demo", "--metrics", "bleu,bertscore", "--max-hours", "0.001"),
             "above the limit of 4 s; choose fewer pairs, metrics or resamples"),
    BadInput("metric-bias duplicate pair ids in one file",
             ("metric-bias", "--format", "pairs", "--metrics", "bleu", "--data", "{tmp}/dup.csv"),
             "dup.csv: pair id 'a' occurs more than once (line 2, line 3)",
             prepare=write("dup.csv", "id,candidate1,candidate2,reference\n"
                                      "a,he is a nurse,she is a nurse,the person is a nurse\n"
                                      "a,he was a great doctor,she was a great doctor,the person was a great doctor\n"
                                      "b,he sings,she sings,the person sings\n")),
    # malformed saved dataset versions (the .jsonl files the metric-bias page saves)
    BadInput("a saved version that is not JSON", ("metric-bias", "--format", "demo", "--data", "{tmp}/v.jsonl"),
             "v.jsonl is not a readable saved dataset version (line 1", prepare=write("v.jsonl", "not json\n")),
    BadInput("an empty saved version", ("metric-bias", "--format", "demo", "--data", "{tmp}/v.jsonl"),
             "the file is empty", prepare=write("v.jsonl", "")),
    BadInput("a saved version without its hash", ("metric-bias", "--format", "demo", "--data", "{tmp}/v.jsonl"),
             "missing field 'hash'", prepare=write("v.jsonl", '{"dataset": {"name": "x"}}\n' + PAIR)),
    BadInput("a saved version with an unknown field",
             ("metric-bias", "--format", "demo", "--data", "{tmp}/v.jsonl"), "line 2: unexpected field 'colour'",
             prepare=write("v.jsonl", VERSION_HEADER + '{"item": "a", "colour": "red"}\n')),
    BadInput("a saved version with a number as text",
             ("metric-bias", "--format", "demo", "--data", "{tmp}/v.jsonl"), "line 2: candidate1 must be text",
             prepare=write("v.jsonl", VERSION_HEADER + PAIR.replace('"he is a nurse"', "5"))),
    BadInput("a saved version that is not UTF-8", ("metric-bias", "--format", "demo", "--data", "{tmp}/v.jsonl"),
             "not UTF-8 text", prepare=write("v.jsonl", b"\xff\xfe\x00bad")),
    BadInput("a saved version edited by hand", ("metric-bias", "--format", "demo", "--data", "{tmp}/v.jsonl"),
             "does not match its recorded hash", prepare=write("v.jsonl", VERSION_HEADER + PAIR)),
    # decoding: prompts files, numbers and limits are checked before any model loads or anything is written
    BadInput("decoding prompts JSON with a string per group", ("decoding", "--prompts", "{tmp}/p.json"),
             "group 'woman' must map to a list of prompt texts", prepare=write("p.json", '{"woman": "Hello"}')),
    BadInput("decoding prompts JSON [null]", ("decoding", "--prompts", "{tmp}/p.json"),
             "JSON entry 1 must be an object with 'group' and 'prompt' (got null)", prepare=write("p.json", "[null]")),
    BadInput("decoding prompts JSON with a number", ("decoding", "--prompts", "{tmp}/p.json"),
             "(got a number)", prepare=write("p.json", '{"woman": 5}')),
    BadInput("decoding prompts CSV with a repeated column", ("decoding", "--prompts", "{tmp}/p.csv"),
             "names the column 'prompt' more than once",
             prepare=write("p.csv", "group,prompt,prompt\nwoman,The woman was,The woman is\n")),
    BadInput("decoding prompts not UTF-8", ("decoding", "--prompts", "{tmp}/p.txt"), "p.txt is not UTF-8 text",
             prepare=write("p.txt", b"woman: The \xe9\xff woman was\n")),
    BadInput("decoding --threshold nan", ("decoding", "--threshold", "nan"), "must be a number between -1 and 1"),
    BadInput("decoding --grid temperature=nan", ("decoding", "--grid", "temperature=nan"),
             "temperature must be a finite number"),
    BadInput("decoding --grid temperature=inf", ("decoding", "--grid", "temperature=inf"),
             "temperature must be a finite number"),
    BadInput("decoding --model /etc/passwd", ("decoding", "--model", "/etc/passwd"),
             "/etc/passwd is a file, not a model folder"),
    BadInput("decoding --model <script>", ("decoding", "--model", "<script>"), "is neither a preset"),
    # endpoints (docs/endpoints.md): checked before any request; a pasted key is never repeated
    BadInput("decoding --endpoint-url without a model", ("decoding", "--endpoint-url", "http://127.0.0.1:9/v1"),
             "--endpoint-url needs --endpoint-model"),
    BadInput("decoding --endpoint-url ftp", ("decoding", "--endpoint-url", "ftp://host/v1", "--endpoint-model", "m"),
             "must start with http:// or https://"),
    BadInput("decoding --endpoint-key-env given the key itself",
             ("decoding", "--endpoint-url", "http://127.0.0.1:9/v1", "--endpoint-model", "m", "--endpoint-key-env",
              "sk-live-123-secret"), "not the key itself"),
    BadInput("decoding --endpoint NAME not configured", ("decoding", "--endpoint", "nowhere"),
             "no endpoint named 'nowhere' in endpoints.toml", env=(("FAIRNESS_LAB_ENDPOINTS", "{tmp}/endpoints.toml"),),
             prepare=write("endpoints.toml", '[endpoints.local]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')),
    BadInput("decoding endpoint that is not running", ("decoding", "--endpoint-url", "http://127.0.0.1:9/v1",
                                                       "--endpoint-model", "m", "--groups", "man"),
             "endpoint 127.0.0.1:9 cannot list its models: connection failed"),
    BadInput("cairo run --endpoint-model without a URL", ("cairo", "run", "--endpoint-model", "m"),
             "--endpoint-model and --endpoint-key-env need --endpoint-url"),
    BadInput("adapt with both --model and an endpoint", ("adapt", "--model", "gpt2", "--endpoint-url",
                                                         "http://127.0.0.1:9/v1", "--endpoint-model", "m"),
             "give either --model or an endpoint"),
    BadInput("decoding 10,000-configuration grid",
             ("decoding", "--grid", "top_k=" + ",".join(str(k) for k in range(1, 101)) + ";temperature="
              + ",".join(f"{0.01 * t:.2f}" for t in range(1, 101))),
             "10,000 decoding configurations is above the limit of 500 (this request: 5,500,000 generations, "
             "about 114 h"),
    BadInput("decoding --samples 1e9", ("decoding", "--samples", "1e9"),
             "1,000,000,000 samples per prompt is above the limit of 1,000"),
    BadInput("decoding --max-new-tokens 1e9", ("decoding", "--max-new-tokens", "1e9"),
             "1,000,000,000 max new tokens is above the limit of 512"),
    BadInput("decoding sweep above the confirmation limit",
             ("decoding", "--grid", "top_p=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9", "--samples", "100"),
             "confirm to run it anyway (--allow-large on the CLI)"),
    # issue 23's CLI battery: tracebacks, silent fallbacks and run-aways, each now one sentence
    BadInput("runs list on a store cut to half", ("runs", "list", "--store", "{tmp}/half.duckdb"),
             "is unreadable (Could not read enough bytes", prepare=truncated_store("half.duckdb")),
    BadInput("runs show on a store cut to half", ("runs", "show", "{run}", "--store", "{tmp}/half.duckdb"),
             "is unreadable", prepare=truncated_store("half.duckdb")),
    BadInput("runs export from a store cut to half",
             ("runs", "export", "{run}", "{tmp}/out.csv", "--store", "{tmp}/half.duckdb"), "is unreadable",
             prepare=truncated_store("half.duckdb")),
    BadInput("metric-bias writing into a store cut to half",
             ("metric-bias", "--format", "demo", "--metrics", "bleu", "--store", "{tmp}/half.duckdb"),
             "is unreadable", prepare=truncated_store("half.duckdb")),
    BadInput("runs list with a damaged manifest row", ("runs", "list", "--store", "{tmp}/m.duckdb"),
             "the manifest of run", prepare=damaged_manifest("m.duckdb")),
    BadInput("runs show with a damaged manifest row", ("runs", "show", "{run}", "--store", "{tmp}/m.duckdb"),
             "is not JSON; nothing was changed", prepare=damaged_manifest("m.duckdb")),
    BadInput("--store ''", ("runs", "list", "--store", ""), "--store is empty"),
    BadInput("an unreadable pairs file", ("metric-bias", "--format", "pairs", "--metrics", "bleu", "--data",
                                          UNREADABLE), "/proc/self/mem: cannot read the file (Input/output error)"),
    BadInput("metric-bias --format demo with a missing --data", ("metric-bias", "--format", "demo", "--data",
                                                                 "{tmp}/missing.jsonl"), "no such file"),
    BadInput("BERTScore --model /etc/passwd", ("metric-bias", "--format", "demo", "--metrics", "bertscore",
                                               "--model", "/etc/passwd"), "/etc/passwd is a file, not a model folder"),
    BadInput("decoding --regard-model /etc/passwd", ("decoding", "--regard-model", "/etc/passwd"),
             "--regard-model: /etc/passwd is a file"),
    BadInput("decoding prompts file of 10 MB", ("decoding", "--prompts", "{tmp}/p.txt"),
             "p.txt is 10 MB; a prompts file is at most 5 MB",
             prepare=write("p.txt", "woman: The woman was " + "x" * 10_000_000 + "\n")),
    BadInput("decoding prompt of 40 KB", ("decoding", "--prompts", "{tmp}/p.txt"),
             "characters; the limit is 2,000 (a longer prompt would not fit",
             prepare=write("p.txt", "woman: The woman was" + " word" * 8000 + "\n")),
    BadInput("decoding --grid top_k=1e20", ("decoding", "--grid", "top_k=99999999999999999999"),
             "top_k must be an integer between 1 and 1,000,000"),
    BadInput("cairo --bias-table a folder", ("cairo", "--bias-table", "{tmp}"), "is a folder"),
    BadInput("cairo --bias-table unreadable", ("cairo", "--bias-table", UNREADABLE),
             "/proc/self/mem cannot be read (Input/output error)"),
    BadInput("cairo --bias-table with n_prompts=inf", ("cairo", "--bias-table", "{tmp}/t.csv"),
             "n_prompts must be a positive finite number (got inf)",
             prepare=write("t.csv", "system,metric,prompt_set,bias,n_prompts\n" + "".join(
                 f"s{s},{m},original,0.{s},{'inf' if (s, m) == (1, 'A') else 10}\n" for s in (1, 2, 3)
                 for m in "AB"))),
    BadInput("cairo --permutations 1e9", ("cairo", "--bias-table", "{tmp}/t.csv", "--permutations",
                                          "1000000000"), "--permutations 1,000,000,000 is above the limit of 10,000 "
                                                         "(about ",
             prepare=write("t.csv", "system,metric,prompt_set,bias\n" + "".join(
                 f"s{s},{m},{name},0.{s}{k}\n" for s in (1, 2, 3) for m in "AB"
                 for k, name in enumerate(("original", "p1"))))),
    BadInput("cairo run --out into a missing folder", ("cairo", "run", "--systems", SYSTEMS, "--out",
                                                       "{tmp}/no/t.csv"), "/no does not exist; nothing was run"),
    BadInput("cairo run --max-new-tokens 100000", ("cairo", "run", "--systems", SYSTEMS, "--max-new-tokens",
                                                   "100000"), "must be between 1 and 512 (got 100,000"),
    BadInput("cairo run --seeds a", ("cairo", "run", "--systems", SYSTEMS, "--seeds", "a"),
             "--seeds must be comma-separated whole numbers"),
    BadInput("cairo run with /etc/passwd as the HONEST lexicon",
             ("cairo", "run", "--systems", SYSTEMS, "--scorer", "honest", "--scorer-option",
              "lexicon_path=/etc/passwd"), "line 1 is not a word or short phrase"),
    BadInput("vbcm --resamples 1e10", ("vbcm", "--scores", "{tmp}/s.csv", "--resamples", "10000000000"),
             "--resamples must be between 0 (no intervals) and 100,000",
             prepare=write("s.csv", "template_id,group,term,score\nt1,A,a,0.5\n")),
    BadInput("vbcm --resamples -5", ("vbcm", "--scores", "{tmp}/s.csv", "--resamples", "-5"), "(got -5)",
             prepare=write("s.csv", "template_id,group,term,score\nt1,A,a,0.5\n")),
    *(BadInput(f"vbcm score {value}", ("vbcm", "--scores", "{tmp}/s.csv", "--json"),
               f"score '{value}' is not a probability in [0, 1]",
               prepare=write("s.csv", f"template_id,group,term,score\nt1,A,a,{value}\nt1,B,b,0.5\n"))
      for value in ("inf", "-inf", "1e308", "-3", "1.5")),
    BadInput("templates import of a header-only EEC file", ("templates", "import", "--format", "eec",
                                                            "{tmp}/e.csv"), "has a header but no rows",
             prepare=write("e.csv", "ID,Sentence,Template,Person,Gender,Race,Emotion,Emotion word\n")),
    BadInput("adapt --temperature nan", ("adapt", "--temperature", "nan"),
             "temperature must be a number between 0 (greedy) and 5 (got nan)"),
    # audit-scorer (issue 29)
    BadInput("audit-scorer terms file with an empty term", ("audit-scorer", "--terms", "{tmp}/terms.txt"),
             "terms file terms.txt line 2: group 'religion' has an empty term",
             prepare=write("terms.txt", "# groups\nreligion: muslim, , christian\nage: old, young\n")),
    BadInput("audit-scorer template without a placeholder",
             ("audit-scorer", "--templates", "{tmp}/t.txt", "--format", "templates"),
             "templates file t.txt line 2 ('I like cats.') has no {person} placeholder",
             prepare=write("t.txt", "{person} is here.\nI like cats.\n")),
    BadInput("audit-scorer with a scorer that cannot score here", ("audit-scorer", "--scorer", "regard"),
             "scorer regard cannot score here"),
    BadInput("audit-scorer with an unknown scorer", ("audit-scorer", "--scorer", "judge-dredd"),
             "unknown scorer 'judge-dredd'"),
    # issue 35 §4: a threshold the scorer's column never reaches flagged nothing without a word
    BadInput("audit-scorer --threshold 2", ("audit-scorer", "--threshold", "2"),
             "the threshold 2 is outside the range of jigsaw-toxicity's column jigsaw_toxic (0 to 1), so it would "
             "flag every text or none; give one between 0 and 1"),
    BadInput("audit-scorer --scorer vader --threshold -1.5",
             ("audit-scorer", "--scorer", "vader", "--threshold", "-1.5"),
             "outside the range of vader's column vader_compound (-1 to 1)"),
    # issue 35 §4: a 2.5 MB paste held 7 GB while it became 2 million texts to judge
    BadInput("audit-scorer texts file of 1.2 MB", ("audit-scorer", "--format", "texts", "--templates",
                                                   "{tmp}/texts.txt"),
             "texts.txt: 1,200,000 characters of text; an audit reads at most 1,000,000: give fewer texts",
             prepare=write("texts.txt", "The gay man worked as a nurse at the hospital of the towns.\n" * 20_000)),
    BadInput("audit-scorer texts file of 5,000 distinct texts", ("audit-scorer", "--format", "texts",
                                                                 "--templates", "{tmp}/texts.txt"),
             "texts.txt: 5,000 distinct texts, which with each of the 50 identity terms swapped in make up to "
             "250,000 texts to judge; an audit judges at most 200,000: give at most 4,000 texts or fewer terms",
             prepare=write("texts.txt", "".join(f"The gay man number {i} was here.\n" for i in range(5000)))),
    BadInput("audit-scorer --format iptts without a file", ("audit-scorer", "--format", "iptts"),
             "--format iptts needs --templates FILE"),
    BadInput("audit-scorer IPTTS file without a Label column",
             ("audit-scorer", "--templates", "{tmp}/i.csv", "--format", "iptts"), "has no 'Label' column",
             prepare=write("i.csv", "Text,Template\ngay is fine,x\n")),
    BadInput("audit-scorer --resamples -1", ("audit-scorer", "--resamples", "-1"), "(got -1)"),
    BadInput("audit-scorer texts with no identity term", ("audit-scorer", "--templates", "{tmp}/g.txt",
                                                          "--format", "texts"),
             "none of the 2 text(s) of g.txt mentions exactly one of the 50 identity terms",
             prepare=write("g.txt", "The cat sat.\nIt rained all day.\n")),
    BadInput("audit-scorer --swap-run of a run without texts", ("audit-scorer", "--swap-run", "{run}"),
             "holds no generated texts"),
    # metric-quality: a judgments file is checked in full before anything is scored or stored
    *(BadInput(f"metric-quality judgments with {what}", ("metric-quality", "--data", "{tmp}/j.csv",
                                                          "--metrics", "bleu", "--json"), phrase,
               prepare=write("j.csv", JUDGMENTS_HEADER + "".join(rows)))
      for what, rows, phrase in JUDGMENTS_CASES),
    BadInput("metric-quality --data a missing file", ("metric-quality", "--data", "{tmp}/none.csv"),
             "none.csv: no such file or folder"),
    BadInput("metric-quality --data a folder without REALSumm files", ("metric-quality", "--data", "{tmp}/d"),
             "has no realsumm_documents.jsonl", prepare=write("d/notes.txt", "x")),
    BadInput("metric-quality unknown metric", ("metric-quality", "--data", "realsumm", "--metrics", "blue"),
             "unknown metric(s) blue"),
    BadInput("metric-quality unknown stored column", ("metric-quality", "--data", "realsumm", "--stored-scores",
                                                      "BLEURT"), "realsumm has no stored score column 'BLEURT'"),
    BadInput("metric-quality --resamples -1", ("metric-quality", "--data", "realsumm", "--resamples", "-1"),
             "--resamples must be a whole number between 0 (no interval) and 100,000 (got '-1')"),
    BadInput("metric-quality --rule corpus", ("metric-quality", "--data", "realsumm", "--rule", "corpus"),
             "invalid choice: 'corpus'"),
    BadInput("metric-quality --option a metric does not take", ("metric-quality", "--data", "realsumm", "--metrics",
                                                                "bleu", "--option", "bleu.idf=true"),
             "bleu takes no option 'idf'; its options are: config"),
    BadInput("metric-quality --option without a metric name", ("metric-quality", "--data", "realsumm", "--metrics",
                                                               "bleu", "--option", "idf=true"),
             "must look like METRIC.OPTION=VALUE"),
    BadInput("metric-quality --option for a metric not chosen", ("metric-quality", "--data", "realsumm", "--metrics",
                                                                 "bleu", "--option", "chrf.config=default"),
             "an option names 'chrf', which is not among the chosen metrics (bleu)"),
    # mitigate (issue 28): adapters, presets, requests; nothing trained, scored or written
    BadInput("mitigate evaluate with an unknown adapter", ("mitigate", "evaluate", "--adapter", "no-such-adapter"),
             "no adapter 'no-such-adapter'"),
    BadInput("mitigate evaluate with an adapter of another backbone",
             ("mitigate", "evaluate", "--metric", "bertscore", "--model", "all-minilm-l6-v2", "--adapter",
              "bertscore-tiny-gender-0000000000"), "was trained in the backbone tiny", prepare=tiny_adapter,
             env=(("FAIRNESS_LAB_CACHE", "{tmp}/cache"),)),
    BadInput("metric-bias --adapter of a backbone no chosen metric uses",
             ("metric-bias", "--format", "demo", "--metrics", "bertscore", "--adapter",
              "bertscore-tiny-gender-0000000000"), "which none of the chosen model-based metrics uses",
             prepare=tiny_adapter, env=(("FAIRNESS_LAB_CACHE", "{tmp}/cache"),)),
    BadInput("mitigate evaluate with nothing to compare", ("mitigate", "evaluate"), "give an adapter (--adapter ID"),
    BadInput("mitigate train with a preset too long for this machine", ("mitigate", "train", "--preset",
                                                                         "paper-bertscore-base"),
             "above the limit of 4 h 00 min"),
    BadInput("mitigate train with another metric's preset", ("mitigate", "train", "--preset",
                                                               "paper-bartscore-base"), "is for another metric"),
    BadInput("mitigate train for race", ("mitigate", "train", "--attribute", "race"), "for gender only"),
    BadInput("mitigate train an n-gram metric", ("mitigate", "train", "--metric", "bleu"),
             "trained here for bertscore, bartscore, bleurt"),
    BadInput("mitigate train --steps 0", ("mitigate", "train", "--steps", "0"), "--steps must be a whole number"),
    BadInput("mitigate train --max-hours nan", ("mitigate", "train", "--max-hours", "nan"),
             "--max-hours must be a positive number"),
    BadInput("mitigate import of a text file", ("mitigate", "import", "{tmp}/notes.txt"),
             "notes.txt is not a safetensors file", prepare=write("notes.txt", "an adapter, honestly")),
    BadInput("mitigate export of an unknown adapter", ("mitigate", "export", "nope", "--out", "{tmp}/a.safetensors"),
             "no adapter 'nope'"),
    BadInput("metric-bias --adapter unknown", ("metric-bias", "--format", "demo", "--metrics", "bertscore",
                                               "--adapter", "nope"), "no adapter 'nope'"),
    BadInput("metric-quality --adapter with n-gram metrics only", ("metric-quality", "--data", "realsumm",
                                                                    "--metrics", "bleu", "--adapter", "nope"),
             "--adapter applies to model-based metrics"),
    BadInput("metric-quality --adapter unknown", ("metric-quality", "--data", "realsumm", "--metrics", "bertscore",
                                                  "--adapter", "nope"), "no adapter 'nope'"),
    BadInput("metric-quality --model for n-gram metrics only", ("metric-quality", "--data", "realsumm",
                                                                "--metrics", "bleu", "--model", "x"),
             "--model applies to model-based metrics"),
    # check (issue 34): a bad spec, a run it names that is not there, a report it cannot write; nothing runs
    BadInput("check with a missing spec", ("check", "{tmp}/none.toml"), "none.toml does not exist"),
    BadInput("check with a spec that is not TOML", ("check", "{tmp}/s.toml"), "s.toml is not valid TOML",
             prepare=write("s.toml", "[check\nname = 1\n")),
    BadInput("check with a spec of another encoding", ("check", "{tmp}/s.toml"), "s.toml is not UTF-8 text",
             prepare=write("s.toml", "[check]\nname = 'caf\u00e9'\n".encode("latin-1"))),
    BadInput("check with an unknown key", ("check", "{tmp}/s.toml"),
             "s.toml: [criteria 1] has no key 'upper_at_mots' (did you mean 'upper_at_most'?)",
             prepare=write("s.toml", CHECK_AUDIT.replace("value_at_most", "upper_at_mots"))),
    BadInput("check with a threshold that is not a number", ("check", "{tmp}/s.toml"),
             "[criteria 1] value_at_most must be a finite number (got 'low')",
             prepare=write("s.toml", CHECK_AUDIT.replace("0.3", "'low'"))),
    BadInput("check with a group the study does not have", ("check", "{tmp}/s.toml"),
             "[criteria 1] group 'gendr' is not in the decoding study here (did you mean 'gender'?)",
             prepare=write("s.toml", CHECK_DECODING.replace("gender", "gendr"))),
    BadInput("check with no criterion", ("check", "{tmp}/s.toml"), "s.toml names no criterion",
             prepare=write("s.toml", "[check]\nname = 'x'\n")),
    BadInput("check with word lists but no counterfactual", ("check", "{tmp}/s.toml"),
             "[decoding] word_lists is for counterfactual prompts",
             prepare=write("s.toml", CHECK_DECODING.replace("[decoding]", "[decoding]\nword_lists = 's.toml'"))),
    BadInput("check with unequal word lists", ("check", "{tmp}/s.toml"),
             "the groups list different numbers of words (a 2, b 1)",
             prepare=both(write("w.txt", "[x]\na: he, him\nb: she\n"), write("s.toml", CHECK_DECODING.replace(
                 "[decoding]", "[decoding]\ncounterfactual = ['x']\nword_lists = 'w.txt'")))),
    BadInput("check --baseline of an unknown id", ("check", "{tmp}/s.toml", "--baseline", "nope"),
             "--baseline 'nope': no run or check with that id",
             prepare=write("s.toml", CHECK_DECODING + CHECK_RELATIVE)),
    BadInput("check --baseline of a run of another kind", ("check", "{tmp}/s.toml", "--baseline", "{run}"),
             "is a test-squares run; give a generation run", prepare=write("s.toml", CHECK_DECODING + CHECK_RELATIVE)),
    BadInput("check --baseline empty", ("check", "{tmp}/s.toml", "--baseline", " "), "--baseline is empty",
             prepare=write("s.toml", CHECK_AUDIT)),
    BadInput("check with generations of an unknown run", ("check", "{tmp}/s.toml"),
             "[system] generations) 'nope': no run or check with that id",
             prepare=write("s.toml", "[system]\ngenerations = 'nope'\n" + CHECK_RATE)),
    BadInput("check --junit into a missing folder", ("check", "{tmp}/s.toml", "--junit", "{tmp}/no/j.xml"),
             "/no does not exist; nothing was run", prepare=write("s.toml", CHECK_AUDIT)),
    BadInput("check --junit not xml", ("check", "{tmp}/s.toml", "--junit", "{tmp}/j.txt"),
             "give a file name ending in .xml", prepare=write("s.toml", CHECK_AUDIT)),
    # counterfactual prompts (issue 34)
    BadInput("counterfactual with a missing prompts file", ("counterfactual", "--prompts", "{tmp}/none.txt"),
             "is neither regard, bold:<domain> nor an existing file"),
    BadInput("counterfactual with an unknown attribute", ("counterfactual", "--prompts", "regard", "--attribute",
                                                         "gendr"), "have no attribute 'gendr'"),
    BadInput("counterfactual with prompts naming no group", ("counterfactual", "--prompts", "{tmp}/p.txt",
                                                            "--attribute", "gender"),
             "none of the 2 prompt(s) names exactly one group of gender",
             prepare=write("p.txt", "The cat\nIt rained\n")),
    BadInput("counterfactual with word lists not UTF-8", ("counterfactual", "--prompts", "regard", "--word-lists",
                                                         "{tmp}/w.txt"), "w.txt is not UTF-8 text",
             prepare=write("w.txt", "[g]\na: caf\u00e9\nb: x\n".encode("latin-1"))),
    BadInput("counterfactual with a word in two groups", ("counterfactual", "--prompts", "regard", "--word-lists",
                                                         "{tmp}/w.txt"), "the word 'he' is in group 'a' and in 'b'",
             prepare=write("w.txt", "[g]\na: he\nb: he\n")),
    BadInput("counterfactual --out into a missing folder", ("counterfactual", "--prompts", "regard", "--out",
                                                           "{tmp}/no/o.json"), "give a file in an existing folder"),
    BadInput("decoding --word-lists without --counterfactual", ("decoding", "--word-lists", "{tmp}/w.txt"),
             "--word-lists goes with --counterfactual ATTRIBUTE"),
    # groups of several attributes (issue 46): crossed counterfactuals and several group columns
    BadInput("counterfactual --cross with one attribute",
             ("counterfactual", "--prompts", "regard", "--attribute", "gender", "--cross"),
             "crossing needs two or more attributes"),
    BadInput("counterfactual --cross with prompts naming one attribute only",
             ("counterfactual", "--prompts", "{tmp}/p.txt", "--attribute", "gender", "--attribute", "race",
              "--cross"), "names one group of each of gender, race",
             prepare=write("p.txt", "The woman said\nHe was\n")),
    BadInput("decoding --cross without --counterfactual", ("decoding", "--cross"),
             "--cross goes with two or more --counterfactual ATTRIBUTE"),
    BadInput("runs import generations with a group column named twice",
             ("runs", "import", "generations", "{tmp}/g.csv", "--group-column", "gender", "--group-column", "Gender"),
             "the group column 'gender' is named twice", prepare=write("g.csv", GOOD_IMPORT)),
    BadInput("runs import generations with an attribute column the file lacks",
             ("runs", "import", "generations", "{tmp}/g.csv", "--group-column", "group", "--group-column", "race"),
             "g.csv has no 'race' column", prepare=write("g.csv", GOOD_IMPORT)),
    BadInput("runs import generations with several group columns and a mapping",
             ("runs", "import", "generations", "{tmp}/g.csv", "--group-column", "group", "--group-column", "race",
              "--groups-map", "{tmp}/m.csv"), "give them without a prompt -> group mapping",
             prepare=both(write("g.csv", GOOD_IMPORT), write("m.csv", "prompt,group\na,b\n"))),
    BadInput("runs import generations with an attribute value holding the joiner",
             ("runs", "import", "generations", "{tmp}/g.csv", "--group-column", "group", "--group-column", "race"),
             "g.csv line 2: field 'race' holds '×'",
             prepare=write("g.csv", "prompt,generation,group,race\nThe man was,kind.,man,a × b\n")),
    # runs import generations (issue 34): the whole file is checked before anything is stored
    *(BadInput(f"runs import generations with {what}", ("runs", "import", "generations", "{tmp}/g.csv"), phrase,
               prepare=write("g.csv", content)) for what, content, phrase in IMPORT_CASES),
    BadInput("runs import generations of a missing file", ("runs", "import", "generations", "{tmp}/none.csv"),
             "none.csv does not exist"),
    BadInput("runs import generations of a huge file", ("runs", "import", "generations", "{tmp}/big.csv"),
             "big.csv is 101 MB; an import is at most 100 MB", prepare=sparse("big.csv", 101_000_000)),
    BadInput("runs import generations of lm-eval log-likelihoods", ("runs", "import", "generations", "{tmp}/s.jsonl"),
             "s.jsonl line 1 holds log-likelihood requests", prepare=write("s.jsonl", LM_EVAL_LOGLIKELIHOOD)),
    BadInput("runs import generations with a mapping without a group column",
             ("runs", "import", "generations", "{tmp}/g.csv", "--groups-map", "{tmp}/m.csv"),
             "the mapping m.csv needs a header with 'prompt' and 'group' columns",
             prepare=both(write("g.csv", GOOD_IMPORT), write("m.csv", "prompt,kind\na,b\n"))),
    BadInput("runs import generations with an unknown scorer", ("runs", "import", "generations", "{tmp}/g.csv",
                                                               "--scorers", "vadr"), "vadr",
             prepare=write("g.csv", GOOD_IMPORT)),
    BadInput("runs import generations --resamples 5", ("runs", "import", "generations", "{tmp}/g.csv", "--resamples",
                                                      "5"), "--resamples must be between 100 and 100,000 (got 5)"),
    # plan (issue 33 §2): nothing is read past the first problem, nothing is written
    BadInput("plan of an unknown run", ("plan", "nope", "--effect", "0.05"), "no run 'nope' in"),
    BadInput("plan of a kind it cannot plan", ("plan", "{run}", "--effect", "0.05"),
             "is a test-squares run, which the planner cannot plan from"),
    BadInput("plan against an unknown run", ("plan", "{run}", "--effect", "0.05", "--against", "nope"),
             "no run 'nope' in"),
    BadInput("plan with an effect of 0", ("plan", "{run}", "--effect", "0"), "the effect must be a positive number "
                                                                              "(got 0.0)"),
    BadInput("plan with a negative effect", ("plan", "{run}", "--effect", "-0.1"), "the effect must be a positive "
                                                                                   "number (got -0.1)"),
    BadInput("plan with an effect that is not a number", ("plan", "{run}", "--effect", "nan"),
             "the effect must be a positive number (got nan)"),
    BadInput("plan with a word for the effect", ("plan", "{run}", "--effect", "big"), "invalid float value: 'big'"),
    BadInput("plan with a power of 1.2", ("plan", "{run}", "--effect", "0.05", "--power", "1.2"),
             "the power must be above 0.05"),
    BadInput("plan with a power of 0", ("plan", "{run}", "--effect", "0.05", "--power", "0"),
             "and at most 0.99 (got 0.0)"),
    BadInput("plan with a term of a run that is not an audit", ("plan", "{run}", "--effect", "0.05", "--term", "gay"),
             "--term goes with an audit run"),
]


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            for path in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def template_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("template") / "runs.duckdb"
    outcome = run_task(make_task(), RunStore(path))
    return path, outcome.run_id


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_gets_one_sentence_and_changes_nothing(
    case: BadInput, template_store: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store.duckdb"
    store.write_bytes(template_store[0].read_bytes())
    workspace = Workspace(tmp=tmp_path, store=store, run=template_store[1])
    monkeypatch.setenv("FAIRNESS_LAB_STORE", str(store))
    for name, value in case.env:
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    cleanup = case.prepare(workspace) if case.prepare else None
    before = _snapshot(tmp_path)
    argv = [part.format(tmp=tmp_path, store=store, run=workspace.run) for part in case.argv]
    try:
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse refuses choices itself, also with exit code 2
            code = exit_.code
    finally:
        if cleanup:
            cleanup()
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith(("error:", "usage:")) or "error:" in last, err
    assert case.phrase in last, err
    if not case.argv[0].startswith("metric-bias"):  # metric-bias may print progress lines before failing
        assert len([line for line in err.splitlines() if "error" in line]) == 1
    assert _snapshot(tmp_path) == before
    assert not os.path.exists(tmp_path / "store.duckdb.wal")
