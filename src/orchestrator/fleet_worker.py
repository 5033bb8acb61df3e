"""One task of a fleet run, on one worker: the engine's job body (`fleet.py` registers it).

The worker keeps its own clone of each run's origin (`Clone`, in its own folder), fetches the run
branch, and drives the task with `--parallel`'s lane (`parallel.Lanes`: the runner's own step,
judge and `transition`, in a git worktree on the task's branch). Where a lane merges into the run
branch, a fleet lane also pushes it to the origin (`FleetLanes._integrate`): a push refused
because another worker pushed first fetches the new head and merges again; a conflict there takes
part 1's road (gates once more on the merged tree, else the `merge_conflict` escalation, with the
task branch pushed for a person to look at). Before anything is recorded COMPLETED, the worker
checks that its attempt is still its own (no other worker took the task over meanwhile)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator import fleet_store
from orchestrator.checkpoints import CheckpointError, Checkpoints, run_git
from orchestrator.events import AttemptInterrupted, AttemptStarted, Event, Notice
from orchestrator.fleet_store import Worker
from orchestrator.models import Task, UserError
from orchestrator.parallel import Lanes, _Cut
from orchestrator.rows import DONE
from orchestrator.store import Store

if TYPE_CHECKING:
    from orchestrator import asking
    from orchestrator.agents.base import Agent
    from orchestrator.config import Settings
    from orchestrator.steps import Finished
    from orchestrator.transitions import Outcome
    from orchestrator.worktrees import Worktree

logger = logging.getLogger("orchestrator.fleet")
PUSH_TRIES = 5
"""Pushes refused because another worker moved the run branch first, before giving up."""
_IDENTITY = {
    "GIT_AUTHOR_NAME": "orchestrator",
    "GIT_AUTHOR_EMAIL": "orchestrator@localhost",
    "GIT_COMMITTER_NAME": "orchestrator",
    "GIT_COMMITTER_EMAIL": "orchestrator@localhost",
}


def git(*args: str, cwd: Path | None = None, check: bool = True) -> Any:
    """git without the caller's repository variables, never prompting for a password."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_IDENTITY, LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    exe = shutil.which("git")
    if exe is None:
        raise CheckpointError("git is not installed; the fleet needs git")
    where = ["-C", str(cwd)] if cwd is not None else []
    return run_git(
        [exe, *where, *args], env=env, cwd=None, input=None, check=check, what=f"git {args[0]}"
    )


@dataclass
class Clone:
    """This worker's clone of one origin; every git command on it holds `lock` (a worker may
    run several tasks at once, and git's own locks would refuse the second)."""

    root: Path
    origin: str
    lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def path(self) -> Path:
        return self.root / "repos" / hashlib.sha256(self.origin.encode()).hexdigest()[:16]

    def fetch(self, branch: str) -> None:
        """The local run branch made equal to the origin's (cloning first when needed)."""
        with self.lock:
            if not (self.path / ".git").is_dir():
                tmp = self.path.with_name(self.path.name + f".part-{os.getpid()}")
                shutil.rmtree(tmp, ignore_errors=True)
                tmp.parent.mkdir(parents=True, exist_ok=True)
                git("clone", "-q", "--no-checkout", "--", self.origin, str(tmp))
                tmp.rename(self.path)
            git("fetch", "-q", "origin", f"+refs/heads/{branch}:refs/heads/{branch}", cwd=self.path)

    def push(self, *refspecs: str) -> bool:
        """False when the origin refused (another worker pushed first)."""
        with self.lock:
            res = git("push", "-q", "--porcelain", "origin", *refspecs, cwd=self.path, check=False)
        if res.returncode != 0:
            logger.info("push refused: %s", (res.stderr or res.stdout).strip()[:300])
        return bool(res.returncode == 0)


class FleetLanes(Lanes):
    """One task's lane on a worker's clone; its merges go to the origin."""

    def __init__(self, checkpoints: Checkpoints, clone: Clone, stopped: type[Exception]) -> None:
        super().__init__(checkpoints, 1, stopped)
        self.clone = clone
        self.worktrees.lock = clone.lock  # type: ignore[assignment]  # an RLock: held around merges

    def _integrate(
        self, lane: Any, task: Task, finished: Finished, wt: Worktree, base: str
    ) -> tuple[Outcome, asking.EscalationDraft | None]:
        branch = self.checkpoints.branch
        with self.clone.lock:
            for _ in range(PUSH_TRIES):
                if not fleet_store.still_open(lane.store, lane.run_id, task.id, finished.number):
                    raise _Cut  # another worker took the task over: its work counts, not ours
                outcome, draft = super()._integrate(lane, task, finished, wt, base)
                if draft is not None:  # a person looks at the task's branch in the origin
                    self.clone.push(f"+refs/heads/{wt.branch}:refs/heads/{wt.branch}")
                    return outcome, draft
                if self.clone.push(f"refs/heads/{branch}:refs/heads/{branch}"):
                    return outcome, None
                self.clone.fetch(branch)  # another worker pushed first: merge on its head
                self.checkpoints.reread()
        raise CheckpointError(f"could not push {branch} to the origin after {PUSH_TRIES} tries")


@dataclass
class AttemptWorker:
    """Records on each attempt the worker running it, as it starts (before its agent)."""

    store: Store
    worker: Worker

    def notify(self, event: Event) -> None:
        if isinstance(event, AttemptStarted):
            fleet_store.record_worker(
                self.store, event.run_id, event.task_id, event.number, self.worker
            )


@dataclass
class Host:
    """What a worker process shares between its jobs."""

    store: Store
    worker: Worker
    folder: Path
    """The worker's own folder: clones under `repos/`, run files under `runs/<run>/`."""
    clones: dict[str, Clone] = field(default_factory=dict)
    active: dict[int, FleetLanes] = field(default_factory=dict)
    """Lanes by thread: each agent's process group is recorded on its lane's attempt."""

    def clone(self, origin: str) -> Clone:
        return self.clones.setdefault(origin, Clone(self.folder, origin))

    def record_process(self, pgid: int) -> None:
        lanes = self.active.get(threading.get_ident())
        if lanes is not None:
            lanes._record_process(pgid)


def run_task(host: Host, run_id: str, task_id: str) -> list[str]:
    """Drive one task of a fleet run to its next resting state (done, failed, paused for a
    person); returns the tasks then ready to run. Safe to run twice: a task already done, or
    paused with no answer yet, is left alone."""
    from orchestrator import api, preflight
    from orchestrator.humans import Answer

    store = host.store
    run = store.run(run_id)
    if run is None or run["status"] in ("COMPLETED", "FAILED"):
        return []
    origin = fleet_store.origin(store, run_id)
    if origin is None:
        raise UserError(f"run {run_id} has no origin: it is not a fleet run")
    row = store.task(run_id, task_id)
    if row["status"] in (*DONE, "FAILED"):
        return fleet_store.settle(store, run_id, _order(store, run_id))[1]
    statuses = {t["task_id"]: t["status"] for t in store.tasks(run_id)}
    if any(statuses[d] not in DONE for d in store.plan(run_id).task(task_id).depends_on):
        return []  # queued early: the task finishing its dependencies queues it again
    answered = None
    if row["status"] == "PAUSED_FOR_INTERVENTION":
        last = [e for e in store.escalations(run_id) if e["task_id"] == task_id]
        if not last or last[-1]["status"] != "answered":
            return []  # waits for a person; answering queues it again
        answered = last[-1]
    cut = fleet_store.take_over(store, run_id, task_id, host.worker)
    fleet_store.reap(store, cut)
    meta, settings, agent = _agent(run)
    clone = host.clone(origin)
    branch = f"orchestrator/{run_id}"
    clone.fetch(branch)
    workdir = clone.path / str(meta.get("fleet_prefix") or "")
    workdir.mkdir(parents=True, exist_ok=True)
    preflight.check(settings, store.plan(run_id), workdir)
    runner = _runner(host, run_id, settings, agent)  # its statuses read after the take-over
    runner.workdir = workdir
    runner.bus.observers.append(AttemptWorker(store, host.worker))
    runner.spent = store.spent(run_id)
    runner.asked = {e["task_id"] for e in store.escalations(run_id)}
    for a in cut:
        runner.emit(AttemptInterrupted(run_id, task_id, a["number"]))
        runner.emit(Notice(run_id, f"Task {task_id}: taken over from {a['worker']}", "yellow"))
    lanes = FleetLanes(Checkpoints(workdir, runner.folder, run_id), clone, api.run_stopped())
    lanes.runner = runner
    task = runner.plan.task(task_id)
    host.active[threading.get_ident()] = lanes
    try:
        if answered is not None:
            ans = Answer(answered["response_kind"], answered["response"] or "")  # type: ignore[arg-type]
            try:
                runner.apply_answer(task, answered["id"], ans)
            except lanes.stopped:  # an abort: the task FAILED, so the run is
                return fleet_store.settle(store, run_id, runner.order)[1]
        lanes._lane(task)
    finally:
        host.active.pop(threading.get_ident(), None)
    if lanes.error is not None:
        raise lanes.error
    return fleet_store.settle(store, run_id, runner.order)[1]


def escalate_error(host: Host, run_id: str, task_id: str, error: str, tries: int) -> None:
    """A task's job failed its last try before the agent could run (its program missing on this
    worker, git refusing): the task is paused with a question — its files written, its
    notification sent, shown by `escalations` — and answering queues it again."""
    from orchestrator.asking import ACTIONS, RETRY_SKIP_ABORT, EscalationDraft

    store = host.store
    run = store.run(run_id)
    if run is None or run["status"] in ("COMPLETED", "FAILED"):
        return
    if store.task(run_id, task_id)["status"] in (*DONE, "FAILED", "PAUSED_FOR_INTERVENTION"):
        return
    _, settings, agent = _agent(run)
    runner = _runner(host, run_id, settings, agent)
    draft = EscalationDraft(
        question=f"Worker {host.worker.name} could not start task {task_id} ({tries} tries): "
        f"{error}\n\nFix that on the worker (or start another one), then retry; or skip this "
        "task, or abort the run?",
        asker="orchestrator",
        options=list(RETRY_SKIP_ABORT),
        category="external_service",
        why="The worker failed before the agent could start, and the fleet will not try this "
        "task again by itself.",
        detail={"actions": list(ACTIONS), "worker": host.worker.name},
    )
    runner.transition(runner.plan.task(task_id), "worker_error", escalation=draft)


def _agent(run: Any) -> tuple[dict[str, Any], Settings, Agent]:
    """A fleet run's stored settings, as this worker runs them (one task at a time, no terminal),
    and its agent."""
    from orchestrator import api

    meta: dict[str, Any] = json.loads(run["settings_json"])
    settings = api.resume_settings(meta, {"wait": "no-wait", "parallel": 1, "checkpoints": False})
    return meta, settings, api.make_agent(settings, Path(meta.get("plan_file") or run["plan_path"]))


def _runner(host: Host, run_id: str, settings: Settings, agent: Agent) -> Any:
    """The run's loop (a Runner; only the API imports it) on this worker: its files under the
    worker's folder, the task statuses as the store has them now."""
    from orchestrator import api
    from orchestrator.observers.files import EscalationFiles

    runner = api.build_runner(host.store, run_id, settings, agent, None, False, None)
    runner.folder = host.folder / "runs" / run_id
    for obs in runner.bus.observers:
        if isinstance(obs, EscalationFiles):
            obs.run_folder = runner.folder
    runner.statuses = {t["task_id"]: t["status"] for t in host.store.tasks(run_id)}
    return runner


def _order(store: Store, run_id: str) -> list[Any]:
    from orchestrator.plans import order

    return order(store.plan(run_id))


def reap_orphans(store: Store, worker: Worker) -> list[int]:
    """At a worker's start: the agents dead workers of this machine left running."""
    return fleet_store.reap(store, fleet_store.orphans(store, worker.host))
