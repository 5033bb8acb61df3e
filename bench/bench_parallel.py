"""`--parallel 4` against `--parallel 1`, in one run (issue 12's "done when").

A plan of 8 independent tasks (milestone markdown, no gates) is run twice with `--agent command`
whose command sleeps 2 s and writes its own file `out-<task>.txt`: once with `--parallel 1`, once
with `--parallel 4`, each in a fresh git repository. Prints the wall times and their ratio (the
target: ≥ 3×), then checks, for the parallel run, that all 8 files are on the run branch (and in
the workdir) and that no worktree or task branch is left.

    uv run python bench/bench_parallel.py                 # 8 tasks, 2 s each, 4 lanes
    uv run python bench/bench_parallel.py --tasks 12 --sleep 1 --parallel 6
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from orchestrator import api
from orchestrator.console import Reporter

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True
    ).stdout


def plan_text(n: int) -> str:
    tasks = "\n".join(
        f"## Task 1.{i}: Step {i}\n\n**Type:** CODING\n\n**Description:**\nWrite out-1.{i}.txt.\n"
        for i in range(1, n + 1)
    )
    return f"# Bench parallel\n\n{tasks}"


def one_run(root: Path, n: int, sleep: float, lanes: int) -> tuple[float, Path, int]:
    """Seconds for a whole `api.run`; the workdir; the exit code."""
    work = root / f"work-{lanes}"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / ".gitignore").write_text(".orchestrator/\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "initial")
    plan = root / "plan.md"
    plan.write_text(plan_text(n))
    cmd = f"/bin/sh -c 'sleep {sleep}; echo {{task_id}} > out-{{task_id}}.txt; echo STATUS: completed'"
    with open(os.devnull, "w") as sink:
        start = time.perf_counter()
        outcome = api.run(
            plan,
            reporter=Reporter(Console(file=sink)),
            interactive=False,
            agent="command",
            agent_cmd=cmd,
            workdir=str(work),
            db=f"sqlite:///{root / f'state-{lanes}.db'}",
            parallel=lanes,
        )
        took = time.perf_counter() - start
    return took, work, outcome.exit_code


def check(work: Path, n: int) -> list[str]:
    """What is wrong with the parallel run's result (nothing: an empty list)."""
    problems = []
    refs = git(work, "for-each-ref", "--format=%(refname:short)", "refs/heads/orchestrator/")
    names = refs.split()
    branch = next((b for b in names if "--" not in b), None)
    if branch is None:
        return ["no run branch"]
    want = {f"out-1.{i}.txt" for i in range(1, n + 1)}
    tree = set(git(work, "ls-tree", "--name-only", branch).split())
    if not want <= tree:
        problems.append(f"missing on {branch}: {sorted(want - tree)}")
    if not want <= {p.name for p in work.iterdir()}:
        problems.append("the workdir lacks some files")
    trees = [
        ln
        for ln in git(work, "worktree", "list", "--porcelain").splitlines()
        if ln.startswith("worktree ")
    ]
    if len(trees) != 1:
        problems.append(f"worktrees left: {trees[1:]}")
    if left := [b for b in names if "--" in b]:
        problems.append(f"task branches left: {left}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--sleep", type=float, default=2.0)
    ap.add_argument("--parallel", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-parallel-") as tmp:
        root = Path(tmp)
        seq, _, code1 = one_run(root, args.tasks, args.sleep, 1)
        par, work, code4 = one_run(root, args.tasks, args.sleep, args.parallel)
        ratio = seq / par
        problems = check(work, args.tasks)
        print(f"| tasks | agent sleep | --parallel 1 | --parallel {args.parallel} | ratio |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        print(f"| {args.tasks} | {args.sleep:g} s | {seq:.2f} s | {par:.2f} s | {ratio:.2f}× |")
        print()
        print(f"exit codes: {code1} (sequential), {code4} (parallel)")
        print(
            f"all {args.tasks} files on the run branch, no worktree left: "
            + ("yes" if not problems else "NO")
        )
        for p in problems:
            print(f"  - {p}")
        target = ratio >= 3.0 if args.parallel >= 4 else True
        print(f"target ≥ 3×: {'met' if target else 'NOT met'}")
        return 0 if not problems and code1 == code4 == 0 and target else 1


if __name__ == "__main__":
    sys.exit(main())
