"""Seed 002's escalation files as an observer: level-1 trigger and consultant decision, level-2
trigger and hil-request for every question (whoever asked), resolution when it is answered."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from orchestrator.events import ConsultantActed, EscalationAnswered, EscalationOpened, Event


@dataclass
class EscalationFiles:
    run_folder: Path

    def notify(self, event: Event) -> None:
        if not isinstance(event, (EscalationOpened, EscalationAnswered, ConsultantActed)):
            return  # most events (five per attempt) write nothing here
        from orchestrator.consultant import (
            ConsultantDecision,
            write_level1,
            write_level2,
            write_resolution,
        )

        if isinstance(event, EscalationOpened):
            folder = self.run_folder / event.task_id / "escalation"
            archive_level2(folder)
            esc = event.escalation
            trigger = {
                "timestamp": _now(),
                "task_id": event.task_id,
                "escalation_id": esc["id"],
                "asker": esc["asker"],
                "category": esc["category"],
                "question": esc["question"],
            }
            write_level2(folder, trigger, event.request)
        elif isinstance(event, EscalationAnswered):
            found = level2_for(self.run_folder / event.task_id / "escalation", event.escalation_id)
            if found is not None:
                write_resolution(
                    found,
                    {
                        "escalation_id": event.escalation_id,
                        "action": event.action,
                        "response": event.response,
                        "responder": event.responder,
                        "channel": event.channel,
                        "wait_s": event.wait_s,
                    },
                )
        elif isinstance(event, ConsultantActed):
            overrides = (
                {"model": event.model, "hints": event.hints}
                if event.model
                else {"hints": event.hints}
            )
            write_level1(
                self.run_folder / event.task_id / "escalation",
                event.trigger,
                ConsultantDecision.model_validate(event.decision),
                {"task": event.task_id, **overrides},
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


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
