"""Git checkpoints as an observer: a completed task's work is committed on the run's own branch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from orchestrator.events import Bus, CheckpointMade, Event, TaskFinished
from orchestrator.store import Store

if TYPE_CHECKING:
    from orchestrator.checkpoints import Checkpoints


@dataclass
class CheckpointObserver:
    checkpoints: Checkpoints
    store: Store
    bus: Bus

    def notify(self, event: Event) -> None:
        if isinstance(event, TaskFinished) and event.status == "COMPLETED":
            sha = self.checkpoints.commit(event.task_id, f"Task {event.task_id}: {event.title}")
            self.store.add_event(
                event.run_id, "checkpoint", {"label": event.task_id, "sha": sha}, event.task_id
            )
            self.bus.emit(CheckpointMade(event.run_id, event.task_id, sha))
