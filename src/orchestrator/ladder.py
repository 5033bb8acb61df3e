"""Level 1 of the escalation ladder: the consultant reads the failures and acts alone — model
switch, hints, tighter acceptance criteria, a revert to before the task whose work was wrong — and
what it did is recorded before the next attempt runs. The runner calls it; it never imports the
runner."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orchestrator.config import Settings
from orchestrator.events import Bus, ConsultantActed
from orchestrator.llm import LLMBackend
from orchestrator.models import Plan, Task
from orchestrator.store import Store

if TYPE_CHECKING:
    from orchestrator.checkpoints import Checkpoints
    from orchestrator.judge import Decision


@dataclass
class Consultant:
    store: Store
    run_id: str
    plan: Plan
    settings: Settings
    agent_name: str
    llm: LLMBackend | None
    checkpoints: Checkpoints | None
    bus: Bus

    def __call__(self, task: Task, d: Decision) -> list[str]:
        """Consult and apply; returns the tasks set back to PENDING (the reverted ones first)."""
        from orchestrator.consultant import apply_decision, checkpoint_before, consult

        store, run_id = self.store, self.run_id
        attempts = store.attempts(run_id, task.id)
        rows = {t["task_id"]: t for t in store.tasks(run_id)}
        done = [t.id for t in self.plan.tasks if rows[t.id]["status"] == "COMPLETED"]
        options = self.settings.agent_options(task.id, self.agent_name)
        decision = consult(
            task,
            attempts,
            completed_tasks=done,
            current_model=options.get("model"),
            fallback_model=options.get("fallback_model"),
            llm=self.llm,
            earlier_tasks=[t for t in self.plan.tasks if t.id in done],
        )
        applied = apply_decision(decision, rows[task.id]["overrides"])
        redo: list[str] = []
        target = applied.revert_to
        if target is not None and self.checkpoints is not None:
            # the implicated task's own work was wrong: back to before it, redo it and all after
            self.checkpoints.revert_to(checkpoint_before(target, done))
            ids = [t.id for t in self.plan.tasks]
            for later in self.plan.tasks[ids.index(target) :]:
                if later.id != task.id and rows[later.id]["status"] == "COMPLETED":
                    store.update_task(
                        run_id, later.id, "task_reverted", {"to": target}, status="PENDING"
                    )
                    redo.append(later.id)
        else:
            target = None
        data = decision.model_dump(mode="json")
        store.set_overrides(run_id, task.id, applied.overrides)
        store.add_event(run_id, "consultant_decision", data, task.id)
        self.bus.emit(
            ConsultantActed(
                run_id,
                task.id,
                root_cause=str(data["analysis"]["root_cause"]),
                hints=[str(h) for h in applied.overrides.get("hints", [])],
                model=applied.overrides.get("model"),
                reverted_to=target,
                redo=redo,
                decision=data,
                trigger={
                    "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "task_id": task.id,
                    "reason": d.reason,
                    "loop": d.loop.kind if d.loop else None,
                    "attempts": len(attempts),
                },
            )
        )
        return redo
