"""Per-attempt overhead of the orchestrator against the floor, in one run.

A plan of N tasks (milestone markdown, no gates) is run with `--agent command` whose command does
nothing but print `STATUS: completed`. The floor is what any orchestrator must pay per attempt:
spawning that same process and two durable SQLite WAL commits (the attempt begun, the attempt
recorded). With checkpoints on, the agent also writes one file, and the floor adds one
`git add -A && git commit` of that same change.

    uv run python bench/bench_overhead.py                 # 200 tasks, then 100 vs 1,000
    uv run python bench/bench_overhead.py --tasks 50 --scale 20,200 --profile /tmp/run.prof

Prints a markdown table. The goal: ≤ 1.5× the floor, and the per-attempt overhead at 1,000 tasks
within 10% of that at 100 (nothing per attempt grows with the run).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import shlex
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from orchestrator import api
from orchestrator.console import Reporter

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
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        root = Path(tmp)
        plan = root / "plan.md"
        plan.write_text(plan_text(n))
        work = workdir(root, checkpoints)
        kwargs = dict(
            reporter=Reporter(Console(quiet=True)),
            interactive=False,
            agent="command",
            agent_cmd=WRITE if checkpoints else PRINT,
            checkpoints=checkpoints,
            workdir=str(work),
            db=f"sqlite:///{root / 'state.db'}",
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


def floor(n: int, checkpoints: bool) -> float:
    """Seconds per attempt of the unavoidable work: the same spawn, two WAL commits (+ a git
    commit of the same change)."""
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
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
            with (root / "out.log").open("wb") as out:
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


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--scale", default="100,1000", help="two plan sizes to compare")
    ap.add_argument("--profile", type=Path, help="cProfile the 200-task run without checkpoints")
    args = ap.parse_args()
    orchestrated(5, False)  # warm-up: imports, bytecode, page cache
    n = args.tasks
    print(f"| {n} tasks | orchestrator / attempt | floor / attempt | ratio |")
    print("| --- | --- | --- | --- |")
    for checkpoints in (False, True):
        ours = orchestrated(n, checkpoints, args.profile if not checkpoints else None)
        base = floor(n, checkpoints)
        label = "checkpoints on (+ git add -A && git commit)" if checkpoints else "no checkpoints"
        print(f"| {label} | {ms(ours)} | {ms(base)} | {ours / base:.2f}× |", flush=True)
    small, large = (int(x) for x in args.scale.split(","))
    base = floor(small, False)
    per = {size: orchestrated(size, False) - base for size in (small, large)}
    print()
    print("| plan size | overhead / attempt (orchestrator − floor) |")
    print("| --- | --- |")
    for size, value in per.items():
        print(f"| {size:,} tasks | {ms(value)} |")
    growth = per[large] / per[small] - 1 if per[small] > 0 else float("nan")
    print(f"| {large:,} vs {small:,} | {growth:+.0%} |")


if __name__ == "__main__":
    main()
