"""`--parallel N`: up to N ready tasks at once, each in its own git worktree (`worktrees.py`).

A task is ready when it is PENDING and every task it depends on is done (milestone
`**Depends on:**`, GSD `depends_on` and waves: `plans/gsd.py`); tasks whose declared files
overlap never run side by side. Each running task has a thread — a *lane* — that drives the
runner's own step machinery for it: a shallow copy of the runner whose workdir is the task's
worktree, so the attempt, the judge, the one `transition` and its table, escalations, the hard
cap, budgets and loop detection are exactly those of a sequential run, per task. What the lanes
share is what the store holds (the statuses the loop keeps are one dict; the money spent is read
from the store before each step, so the run budget counts every lane) and the bus, whose
observers are called one event at a time (`LockedBus`).

When a task's gates pass, its worktree is committed on its branch and merged into the run branch
(a fast-forward or a clean merge) *before* the task is recorded COMPLETED. A merge that conflicts
is tried once more on the run branch's head as it is then, and the task's gates run again on that
merged tree; if it still conflicts (or the gates fail there), the task is escalated with the
conflicting files (`asking.merge_conflict`, outcome `merge_conflict` of the table), its branch
kept for a person to look at. An escalation pauses only its own lane. Merged worktrees and their
branches are removed; a run that stops leaves only the worktrees of unfinished tasks, which the
next runner adopts (`Worktrees.open`: only a worktree whose `git worktree add` finished; one cut
off half-way lacks files, which its merge would delete from the run branch), and at the end the
user's workdir is brought to the run branch's head (`Checkpoints.sync_to_tip`), as a sequential
run leaves it. After kill -9 at any moment, every task recorded COMPLETED has its commit on the
run branch: the merge moves the branch (compare-and-swap) before the record is written.
"""

from __future__ import annotations

import copy
import fnmatch
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from orchestrator import asking
from orchestrator.agents.process import supervised
from orchestrator.events import (
    Bus,
    CheckpointMade,
    Event,
    Notice,
    RunStarted,
    TaskFinished,
    TaskStarted,
)
from orchestrator.models import Task
from orchestrator.rows import DONE
from orchestrator.store import Store
from orchestrator.worktrees import Merge, Worktree, Worktrees

if TYPE_CHECKING:
    from orchestrator.checkpoints import Checkpoints
    from orchestrator.steps import Finished
    from orchestrator.transitions import Outcome

logger = logging.getLogger("orchestrator.parallel")
JOIN_GRACE = 10.0
"""After Ctrl-C or a lane's error: how long the other lanes get to notice before the run stops."""


@dataclass
class LockedBus(Bus):
    """The bus, one event at a time: lanes emit from their threads (and agents' readers)."""

    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    def emit(self, event: Event) -> None:
        with self.lock:
            super().emit(event)


class _Cut(Exception):
    """The run is being interrupted: the lane records nothing more."""


def _norm(path: str) -> str:
    return path.strip().strip("`").removeprefix("./").rstrip("/")


def overlap(a: list[str], b: list[str]) -> bool:
    """Declared files that may be the same: equal, one inside the other, or matched by a glob.

    >>> overlap(["src/a.py"], ["src/"]), overlap(["src/*.py"], ["src/b.py"]), overlap(["a"], ["b"])
    (True, True, False)
    """
    for x in map(_norm, a):
        for y in map(_norm, b):
            if not x or not y:
                continue
            if x == y or x.startswith(y + "/") or y.startswith(x + "/"):
                return True
            if fnmatch.fnmatch(x, y) or fnmatch.fnmatch(y, x):
                return True
    return False


class Lanes:
    """Drives a run's tasks N at a time (`Runner.lanes`); built by `api.build_runner`."""

    def __init__(self, checkpoints: Checkpoints, width: int, stopped: type[Exception]) -> None:
        self.checkpoints = checkpoints
        self.worktrees = Worktrees(checkpoints)
        self.width = width
        self.stopped = stopped
        """The runner's RunStopped (this module never imports the runner)."""
        self.merged: dict[str, str] = {}
        """Task → the run branch's head its merge made, until its checkpoint is recorded."""
        self.runner: Any = None
        self._by_thread: dict[int, Any] = {}
        self._done: queue.Queue[str] = queue.Queue()
        self._ask = threading.Lock()
        self.stopping = False
        self.interrupted = False
        self.stop: Exception | None = None
        self.error: BaseException | None = None

    # -- the scheduler ------------------------------------------------------------------------------
    def __call__(self, runner: Any) -> None:
        """Run every ready task, N at a time, until none is left to start."""
        self.runner = runner
        ask = runner.ask_terminal
        if ask is not None:  # one question at a terminal at a time; the other lanes go on
            runner.ask_terminal = lambda esc: self._one_at_a_time(ask, esc)
        mark = runner.store.process_mark(runner.run_id)
        self.worktrees.tidy(keep=self._unfinished())  # a killed runner's merged leftovers
        with supervised(mark, self._record_process):
            self._schedule()
        self.worktrees.tidy(keep=self._unfinished())
        self.checkpoints.sync_to_tip()
        if self.stop is not None:
            raise self.stop

    def _schedule(self) -> None:
        running: dict[str, threading.Thread] = {}
        try:
            while True:
                for task in self._ready(running):
                    if self.stopping or len(running) >= self.width:
                        break
                    thread = threading.Thread(
                        target=self._lane, args=(task,), name=f"lane-{task.id}", daemon=True
                    )
                    running[task.id] = thread
                    thread.start()
                if not running:
                    return
                try:
                    finished = self._done.get(timeout=0.5)
                except queue.Empty:
                    continue
                running.pop(finished).join()
                if self.error is not None:
                    raise self.error
        except BaseException:
            self.stopping = self.interrupted = True
            self.runner.store.reap_processes(self.runner.run_id)  # the agents stop now
            deadline = time.monotonic() + JOIN_GRACE
            for thread in running.values():
                thread.join(max(0.0, deadline - time.monotonic()))
            raise

    def _ready(self, running: dict[str, threading.Thread]) -> list[Task]:
        """PENDING tasks whose dependencies are done, in plan order, none declaring a file a
        running (or already chosen) task declares."""
        statuses = self.runner.statuses
        if self.stopping or "FAILED" in statuses.values():
            return []
        busy = [self.runner.plan.task(t).files for t in running]
        chosen: list[Task] = []
        for task in self.runner.order:
            if task.id in running or statuses[task.id] != "PENDING":
                continue
            if not all(statuses[d] in DONE for d in task.depends_on):
                continue
            if any(overlap(task.files, files) for files in busy):
                continue
            busy.append(task.files)
            chosen.append(task)
        return chosen

    def _unfinished(self) -> set[str]:
        """Tasks whose worktree or branch a later runner may still need."""
        return {t for t, s in self.runner.statuses.items() if s not in (*DONE, "FAILED")}

    def _record_process(self, pgid: int) -> None:
        lane = self._by_thread.get(threading.get_ident())
        key = lane.attempt_key if lane is not None else None
        self.runner.store.record_process(self.runner.run_id, pgid, key)

    def _one_at_a_time(self, ask: Any, esc: Any) -> Any:
        with self._ask:
            return ask(esc)

    # -- one lane: a task's steps in its worktree ---------------------------------------------------
    def _lane(self, task: Task) -> None:
        lane = copy.copy(self.runner)
        lane.current = lane.attempt_key = None
        self._by_thread[threading.get_ident()] = lane
        wt: tuple[Worktree, str] | None = None
        try:
            while not self.stopping and lane.statuses[task.id] == "PENDING":
                if wt is None and not task.checkpoint:
                    wt = self.worktrees.open(task.id)
                    lane.workdir = wt[0].workdir
                lane.spent = lane.store.spent(lane.run_id)  # the run budget counts every lane
                if not self._step(lane, task, wt):
                    wt = None  # its merge conflicted: the worktree is gone, the branch kept
            if lane.statuses[task.id] in DONE:
                self.worktrees.remove(task.id)
        except _Cut:
            pass
        except Exception as exc:
            if isinstance(exc, self.stopped):
                self.stop, self.stopping = exc, True
            else:
                self.error, self.stopping = exc, True
        except BaseException as exc:  # KeyboardInterrupt raised in a lane: stop like Ctrl-C
            self.error, self.stopping = exc, True
        finally:
            self._by_thread.pop(threading.get_ident(), None)
            self._done.put(task.id)

    def _step(self, lane: Any, task: Task, wt: tuple[Worktree, str] | None) -> bool:
        """`Runner.step` for a lane, with the merge between the attempt and its record; False
        when the merge conflicted."""
        if lane.current != task.id:
            lane.current = task.id
            lane.emit(TaskStarted(lane.run_id, task.id, task.title))
        if (budget := lane.over_budget(task)) is not None:
            lane.transition(task, budget[0], escalation=budget[1])
        elif task.checkpoint:
            lane.transition(task, "checkpoint", escalation=asking.plan_checkpoint(task))
        elif not (task.is_verification and lane.verification_passes(task)):
            outcome, finished = lane.attempt(task)
            if self.interrupted:
                raise _Cut
            draft = None
            if outcome == "complete" and wt is not None:
                outcome, draft = self._integrate(lane, task, finished, *wt)
            lane.transition(task, outcome, finished, escalation=draft)
            return draft is None
        return True

    def _integrate(
        self, lane: Any, task: Task, finished: Finished, wt: Worktree, base: str
    ) -> tuple[Outcome, asking.EscalationDraft | None]:
        """Commit the worktree and merge it into the run branch; on a conflict, once more on the
        head as it is now (gates again on the merged tree), then a person is asked."""
        label, message = task.id, f"Task {task.id}: {task.title}"
        commit = self.worktrees.commit(wt, base, label, message)
        merge = self.worktrees.merge(commit, base, label, message)
        if merge.sha is None:
            merge = self._retry(lane, task, finished, wt, commit, label, message)
        if merge.sha is None:
            self.worktrees.remove(task.id, keep_branch=True)
            lane.emit(
                Notice(
                    lane.run_id,
                    f"Task {task.id}: its work conflicts with the run branch in "
                    f"{', '.join(merge.conflicts) or 'its gates'}",
                    "yellow",
                    task.id,
                )
            )
            return "merge_conflict", asking.merge_conflict(task, merge.conflicts, wt.branch)
        self.merged[task.id] = merge.sha
        return "complete", None

    def _retry(
        self,
        lane: Any,
        task: Task,
        finished: Finished,
        wt: Worktree,
        commit: str,
        label: str,
        message: str,
    ) -> Merge:
        """The one retry of a conflicting merge, on the run branch's new head: merged cleanly
        there, the task's gates must pass again on the merged tree before the branch moves."""
        again = self.worktrees.merge(commit, commit, label, message, move=False)
        if again.sha is None:
            return again
        self.worktrees.git("reset", "-q", "--hard", again.sha, cwd=wt.path)
        adir = lane.folder / task.id / f"attempt-{finished.number}" / "merged"
        gates = [*task.verify, *lane.settings.gates.commands]
        checks = lane.gates(task, finished.number, gates, adir)
        failing = [g.command for g in checks if not g.passed]
        if failing:
            return Merge(
                None, conflicts=[f"(gates failing on the merged tree: {', '.join(failing)})"]
            )
        if not self.worktrees.advance(again):
            return Merge(None, conflicts=["(the run branch moved again during the retry)"])
        return again


@dataclass
class MergedCheckpoints:
    """Checkpoints under `--parallel`: a completed task's checkpoint is its merge into the run
    branch (the commit carries its label); a task completed without work of its own (a human's
    `done`, the milestone's checks passing) gets a commit of the head's tree with its label.

    A task's merge is made before its COMPLETED record, and the record before its checkpoint
    event: a runner killed in between leaves a completed task without the event, which the next
    runner makes up on RunStarted from the label on the run branch (or, for a task completed
    without work, by making its label then)."""

    lanes: Lanes
    store: Store
    bus: Bus

    def notify(self, event: Event) -> None:
        cp = self.lanes.checkpoints
        if isinstance(event, RunStarted):
            if cleaned := cp.clean_locks():
                paths = [str(p) for p in cleaned]
                self.store.add_event(event.run_id, "checkpoint_locks_cleaned", {"paths": paths})
            self.make_up(event.run_id)
        elif isinstance(event, TaskFinished) and event.status == "COMPLETED":
            sha = self.lanes.merged.pop(event.task_id, None)
            if sha is None:
                sha = self.lanes.worktrees.label(
                    event.task_id, f"Task {event.task_id}: {event.title}"
                )
            self.recorded(event.run_id, event.task_id, sha)

    def make_up(self, run_id: str) -> None:
        """Record the checkpoint of every completed task a killed runner left without one."""
        marked = {e["task_id"] for e in self.store.events(run_id, "checkpoint")}
        missing = [
            t
            for t in self.store.tasks(run_id)
            if t["status"] == "COMPLETED" and t["task_id"] not in marked
        ]
        if not missing:
            return
        cp = self.lanes.checkpoints
        cp.reread()
        labels = dict(cp.list())  # the newest commit of each label
        for row in missing:
            task_id = row["task_id"]
            sha = labels.get(task_id) or self.lanes.worktrees.label(
                task_id, f"Task {task_id}: {row['title']}"
            )
            self.recorded(run_id, task_id, sha, made_up=True)

    def recorded(self, run_id: str, task_id: str, sha: str, *, made_up: bool = False) -> None:
        payload: dict[str, object] = {"label": task_id, "sha": sha, "merged": True}
        if made_up:
            payload["made_up"] = True
        self.store.add_event(run_id, "checkpoint", payload, task_id)
        self.bus.emit(CheckpointMade(run_id, task_id, sha))


@dataclass
class Rejoin:
    """A run started with `--parallel` and resumed without: once the run is locked, the
    worktrees of its cut-off tasks go and the workdir is brought to the run branch's head, so the
    sequential loop goes on from the work the lanes merged."""

    checkpoints: Checkpoints

    def notify(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.checkpoints.clean_locks()  # a killed runner's, before the workdir is written
            Worktrees(self.checkpoints).tidy(keep=set())
            self.checkpoints.sync_to_tip()


@dataclass
class Fork:
    """A run started one task at a time and resumed with `--parallel`: a sequential runner killed
    between a task's COMPLETED record and its checkpoint left that task's work in the workdir
    only. It is committed first, as a sequential resume would (`CheckpointObserver.make_up`);
    the lanes then branch from it, and the workdir brought to the run branch's head at the end
    keeps it (before, both dropped it)."""

    checkpoints: Checkpoints
    store: Store
    bus: Bus

    def notify(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            from orchestrator.observers.checkpoints import CheckpointObserver

            self.checkpoints.clean_locks()  # a killed runner's, before anything is committed
            CheckpointObserver(self.checkpoints, self.store, self.bus).make_up(event.run_id)
