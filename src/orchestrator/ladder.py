"""The run's side effects around the loop: git checkpoints after completed tasks, the level-1
consultant, and seed 002's escalation files. Kept out of runner.py so the loop stays one screen."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.config import Settings
from orchestrator.models import Task, TaskStatus
from orchestrator.store import Row

if TYPE_CHECKING:
    from orchestrator.checkpoints import Checkpoints
    from orchestrator.judge import Decision
    from orchestrator.runner import Runner


@dataclass
class RunHooks:
    settings: Settings
    checkpoints: Checkpoints | None

    @classmethod
    def for_new_run(cls, settings: Settings, workdir: Path, folder: Path, run_id: str) -> RunHooks:
        """Refuses a dirty tree (unless allowed) before anything is recorded."""
        cps = None
        if settings.checkpoints:
            from orchestrator.checkpoints import Checkpoints

            cps = Checkpoints(workdir, folder, run_id)
            cps.preflight(settings.allow_dirty)
            cps.baseline()
        return cls(settings, cps)

    @classmethod
    def for_resume(cls, settings: Settings, workdir: Path, folder: Path, run_id: str) -> RunHooks:
        """No dirty-tree check: files left by this run's own interrupted attempt must not block it."""
        cps = None
        if settings.checkpoints:
            from orchestrator.checkpoints import Checkpoints

            cps = Checkpoints(workdir, folder, run_id)
        return cls(settings, cps)

    def task_completed(self, runner: Runner, task: Task) -> None:
        if self.checkpoints is not None:
            sha = self.checkpoints.commit(task.id, f"Task {task.id}: {task.title}")
            runner.store.add_event(
                runner.run_id, "checkpoint", {"label": task.id, "sha": sha}, task.id
            )

    def consult(self, runner: Runner, task: Task, d: Decision) -> None:
        """Level 1: the consultant acts alone (model switch, plan revert, hints, tighter spec)."""
        from orchestrator.consultant import consult, write_level1

        store, run_id = runner.store, runner.run_id
        attempts = store.attempts(run_id, task.id)
        rows = {t["task_id"]: t for t in store.tasks(run_id)}
        done = [
            t.id for t in runner.plan.tasks if rows[t.id]["status"] == TaskStatus.COMPLETED.value
        ]
        options = runner.settings.agent_options(task.id, runner.agent.name)
        earlier = [t for t in runner.plan.tasks if t.id in done]
        decision = consult(
            task,
            attempts,
            completed_tasks=done,
            current_model=options.get("model"),
            fallback_model=options.get("fallback_model"),
            llm=runner.judge.llm,
            earlier_tasks=earlier,
        )
        data = decision.model_dump(mode="json")
        body = data["decision"]
        overrides: dict[str, Any] = dict(
            runner.meta.setdefault("task_overrides", {}).get(task.id, {})
        )
        if body.get("model_switch"):
            overrides["model"] = body["model_switch"]["to"]
        overrides["hints"] = list(body.get("additional_hints") or [])
        for crit in (body.get("spec_updates") or {}).values():
            overrides["hints"] += [
                f"Acceptance criterion: {c}" for c in (crit if isinstance(crit, list) else [crit])
            ]
        revert = body.get("plan_revert") or {}
        if revert.get("enabled") and self.checkpoints is not None:
            # the implicated task's own work was wrong: go back to before it, redo it and all after
            from orchestrator.consultant import checkpoint_before

            target = str(revert["revert_to_task"])
            self.checkpoints.revert_to(checkpoint_before(target, done))
            idx = [t.id for t in runner.plan.tasks].index(target)
            for later in runner.plan.tasks[idx:]:
                if later.id != task.id and rows[later.id]["status"] == TaskStatus.COMPLETED.value:
                    store.update_task(
                        run_id,
                        later.id,
                        "task_reverted",
                        {"to": target},
                        status=TaskStatus.PENDING.value,
                    )
        runner.meta["task_overrides"][task.id] = overrides
        store.update_settings(run_id, runner.meta)
        trigger = {
            "timestamp": _now(),
            "task_id": task.id,
            "reason": d.reason,
            "loop": d.loop.kind if d.loop else None,
            "attempts": len(attempts),
        }
        write_level1(
            runner.folder / task.id / "escalation",
            trigger,
            decision,
            {"task": task.id, **overrides},
        )
        store.update_task(
            run_id,
            task.id,
            "consultant_decision",
            data,
            level=1,
            level_attempts=0,
            status=TaskStatus.PENDING.value,
        )
        runner.report.note(f"Consultant: {data['analysis']['root_cause']}"[:300], "cyan")
        for hint in overrides["hints"][:5]:
            runner.report.note(f"hint: {hint}"[:300], "cyan")

    def escalation_opened(self, runner: Runner, task: Task, esc: Row) -> dict[str, Any]:
        from orchestrator.consultant import build_hil_request, write_level2

        archive_level2(runner.folder / task.id / "escalation")

        attempts = runner.store.attempts(runner.run_id, task.id)
        trigger = {
            "timestamp": _now(),
            "task_id": task.id,
            "escalation_id": esc["id"],
            "category": esc["category"],
            "question": esc["question"],
        }
        hil = build_hil_request(
            run_id=runner.run_id,
            task=task,
            attempts=attempts,
            escalation=esc,
            consultant=_last_consultant(runner, task.id),
        )
        write_level2(runner.folder / task.id / "escalation", trigger, hil)
        return hil

    def answer_applied(self, runner: Runner, task: Task, esc: Row, action: str) -> None:
        """seed 002's resolution.json: what was finally done about the escalation."""
        from orchestrator.consultant import write_resolution

        folder = level2_for(runner.folder / task.id / "escalation", esc["id"])
        if folder is not None:
            write_resolution(
                folder,
                {
                    "escalation_id": esc["id"],
                    "action": action,
                    "response": esc["response"],
                    "responder": esc["responder"],
                    "channel": esc["channel"],
                    "wait_s": esc["wait_s"],
                },
            )


def level2_for(escalation_dir: Path, esc_id: int) -> Path | None:
    """The level-2 folder of this escalation, or None when it belongs to another (or none)."""
    folder = escalation_dir / "level-2"
    try:
        trigger = json.loads((folder / "trigger.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return folder if trigger.get("escalation_id") == esc_id else None


def archive_level2(escalation_dir: Path) -> None:
    """A task can be escalated more than once: keep the earlier level-2 files beside the new ones."""
    folder = escalation_dir / "level-2"
    if not folder.is_dir():
        return
    try:
        old = json.loads((folder / "trigger.json").read_text(encoding="utf-8")).get(
            "escalation_id", "old"
        )
    except (OSError, ValueError):
        old = "old"
    target = escalation_dir / f"level-2.escalation-{old}"
    n = 1
    while target.exists():
        n += 1
        target = escalation_dir / f"level-2.escalation-{old}-{n}"
    folder.rename(target)


def _last_consultant(runner: Runner, task_id: str) -> dict[str, Any] | None:
    events = [
        e
        for e in runner.store.events(runner.run_id, "consultant_decision")
        if e["task_id"] == task_id
    ]
    return events[-1]["payload"] if events else None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
