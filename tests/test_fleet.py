"""The fleet (issue 12, part 2) on the real PostgreSQL: `orchestrator submit` queues a plan,
two `orchestrator worker` processes (real subprocesses, real git, a bare repository as the
origin) run it; one is killed with SIGKILL mid-task and the other takes its task over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import pg_schema
from tests.helpers import cli_env
from tests.test_parallel import git

from orchestrator.store import Store

pytestmark = pytest.mark.postgres

# Each run writes its task's file with the worker's identity. The first worker to start a second
# task sleeps there (the one test kills): its agent outlives it until it is reaped.
AGENT = textwrap.dedent("""\
    import os, sys, time
    task, me, log = sys.argv[1], os.environ["FLEET_ID"], os.environ["FLEET_LOG"]
    with open(log) as fh:
        mine = sum(1 for line in fh if line.split()[1] == me)
    long = False
    if mine == 1:
        try:
            os.close(os.open(log + ".victim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            long = True
        except FileExistsError:
            pass
    with open(log, "a") as fh:
        fh.write(f"start {me} {task} {os.getpid()} {'long' if long else 'short'}\\n")
    time.sleep(60 if long else 0.3)
    with open(f"out-{task}.txt", "w") as fh:
        fh.write(f"{task} by {me}\\n")
    print("STATUS: completed")
""")


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A schema of its own on the test server: our tables and procrastinate's."""
    with pg_schema("f_") as url:
        yield url


def project(tmp: Path, *, with_origin: bool = True) -> tuple[Path, Path]:
    """A bare origin and a clone of it with one commit on main."""
    origin = tmp / "origin.git"
    work = tmp / "work"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(origin))
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "README").write_text("project\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "initial")
    if with_origin:
        git(work, "remote", "add", "origin", str(origin))
        git(work, "push", "-q", "origin", "main")
    return origin, work


def plan(tmp: Path, n: int) -> Path:
    body = "\n".join(
        f"## Task {i}: Step {i}\n\n**Type:** CODING\n\n**Description:**\nWrite out-{i}.txt.\n"
        for i in range(1, n + 1)
    )
    path = tmp / "plan.md"
    path.write_text(f"# Fleet milestone\n\n{body}")
    return path


def orchestrator(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        cwd=tmp,
        env=cli_env(tmp, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def submit(
    tmp: Path, work: Path, db: str, tasks: int, agent_cmd: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """`orchestrator submit` of an n-task plan with `--agent command`."""
    return orchestrator(
        tmp, "submit", str(plan(tmp, tasks)), "--workdir", str(work), "--db", db,
        "--agent", "command", "--agent-cmd", agent_cmd, *extra,
    )  # fmt: skip


def stop(*workers: subprocess.Popen[str]) -> None:
    """SIGTERM (a clean stop), then SIGKILL for a worker still there after 30 s."""
    for w in workers:
        if w.poll() is None:
            w.send_signal(signal.SIGTERM)
    for w in workers:
        try:
            w.wait(timeout=30)
        except subprocess.TimeoutExpired:
            w.kill()


def start_worker(tmp: Path, db: str, name: str) -> tuple[subprocess.Popen[str], Path]:
    log = tmp / f"worker-{name}.log"
    args = ["worker", "--db", db, "--name", name, "--stall-timeout", "2", "--heartbeat", "0.5"]
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", *args, "--folder", str(tmp / f"w-{name}")],
            cwd=tmp,
            env=cli_env(tmp, FLEET_ID=name, FLEET_LOG=str(tmp / "agents.log")),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    return proc, log


def starts(tmp: Path) -> list[tuple[str, str, int, bool]]:
    """(worker, task, agent pid, the long sleep) per agent run."""
    lines = (tmp / "agents.log").read_text().splitlines()
    return [(w, t, int(p), k == "long") for _, w, t, p, k in (ln.split() for ln in lines)]


def until(what: str, check: object, logs: list[Path], limit: float = 90.0) -> None:
    """Wait for `check()` (a bound, not a measurement); on the bound, fail with the logs."""
    deadline = time.monotonic() + limit
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in logs if p.exists())
            pytest.fail(f"{what} did not happen\n{tails}")
        time.sleep(0.2)


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state == "Z"


def test_two_workers_run_a_plan_and_one_takes_over_a_killed_workers_task(
    tmp_path: Path, pg_url: str
) -> None:
    origin, work = project(tmp_path)
    (tmp_path / "agents.log").write_text("")
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    submitted = submit(
        tmp_path, work, pg_url, 6, f"{sys.executable} {script} {{task_id}}", "--no-wait"
    )
    assert submitted.returncode == 0, submitted.stderr
    run_id = submitted.stdout.split()[1]
    a, a_log = start_worker(tmp_path, pg_url, "A")
    b, b_log = start_worker(tmp_path, pg_url, "B")
    logs = [a_log, b_log]
    store = Store(pg_url)
    try:
        until(
            "a worker starting its second task", lambda: any(s[3] for s in starts(tmp_path)), logs
        )
        victim, cut_task, orphan, _ = next(s for s in starts(tmp_path) if s[3])
        killed, survivor = (a, "B") if victim == "A" else (b, "A")
        killed.kill()  # SIGKILL: no goodbye, its agent left running
        killed.wait()

        def finished() -> bool:
            run = store.run(run_id)
            return run is not None and run["status"] in ("COMPLETED", "FAILED", "PAUSED")

        until("the run finishing", finished, logs)
        run = store.run(run_id)
        assert run is not None and run["status"] == "COMPLETED", run
        attempts = [dict(r) for r in store.attempts(run_id)]
        for t in store.tasks(run_id):
            done = [
                x for x in attempts if x["task_id"] == t["task_id"] and x["verdict"] == "completed"
            ]
            assert t["status"] == "COMPLETED" and len(done) == 1, (t, attempts)
        completed_by = {x["worker"] for x in attempts if x["verdict"] == "completed"}
        assert completed_by == {"A", "B"}, attempts  # work from both workers
        cut = [x for x in attempts if x["task_id"] == cut_task]
        assert [(x["worker"], x["verdict"]) for x in cut] == [
            (victim, "interrupted"),
            (survivor, "completed"),
        ]

        until("the killed worker's agent being reaped", lambda: gone(orphan), logs, limit=15)

        branch = f"orchestrator/{run_id}"
        files = git(origin, "ls-tree", "-r", "--name-only", branch).split()
        assert sorted(f for f in files if f.startswith("out-")) == [
            f"out-{i}.txt" for i in range(1, 7)
        ]
        assert git(origin, "show", f"{branch}:out-{cut_task}.txt") == f"{cut_task} by {survivor}\n"
        shown = orchestrator(tmp_path, "status", run_id, "--db", pg_url, "--json")
        assert f'"worker": "{survivor}"' in shown.stdout
    finally:
        stop(a, b)
        store.close()
    alive = b if survivor == "B" else a
    assert alive.returncode == 0, [p.read_text()[-2000:] for p in logs]  # SIGTERM: clean stop


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, pg_url: str) -> None:
    _, work = project(tmp_path, with_origin=False)
    no_db = orchestrator(tmp_path, "worker", ORCHESTRATOR_DB="")
    sqlite = orchestrator(tmp_path, "worker", "--db", f"sqlite:///{tmp_path / 's.db'}")
    down = orchestrator(tmp_path, "worker", "--db", "postgresql://postgres@127.0.0.1:1/none")
    no_origin = submit(tmp_path, work, pg_url, 1, "true", "--no-wait")
    for res, says in (
        (no_db, "needs a shared PostgreSQL store"),
        (sqlite, "needs a shared PostgreSQL store"),
        (down, "cannot open the state database"),
        (no_origin, "has no origin"),
    ):
        assert res.returncode == 2, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and says in res.stderr, res.stderr
        assert "Traceback" not in res.stderr


SAME_FILE = textwrap.dedent("""\
    import sys, time
    time.sleep(1)
    with open("same.txt", "w") as fh:
        fh.write(f"written by task {sys.argv[1]}\\n")
    print("STATUS: completed")
""")


def test_a_conflicting_merge_escalates_with_its_worker_and_an_answer_requeues_it(
    tmp_path: Path, pg_url: str
) -> None:
    """Two tasks side by side on one worker (--concurrency 2) write the same file: one merges,
    the other conflicts on the pushed head too and asks a person; `escalations` and the web
    page say which worker; answering (skip) queues the task again and the run completes."""
    from starlette.testclient import TestClient

    from orchestrator.web.app import create_app

    origin, work = project(tmp_path)
    script = tmp_path / "agent.py"
    script.write_text(SAME_FILE)
    submitted = submit(
        tmp_path, work, pg_url, 2, f"{sys.executable} {script} {{task_id}}", "--no-wait"
    )
    assert submitted.returncode == 0, submitted.stderr
    run_id = submitted.stdout.split()[1]
    log = tmp_path / "worker-W.log"
    with log.open("w") as out:
        w = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "worker", "--db", pg_url, "--name", "W",
             "--concurrency", "2", "--folder", str(tmp_path / "w")],
            cwd=tmp_path, env=cli_env(tmp_path), stdout=out, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    store = Store(pg_url)
    try:

        def status() -> str:
            run = store.run(run_id)
            return run["status"] if run else "?"

        until("the run pausing for a person", lambda: status() in ("PAUSED", "COMPLETED"), [log])
        [esc] = store.escalations(run_id, open_only=True)
        assert esc["category"] == "merge_conflict" and "same.txt" in esc["question"]
        shown = orchestrator(tmp_path, "escalations", "--db", pg_url)
        assert f"#{esc['id']}" in shown.stdout and "worker W" in shown.stdout, shown.stdout
        kept = f"orchestrator/{run_id}--{esc['task_id']}"
        assert kept in git(origin, "for-each-ref", "--format=%(refname:short)")
        app = create_app(store, token=None, loopback=True)
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            page = client.get(f"/runs/{run_id}").text
            assert "· worker W" in page and "<th>Worker</th>" in page
            assert client.get("/api/escalations").json()["escalations"][0]["worker"] == "W"

        answered = orchestrator(tmp_path, "answer", str(esc["id"]), "--skip", "--db", pg_url)
        assert answered.returncode == 0, answered.stderr
        until("the run completing after the answer", lambda: status() == "COMPLETED", [log])
        statuses = sorted(t["status"] for t in store.tasks(run_id))
        assert statuses == ["COMPLETED", "SKIPPED"]
        branch = f"orchestrator/{run_id}"
        assert git(origin, "show", f"{branch}:same.txt").startswith("written by task")
    finally:
        stop(w)
        store.close()


def test_a_dead_workers_agent_is_reaped_when_a_worker_starts_on_its_machine(
    store: Store, tmp_path: Path
) -> None:
    """The worker died elsewhere in time: its attempt was taken over (interrupted) while its
    agent went on; the next worker started on this machine kills that agent first."""
    from orchestrator.agents.process import MARK_VAR
    from orchestrator.fleet_store import Worker, record_worker, take_over
    from orchestrator.fleet_worker import reap_orphans
    from orchestrator.plans import load_plan

    gone_pid = subprocess.Popen(["true"])
    gone_pid.wait()
    dead = Worker("old", Worker.me().host, gone_pid.pid, "boot:1")
    agent = subprocess.Popen(
        ["sleep", "60"], env={**os.environ, MARK_VAR: dead.mark}, start_new_session=True
    )
    try:
        p = load_plan(plan(tmp_path, 1))
        store.create_run("r1", p, tmp_path, "command", {})
        store.begin_attempt("r1", "1", tmp_path / "runs" / "1", "command", None, 1)
        record_worker(store, "r1", "1", 1, dead)
        store.record_process("r1", agent.pid, ("1", 1))
        [cut] = take_over(store, "r1", "1", Worker.me("new"))  # elsewhere: nothing to kill here
        assert cut["worker"] == "old"
        assert agent.poll() is None
        assert agent.pid in reap_orphans(store, Worker.me("new"))
        assert agent.wait(timeout=10) is not None
        [row] = store.attempts("r1")
        assert row["verdict"] == "interrupted" and row["pgid"] is None
        assert reap_orphans(store, Worker.me("new")) == []  # forgotten once reaped
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()


def test_submit_follows_the_run_and_brings_the_workdir_to_its_result(
    tmp_path: Path, pg_url: str
) -> None:
    """Without --no-wait, `submit` prints each task's status and worker until the run completes,
    exits 0 and leaves the workdir's files as the run branch has them; `resume` of a finished
    fleet run queues nothing."""
    _, work = project(tmp_path)
    (tmp_path / "agents.log").write_text("")
    (tmp_path / "agents.log.victim").write_text("")  # no agent sleeps long here
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    w, log = start_worker(tmp_path, pg_url, "W")
    try:
        res = submit(tmp_path, work, pg_url, 2, f"{sys.executable} {script} {{task_id}}")
        assert res.returncode == 0, res.stdout + res.stderr + log.read_text()
        assert "task 1: COMPLETED on W" in res.stdout and "task 2: COMPLETED on W" in res.stdout
        assert (work / "out-1.txt").read_text() == "1 by W\n"
        assert (work / "out-2.txt").read_text() == "2 by W\n"
        run_id = res.stdout.split("run ")[-1].split(":")[0]
        again = orchestrator(tmp_path, "resume", run_id, "--db", pg_url)
        assert again.returncode == 0 and "0 task(s) queued" in again.stdout, again.stdout
    finally:
        stop(w)


def test_a_task_its_worker_cannot_start_asks_a_person_and_the_answer_runs_it(
    tmp_path: Path, pg_url: str
) -> None:
    """The agent program is missing on the worker: after the job's last try the task is paused
    with a question saying so (not left PENDING with nobody told); once the program is back,
    `answer --retry` queues it again and the run completes."""
    _, work = project(tmp_path)
    program = tmp_path / "bin" / "agent"
    program.parent.mkdir()
    program.write_text('#!/bin/sh\necho "$1" > "out-$1.txt"\necho STATUS: completed\n')
    program.chmod(0o755)
    submitted = submit(tmp_path, work, pg_url, 1, f"{program} {{task_id}}", "--no-wait")
    assert submitted.returncode == 0, submitted.stderr
    run_id = submitted.stdout.split()[1]
    hidden = program.rename(tmp_path / "agent.away")  # gone from this worker's machine
    w, log = start_worker(tmp_path, pg_url, "W")
    store = Store(pg_url)
    try:
        until(
            "the task pausing with a question",
            lambda: store.escalations(run_id, open_only=True),
            [log],
            limit=120,
        )
        [esc] = store.escalations(run_id, open_only=True)
        assert esc["category"] == "external_service", esc
        assert "Worker W could not start task 1" in esc["question"], esc["question"]
        assert str(program) in esc["question"], esc["question"]
        assert store.task(run_id, "1")["status"] == "PAUSED_FOR_INTERVENTION"
        shown = orchestrator(tmp_path, "escalations", "--db", pg_url)
        assert f"#{esc['id']}" in shown.stdout, shown.stdout
        hidden.rename(program)
        answered = orchestrator(tmp_path, "answer", str(esc["id"]), "--retry", "--db", pg_url)
        assert answered.returncode == 0, answered.stderr

        def status() -> str:
            run = store.run(run_id)
            return run["status"] if run else "?"

        until("the run completing after the answer", lambda: status() == "COMPLETED", [log])
        assert store.task(run_id, "1")["status"] == "COMPLETED"
    finally:
        stop(w)
        store.close()
