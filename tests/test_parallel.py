"""`--parallel N` (issue 12, part 1): tasks side by side in git worktrees, merged into the run
branch. Real git, real agent processes, real SQLite; the runner killed with SIGKILL for real."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from tests.helpers import cli, cli_popen

from orchestrator import api
from orchestrator.console import Reporter
from orchestrator.plans import load_plan

ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "user",
    "GIT_AUTHOR_EMAIL": "user@example.com",
    "GIT_COMMITTER_NAME": "user",
    "GIT_COMMITTER_EMAIL": "user@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

AGENT = textwrap.dedent("""\
    import os, sys, time
    task, log = sys.argv[1], os.environ["LANES_LOG"]
    def note(what):
        with open(log, "a") as fh:
            fh.write(f"{what} {task} {time.time():.6f}\\n")
    note("start")
    time.sleep(float(os.environ.get("LANES_SLEEP", "1")))
    if task == os.environ.get("LANES_FAIL"):
        note("end")
        sys.exit("error: cannot do this task")
    name = os.environ.get("LANES_FILE") or f"out-{task}.txt"
    with open(name, "w") as fh:
        fh.write(f"line from {task}\\n")
    note("end")
    print("STATUS: completed")
""")


KILLING_GIT = """#!/bin/sh
# git's own sub-commands come through here: `git worktree add` runs `git symbolic-ref` (HEAD onto
# the task's branch), then `git reset --hard` (the files). The KILL_NTH'th run of the step KILL_AT
# is killed with SIGKILL, and with it the `worktree add` (KILL_WHO=parent) or the runner's whole
# process group (KILL_WHO=group). `reset-partway`: one file written first, no index yet (into
# the new worktree: git gives the `reset` child GIT_WORK_TREE and keeps the caller's cwd).
step=$1
[ "$KILL_AT" = reset-partway ] && [ "$1" = reset ] && step=reset-partway
if [ "$step" = "$KILL_AT" ]; then
    n=$(( $(cat "$KILL_COUNT" 2>/dev/null || echo 0) + 1 ))
    echo $n > "$KILL_COUNT"
    if [ "$n" = "${KILL_NTH:-1}" ]; then
        [ "$step" = reset-partway ] && "$REAL_GIT" cat-file -p HEAD:.gitignore \
            > "$GIT_WORK_TREE/.gitignore"
        if [ "$KILL_WHO" = group ]; then kill -9 0; else kill -9 $PPID; fi
        exit 1
    fi
fi
GIT_EXEC_PATH="$REAL_EXEC_PATH" exec "$REAL_GIT" "$@"
"""


def killing_git(tmp: Path, step: str, who: str, nth: int = 1) -> dict[str, str]:
    """Kill a `git worktree add` at `step` for real, as a runner killed there leaves it: the
    environment that routes git's sub-commands through `KILLING_GIT`."""
    real = shutil.which("git")
    assert real is not None
    exec_path = subprocess.run([real, "--exec-path"], capture_output=True, text=True).stdout
    wrapper = tmp / "exec-path"
    wrapper.mkdir(exist_ok=True)
    (wrapper / "git").write_text(KILLING_GIT)
    (wrapper / "git").chmod(0o755)
    return {
        "REAL_GIT": real,
        "REAL_EXEC_PATH": exec_path.strip(),
        "GIT_EXEC_PATH": str(wrapper),
        "KILL_AT": step,
        "KILL_NTH": str(nth),
        "KILL_WHO": who,
        "KILL_COUNT": str(wrapper / "count"),
    }


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True
    ).stdout


def repo(tmp: Path, files: dict[str, str] | None = None) -> Path:
    work = tmp / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / ".gitignore").write_text(".orchestrator/\n")
    for name, text in (files or {}).items():
        (work / name).write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "initial")
    return work


def agent_cmd(tmp: Path) -> str:
    script = tmp / "agent.py"
    script.write_text(AGENT)
    return f"{sys.executable} {script} {{task_id}}"


def milestone(tmp: Path, tasks: list[tuple[str, str]]) -> Path:
    """(id, extra lines) per task."""
    body = "\n".join(
        f"## Task {tid}: Step {tid}\n\n**Type:** CODING\n\n{extra}\n**Description:**\nDo {tid}.\n"
        for tid, extra in tasks
    )
    plan = tmp / "plan.md"
    plan.write_text(f"# Lanes milestone\n\n{body}")
    return plan


def run(
    tmp: Path,
    plan: Path,
    work: Path,
    parallel: int,
    settings: dict[str, Any] | None = None,
    **env: str,
) -> Any:
    os.environ.update(LANES_LOG=str(tmp / "lanes.log"), **env)
    try:
        return api.run(
            plan,
            reporter=Reporter(Console(file=io.StringIO())),
            interactive=False,
            agent="command",
            agent_cmd=agent_cmd(tmp),
            workdir=str(work),
            db=f"sqlite:///{tmp / 'state.db'}",
            parallel=parallel,
            verify_milestone=False,
            **(settings or {}),
        )
    finally:
        for key in ("LANES_LOG", *env):
            os.environ.pop(key, None)


def spans(tmp: Path) -> dict[str, tuple[float, float]]:
    """Task → (start, end) of its last agent run."""
    out: dict[str, list[float]] = {}
    for line in (tmp / "lanes.log").read_text().splitlines():
        what, task, at = line.split()
        out.setdefault(task, [0.0, 0.0])[0 if what == "start" else 1] = float(at)
    return {t: (s, e) for t, (s, e) in out.items()}


def worktrees(work: Path) -> list[str]:
    return [
        ln
        for ln in git(work, "worktree", "list", "--porcelain").splitlines()
        if ln.startswith("worktree ")
    ]


def run_branch(work: Path) -> str:
    names = git(work, "for-each-ref", "--format=%(refname:short)", "refs/heads/orchestrator/")
    return next(n for n in names.split() if "--" not in n)


def test_a_gsd_plan_runs_wave_2_only_after_wave_1(tmp_path: Path) -> None:
    work = repo(tmp_path)
    plan = tmp_path / "PLAN.md"
    plan.write_text(
        textwrap.dedent("""\
        ---
        phase: 01
        plan: 01
        ---
        <objective>Waves</objective>
        <tasks>
        <task type="auto" wave="1"><name>Task 1: first</name><files>a.txt</files><action>a</action></task>
        <task type="auto" wave="1"><name>Task 2: second</name><files>b.txt</files><action>b</action></task>
        <task type="auto" wave="2"><name>Task 3: third</name><files>c.txt</files><action>c</action></task>
        </tasks>
        """)
    )
    parsed = load_plan(plan)
    assert [t.depends_on for t in parsed.tasks] == [[], [], ["1", "2"]]
    out = run(tmp_path, plan, work, 3)
    assert out.exit_code == 0, out.statuses
    s = spans(tmp_path)
    assert s["3"][0] >= max(s["1"][1], s["2"][1])  # wave 2 starts after all of wave 1
    assert s["2"][0] < s["1"][1] and s["1"][0] < s["2"][1]  # wave 1 ran side by side
    branch = run_branch(work)
    assert set(git(work, "ls-tree", "--name-only", branch).split()) >= {
        "out-1.txt",
        "out-2.txt",
        "out-3.txt",
    }
    assert len(worktrees(work)) == 1  # the user's own
    assert sorted(p.name for p in work.iterdir() if p.name.startswith("out-")) == [
        "out-1.txt",
        "out-2.txt",
        "out-3.txt",
    ]


def test_declared_files_that_overlap_never_run_side_by_side(tmp_path: Path) -> None:
    work = repo(tmp_path)
    plan = milestone(
        tmp_path,
        [
            ("1.1", "**Files:** `src/app.py`\n"),
            ("1.2", "**Files:** `src/`\n"),
            ("1.3", "**Files:** `docs/x.md`\n"),
            ("1.4", "**Depends on:** Task 1.3\n"),
        ],
    )
    out = run(tmp_path, plan, work, 4)
    assert out.exit_code == 0, out.statuses
    s = spans(tmp_path)
    one, two = sorted([s["1.1"], s["1.2"]])
    assert one[1] <= two[0]  # src/app.py lies in src/: one after the other
    assert s["1.3"][0] < s["1.1"][1] or s["1.3"][0] < s["1.2"][1]  # docs ran beside one of them
    assert s["1.4"][0] >= s["1.3"][1]  # **Depends on:** holds


def test_one_task_escalating_does_not_stop_the_others(tmp_path: Path) -> None:
    work = repo(tmp_path)
    plan = milestone(tmp_path, [("1.1", ""), ("1.2", ""), ("1.3", ""), ("1.4", "")])
    settings = {"max_attempts": 1, "max_total_attempts": 1}
    out = run(tmp_path, plan, work, 2, settings, LANES_FAIL="1.1", LANES_SLEEP="0.5")
    assert out.exit_code == 3
    assert out.statuses == {
        "1.1": "PAUSED_FOR_INTERVENTION",
        "1.2": "COMPLETED",
        "1.3": "COMPLETED",
        "1.4": "COMPLETED",
    }
    branch = run_branch(work)
    tree = set(git(work, "ls-tree", "--name-only", branch).split())
    assert {"out-1.2.txt", "out-1.3.txt", "out-1.4.txt"} <= tree and "out-1.1.txt" not in tree
    assert len(worktrees(work)) == 2  # the paused task's, for its next attempt


def test_two_tasks_editing_the_same_line_give_one_merge_and_one_escalation(
    tmp_path: Path,
) -> None:
    work = repo(tmp_path, {"shared.txt": "line from nobody\n"})
    plan = milestone(tmp_path, [("1.1", ""), ("1.2", "")])
    out = run(tmp_path, plan, work, 2, LANES_FILE="shared.txt")
    assert out.exit_code == 3  # waiting for a human
    assert sorted(out.statuses.values()) == ["COMPLETED", "PAUSED_FOR_INTERVENTION"]
    loser = next(t for t, s in out.statuses.items() if s == "PAUSED_FOR_INTERVENTION")
    winner = next(t for t, s in out.statuses.items() if s == "COMPLETED")
    db = sqlite3.connect(tmp_path / "state.db")
    escs = db.execute("SELECT task_id, category, question, detail_json FROM escalations").fetchall()
    assert len(escs) == 1
    task_id, category, question, detail = escs[0]
    assert (task_id, category) == (loser, "merge_conflict")
    assert "shared.txt" in question and json.loads(detail)["conflicts"] == ["shared.txt"]
    branch = run_branch(work)
    assert git(work, "show", f"{branch}:shared.txt") == f"line from {winner}\n"
    assert (work / "shared.txt").read_text() == f"line from {winner}\n"  # the workdir has it
    merges = git(work, "log", "--first-parent", "--format=%s", branch).splitlines()
    assert merges.count(f"Task {winner}: Step {winner}") == 1
    assert not any(loser in m for m in merges)
    assert len(worktrees(work)) == 1  # the loser's worktree is gone, its branch kept
    assert f"{branch}--{loser}" in git(work, "branch", "--list", f"{branch}--*")


def test_kill_9_during_parallel_attempts_then_resume_completes_every_task_once(
    tmp_path: Path,
) -> None:
    work = repo(tmp_path)
    ids = [f"1.{i}" for i in range(1, 7)]
    plan = milestone(tmp_path, [(t, "") for t in ids])
    log = tmp_path / "lanes.log"
    env = {"LANES_LOG": str(log), "LANES_SLEEP": "1.5"}
    args = ["--agent", "command", "--agent-cmd", agent_cmd(tmp_path), "--workdir", str(work)]
    args += ["--parallel", "3", "--no-wait"]
    proc = cli_popen(tmp_path, "run", str(plan), *args, **env)
    deadline = time.time() + 60
    while time.time() < deadline:  # some attempts under way, some merged
        text = log.read_text() if log.exists() else ""
        if text.count("start") >= 4:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # the runner alone: its agents live on
    proc.wait(timeout=30)
    assert len(worktrees(work)) > 1  # attempts were cut off in their worktrees
    resumed = cli(tmp_path, "resume", "--no-wait", timeout=120, **env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    db = sqlite3.connect(tmp_path / "state.db")
    statuses = dict(db.execute("SELECT task_id, status FROM tasks").fetchall())
    assert statuses == dict.fromkeys(ids, "COMPLETED")
    completed = db.execute(
        "SELECT task_id, COUNT(*) FROM attempts WHERE verdict != 'interrupted' GROUP BY task_id"
    ).fetchall()
    assert dict(completed) == dict.fromkeys(ids, 1)  # each task completed exactly once
    marks = db.execute("SELECT task_id FROM events WHERE kind = 'checkpoint'").fetchall()
    assert sorted(t for (t,) in marks) == ids
    branch = run_branch(work)
    tree = set(git(work, "ls-tree", "--name-only", branch).split())
    assert tree >= {f"out-{t}.txt" for t in ids}
    assert len(worktrees(work)) == 1  # nothing left behind
    assert git(work, "branch", "--list", f"{branch}--*").strip() == ""
    assert {f"out-{t}.txt" for t in ids} <= {p.name for p in work.iterdir()}


def test_parallel_needs_checkpoints(tmp_path: Path) -> None:
    work = repo(tmp_path)
    plan = milestone(tmp_path, [("1.1", "")])
    proc = cli(
        tmp_path,
        "run",
        str(plan),
        "--agent",
        "command",
        "--agent-cmd",
        "true",
        "--workdir",
        str(work),
        "--parallel",
        "2",
        "--no-checkpoints",
    )
    assert proc.returncode == 2 and "--parallel needs git checkpoints" in proc.stderr


def test_a_conflicted_task_answered_retry_runs_again_on_the_run_branch(tmp_path: Path) -> None:
    work = repo(tmp_path, {"shared.txt": "line from nobody\n"})
    plan = milestone(tmp_path, [("1.1", ""), ("1.2", "")])
    out = run(tmp_path, plan, work, 2, LANES_FILE="shared.txt")
    loser = next(t for t, s in out.statuses.items() if s == "PAUSED_FOR_INTERVENTION")
    db = sqlite3.connect(tmp_path / "state.db")
    (esc_id,) = db.execute("SELECT id FROM escalations").fetchone()
    answered = cli(tmp_path, "answer", str(esc_id), "--retry")
    assert answered.returncode == 0, answered.stderr
    env = {"LANES_LOG": str(tmp_path / "lanes.log"), "LANES_FILE": "shared.txt"}
    resumed = cli(tmp_path, "resume", "--no-wait", **env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    branch = run_branch(work)
    assert (
        git(work, "show", f"{branch}:shared.txt") == f"line from {loser}\n"
    )  # on top of the winner
    assert (work / "shared.txt").read_text() == f"line from {loser}\n"
    assert len(worktrees(work)) == 1
    assert git(work, "branch", "--list", f"{branch}--*").strip() == ""


def test_a_parallel_run_cut_off_then_resumed_one_at_a_time_keeps_the_merged_work(
    tmp_path: Path,
) -> None:
    work = repo(tmp_path)
    ids = [f"1.{i}" for i in range(1, 5)]
    plan = milestone(tmp_path, [(t, "") for t in ids])
    log = tmp_path / "lanes.log"
    env = {"LANES_LOG": str(log), "LANES_SLEEP": "1"}
    args = ["--agent", "command", "--agent-cmd", agent_cmd(tmp_path), "--workdir", str(work)]
    proc = cli_popen(tmp_path, "run", str(plan), *args, "--parallel", "2", "--no-wait", **env)
    deadline = time.time() + 60
    while time.time() < deadline and (not log.exists() or log.read_text().count("start") < 3):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    resumed = cli(tmp_path, "resume", "--no-wait", "--parallel", "1", **env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    branch = run_branch(work)
    assert set(git(work, "ls-tree", "--name-only", branch).split()) >= {f"out-{t}.txt" for t in ids}
    assert {f"out-{t}.txt" for t in ids} <= {p.name for p in work.iterdir()}
    assert len(worktrees(work)) == 1
    assert git(work, "branch", "--list", f"{branch}--*").strip() == ""


def test_killed_again_and_again_at_any_moment_then_resumed_nothing_is_lost_or_repeated(
    tmp_path: Path,
) -> None:
    """SIGKILL to the runner's whole group (its git commands too: mid-merge, mid-`worktree add`)
    at several moments, a resume after each; every task is completed exactly once."""
    work = repo(tmp_path)
    ids = [f"1.{i}" for i in range(1, 9)]
    plan = milestone(tmp_path, [(t, "") for t in ids])
    env = {"LANES_LOG": str(tmp_path / "lanes.log"), "LANES_SLEEP": "0.3"}
    args = ["--agent", "command", "--agent-cmd", agent_cmd(tmp_path), "--workdir", str(work)]
    first = ["run", str(plan), *args, "--parallel", "4", "--no-wait"]
    log = tmp_path / "lanes.log"
    for i, delay in enumerate([0.1, 0.35, 0.2, 0.5]):
        seen = log.read_text().count("start") if log.exists() else 0
        proc = cli_popen(tmp_path, *(first if i == 0 else ["resume", "--no-wait"]), **env)
        deadline = time.time() + 60
        while proc.poll() is None and time.time() < deadline:  # its agents under way
            if log.exists() and log.read_text().count("start") > seen:
                break
            time.sleep(0.02)
        time.sleep(delay)  # then mid-attempt, mid-gates, mid-merge or mid-worktree
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    resumed = cli(tmp_path, "resume", "--no-wait", timeout=120, **env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    db = sqlite3.connect(tmp_path / "state.db")
    statuses = dict(db.execute("SELECT task_id, status FROM tasks").fetchall())
    assert statuses == dict.fromkeys(ids, "COMPLETED")
    done = db.execute(
        "SELECT task_id, COUNT(*) FROM attempts WHERE verdict != 'interrupted' GROUP BY task_id"
    ).fetchall()
    assert dict(done) == dict.fromkeys(ids, 1)
    cut = db.execute("SELECT COUNT(*) FROM attempts WHERE verdict = 'interrupted'").fetchone()
    assert cut[0] > 0  # the kills did cut attempts off
    branch = run_branch(work)
    assert set(git(work, "ls-tree", "--name-only", branch).split()) >= {f"out-{t}.txt" for t in ids}
    assert len(worktrees(work)) == 1
    assert git(work, "branch", "--list", f"{branch}--*").strip() == ""
    git(work, "fsck", "--no-progress")


def test_the_runner_killed_mid_worktree_add_then_resumed_loses_nothing(tmp_path: Path) -> None:
    """The whole process group killed inside `git worktree add` of a task started after another
    task's merge: the worktree is registered on its branch but holds none of the run branch's
    files. The resumed runner makes it again; adopted, its commit would have deleted `.gitignore`
    and `out-1.1.txt` from the run branch while 1.2 was recorded COMPLETED."""
    work = repo(tmp_path)
    plan = milestone(tmp_path, [("1.1", ""), ("1.2", "**Depends on:** Task 1.1\n")])
    env = {"LANES_LOG": str(tmp_path / "lanes.log"), "LANES_SLEEP": "0.1"}
    args = ["--agent", "command", "--agent-cmd", agent_cmd(tmp_path), "--workdir", str(work)]
    kill = killing_git(tmp_path, "reset", who="group", nth=2)  # 1.2's: after 1.1's merge
    proc = cli_popen(
        tmp_path, "run", str(plan), *args, "--parallel", "2", "--no-wait", **env, **kill
    )
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    branch = run_branch(work)
    assert "out-1.1.txt" in git(work, "ls-tree", "--name-only", branch).split()
    assert "locked" in git(work, "worktree", "list", "--porcelain")  # 1.2's, half-made
    resumed = cli(tmp_path, "resume", "--no-wait", **env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    db = sqlite3.connect(tmp_path / "state.db")
    statuses = dict(db.execute("SELECT task_id, status FROM tasks").fetchall())
    assert statuses == {"1.1": "COMPLETED", "1.2": "COMPLETED"}
    tree = git(work, "ls-tree", "--name-only", branch).split()
    assert tree == [".gitignore", "out-1.1.txt", "out-1.2.txt"]
    assert len(worktrees(work)) == 1
    assert git(work, "branch", "--list", f"{branch}--*").strip() == ""


def test_a_sequential_run_killed_before_its_checkpoint_resumed_in_parallel_keeps_the_work(
    tmp_path: Path,
) -> None:
    """Killed between task 1.1's COMPLETED record and its checkpoint (inside the commit), the
    sequential runner leaves 1.1's file in the workdir only; resumed with `--parallel`, it is
    committed before the lanes branch off the run branch. Before, the lanes started from the
    run branch without it and the workdir, brought to the branch's head at the end, lost it."""
    work = repo(tmp_path)
    plan = milestone(tmp_path, [("1.1", ""), ("1.2", "")])
    real = shutil.which("git")
    assert real is not None
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    count = tmp_path / "commit-trees"
    (wrapper / "git").write_text(  # the second commit-tree is 1.1's checkpoint (1st: baseline)
        "#!/bin/sh\n"
        'for a in "$@"; do\n'
        '  if [ "$a" = commit-tree ]; then\n'
        f'    echo x >> "{count}"\n'
        f'    [ "$(wc -l < "{count}")" = 2 ] && kill -9 0\n'
        "  fi\n"
        "done\n"
        f'exec {real} "$@"\n'
    )
    (wrapper / "git").chmod(0o755)
    env = {"LANES_LOG": str(tmp_path / "lanes.log"), "LANES_SLEEP": "0.1"}
    args = ["--agent", "command", "--agent-cmd", agent_cmd(tmp_path), "--workdir", str(work)]
    path = f"{wrapper}{os.pathsep}{os.environ['PATH']}"
    proc = cli_popen(tmp_path, "run", str(plan), *args, "--no-wait", PATH=path, **env)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    db = sqlite3.connect(tmp_path / "state.db")
    assert dict(db.execute("SELECT task_id, status FROM tasks").fetchall())["1.1"] == "COMPLETED"
    resumed = cli(tmp_path, "resume", "--no-wait", "--parallel", "2", **env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    branch = run_branch(work)
    assert git(work, "ls-tree", "--name-only", branch).split() == [
        ".gitignore",
        "out-1.1.txt",
        "out-1.2.txt",
    ]
    assert {"out-1.1.txt", "out-1.2.txt"} <= {p.name for p in work.iterdir()}
