"""Per-attempt overhead of the orchestrator against the floor, in one run.

A plan of N tasks (milestone markdown, no gates) is run with `--agent command` whose command does
nothing but print `STATUS: completed`. The floor is what any orchestrator must pay per attempt:
spawning that same process and two durable SQLite WAL commits (the attempt begun, the attempt
recorded). With checkpoints on, the agent also writes one file, and the floor adds one
`git add -A && git commit` of that same change.

    uv run python bench/bench_overhead.py                 # 200 tasks, then 100 vs 1,000
    uv run python bench/bench_overhead.py --tasks 50 --scale 20,200 --profile /tmp/run.prof

Prints markdown tables. The goal: ≤ 1.5× the floor, and the per-attempt overhead at 1,000 tasks
within 10% of that at 100 (nothing per attempt grows with the run); with OpenTelemetry export on
(`OTEL_EXPORTER_OTLP_ENDPOINT` at a local sink that answers every POST with 200), within 10% of
off.

How it measures, and why:
* Each figure is the median of `--repeat` runs (default 3), the orchestrator's and the floor's
  runs interleaved, so a burst of load on a shared machine hits both sides alike. Each ratio is
  followed by the range of the pairs' own ratios: on a loaded machine they spread by ±20% and
  more (a run's fsyncs wait behind other processes'), so a difference inside that range is noise;
  measure with `--repeat 7` or more, and say what `uptime` showed.
* The run's console writes to /dev/null as a non-terminal (`orchestrator run … > log`), so the
  per-line and summary costs of a logged run are counted (before: a quiet console, which skipped
  printing but still laid out the summary table).
* Runs' folders are deleted when the bench ends (see `scratch`).
* The orchestrator's figure is the whole `api.run` divided by N: opening the store, parsing the
  plan and recording its tasks, the summary at the end are part of it. The store's schema is
  created before the timing starts (Alembic, ~50 ms, once per store in real use), as the floor
  creates its table before its timing starts; before, every run paid it, which made the overhead
  per attempt look ~0.5 ms smaller at 1,000 tasks than at 100 for a reason that has nothing to do
  with growth.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console

from orchestrator import api
from orchestrator.console import Reporter
from orchestrator.store import Store

PRINT = "/bin/echo 'STATUS: completed'"
WRITE = "/bin/sh -c 'echo {task_id} > out-{task_id}.txt; echo STATUS: completed'"
GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


_ALL: list[str] = []
GROWTH_ROUNDS = 11
"""The plan-size comparison is a difference of ~0.05 ms a step, and one run's mean step moves by
up to ±0.1 ms from the next: it is the median of at least this many rounds."""
TELEMETRY_PAIRS = 11
"""On vs off is a difference of a few percent, inside one run's noise: it is the median ratio of
at least this many interleaved pairs. The CPU this process spent (the run's thread, the exporter's
thread; not the agents, not the sink) is printed beside wall time: it moves less with the disk."""


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[str]:
    """A folder for one run, deleted when the bench ends, not after the run: deleting a run's
    hundreds of files makes the file system's next journal commits (discards, freed blocks)
    slower, and that cost landed on the next measured run, the orchestrator's (with its
    folders and files per attempt) more than the floor's."""
    if not _ALL:
        _ALL.append(tempfile.mkdtemp(prefix="bench-overhead-"))
    yield tempfile.mkdtemp(prefix=prefix, dir=_ALL[0])


def plan_text(n: int) -> str:
    tasks = "\n".join(
        f"## Task 1.{i}: Step {i}\n\n**Type:** CODING\n\n**Description:**\nDo step {i}.\n"
        for i in range(1, n + 1)
    )
    return f"# Bench milestone\n\n{tasks}"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def workdir(root: Path, checkpoints: bool) -> Path:
    work = root / "work"
    work.mkdir()
    if checkpoints:
        git(work, "init", "-q", "-b", "main")
        (work / ".gitignore").write_text(".orchestrator/\n")
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", "initial")
    return work


def orchestrated(n: int, checkpoints: bool, profile: Path | None = None) -> float:
    """Seconds per attempt of a whole `api.run` of an n-task plan."""
    with (
        scratch("bench-overhead-") as tmp,
        open(os.devnull, "w") as sink,
    ):
        root = Path(tmp)
        plan = root / "plan.md"
        plan.write_text(plan_text(n))
        work = workdir(root, checkpoints)
        db = f"sqlite:///{root / 'state.db'}"
        Store(db).close()  # the schema exists before timing starts, as the floor's table does
        kwargs = dict(
            reporter=Reporter(Console(file=sink)),  # as `orchestrator run … > log`
            interactive=False,
            agent="command",
            agent_cmd=WRITE if checkpoints else PRINT,
            checkpoints=checkpoints,
            workdir=str(work),
            db=db,
        )
        prof = cProfile.Profile() if profile else None
        start = time.perf_counter()
        if prof:
            prof.enable()
        outcome = api.run(plan, **kwargs)  # type: ignore[arg-type]
        if prof:
            prof.disable()
            prof.dump_stats(profile)  # type: ignore[arg-type]
        took = time.perf_counter() - start
        done = sum(1 for s in outcome.statuses.values() if s == "COMPLETED")
        if outcome.exit_code != 0 or done != n:
            sys.exit(f"run {outcome.run_id} ended {outcome.exit_code} with {done}/{n} completed")
        return took / n


def floor(n: int, checkpoints: bool, own_folder: bool = False) -> float:
    """Seconds per attempt of the unavoidable work: the same spawn, two WAL commits (+ a git
    commit of the same change). `own_folder`: each attempt's output goes to a new file in a new
    folder (as seed 002's `attempt-N/` keeps it), not over the last one's."""
    with scratch("bench-floor-") as tmp:
        root = Path(tmp)
        work = workdir(root, checkpoints)
        db = sqlite3.connect(root / "floor.db", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE attempts (id INTEGER PRIMARY KEY, task TEXT, verdict TEXT)")
        start = time.perf_counter()
        for i in range(1, n + 1):
            task = f"1.{i}"
            db.execute("BEGIN")
            row = db.execute("INSERT INTO attempts (task) VALUES (?)", (task,)).lastrowid
            db.execute("COMMIT")
            argv = shlex.split((WRITE if checkpoints else PRINT).replace("{task_id}", task))
            log = root / "out.log"
            if own_folder:
                (root / task).mkdir()
                log = root / task / "output.txt"
            with log.open("wb") as out:
                subprocess.run(argv, cwd=work, stdout=out, stderr=subprocess.DEVNULL, check=True)
            db.execute("BEGIN")
            db.execute("UPDATE attempts SET verdict = 'completed' WHERE id = ?", (row,))
            db.execute("COMMIT")
            if checkpoints:
                git(work, "add", "-A")
                git(work, "commit", "-q", "-m", f"task {task}")
        took = time.perf_counter() - start
        db.close()
        return took / n


SINK = """
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps the connection open, as collectors do

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""
"""An OTLP/HTTP collector that accepts everything and keeps nothing, in a process of its own as
a real collector is (in the bench's process, its thread would take the interpreter from the run
it measures)."""


@contextlib.contextmanager
def telemetry_on() -> Iterator[None]:
    """`OTEL_EXPORTER_OTLP_ENDPOINT` pointed at a local sink for the duration."""
    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    assert sink.stdout is not None
    port = int(sink.stdout.readline())
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("OTEL_")}
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
    try:
        yield
    finally:
        del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
        os.environ.update(saved)
        sink.kill()
        sink.wait()


def telemetry_available() -> bool:
    try:
        import opentelemetry.sdk  # noqa: F401

        import orchestrator.telemetry  # noqa: F401
    except ImportError:
        return False
    return True


def off_cost() -> str:
    """What telemetry off costs a run: deciding it is off (no endpoint configured), once per run.
    Nothing of OpenTelemetry is imported then (`test_off_and_free_when_nothing_is_configured`)."""
    from orchestrator import telemetry
    from orchestrator.config import Settings

    settings, rounds = Settings(), 10_000
    assert not telemetry.enabled("traces", settings.telemetry)
    start = time.perf_counter()
    for _ in range(rounds):
        telemetry.observers(settings, None, "")  # type: ignore[arg-type]
    per_run = (time.perf_counter() - start) / rounds
    return f"off: {per_run * 1e6:.0f} µs per run, no OpenTelemetry import"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def spread_of(ratios: list[float]) -> str:
    return f"({min(ratios):.2f}–{max(ratios):.2f})"


def growth(small: int, large: int, runs: int) -> None:
    """Per-attempt overhead (orchestrator − floor) at two plan sizes. Each round runs both sizes
    and their floors back to back, so a slow minute of the machine lands on both sizes alike
    (before: all small runs, then all large ones, against one floor of the small size, and the
    two sizes differed by ±20% from one bench run to the next). Each size is compared with a
    floor of its own size (its database, its WAL), the figure is the median of the rounds'
    overheads; the rounds' own growth ratios give the range."""
    over: dict[int, list[float]] = {small: [], large: []}
    each: dict[int, list[float]] = {small: [], large: []}
    for _ in range(runs):
        for size in (small, large):
            ours, base = orchestrated(size, False), floor(size, False)
            each[size].append(ours)
            over[size].append(ours - base)
    print("| plan size | orchestrator / attempt | overhead / attempt (orchestrator − floor) |")
    print("| --- | --- | --- |")
    for size in (small, large):
        print(
            f"| {size:,} tasks | {ms(statistics.median(each[size]))} "
            f"| {ms(statistics.median(over[size]))} |"
        )
    rounds = [b / a - 1 for a, b in zip(over[small], over[large], strict=True) if a > 0]
    change = statistics.median(over[large]) / statistics.median(over[small]) - 1
    spread = f"({min(rounds):+.0%} to {max(rounds):+.0%})" if rounds else ""
    print(f"| {large:,} vs {small:,} | | {change:+.0%} {spread} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--scale", default="100,1000", help="two plan sizes to compare")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    ap.add_argument("--profile", type=Path, help="cProfile the 200-task run without checkpoints")
    args = ap.parse_args()
    for name in [k for k in os.environ if k.startswith("OTEL_")]:
        del os.environ[name]  # telemetry is off unless `telemetry_on` turns it on
    try:
        measure(args)
    finally:
        for folder in _ALL:
            shutil.rmtree(folder, ignore_errors=True)


def measure(args: argparse.Namespace) -> None:
    for _ in range(2):
        orchestrated(5, False)  # warm-up: imports, bytecode, page cache
    os.sync()  # what earlier processes left to write is not this bench's
    n, runs = args.tasks, args.repeat
    print(f"| {n} tasks | orchestrator / attempt | floor / attempt | ratio (pairs' range) |")
    print("| --- | --- | --- | --- |")
    pairs0: list[tuple[float, float]] = []
    for checkpoints in (False, True):
        pairs = [(orchestrated(n, checkpoints), floor(n, checkpoints)) for _ in range(runs)]
        pairs0 = pairs0 or pairs
        ours = statistics.median(p[0] for p in pairs)
        base = statistics.median(p[1] for p in pairs)
        label = "checkpoints on (+ git add -A && git commit)" if checkpoints else "no checkpoints"
        spread = spread_of([p[0] / p[1] for p in pairs])
        print(f"| {label} | {ms(ours)} | {ms(base)} | {ours / base:.2f}× {spread} |", flush=True)
    own = statistics.median(floor(n, False, own_folder=True) for _ in range(runs))
    print(
        f"| (floor with each attempt's output in a new folder and file, as seed 002's "
        f"`attempt-N/`) | | {ms(own)} | {statistics.median(p[0] for p in pairs0) / own:.2f}× |",
        flush=True,
    )
    if args.profile:
        orchestrated(n, False, args.profile)
    small, large = (int(x) for x in args.scale.split(","))
    print()
    growth(small, large, max(runs, GROWTH_ROUNDS))
    if not telemetry_available():
        print("\n(telemetry: orchestrator.telemetry or the OpenTelemetry SDK is not installed)")
        return
    with telemetry_on():
        orchestrated(5, False)  # warm-up: the SDK's imports
    times: dict[str, list[float]] = {"off": [], "on": []}
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(max(runs, TELEMETRY_PAIRS)):
        for side in ("off", "on"):
            with telemetry_on() if side == "on" else contextlib.nullcontext():
                start = time.process_time()
                times[side].append(orchestrated(n, False))
                cpu[side].append((time.process_time() - start) / n)
    off, on = (statistics.median(times[k]) for k in ("off", "on"))
    ratios = [b / a for a, b in zip(times["off"], times["on"], strict=True)]
    cpu_off, cpu_on = (statistics.median(cpu[k]) for k in ("off", "on"))
    cpu_ratios = [b / a for a, b in zip(cpu["off"], cpu["on"], strict=True)]
    print()
    print(
        f"| {n} tasks, no checkpoints, {len(ratios)} pairs | orchestrator / attempt "
        "| on vs off: median of the pairs' ratios (their range) "
        "| the bench process's CPU / attempt | CPU on vs off |"
    )
    print("| --- | --- | --- | --- | --- |")
    print(f"| telemetry off | {ms(off)} | {off_cost()} | {ms(cpu_off)} | |")
    print(
        f"| telemetry on (OTLP/HTTP to a local sink) | {ms(on)} "
        f"| {statistics.median(ratios):.2f}× {spread_of(ratios)} | {ms(cpu_on)} "
        f"| {statistics.median(cpu_ratios):.2f}× {spread_of(cpu_ratios)} |"
    )


if __name__ == "__main__":
    main()
