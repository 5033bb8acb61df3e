"""What the store says about a task's past, read for the next attempt: failures since the last
human answer, commands a human allowed, decisions made at plan checkpoints, the prompt they make,
and the run's summary rows."""

from __future__ import annotations

from typing import Any

from orchestrator.models import Plan, Task
from orchestrator.prompt import build_prompt
from orchestrator.rows import TaskRow
from orchestrator.store import Store


def failures_since_resume(store: Store, run_id: str, task_id: str, row: TaskRow) -> list[str]:
    n = row["attempts_since_resume"]
    if n <= 0:
        return []
    failed = [a for a in store.attempts(run_id, task_id) if a["verdict"] == "failed"]
    return [a["error_summary"] or "" for a in failed[-n:]]


def backoffs(store: Store, run_id: str, task_id: str) -> int:
    """How many of the task's latest finished attempts in a row were backed off from (a transient
    platform error, not counted): the judge gives up backing off after `transitions.BACKOFF`."""
    n = 0
    for a in reversed(store.attempts(run_id, task_id)):
        if a["verdict"] is None:
            continue  # the attempt being judged
        if a["decision"] != "backoff":
            break
        n += 1
    return n


def approved_commands(store: Store, run_id: str, task_id: str) -> list[str]:
    """Held commands a human allowed; the agent may run exactly these next time."""
    from orchestrator.humans import strip_letter
    from orchestrator.policy import is_approval

    return [
        str(e["detail"]["command"])
        for e in store.escalations(run_id, task_id=task_id)
        if e["status"] == "answered"
        and e["category"] == "extreme_destructive"
        and e["detail"].get("command")
        and is_approval(strip_letter(e["response"] or ""))
    ]


def checkpoint_decisions(store: Store, run_id: str, plan: Plan, task: Task) -> list[str]:
    """What a person decided at a plan checkpoint reaches the tasks after it."""
    out = []
    for dep in task.depends_on:
        if plan.task(dep).checkpoint:
            decided = store.task(run_id, dep)["guidance"]
            if decided:
                out.append(f"Decision at checkpoint {dep}: {decided}")
    return out


def attempt_prompt(
    store: Store,
    run_id: str,
    plan: Plan,
    task: Task,
    row: TaskRow,
    history: list[str],
    gates: list[str],
    resume: str | None,
) -> str:
    """The task with earlier failures and every guidance; a resumed agent session gets only the
    answer, since it still holds the rest."""
    last = store.attempts(run_id, task.id) if history else []
    feedback = [f"Attempt {i}:\n{_tail(err, 3000)}" for i, err in enumerate(history[-3:], 1)]
    guidance = [g for g in (row["guidance"] or "").splitlines() if g.strip()]
    brain = next((a["guidance"] for a in reversed(last) if a["verdict"] == "failed"), None)
    if brain and history:
        guidance.append(brain)
    guidance += [str(h) for h in row["overrides"].get("hints", [])]
    guidance += checkpoint_decisions(store, run_id, plan, task)
    if resume and guidance:
        return "\n".join(guidance) + "\n\nContinue the task with this answer.\n"
    return build_prompt(task, feedback=feedback, guidance=guidance, gates=gates)


def summary(store: Store, run_id: str) -> list[dict[str, Any]]:
    """One row per task: status, attempts, time and money spent."""
    by_task: dict[str, list[Any]] = {}
    for a in store.attempts(run_id):
        by_task.setdefault(a["task_id"], []).append(a)
    rows = []
    for t in store.tasks(run_id):
        att = by_task.get(t["task_id"], [])
        costs = [a["cost_usd"] for a in att if a["cost_usd"] is not None]
        rows.append(
            {
                "task_id": t["task_id"],
                "title": t["title"],
                "status": t["status"],
                "attempts": len(att),
                "duration_s": sum(a["duration_s"] or 0 for a in att),
                "cost_usd": sum(costs) if costs else None,
            }
        )
    return rows


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]
