"""A fleet of workers (issue 12, part 2): any number of `orchestrator worker` processes, on any
machines, run the ready tasks of every fleet run in one shared PostgreSQL store.

Dispatch, claiming, retries of dead workers' jobs and concurrency limits are procrastinate's
(a PostgreSQL job queue: no server beside the store). Each ready task is one job of the task
`orchestrator.run_task`, deferred with `queueing_lock` and `lock` = `<run>/<task>`: never queued
twice, never run by two workers at once. A worker heartbeats in procrastinate's `workers` table;
the periodic job `orchestrator.retry_stalled` (high priority, at most one queued) puts the jobs of
workers silent for `stall_timeout` back in the queue, and the worker that picks one up takes the
task over (`fleet_store.take_over`). A job drives its task to its next resting state
(`fleet_worker.run_task`) and defers the tasks that became ready.

A run enters the fleet by `submit`: its workdir's run branch (the `start` checkpoint) is pushed to
its origin, the run records that origin, and its ready tasks are queued.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from orchestrator import fleet_store
from orchestrator.models import UserError
from orchestrator.store import Store

if TYPE_CHECKING:
    from procrastinate import App

logger = logging.getLogger("orchestrator.fleet")
QUEUE = "orchestrator"
RUN_TASK = "orchestrator.run_task"
RETRY_STALLED = "orchestrator.retry_stalled"
STALL_TIMEOUT = 30.0
"""Seconds without a heartbeat after which a worker's jobs go to another worker."""
HEARTBEAT = 10.0
JOB_RETRIES = 2
"""A task's job that fails before its agent runs is tried this many more times, then the task
is paused with a question (`fleet_worker.escalate_error`)."""
_SCHEMA_LOCK = 0x0C4E57A7
"""pg_advisory_lock key: one process at a time applies procrastinate's schema."""


@dataclass
class FleetOutcome:
    run_id: str
    exit_code: int
    statuses: dict[str, str]


# -- the store and the engine -------------------------------------------------------------------
def conninfo(url: str) -> str:
    """The store's URL as libpq takes it; anything but PostgreSQL is refused in one line."""
    scheme = url.split("://", 1)[0] if "://" in url else url.split(":", 1)[0]
    if not scheme.startswith(("postgresql", "postgres")):
        raise UserError(
            f"the fleet needs a shared PostgreSQL store, not {scheme or 'this URL'}; "
            "pass --db postgresql://USER@HOST/DB (or set ORCHESTRATOR_DB)"
        )
    return "postgresql://" + url.split("://", 1)[1]


def open_store(db: str | None, config_file: Path | None = None) -> Store:
    """The shared store (PostgreSQL only: `--db`, `ORCHESTRATOR_DB` or `db` in the config)."""
    from orchestrator.config import resolve_db

    url, _ = resolve_db(db, config_file)
    conninfo(url)
    try:
        import procrastinate  # noqa: F401
    except ImportError:
        raise UserError(
            "the fleet needs procrastinate; install orchestrator with its `fleet` extra"
        ) from None
    return Store(url)


def ensure_schema(store: Store) -> None:
    """procrastinate's own tables, functions and types, applied once (idempotent, under an
    advisory lock so two workers starting together do not both apply it)."""
    import psycopg
    from procrastinate.schema import SchemaManager

    with psycopg.connect(conninfo(store.url), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
        try:
            row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is None or row[0] is None:
                with conn.transaction():
                    conn.execute(SchemaManager.get_schema())
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))


def make_app(store: Store, stall_timeout: float = STALL_TIMEOUT) -> App:
    """The procrastinate app: the job of one task, and the periodic retry of stalled jobs."""
    from procrastinate import App, PsycopgConnector, RetryStrategy

    app = App(connector=PsycopgConnector(conninfo=conninfo(store.url), min_size=1, max_size=8))

    @app.task(
        name=RUN_TASK,
        queue=QUEUE,
        pass_context=True,
        retry=RetryStrategy(max_attempts=JOB_RETRIES, wait=5),
    )
    def run_task(context: Any, run_id: str, task_id: str) -> None:
        from orchestrator import fleet_worker

        host: fleet_worker.Host = context.additional_context["host"]
        try:
            ready = fleet_worker.run_task(host, run_id, task_id)
        except UserError as exc:  # git or the run's settings: one line in the run and the log
            host.store.add_event(
                run_id, "fleet_error", {"worker": host.worker.name, "error": str(exc)}, task_id
            )
            if context.job.attempts < JOB_RETRIES:
                raise
            # the last try: a person is asked, or the run would stand still with nobody told
            try:
                fleet_worker.escalate_error(host, run_id, task_id, str(exc), JOB_RETRIES + 1)
            except UserError as again:
                logger.error("task %s of run %s: %s", task_id, run_id, again)
            raise
        defer(app, run_id, ready)

    every = max(1, min(59, int(stall_timeout // 3)))

    @app.periodic(cron=f"* * * * * */{every}", periodic_id="stalled")
    @app.task(name=RETRY_STALLED, queue=QUEUE, queueing_lock=RETRY_STALLED, priority=100)
    async def retry_stalled(timestamp: int) -> None:
        from procrastinate.jobs import Status

        manager = app.job_manager
        for job in await manager.get_stalled_jobs(
            queue=QUEUE, seconds_since_heartbeat=stall_timeout
        ):
            assert job.id is not None
            try:
                await manager.retry_job(job)
            except Exception:  # its task is queued again already (queueing lock): that job runs
                if await manager.get_job_status_async(job.id) == Status.DOING:
                    await manager.finish_job_by_id_async(job.id, Status.FAILED, False)

    return app


def defer(app: App, run_id: str, task_ids: list[str]) -> None:
    """Queue these tasks (a task already queued is not queued twice)."""
    from procrastinate.exceptions import AlreadyEnqueued

    for task_id in task_ids:
        key = f"{run_id}/{task_id}"
        with contextlib.suppress(AlreadyEnqueued):
            app.configure_task(RUN_TASK, queue=QUEUE, lock=key, queueing_lock=key).defer(
                run_id=run_id, task_id=task_id
            )


def is_fleet(store: Store, run_id: str) -> bool:
    return fleet_store.origin(store, run_id) is not None


def requeue(store: Store, run_id: str, task_id: str | None = None) -> list[str]:
    """Queue a fleet run's ready tasks again (and `task_id`, e.g. just answered); its status
    becomes RUNNING. What `answer` and `resume` do for a fleet run."""
    from orchestrator.plans import order

    run = store.run(run_id)
    if run is None:
        raise UserError(f"no run {run_id!r}; `orchestrator runs` lists them")
    if run["status"] != "RUNNING":
        store.set_run_status(run_id, "RUNNING")
    _, ready = fleet_store.settle(store, run_id, order(store.plan(run_id)))
    answered = {e["task_id"] for e in store.escalations(run_id) if e["status"] == "answered"}
    paused = [
        t["task_id"]
        for t in store.tasks(run_id)
        if t["status"] == "PAUSED_FOR_INTERVENTION" and t["task_id"] in answered
    ]
    wanted = list(dict.fromkeys([*ready, *paused, *([task_id] if task_id else [])]))
    ensure_schema(store)
    app = make_app(store)
    with app.open():
        defer(app, run_id, wanted)
    return wanted


# -- a run enters the fleet ------------------------------------------------------------------------
def _origin_of(top: Path, given: str | None) -> str:
    """The origin the workers clone: given, else the repository's `origin` remote; a local
    path made absolute. A URL carrying a password is refused (workers use their own)."""
    from orchestrator.fleet_worker import git

    value = given
    if value is None:
        res = git("remote", "get-url", "origin", cwd=top, check=False)
        value = res.stdout.strip() if res.returncode == 0 else ""
    if not value:
        raise UserError(
            "this run has no origin for the workers to clone: the workdir's repository has no "
            "`origin` remote; add one or pass --origin URL"
        )
    if "://" in value and urlsplit(value).password:
        raise UserError(
            "the origin URL carries a password, which is never stored; give workers a git "
            "credential helper or an SSH key, and pass the URL without it"
        )
    if "://" not in value and not Path(value).is_absolute() and (top / value).exists():
        value = str((top / value).resolve())
    return value


def submit(
    plan_path: str | Path,
    *,
    origin: str | None = None,
    config_file: Path | None = None,
    **overrides: Any,
) -> str:
    """Record a new run for the fleet and queue its ready tasks; returns the run id. Its
    workdir must be in a git repository: the run branch (from the current HEAD and, with
    `allow_dirty`, the files as they are) is pushed to the origin the workers clone."""
    from orchestrator import api, preflight
    from orchestrator.artifacts import run_folder, state_dir_for
    from orchestrator.checkpoints import Checkpoints
    from orchestrator.config import redact
    from orchestrator.fleet_worker import git
    from orchestrator.plans import load_plan, order
    from orchestrator.plans.verification import with_verification

    settings, _ = api.settings_for(overrides, config_file)
    store = open_store(settings.db, config_file)
    path = Path(plan_path)
    plan = with_verification(load_plan(path)) if settings.verify_milestone else load_plan(path)
    preflight.check_task_programs(settings, plan)
    agent = api.make_agent(settings, path)
    preflight.check(settings, plan, Path(settings.workdir))
    workdir = Path(settings.workdir).resolve()
    run_id = api.new_run_id()
    meta = redact(settings.model_dump()) | {
        "state_dir": str(state_dir_for(store.url)),
        "plan_file": str(path.resolve()),
        "scenario": str(Path(settings.scenario).resolve()) if settings.scenario else None,
        "workdir": str(workdir),
    }
    cp = Checkpoints(workdir, run_folder(meta, run_id), run_id)
    if cp.private:
        raise UserError("the fleet needs the workdir inside a git repository with an origin")
    top = Path(git("rev-parse", "--show-toplevel", cwd=workdir).stdout.strip())
    url = _origin_of(top, origin)
    cp.preflight(settings.allow_dirty)
    meta["fleet_prefix"] = cp.prefix
    cp.baseline()
    res = git("push", "-q", url, f"{cp.ref}:{cp.ref}", cwd=top, check=False)
    if res.returncode != 0:
        first = (res.stderr.strip() or "exit status " + str(res.returncode)).splitlines()[0]
        raise UserError(f"cannot push the run branch to the origin: {first}")
    ensure_schema(store)
    store.create_run(run_id, plan, workdir, agent.name, meta)
    fleet_store.set_origin(store, run_id, url)
    _, ready = fleet_store.settle(store, run_id, order(plan))
    app = make_app(store)
    with app.open():
        defer(app, run_id, ready)
    return run_id


def watch(store: Store, run_id: str, out: Any = None, every: float = 1.0) -> FleetOutcome:
    """Print each task's changes (and the worker running it) until the run rests: COMPLETED
    (0), FAILED (1) or PAUSED for a person (3). Reads the store only."""
    out = out or sys.stdout
    seen: dict[str, tuple[str, str | None]] = {}
    while True:
        run = store.run(run_id)
        assert run is not None
        workers: dict[str, str | None] = {}
        for a in store.attempts(run_id):
            workers[a["task_id"]] = a["worker"]
        tasks = store.tasks(run_id)
        for t in tasks:
            now = (t["status"], workers.get(t["task_id"]))
            if seen.get(t["task_id"]) != now:
                seen[t["task_id"]] = now
                where = f" on {now[1]}" if now[1] and now[0] != "PENDING" else ""
                print(f"task {t['task_id']}: {now[0]}{where}", file=out, flush=True)
        if run["status"] in ("COMPLETED", "FAILED", "PAUSED"):
            code = {"COMPLETED": 0, "FAILED": 1}.get(run["status"], 3)
            print(f"run {run_id}: {run['status']}", file=out, flush=True)
            return FleetOutcome(run_id, code, {t["task_id"]: t["status"] for t in tasks})
        time.sleep(every)


def bring_home(store: Store, run_id: str) -> None:
    """The run branch fetched from the origin into the workdir's repository, and the
    workdir's files made equal to its head (as a sequential run leaves them)."""
    from orchestrator.artifacts import run_folder
    from orchestrator.checkpoints import Checkpoints
    from orchestrator.fleet_worker import git

    run = store.run(run_id)
    url = fleet_store.origin(store, run_id)
    assert run is not None and url is not None
    workdir = Path(run["workdir"])
    cp = Checkpoints(workdir, run_folder(json.loads(run["settings_json"]), run_id), run_id)
    git("fetch", "-q", url, f"+{cp.ref}:{cp.ref}", cwd=workdir)
    cp.reread()
    cp.sync_to_tip()


# -- a worker ------------------------------------------------------------------------------------
def work(
    db: str | None = None,
    *,
    name: str | None = None,
    concurrency: int = 1,
    stall_timeout: float = STALL_TIMEOUT,
    heartbeat: float = HEARTBEAT,
    folder: Path | None = None,
    config_file: Path | None = None,
) -> None:
    """Run fleet jobs until SIGINT or SIGTERM (the running tasks finish first). `folder`: the
    worker's clones and run files (default: the user cache directory, by worker name)."""
    import fcntl

    import platformdirs

    from orchestrator.agents.process import supervised
    from orchestrator.fleet_worker import Host, reap_orphans
    from orchestrator.worktrees import slug

    if concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    if not 0 < heartbeat < stall_timeout:
        raise UserError("--heartbeat must be positive and shorter than --stall-timeout")
    store = open_store(db, config_file)
    worker = fleet_store.Worker.me(name)
    base = folder or Path(platformdirs.user_cache_dir("orchestrator", appauthor=False)) / "fleet"
    host = Host(store, worker, (base / slug(worker.name)).resolve())
    host.folder.mkdir(parents=True, exist_ok=True)
    held = (host.folder / "worker.lock").open("w")  # one worker per folder: its clones are its own
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        held.close()
        raise UserError(
            f"another worker uses {host.folder}; give each worker on a machine its own --name"
        ) from None
    ensure_schema(store)
    reaped = reap_orphans(store, worker)
    print(
        f"worker {worker.name}: {concurrency} at a time, files in {host.folder}"
        + (f"; killed {len(reaped)} orphaned agent process(es)" if reaped else ""),
        flush=True,
    )
    app = make_app(store, stall_timeout)
    with supervised(worker.mark, host.record_process):
        app.run_worker(
            queues=[QUEUE],
            name=worker.name,
            concurrency=concurrency,
            update_heartbeat_interval=heartbeat,
            stalled_worker_timeout=stall_timeout,
            delete_jobs="successful",
            additional_context={"host": host},
        )
    store.close()
    held.close()
