"""A classroom on one server: N sessions on the decoding page, each moving the top-p slider.

Starts the app as a subprocess (a free port, `FAIRNESS_LAB_STORE` in a temporary folder) and drives N
concurrent sessions over Streamlit's own websocket protocol (`/_stcore/stream`, the protobuf messages the
browser sends: a rerun with the slider's new widget state), so thirty sessions cost the client side a few
coroutines rather than thirty browsers. Each session opens the decoding page, waits for its first result,
then moves the top-p slider `--moves` times (default 5), every `--interval` seconds drawn at random (default
15–30 s). Half the sessions ask for shared settings (the same top-p values, seed 0: identical requests,
which the server may share or read back from the store), half for their own (a seed of their own).

Per N it prints one line:

    sessions N: p50 X s, p95 Y s, max Z s, errors E, lost L, shared S, peak RSS M MiB, final RSS F MiB

- time: from sending a move to the page's measured result for that setting (the line with the diversity
  and disparity of the new setting), per move;
- errors: exception elements the page sent plus tracebacks in the server's log;
- lost: moves with no result within `--timeout` seconds or whose run ended without one;
- shared: results the page said came from the run store or from another session's identical request;
- peak / final RSS: the server's resident memory while the sessions ran, and `--settle` seconds after they
  all closed. A second, indented line gives the start RSS (after one warm-up visit that loaded the
  model, before the sessions), the moves that saw a queue message, and peak threads;
- where a move's time goes (the server runs with FAIRNESS_LAB_TIMING_LOG=1 and logs its live jobs' time in the
  queue and running, each sampler call's model time and each shard's scorer time): p50/p95 of each, and the rest
  of a move (page script, store, transport) as the median move minus the median queue wait and job run;
- the floor (issue 45 §1): the server's CPU for the sessions, per computed move, the share of the machine it got
  when busy, and the wall time that work needs at that share against the time the moves came over;
- the server's CPU by thread (the server names its OS threads after its Python threads with the timing log on):
  model workers, page scripts, the event loop, the others by name, what ended between two readings, and the bench's
  own clients' CPU beside it (here on the same machine; a classroom's browsers run on the students' machines).

    .venv/bin/python -m bench.classroom --sessions 1 10 --interval 3,6
    .venv/bin/python -m bench.classroom --sessions 30 --app-dir /work/wt/classroom-base   # another checkout
    .venv/bin/python -m bench.classroom --sessions 30 --load 4   # with 4 busy-loop processes beside the server
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
TOP_P_VALUES = (0.5, 0.6, 0.7, 0.8, 0.95, 0.4, 0.3)
#: the page's status line once a setting's measures are in (decoding page, live mode)
RESULT = re.compile(r"diversity \(trigram entropy\)")
SHARED = re.compile(r"served from the run store|shared with")
QUEUED = re.compile(r"ahead of yours|next in the queue")


@dataclass
class Session:
    index: int
    shared: bool
    times: list[float] = field(default_factory=list)
    errors: int = 0
    lost: int = 0
    shared_results: int = 0
    queue_messages: int = 0
    error_texts: list[str] = field(default_factory=list)
    sent: list[float] = field(default_factory=list)  # when each move was sent (monotonic)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_and_threads(pid: int) -> tuple[float, int]:
    """(resident MiB, threads) of a process, from /proc."""
    rss, threads = 0.0, 0
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


def read_stat(path: str) -> tuple[str, float]:
    """(name, user + system CPU seconds) from a /proc stat file (a process's or one of its threads')."""
    with open(path) as stat:
        text = stat.read()
    fields = text.rsplit(")", 1)[1].split()
    return text[text.index("(") + 1:text.rindex(")")], (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process (all its threads) has used, from /proc."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        return read_stat(f"/proc/{pid}/stat")[1]
    return float("nan")


def thread_cpu(pid: int) -> dict[int, tuple[str, float]]:
    """{thread id: (OS thread name, user + system CPU seconds)} of a process's live threads, from /proc."""
    found: dict[int, tuple[str, float]] = {}
    tids: list[str] = []
    with contextlib.suppress(OSError):
        tids = os.listdir(f"/proc/{pid}/task")
    for tid in tids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            found[int(tid)] = read_stat(f"/proc/{pid}/task/{tid}/stat")
    return found


#: OS thread names (the server names its Python threads with the timing log on: ui/jobs.py) -> what they do
THREAD_KINDS = (("model-worker", "model workers"), ("ScriptRunner", "page scripts"), ("MainThread", "event loop"),
                ("fairness-lab-s", "sampling ahead"), ("python", "unnamed (started from C: torch/OpenMP helpers)"))


def thread_kind(name: str) -> str:
    return next((kind for prefix, kind in THREAD_KINDS if name.startswith(prefix)), "other threads")


class Monitor(threading.Thread):
    """Samples the server's memory and threads twice a second, and its CPU use (whole and per thread) each second."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_rss = 0.0
        self.peak_threads = 0
        self.cpu_rates: list[float] = []  # cores the server used, each second
        #: thread id -> [name, CPU when first seen (0 for a thread born after the start), CPU when last seen]
        self.threads: dict[int, list] = {}
        self.stop = threading.Event()

    def sample_threads(self) -> None:
        for tid, (name, cpu) in thread_cpu(self.pid).items():
            seen = self.threads.setdefault(tid, [name, 0.0, 0.0])
            seen[0], seen[2] = name, cpu

    def cpu_by_name(self) -> dict[str, float]:
        """CPU seconds since the start per thread name; a thread's last second before it ended is not counted."""
        names: dict[str, float] = {}
        for name, first, last in self.threads.values():
            names[name] = names.get(name, 0.0) + last - first
        return names

    def cpu_by_kind(self) -> dict[str, float]:
        """`cpu_by_name` summed per kind of thread (`thread_kind`)."""
        kinds: dict[str, float] = {}
        for name, seconds in self.cpu_by_name().items():
            kinds[thread_kind(name)] = kinds.get(thread_kind(name), 0.0) + seconds
        return kinds

    def other_threads(self) -> dict[str, float]:
        """`cpu_by_name` of the threads of no known kind."""
        return {name: seconds for name, seconds in self.cpu_by_name().items() if thread_kind(name) == "other threads"}

    def run(self) -> None:
        self.threads = {tid: [name, cpu, cpu] for tid, (name, cpu) in thread_cpu(self.pid).items()}  # from the start
        last_cpu, last_at, tick = cpu_seconds(self.pid), time.monotonic(), 0
        while not self.stop.is_set():
            rss, threads = rss_and_threads(self.pid)
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_threads = max(self.peak_threads, threads)
            self.stop.wait(0.5)
            tick += 1
            if tick % 2 == 0:
                cpu, at = cpu_seconds(self.pid), time.monotonic()
                self.cpu_rates.append((cpu - last_cpu) / max(at - last_at, 1e-6))
                last_cpu, last_at = cpu, at
                self.sample_threads()


def floor_line(work_s: float, rates: list[float], sessions: list[Session], moves: int) -> str:
    """The floor under load (issue 45 §1): the server's CPU work for the sessions' moves, the share of the machine it
    gets when it has work (the 90th percentile of its per-second CPU use), and what that share allows."""
    sent = sorted(t for s in sessions for t in s.sent)
    if not sent or not rates or work_s != work_s:
        return "    floor: not measured"
    share = percentile(rates, 90)
    if not share > 0:
        return "    floor: not measured (the server used no CPU in any second)"
    window = sent[-1] - sent[0]
    # what it computed: the moves not answered from the store or another session's job, and the first visits (the
    # shared sessions' one setting, once; each other session's own seed)
    first_visits = int(any(s.shared for s in sessions)) + sum(not s.shared for s in sessions)
    distinct = max(1, moves - sum(s.shared_results for s in sessions) + first_visits)
    need = work_s / share
    return (f"    floor: the server used {work_s:.0f} s of CPU for {moves} moves and {len(sessions)} first visits "
            f"({distinct} computed: {work_s / distinct:.2f} s each); its share of the machine when busy "
            f"{share:.2f} cores (p90 of its per-second use); at that share the work needs {need:.0f} s of wall "
            f"against the {window:.0f} s the moves were sent over (a backlog of at least "
            f"{max(0.0, need - window):.0f} s by the last move); one computed move alone at that share "
            f"{work_s / distinct / share:.1f} s")


def cpu_split_line(work_s: float, by_kind: dict[str, float], client_s: float,
                   others: dict[str, float] | None = None, sessions: int = 30) -> str:
    """Where the server's CPU went, by kind of thread (the largest of the other threads by name), and the bench's own
    clients' CPU (on the same machine here; a classroom's browsers run on the students' machines)."""
    counted = sum(by_kind.values())
    named = sorted((others or {}).items(), key=lambda item: -item[1])[:4]
    detail = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in named if seconds >= 0.5)
    parts = [f"{kind} {seconds:.0f} s" + (f" ({detail})" if kind == "other threads" and detail else "")
             for kind, seconds in sorted(by_kind.items(), key=lambda item: -item[1]) if seconds >= 0.5]
    return (f"    server CPU by thread: {', '.join(parts) or 'none'}; not attributed (threads' last second before "
            f"they ended) {max(0.0, work_s - counted):.0f} s; the bench's own {sessions}-session clients (and its "
            f"/proc readings) used {client_s:.0f} s of CPU beside it")


class Client:
    """One browser session spoken over Streamlit's websocket protocol."""

    def __init__(self, port: int, query: str) -> None:
        self.url = f"ws://127.0.0.1:{port}/_stcore/stream"
        self.query = query
        self.ws = None
        self.slider_id: str | None = None
        #: number inputs' and sliders' current values, sent back with every rerun as the browser does (a widget
        #: left out of a rerun falls back to its default: a seed restored from the URL would be lost)
        self.widgets: dict[str, tuple[str, object]] = {}

    async def connect(self) -> None:
        import websockets

        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=2**26,
                                           open_timeout=60, ping_interval=None)

    async def rerun(self, widgets: dict[str, float] | None = None) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query
        state.page_name = "decoding"  # the page's URL path; the app's navigation resolves it on every rerun
        self.widgets.update({widget_id: ("slider", [value]) for widget_id, value in (widgets or {}).items()})
        values = dict(self.widgets)
        for widget_id, (kind, value) in values.items():
            widget = state.widget_states.widgets.add()
            widget.id = widget_id
            if kind == "slider":
                widget.double_array_value.data.extend(value)  # type: ignore[arg-type]
            elif kind == "int":
                widget.int_value = int(value)  # type: ignore[call-overload]
            else:
                widget.double_value = float(value)  # type: ignore[arg-type]
        await self.ws.send(message.SerializeToString())

    async def run_until_finished(self, session: Session, deadline: float) -> tuple[bool, bool, bool]:
        """Read messages until the script run ends: (finished, had a result, result was shared)."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        result = shared = queued = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False, result, shared
            try:
                raw = await asyncio.wait_for(self.ws.recv(), timeout=left)
            except TimeoutError:
                return False, result, shared
            message = ForwardMsg()
            message.ParseFromString(raw)
            kind = message.WhichOneof("type")
            if kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                which = element.WhichOneof("type")
                # like the browser: a widget's value is its default when first seen, then what the server sets
                # (set_value) or the user moves; a plain redraw does not change it
                if which == "slider" and not element.slider.options:
                    slider = element.slider
                    if slider.set_value or slider.id not in self.widgets:
                        self.widgets[slider.id] = ("slider", list(slider.value if slider.set_value else slider.default))
                    if slider.id.endswith("live_top_p"):
                        self.slider_id = slider.id
                elif which == "number_input":
                    number = element.number_input
                    if number.set_value or number.id not in self.widgets:
                        value = number.value if number.set_value else number.default
                        self.widgets[number.id] = ("int" if number.data_type == number.INT else "float", value)
                elif which == "exception":
                    session.errors += 1
                    session.error_texts.append(f"{element.exception.type}: {element.exception.message}"[:200])
                elif which == "markdown" or which == "alert":
                    body = element.markdown.body if which == "markdown" else element.alert.body
                    if RESULT.search(body):
                        result = True
                        shared = shared or bool(SHARED.search(body))

                    if QUEUED.search(body) and not queued:
                        queued = True  # this move waited in the queue (counted once per move)
                        session.queue_messages += 1
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(message.script_finished)
                if status in ("FINISHED_SUCCESSFULLY", "FINISHED_WITH_COMPILE_ERROR"):
                    return True, result, shared
                if status == "FINISHED_EARLY_FOR_RERUN":
                    return True, result, shared


async def drive(session: Session, port: int, moves: int, interval: tuple[float, float], timeout: float,
                rng: random.Random) -> None:
    query = "seed=0" if session.shared else f"seed={1000 + session.index}"
    client = Client(port, query)
    try:
        await client.connect()
        await client.rerun()
        finished, result, _ = await client.run_until_finished(session, time.monotonic() + timeout * 3)
        session.queue_messages = 0  # count the moves that waited, not the first visit
        if client.slider_id is None:
            session.lost += moves
            session.error_texts.append("the decoding page never showed the top-p slider")
            return
        values = list(TOP_P_VALUES)
        if not session.shared:
            rng.shuffle(values)
        for move in range(moves):
            await asyncio.sleep(rng.uniform(*interval))
            value = values[move % len(values)]
            sent = time.monotonic()
            session.sent.append(sent)
            await client.rerun({client.slider_id: value})
            finished, result, shared = await client.run_until_finished(session, sent + timeout)
            if finished and result:
                session.times.append(time.monotonic() - sent)
                session.shared_results += int(shared)
            else:
                session.lost += 1
    except Exception as error:  # a dropped connection: the rest of this session's moves are lost
        session.errors += 1
        session.error_texts.append(f"{type(error).__name__}: {error}"[:200])
        session.lost += moves - len(session.times) - session.lost
    finally:
        if client.ws is not None:
            with contextlib.suppress(Exception):
                await client.ws.close()


async def warm_up(port: int, timeout: float) -> None:
    """One visit to the decoding page (loads the generator and scorers), then it leaves."""
    client = Client(port, "seed=9999")
    await client.connect()
    try:
        await client.rerun()
        await client.run_until_finished(Session(-1, shared=False), time.monotonic() + timeout * 3)
    finally:
        await client.ws.close()


async def classroom(n: int, port: int, moves: int, interval: tuple[float, float], timeout: float,
                    seed: int) -> list[Session]:
    rng = random.Random(seed)
    sessions = [Session(index, shared=index % 2 == 0) for index in range(n)]
    tasks = []
    for session in sessions:
        tasks.append(asyncio.create_task(drive(session, port, moves, interval, timeout,
                                               random.Random(rng.random()))))
        await asyncio.sleep(0.2)  # students arrive over a few seconds, not in one instant
    await asyncio.gather(*tasks)
    return sessions


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def wait_healthy(port: int, server: subprocess.Popen, limit_s: float = 120) -> None:
    import urllib.request

    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("the app exited before it was healthy")
        with contextlib.suppress(Exception), urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                                                    timeout=2) as reply:
            if reply.status == 200:
                return
        time.sleep(0.5)
    raise RuntimeError("the app did not become healthy")


def run_one(n: int, args: argparse.Namespace) -> str:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "server.log"
        env = dict(os.environ, FAIRNESS_LAB_STORE=str(Path(tmp) / "classroom.duckdb"), HF_HUB_OFFLINE="1",
                   TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1", FAIRNESS_LAB_TIMING_LOG="1")
        with open(log_path, "w") as log:
            server = subprocess.Popen(
                [sys.executable, "-m", "ui.serve", "--server.headless", "true",
                 "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats",
                 "false", "--server.fileWatcherType", "none"],
                cwd=args.app_dir, env=env, stdout=log, stderr=subprocess.STDOUT)
        monitor = Monitor(server.pid)
        try:
            try:
                wait_healthy(port, server)
            except RuntimeError as error:
                raise RuntimeError(f"{error}; the server's log ends:\n{log_path.read_text()[-3000:]}") from None
            asyncio.run(warm_up(port, args.timeout))  # the teacher opens the page first: the model is loaded
            start_rss, _ = rss_and_threads(server.pid)
            monitor.start()
            work_start, client_start = cpu_seconds(server.pid), time.process_time()
            sessions = asyncio.run(classroom(n, port, args.moves, args.interval, args.timeout, args.seed))
            work_s, client_s = cpu_seconds(server.pid) - work_start, time.process_time() - client_start
            monitor.sample_threads()
            by_kind, others = monitor.cpu_by_kind(), monitor.other_threads()  # the sessions' CPU, not the settle's
            settle_rss = []  # sessions closed: let the server let go of them (RSS every 15 s meanwhile)
            settle_start = time.monotonic()
            while time.monotonic() - settle_start < args.settle:
                time.sleep(min(15.0, args.settle - (time.monotonic() - settle_start)))
                settle_rss.append((time.monotonic() - settle_start, rss_and_threads(server.pid)[0]))
            final_rss, final_threads = rss_and_threads(server.pid)
        finally:
            monitor.stop.set()
            server.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(20)
            if server.poll() is None:
                server.kill()
        log_text = log_path.read_text(errors="replace")
    times = sorted(t for s in sessions for t in s.times)
    server_errors = log_text.count("Traceback (most recent call last)")
    errors = sum(s.errors for s in sessions) + server_errors
    lost = sum(s.lost for s in sessions)
    shared = sum(s.shared_results for s in sessions)
    line = (f"sessions {n}: p50 {percentile(times, 50):.1f} s, p95 {percentile(times, 95):.1f} s, "
            f"max {max(times, default=float('nan')):.1f} s, errors {errors}, lost {lost}, shared {shared}, "
            f"peak RSS {monitor.peak_rss:.0f} MiB, final RSS {final_rss:.0f} MiB")
    detail = (f"    start RSS {start_rss:.0f} MiB, results {len(times)} of {n * args.moves}, moves that waited in the "
              f"queue {sum(s.queue_messages for s in sessions)}, peak threads {monitor.peak_threads}, final threads "
              f"{final_threads}, server tracebacks {server_errors}")
    detail += "\n" + breakdown(log_text, times)
    detail += "\n" + floor_line(work_s, monitor.cpu_rates, sessions, len(times))
    detail += "\n" + cpu_split_line(work_s, by_kind, client_s, others, sessions=n)
    if len(settle_rss) > 1:
        detail += "\n    RSS after the sessions closed: " + ", ".join(f"{t:.0f} s {r:.0f} MiB" for t, r in settle_rss)
    texts = sorted({text for s in sessions for text in s.error_texts})
    if texts:
        detail += "\n    " + "\n    ".join(texts[:5])
    if server_errors and args.show_log:
        detail += "\n" + log_text[-3000:]
    return line + "\n" + detail


TIMING = re.compile(r"TIMING (job|model|scorers) (.*)")


def breakdown(log_text: str, move_times: list[float]) -> str:
    """'where a move's time goes' from the server's TIMING lines (live jobs only; the warm-up visit included)."""
    found: dict[str, list[dict[str, str]]] = {"job": [], "model": [], "scorers": []}
    for kind, fields in TIMING.findall(log_text):
        found[kind].append(dict(field.split("=", 1) for field in fields.split()))
    live = [f for f in found["job"] if f.get("lane") == "live"]
    queue = [float(f["queue_s"]) for f in live]
    run = [float(f["run_s"]) for f in live]
    model = [float(f["seconds"]) for f in found["model"]]
    rows = [int(f["rows"]) for f in found["model"]]
    scorers = [float(f["seconds"]) for f in found["scorers"]]

    def spread(values: list[float]) -> str:
        return f"p50 {percentile(values, 50):.2f} s / p95 {percentile(values, 95):.2f} s" if values else "none"

    rest = (statistics.median(move_times) - statistics.median(queue) - statistics.median(run)
            if move_times and queue and run else float("nan"))
    return (f"    where a move's time goes: queue {spread(queue)}; job run {spread(run)} (model calls: {len(model)}, "
            f"median {statistics.median(rows) if rows else 0:.0f} rows, {spread(model)}; scorers {spread(scorers)}); "
            f"page, store and transport ~{rest:.2f} s (median move - median queue - median run)")


def parse_interval(text: str) -> tuple[float, float]:
    low, _, high = text.partition(",")
    low_s, high_s = float(low), float(high or low)
    if not 0 <= low_s <= high_s:
        raise argparse.ArgumentTypeError(f"--interval {text!r}: give 'low,high' seconds with 0 <= low <= high")
    return low_s, high_s


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.classroom", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1], help="N (several: one server each)")
    parser.add_argument("--moves", type=int, default=5, help="slider moves per session (default 5)")
    parser.add_argument("--interval", type=parse_interval, default=(15.0, 30.0),
                        help="seconds between moves, 'low,high' (default 15,30)")
    parser.add_argument("--timeout", type=float, default=180.0, help="a move with no result after this is lost")
    parser.add_argument("--settle", type=float, default=15.0, help="seconds after the sessions close before final RSS")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--app-dir", type=Path, default=REPO_ROOT, help="the checkout whose app.py is served")
    parser.add_argument("--show-log", action="store_true", help="print the server log's tail when it has tracebacks")
    parser.add_argument("--load", type=int, default=0,
                        help="busy-loop processes running beside the server (bench.thread_policy's load generator)")
    args = parser.parse_args(argv)
    from bench.thread_policy import busy_loops

    with busy_loops(args.load):
        for n in args.sessions:
            print(f"{args.load} busy-loop processes beside the server; load average {os.getloadavg()[0]:.1f}",
                  flush=True)
            print(run_one(n, args), flush=True)


if __name__ == "__main__":
    main()
