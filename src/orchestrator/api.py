"""The Python API; the CLI is a thin shell over these functions.

>>> from orchestrator import api
>>> outcome = api.run("examples/hello.md", agent="replay", workdir="/tmp/hello")   # doctest: +SKIP
>>> outcome.exit_code, outcome.statuses                                            # doctest: +SKIP
(0, {'1.1': 'COMPLETED', '1.2': 'COMPLETED', '1.3': 'COMPLETED'})
"""

from __future__ import annotations

import json
import secrets
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator import preflight
from orchestrator.agents.base import Agent
from orchestrator.artifacts import run_folder, state_dir_for
from orchestrator.config import (
    Settings,
    Sources,
    flatten,
    legacy_notice,
    load_settings,
    redact,
    resolve_db,
    setting_names,
)
from orchestrator.console import Reporter
from orchestrator.humans import Answer, answer_from_flags, record_answer
from orchestrator.models import UserError
from orchestrator.plans import load_plan
from orchestrator.plans.verification import with_verification
from orchestrator.redaction import REDACTED
from orchestrator.rows import EscalationRow, TaskRow
from orchestrator.store import AlreadyAnswered, Row, Store, answered_message

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from contextlib import AbstractAsyncContextManager

    from starlette.types import ASGIApp

    from orchestrator.checkpoints import Checkpoints
    from orchestrator.runner import Runner, RunOutcome


def open_store(
    db: str | None = None, settings: Settings | None = None, config_file: Path | None = None
) -> Store:
    """The store every command uses, chosen the same way (`config.resolve_db`): `--db`,
    `ORCHESTRATOR_DB`, `db` in the config, an older `./.orchestrator/state.db` (with a notice
    saying how to move it), else the home store."""
    url, source = resolve_db(db or (settings.db if settings else None), config_file)
    if source == "legacy":
        print(legacy_notice(url), file=sys.stderr)
    return Store(url)


def settings_for(
    overrides: dict[str, Any] | None = None, config_file: Path | None = None
) -> tuple[Settings, Sources]:
    return load_settings(overrides=overrides or {}, config_file=config_file)


def make_agent(settings: Settings, plan_path: Path) -> Agent:
    """The adapter named by `settings.agent`; its preflight runs here so bad set-up fails at start (exit 2)."""
    from orchestrator.agents import registry

    return registry.create(settings.agent, settings, plan_path)


def new_run_id() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def run(
    plan_path: str | Path,
    *,
    reporter: Reporter | None = None,
    interactive: bool | None = None,
    config_file: Path | None = None,
    **overrides: Any,
) -> RunOutcome:
    """Start a new run of a plan. `overrides` are settings by name (agent="replay", max_attempts=3, …)."""
    settings, _ = settings_for(overrides, config_file)
    path = Path(plan_path)
    plan = with_verification(load_plan(path)) if settings.verify_milestone else load_plan(path)
    preflight.check_task_programs(settings, plan)  # a task's own cli_path is named first
    if settings.parallel > 1 and not settings.checkpoints:
        raise UserError("--parallel needs git checkpoints (tasks run in git worktrees)")
    agent = make_agent(settings, path)
    preflight.check(settings, plan, Path(settings.workdir))  # before anything is recorded
    workdir = Path(settings.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    store = open_store(settings.db, config_file=config_file)
    run_id = new_run_id()
    meta = redact(settings.model_dump()) | {
        "state_dir": str(state_dir_for(store.url)),
        "plan_file": str(path.resolve()),
        "scenario": str(Path(settings.scenario).resolve()) if settings.scenario else None,
        "workdir": str(workdir),
    }
    checkpoints = None
    if settings.checkpoints:  # a dirty tree is refused (unless allowed) before anything is recorded
        from orchestrator.checkpoints import Checkpoints

        checkpoints = Checkpoints(workdir, run_folder(meta, run_id), run_id)
        checkpoints.preflight(settings.allow_dirty)
        checkpoints.baseline()
    token = store.create_run(run_id, plan, workdir, agent.name, meta, locked=True)
    assert token is not None
    try:
        runner = build_runner(store, run_id, settings, agent, reporter, interactive, checkpoints)
    except BaseException:
        store.release_lock(run_id, token)  # resumable, by this process too
        raise
    return runner.execute(token=token)


def build_runner(
    store: Store,
    run_id: str,
    settings: Settings,
    agent: Agent,
    reporter: Reporter | None,
    interactive: bool | None,
    checkpoints: Checkpoints | None,
) -> Runner:
    """The loop with its observers: the console, git checkpoints and seed 002's escalation files."""
    from orchestrator.events import Bus
    from orchestrator.humans import ask_in_terminal
    from orchestrator.ladder import Consultant
    from orchestrator.observers.checkpoints import CheckpointObserver
    from orchestrator.observers.console import ConsoleObserver
    from orchestrator.observers.files import EscalationFiles
    from orchestrator.runner import (  # the loop and its judge load only to drive a run
        Runner,
        RunStopped,
    )

    report = reporter or Reporter()
    lanes = None
    if settings.parallel > 1 and checkpoints is not None:  # tasks side by side, in worktrees
        from orchestrator.parallel import Lanes, LockedBus

        lanes = Lanes(checkpoints, settings.parallel, RunStopped)
        bus: Bus = LockedBus()
    else:
        bus = Bus()

    runner = Runner(
        store,
        run_id,
        settings,
        agent,
        bus=bus,
        ask=lambda esc: ask_in_terminal(report.console, esc, store),  # races remote answers
        interactive=interactive,
    )
    if lanes is not None:
        from orchestrator.observers.lanes import LanesConsole

        runner.lanes = lanes
        console: ConsoleObserver = LanesConsole(report, runner.mode)
    else:
        console = ConsoleObserver(report, runner.mode)
    bus.observers += [console, EscalationFiles(runner.folder)]
    if settings.notify.urls:  # told before the run waits: EscalationOpened comes first
        from orchestrator.observers.notify import Notifier

        bus.observers.append(Notifier(settings.notify, store))
    from orchestrator import telemetry  # OpenTelemetry itself loads only when an endpoint is set

    bus.observers += telemetry.observers(settings, store, run_id)
    if lanes is not None:
        from orchestrator.parallel import MergedCheckpoints

        bus.critical.append(MergedCheckpoints(lanes, store, bus))
    elif checkpoints is not None:
        bus.critical.append(CheckpointObserver(checkpoints, store, bus))
    revert = checkpoints if lanes is None else None  # in worktrees, the workdir is not reverted
    runner.consult = Consultant(
        store, run_id, runner.plan, settings, agent.name, runner.judge.llm, revert, bus
    )
    return runner


def _holds_secret(value: Any) -> bool:
    """A stored value with a secret cut out of it (`--token=<redacted>`): unusable as it is."""
    if isinstance(value, str):
        return REDACTED in value
    return isinstance(value, list) and any(_holds_secret(v) for v in value)


def resume_settings(
    meta: dict[str, Any], overrides: dict[str, Any], config_file: Path | None = None
) -> Settings:
    """The run's own settings, then flags given now. Redacted secrets come from config, env and
    flags again; a value a secret was cut out of (an `--agent-cmd` with a token) must be given
    again, else the resume is refused (exit 2) rather than run with half a command."""
    own = flatten({k: v for k, v in meta.items() if k in setting_names() and k != "db"})
    stored = {k: v for k, v in own.items() if v != REDACTED and not _holds_secret(v)}
    given = {k: v for k, v in overrides.items() if v is not None}
    settings, sources = load_settings(overrides=stored | given, config_file=config_file)
    for key in (k for k, v in own.items() if v != REDACTED and _holds_secret(v)):
        if key not in sources:
            flag, var = key.replace("_", "-").replace(".", "-"), key.upper().replace(".", "__")
            raise UserError(
                f"this run's {key} held a secret, which is never stored; give it again "
                f"(--{flag}, ORCHESTRATOR_{var} or orchestrator.toml)"
            )
    return settings


@dataclass
class _SaveSettings:
    """Writes a resume's settings once the run is locked (at RunStarted): a resume refused for a
    lock, a bad flag or a bad agent records nothing."""

    store: Store
    run_id: str
    meta: dict[str, Any]

    def notify(self, event: object) -> None:
        from orchestrator.events import RunStarted

        if isinstance(event, RunStarted):
            self.store.update_settings(self.run_id, self.meta)


def resume(
    run_id: str | None = None,
    *,
    db: str | None = None,
    reporter: Reporter | None = None,
    interactive: bool | None = None,
    config_file: Path | None = None,
    **overrides: Any,
) -> RunOutcome:
    """Continue a run after Ctrl-C, a crash, kill -9 or a human's answer; takes the same settings
    as run(). Validate, lock, then write: the flags are recorded only once the runner holds the lock."""
    store = open_store(db or overrides.get("db"), config_file=config_file)
    run_id = run_id or store.latest_run_id()
    if run_id is None:
        raise UserError("there are no runs to resume; start one with `orchestrator run PLAN`")
    row = store.run(run_id)
    if row is None:
        raise UserError(f"no run {run_id!r}; `orchestrator runs` lists them")
    from orchestrator import fleet

    if fleet.is_fleet(store, run_id):  # its ready and answered tasks go back to the workers
        from orchestrator.runner import RunOutcome

        queued = fleet.requeue(store, run_id)
        print(f"run {run_id} is a fleet run: {len(queued)} task(s) queued for the workers")
        return RunOutcome(run_id, 0, {t["task_id"]: t["status"] for t in store.tasks(run_id)})
    meta = json.loads(row["settings_json"])
    settings = resume_settings(meta, overrides, config_file)
    was_parallel = int(meta.get("parallel") or 1) > 1
    if settings.parallel > 1 and not settings.checkpoints:
        raise UserError("--parallel needs git checkpoints (tasks run in git worktrees)")
    agent = make_agent(settings, Path(meta.get("plan_file", row["plan_path"])))
    preflight.check(settings, store.plan(run_id), Path(row["workdir"]))
    meta |= redact(settings.model_dump())
    checkpoints = None
    if (
        settings.checkpoints
    ):  # no dirty-tree check: this run's own interrupted work must not block it
        from orchestrator.checkpoints import Checkpoints

        checkpoints = Checkpoints(Path(row["workdir"]), run_folder(meta, run_id), run_id)
    runner = build_runner(store, run_id, settings, agent, reporter, interactive, checkpoints)
    if was_parallel and settings.parallel == 1 and checkpoints is not None:
        from orchestrator.parallel import Rejoin  # its worktrees go, the workdir gets its work

        runner.bus.critical.insert(0, Rejoin(checkpoints))
    elif not was_parallel and settings.parallel > 1 and checkpoints is not None:
        from orchestrator.parallel import Fork  # the workdir's uncommitted last task is kept

        runner.bus.critical.insert(0, Fork(checkpoints, store, runner.bus))
    runner.bus.critical.insert(0, _SaveSettings(store, run_id, meta))
    return runner.execute(resumed=True)


def answer(
    esc_id: int,
    text: str | None = None,
    *,
    option: str | None = None,
    recommended: bool = False,
    retry: bool = False,
    skip: bool = False,
    abort: bool = False,
    db: str | None = None,
    responder: str | None = None,
    channel: str = "cli",
    config_file: Path | None = None,
    store: Store | None = None,
) -> EscalationRow:
    """Answer an open escalation once; `resume` then acts on it (a waiting runner acts at once).
    `store`: an open store to use (a long-lived server), instead of opening one per call."""
    store = store or open_store(db, config_file=config_file)
    esc = store.escalation(esc_id)
    if esc is None:
        raise UserError(f"no escalation {esc_id}; `orchestrator escalations` lists the open ones")
    if esc["status"] == "answered":
        raise AlreadyAnswered(answered_message(esc))
    from orchestrator.consultant import read_user_decision, write_user_decision
    from orchestrator.observers.files import level2_for

    run = store.run(esc["run_id"])
    folder = None
    if run is not None:
        task_dir = run_folder(json.loads(run["settings_json"]), esc["run_id"]) / esc["task_id"]
        folder = level2_for(task_dir / "escalation", esc_id)
    if folder is not None and read_user_decision(folder) is not None:
        raise AlreadyAnswered(
            f"escalation {esc_id} was already answered in {folder / 'user-decision.json'}; "
            "`orchestrator resume` applies it"
        )
    ans: Answer = answer_from_flags(
        esc, text=text, option=option, recommended=recommended, retry=retry, skip=skip, abort=abort
    )
    row = record_answer(store, esc_id, ans, channel=channel, responder=responder)
    from orchestrator import fleet

    if fleet.is_fleet(store, esc["run_id"]):  # a worker takes the task up again
        fleet.requeue(store, esc["run_id"], esc["task_id"])
    if folder is not None:
        write_user_decision(
            folder,
            {
                "chosen_option": ans.text[:1] if ans.kind == "option" else None,
                "user_comment": ans.text,
                "action": ans.kind,
                "responder": row["responder"],
                "channel": channel,
            },
        )
    return row


def status(
    run_id: str | None = None,
    db: str | None = None,
    config_file: Path | None = None,
    store: Store | None = None,
) -> dict[str, Any]:
    store = store or open_store(db, config_file=config_file)
    run_id = run_id or store.latest_run_id()
    if run_id is None:
        raise UserError("there are no runs yet; start one with `orchestrator run PLAN`")
    run = store.run(run_id)
    if run is None:
        raise UserError(f"no run {run_id!r}; `orchestrator runs` lists them")
    return {
        "run": {k: v for k, v in run.items() if k not in ("plan_json", "settings_json")},
        "tasks": store.tasks(run_id),
        "attempts": store.attempts(run_id),
        "escalations": store.escalations(run_id, open_only=True),
    }


def list_runs(
    db: str | None = None, config_file: Path | None = None, store: Store | None = None
) -> list[Row]:
    """Every run in the store (of every project, for the home store), newest first."""
    store = store or open_store(db, config_file=config_file)
    out = []
    for r in store.runs():
        tasks = store.tasks(r["id"])
        done = sum(t["status"] == "COMPLETED" for t in tasks)
        out.append(
            {k: v for k, v in r.items() if k not in ("plan_json", "settings_json")}
            | {"tasks": len(tasks), "completed": done}
        )
    return out


def list_escalations(
    run_id: str | None = None,
    db: str | None = None,
    open_only: bool = True,
    config_file: Path | None = None,
    store: Store | None = None,
) -> list[EscalationRow]:
    """The inbox: open questions of every run in the store (or of one run), each with the
    `worker` whose attempt asked (None outside the fleet)."""
    from orchestrator.fleet_store import with_workers

    store = store or open_store(db, config_file=config_file)
    return with_workers(store, store.escalations(run_id, open_only=open_only))


def resume_task(
    run_id: str,
    task_id: str,
    *,
    guidance: str | None = None,
    db: str | None = None,
    channel: str = "api",
    responder: str | None = None,
    config_file: Path | None = None,
    store: Store | None = None,
) -> TaskRow:
    """Seed 003: the task PENDING with fresh counters (and the guidance), atomically; refused
    while a runner holds the run or once the task is COMPLETED. `resume` then continues."""
    from orchestrator import requeue

    store = store or open_store(db, config_file=config_file)
    return requeue.resume_task(
        store, run_id, task_id, guidance=guidance, channel=channel, responder=responder
    )


def rewind_to_task(
    run_id: str,
    task_id: str,
    *,
    db: str | None = None,
    channel: str = "api",
    responder: str | None = None,
    config_file: Path | None = None,
    store: Store | None = None,
) -> dict[str, Any]:
    """The workdir back to the task's checkpoint, the task and every later one queued again;
    refused while a runner holds the run. `resume` then redoes them."""
    from orchestrator import requeue

    store = store or open_store(db, config_file=config_file)
    return requeue.rewind_to_task(store, run_id, task_id, channel=channel, responder=responder)


def serve(
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    db: str | None = None,
    resume: bool = True,
    token: str | None = None,
    config_file: Path | None = None,
    extra_mounts: Sequence[tuple[str, ASGIApp]] = (),
    lifespans: Sequence[Callable[[], AbstractAsyncContextManager[Any]]] = (),
) -> None:
    """The web page (`orchestrator serve`): the inbox of every run's open questions, runs and
    their logs, answers recorded with channel `web`; blocks until Ctrl-C. `extra_mounts` serve
    more ASGI apps behind the same guard (MCP at `/mcp`), `lifespans` run while it serves."""
    from orchestrator.web.server import serve as run_server

    store = open_store(db, config_file=config_file)
    run_server(
        store,
        host=host,
        port=port,
        resume=resume,
        token=token,
        extra_mounts=extra_mounts,
        lifespans=lifespans,
    )


def run_stopped() -> type[Exception]:
    """The runner's RunStopped, for lanes driven outside `Runner.execute` (the fleet)."""
    from orchestrator.runner import RunStopped

    return RunStopped


def submit(
    plan_path: str | Path,
    *,
    wait: bool = True,
    origin: str | None = None,
    config_file: Path | None = None,
    **overrides: Any,
) -> RunOutcome:
    """A new run for the fleet (`orchestrator worker` processes sharing a PostgreSQL store):
    its run branch pushed to its origin, its ready tasks queued. With `wait`, progress is
    printed until the run rests and the workdir is brought to the run branch's result."""
    from orchestrator import fleet
    from orchestrator.runner import RunOutcome

    run_id = fleet.submit(plan_path, origin=origin, config_file=config_file, **overrides)
    store = fleet.open_store(overrides.get("db"), config_file)
    if not wait:
        print(f"run {run_id} queued for the fleet; `orchestrator status {run_id}` follows it")
        return RunOutcome(run_id, 0, {t["task_id"]: t["status"] for t in store.tasks(run_id)})
    done = fleet.watch(store, run_id)
    if done.exit_code == 0:
        fleet.bring_home(store, run_id)
    return RunOutcome(run_id, done.exit_code, done.statuses)


def work(db: str | None = None, *, config_file: Path | None = None, **options: Any) -> None:
    """`orchestrator worker`: run the fleet's ready tasks until stopped (`fleet.work`)."""
    from orchestrator import fleet

    fleet.work(db, config_file=config_file, **options)
