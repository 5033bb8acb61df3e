"""Git checkpoints as an observer: a completed task's work is committed on the run's own branch.

The commit follows the task's COMPLETED record, so a runner killed in between leaves a completed
task without its checkpoint. The next runner makes it up on RunStarted, before any task runs: only
the last task anything happened to can lack one (the loop commits before it moves on), and the
workdir still holds exactly its work."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from orchestrator.events import Bus, CheckpointMade, Event, RunStarted, TaskFinished
from orchestrator.store import Store

if TYPE_CHECKING:
    from orchestrator.checkpoints import Checkpoints


@dataclass
class CheckpointObserver:
    checkpoints: Checkpoints
    store: Store
    bus: Bus

    def notify(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            if cleaned := self.checkpoints.clean_locks():
                paths = [str(p) for p in cleaned]
                self.store.add_event(event.run_id, "checkpoint_locks_cleaned", {"paths": paths})
            self.make_up(event.run_id)
        elif isinstance(event, TaskFinished) and event.status == "COMPLETED":
            sha = self.checkpoints.commit(event.task_id, f"Task {event.task_id}: {event.title}")
            self.recorded(event.run_id, event.task_id, sha)

    def make_up(self, run_id: str) -> None:
        """Commit (or, when git has it already, record) the last completed task's checkpoint."""
        rows = self.store.tasks(run_id)
        last = max(rows, key=lambda t: t["updated_at"], default=None)
        if last is None or last["status"] != "COMPLETED":
            return
        task_id = last["task_id"]
        tip = self.checkpoints.list()[-1:]
        if tip and tip[0][0] == task_id:
            marks = [
                e for e in self.store.events(run_id, "checkpoint") if e["payload"].get("label")
            ]
            if marks and marks[-1]["payload"]["label"] == task_id:
                return  # committed and recorded
            sha = tip[0][1]  # committed; the runner was killed before recording it
        else:
            sha = self.checkpoints.commit(task_id, f"Task {task_id}: {last['title']}")
        self.recorded(run_id, task_id, sha, made_up=True)

    def recorded(self, run_id: str, task_id: str, sha: str, *, made_up: bool = False) -> None:
        payload: dict[str, object] = {"label": task_id, "sha": sha}
        if made_up:
            payload["made_up"] = True
        # no fsync of its own: the next durable commit syncs it, and until then git has the
        # checkpoint, which make_up records for the last completed task
        self.store.add_event(run_id, "checkpoint", payload, task_id, durable=False)
        self.bus.emit(CheckpointMade(run_id, task_id, sha))
