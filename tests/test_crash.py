"""Kill the runner at random moments of real 10-task runs, resume until done, and check the promise:
every task completed exactly once, every completed task has its checkpoint, no two agents (or an
agent's leftover children) ever ran at once, the store is intact and nothing is left locked or
running. Real processes, signals, git, SQLite and PostgreSQL.

Kill moments come from a seeded RNG, three ways: a timer from the launch (start-up, recovery,
the store, gates), the agent killing its runner (then living on, sometimes deaf to SIGTERM, so the
next runner must reap it), and a `git` shim killing its runner mid-checkpoint (group: git dies
holding its lock; alone: git finishes as an orphan). Each way kills the runner's whole process
group or the runner alone. An agent's overlap is seen by an exclusive flock held by it and by the
leftover child it starts: a second holder logs OVERLAP.
"""

from __future__ import annotations

import os
import random
import selectors
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import text
from tests.conftest import pg_schema
from tests.helpers import cli_popen

from orchestrator.store import Store

TASKS = 10
KILLS = 30

AGENT = textwrap.dedent("""\
    import fcntl, os, signal, subprocess, sys, time
    task = sys.argv[1]
    env = os.environ

    def note(what):
        with open(env["CRASH_LOG"], "a") as fh:
            fh.write(f"{what} {task} {os.getpid()} {time.time():.6f}\\n")

    lock = open(env["CRASH_LOCK"], "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        note("OVERLAP")
    note("start")
    count = env["CRASH_AGENT_COUNT"]
    n = int(open(count).read() or 0) + 1 if os.path.exists(count) else 1
    open(count, "w").write(str(n))
    killer = str(n) == env.get("KILL_AGENT_AT") and "orchestrator" in open(
        f"/proc/{os.getppid()}/cmdline").read()  # never anyone but the runner
    if killer and env["KILL_DEAF"] == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if killer and env["KILL_PHASE"] == "before":
        getattr(os, env["KILL_HOW"])(os.getppid(), signal.SIGKILL)
        time.sleep(60)  # an agent that outlives its runner: the next runner must kill it
    deaf = "trap '' TERM; " if task in ("1.3", "1.7") else ""
    subprocess.Popen(["sh", "-c", deaf + "exec sleep 60"], pass_fds=[lock.fileno()],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # a leftover child
    time.sleep(0.05)
    if killer and env["KILL_PHASE"] == "middle":
        getattr(os, env["KILL_HOW"])(os.getppid(), signal.SIGKILL)
        time.sleep(60)
    open(f"t{task}.txt", "w").write(f"task {task}\\n")
    sys.stdout.write(f"did {task}" + ("\\0 with a NUL\\n" if env.get("CRASH_NUL") else "\\n"))
    sys.stdout.flush()
    note("end")
    if killer and env["KILL_PHASE"] == "after":
        getattr(os, env["KILL_HOW"])(os.getppid(), signal.SIGKILL)
        time.sleep(60)
""")

GIT_SHIM = textwrap.dedent("""\
    #!/bin/sh
    if [ -n "$KILL_GIT_AT" ]; then
      c=$(cat "$CRASH_GIT_COUNT" 2>/dev/null || echo 0); c=$((c + 1)); echo $c > "$CRASH_GIT_COUNT"
      if [ "$c" = "$KILL_GIT_AT" ] && grep -q orchestrator /proc/$PPID/cmdline; then
        {git} "$@" &
        [ "$KILL_GIT_DELAY" = 0 ] || sleep "$KILL_GIT_DELAY"
        eval "kill -9 $KILL_GIT_TARGET"
        wait
        exit 1
      fi
    fi
    exec {git} "$@"
""")


@dataclass
class Tally:
    kills: Counter[str] = field(default_factory=Counter)
    launches: int = 0
    runs: list[str] = field(default_factory=list)


def _plan(tmp: Path) -> Path:
    body = "# Crash\n" + "".join(
        f"## Task 1.{i}: Make t1.{i}.txt\n**Tests:**\n```bash\ntest -f t1.{i}.txt\n```\n"
        for i in range(1, TASKS + 1)
    )
    (tmp / "plan.md").write_text(body)
    return tmp / "plan.md"


def _repo(path: Path) -> None:
    """A user's repository: checkpoints go to its `orchestrator/<run>` branch and ref locks."""
    path.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (path / "README").write_text("user's project\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)


def _launch_env(tmp: Path, rng: random.Random, db: str, nul: bool) -> tuple[str, dict[str, str]]:
    """One launch's environment, with how (and whether) it will be killed."""
    env = {
        "ORCHESTRATOR_DB": db,
        "PATH": f"{tmp / 'shim'}{os.pathsep}{os.environ['PATH']}",
        "CRASH_LOG": str(tmp / "agents.log"),
        "CRASH_LOCK": str(tmp / "agents.lock"),
        "CRASH_AGENT_COUNT": str(tmp / "agent.count"),
        "CRASH_GIT_COUNT": str(tmp / "git.count"),
        "KILL_DEAF": "0",
        "KILL_PHASE": "none",
        "KILL_HOW": "kill",
    }
    if nul:
        env["CRASH_NUL"] = "1"
    for counter in ("agent.count", "git.count"):
        (tmp / counter).unlink(missing_ok=True)
    group = rng.random() < 0.5
    way = rng.choices(["timer", "agent", "git"], [0.4, 0.3, 0.3])[0]
    if way == "agent":
        env |= {
            "KILL_AGENT_AT": str(rng.randint(1, 3)),
            "KILL_PHASE": rng.choice(["before", "middle", "after"]),
            "KILL_DEAF": "1" if rng.random() < 0.25 else "0",
            "KILL_HOW": "killpg" if group else "kill",
        }
    elif way == "git":
        env |= {
            "KILL_GIT_AT": str(rng.randint(1, 14)),
            "KILL_GIT_DELAY": rng.choice(["0", "0.001", "0.003", "0.01"]),
            "KILL_GIT_TARGET": "-$PPID" if group else "$PPID",
        }
    return f"{way}/{'group' if group else 'alone'}", env


def _drive(tmp: Path, args: list[str], rng: random.Random, db: str, nul: bool, t: Tally) -> int:
    """One launch of the runner, killed as the RNG says; its exit code (-9: killed)."""
    way, env = _launch_env(tmp, rng, db, nul)
    t.launches += 1
    proc = cli_popen(tmp, *args, **env)
    try:
        out, err = proc.communicate(
            timeout=rng.uniform(0.5, 4.0) if way.startswith("timer") else 90
        )
    except subprocess.TimeoutExpired:
        if way.endswith("group"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        out, err = proc.communicate(timeout=30)
    with (tmp / "launches.log").open("a") as fh:
        fh.write(f"== {t.launches} {' '.join(args[:2])} {way} -> {proc.returncode}\n{out}\n{err}\n")
    if proc.returncode == -signal.SIGKILL:
        t.kills[way] += 1
    elif proc.returncode != 0:
        raise AssertionError(f"{args[0]} exited {proc.returncode} ({way}):\n{out}\n{err}")
    return proc.returncode


def _crash_run(tmp: Path, work: Path, rng: random.Random, db: str, nul: bool, t: Tally) -> str:
    """Run a plan in `work`, killing and resuming until a launch finishes it; its run id."""
    store = Store(db)
    try:
        while True:
            mine = [r["id"] for r in store.runs() if r["workdir"] == str(work.resolve())]
            args = (
                ["resume", mine[0]]
                if mine
                else ["run", str(tmp / "plan.md"), "--agent", "command", "--workdir", str(work)]
            )
            args += ["--agent-cmd", f"{sys.executable} {tmp / 'agent.py'} {{task_id}}"]
            if _drive(tmp, args, rng, db, nul, t) == 0:
                assert mine or store.runs(), "a finished run is in the store"
                return next(r["id"] for r in store.runs() if r["workdir"] == str(work.resolve()))
    finally:
        store.close()


def _check_run(tmp: Path, work: Path, run_id: str, db: str) -> None:
    store = Store(db)
    try:
        assert [t["status"] for t in store.tasks(run_id)] == ["COMPLETED"] * TASKS
        completed = Counter(
            a["task_id"] for a in store.attempts(run_id) if a["verdict"] == "completed"
        )
        assert completed == Counter({f"1.{i}": 1 for i in range(1, TASKS + 1)}), completed
        recorded = {e["payload"].get("label") for e in store.events(run_id, "checkpoint")}
        assert {f"1.{i}" for i in range(1, TASKS + 1)} <= recorded
    finally:
        store.close()
    log = subprocess.run(
        [
            "git",
            "-C",
            str(work),
            "log",
            "--format=%(trailers:key=Orchestrator-Checkpoint,valueonly)",
            f"orchestrator/{run_id}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert {f"1.{i}" for i in range(1, TASKS + 1)} <= set(log), log
    for i in range(1, TASKS + 1):  # each checkpoint holds its task's file
        show = subprocess.run(
            ["git", "-C", str(work), "show", f"orchestrator/{run_id}:t1.{i}.txt"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert show.stdout == f"task 1.{i}\n"
    locks = [p for p in (work / ".git").rglob("*.lock")]
    assert locks == [], f"left locked in the user's .git: {locks}"


def _check_agents(tmp: Path) -> None:
    lines = (tmp / "agents.log").read_text().splitlines()
    assert not [ln for ln in lines if ln.startswith("OVERLAP")], "two agents ran at once"
    last = None
    for ln in lines:  # an agent that ended saw no other start since its own
        what, _task, pid, _ = ln.split()
        if what == "end":
            assert pid == last, f"another agent started while {pid} ran: {ln}"
        last = pid if what == "start" else last
    pids = {int(ln.split()[2]) for ln in lines}
    alive = [p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in _state(p)]
    assert alive == [], f"agents still running: {alive}"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def _crash_test(tmp: Path, db: str, seed: int, *, nul: bool = False) -> Tally:
    real_git = shutil.which("git")
    assert real_git is not None
    (tmp / "shim").mkdir()
    shim = tmp / "shim" / "git"
    shim.write_text(GIT_SHIM.format(git=real_git))
    shim.chmod(0o755)
    (tmp / "agent.py").write_text(AGENT)
    _plan(tmp)
    rng = random.Random(seed)
    t = Tally()
    started = time.monotonic()
    while sum(t.kills.values()) < KILLS:
        work = tmp / f"w{len(t.runs) + 1}"
        _repo(work)
        run_id = _crash_run(tmp, work, rng, db, nul, t)
        t.runs.append(run_id)
        _check_run(tmp, work, run_id, db)
    _check_agents(tmp)
    print(
        f"\n{sum(t.kills.values())} kills ({dict(t.kills)}), {t.launches} launches, "
        f"{len(t.runs)} runs of {TASKS} tasks, {time.monotonic() - started:.0f}s"
    )
    return t


def test_kill_9_at_random_moments_then_resume_loses_and_repeats_nothing_sqlite(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'state.db'}"
    _crash_test(tmp_path, db, seed=8)
    with sqlite3.connect(tmp_path / "state.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.fixture
def pg_db() -> Iterator[str]:
    with pg_schema("crash_") as url:
        yield url


def test_kill_9_at_random_moments_then_resume_on_postgresql_with_nul_output(
    tmp_path: Path, pg_db: str
) -> None:
    _crash_test(tmp_path, pg_db, seed=80, nul=True)


SLOW_AGENT = textwrap.dedent("""\
    import os, subprocess, sys, time
    child = subprocess.Popen(["sh", "-c", "trap '' TERM; exec sleep 60"])  # deaf to SIGTERM
    open(sys.argv[1], "w").write(f"{os.getpid()} {child.pid}")
    time.sleep(60)
""")


def _slow_run(tmp: Path, pids: Path) -> subprocess.Popen[str]:
    """A one-task run whose agent (and its SIGTERM-deaf child) sleeps; returns once both run and
    their pids are in `pids` (written by the agent through a FIFO: no polling)."""
    (tmp / "agent.py").write_text(SLOW_AGENT)
    (tmp / "p.md").write_text("## Task 1.1: Slow\n**Description:** sleeps\n")
    fifo = tmp / "pids.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    proc = cli_popen(
        tmp,
        "run",
        "p.md",
        "--agent",
        "command",
        "--workdir",
        "w",
        "--agent-cmd",
        f"{sys.executable} {tmp / 'agent.py'} {fifo}",
    )
    data = b""
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(reader, selectors.EVENT_READ)
            while len(data.split()) < 2:
                assert sel.select(60), "the agent never wrote its pids"
                data += os.read(reader, 100)
    finally:
        os.close(reader)
    pids.write_bytes(data)
    return proc


def _gone(pids: Path) -> bool:
    return all(_state(int(p)) == "Z" for p in pids.read_text().split())


def test_sigterm_stops_the_run_like_ctrl_c_and_kills_the_agents_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    proc = _slow_run(tmp_path, pids)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, out + err
    assert _gone(pids), "the agent and its SIGTERM-deaf child were killed"
    with sqlite3.connect(tmp_path / "state.db") as conn:
        assert conn.execute("SELECT status, lock_owner FROM runs").fetchone() == (
            "INTERRUPTED",
            None,
        )
        assert conn.execute("SELECT verdict FROM attempts").fetchone() == ("interrupted",)


def test_an_agent_outliving_its_killed_runner_is_killed_before_resume_runs_anything(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    proc = _slow_run(tmp_path, pids)
    proc.kill()  # the runner alone: its agent (own process group) lives on
    proc.communicate(timeout=30)
    assert not _gone(pids)
    store = Store(f"sqlite:///{tmp_path / 'state.db'}")
    try:
        run_id = store.runs()[0]["id"]
        assert store.attempts(run_id)[0]["pgid"] == int(pids.read_text().split()[0])
        store.recover_interrupted(run_id)  # what `resume` does first
        assert _gone(pids)
        assert store.events(run_id, "processes_reaped")
    finally:
        store.close()


def test_the_run_lock_tells_a_recycled_pid_from_its_owner(tmp_path: Path) -> None:
    from orchestrator.models import Plan, Task

    store = Store(f"sqlite:///{tmp_path / 'state.db'}")
    try:
        store.create_run(
            "r1",
            Plan(path="p.md", format="milestone", tasks=[Task(id="1.1", title="t")]),
            tmp_path,
            "x",
            {},
        )
        token = store.acquire_lock("r1")
        with store.engine.begin() as conn:  # our PID, but someone else's start time: recycled
            conn.execute(text("UPDATE runs SET lock_started = 'other-boot:1'"))
        assert store.acquire_lock("r1") != token
        with store.engine.begin() as conn:  # no start time known: the heartbeat decides
            conn.execute(text("UPDATE runs SET lock_started = NULL"))
        with pytest.raises(Exception, match="already being driven"):
            store.acquire_lock("r1")
        with store.engine.begin() as conn:
            conn.execute(text("UPDATE runs SET lock_heartbeat = lock_heartbeat - 3600"))
        store.acquire_lock("r1")
    finally:
        store.close()
