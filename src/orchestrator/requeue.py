"""Putting tasks back in the queue from outside a runner: seed 003's resume (a paused task's counters
reset and its status PENDING, in one transaction through the decision table) and a rewind (the
workdir back to a task's checkpoint, that task and every later one queued again).

Both are refused while a runner holds the run: it keeps the task statuses in memory and would
overwrite these. An open escalation of a re-queued task is answered on the way (retry, or the
guidance as its text), so the inbox holds no question nobody is waiting for; answering it first
keeps a crash in between harmless, since the next resume applies that answer the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.artifacts import run_folder
from orchestrator.detached import held
from orchestrator.humans import Answer, record_answer
from orchestrator.models import UserError
from orchestrator.rows import RunRow, TaskRow
from orchestrator.store import AlreadyAnswered, Store
from orchestrator.transitions import Outcome, task_values


def _free_run(store: Store, run_id: str, doing: str) -> RunRow:
    if held(store, run_id):  # raises UserError for an unknown run
        raise UserError(
            f"a runner holds run {run_id}, so it cannot {doing} now; answer its open "
            "escalation instead (the runner picks it up), or stop the runner first"
        )
    row = store.run(run_id)
    assert row is not None
    return row


def _answer_open(
    store: Store, run_id: str, task_id: str, answer: Answer, channel: str, responder: str | None
) -> tuple[list[int], str | None]:
    """Answer the task's open escalations; returns their ids and the guidance the answer gives."""
    ids, guidance = [], None
    for esc in store.escalations(run_id, open_only=True, task_id=task_id):
        try:
            record_answer(store, esc["id"], answer, channel=channel, responder=responder)
        except AlreadyAnswered:
            continue  # someone else answered it just now; their answer stands
        ids.append(esc["id"])
        guidance = answer.guidance(esc) or guidance
    return ids, guidance


def _reopen_run(store: Store, run: RunRow) -> None:
    """A finished run with tasks queued again is paused: `runs` must not call it done."""
    if run["status"] in ("COMPLETED", "FAILED"):
        store.set_run_status(run["id"], "PAUSED")


def resume_task(
    store: Store,
    run_id: str,
    task_id: str,
    *,
    guidance: str | None = None,
    channel: str = "api",
    responder: str | None = None,
) -> TaskRow:
    """Seed 003's resume: the task's counters reset and its status PENDING in one transaction
    (the table's `answer_guidance` with guidance, else `answer_retry`)."""
    run = _free_run(store, run_id, "resume a task")
    row = store.task(run_id, task_id)
    if row["status"] == "COMPLETED":
        raise UserError(
            f"task {task_id} of run {run_id} is COMPLETED; rewind_to_task redoes it from its "
            "checkpoint"
        )
    guidance = guidance.strip() if guidance else None
    answer = Answer("text", guidance) if guidance else Answer("retry", "retry")
    answered, worded = _answer_open(store, run_id, task_id, answer, channel, responder)
    outcome: Outcome = "answer_guidance" if guidance else "answer_retry"
    values = task_values(outcome, row, guidance=worded or guidance)
    store.record(
        run_id,
        task_id,
        event_kind="task_resumed",
        payload={
            "task_id": task_id,
            "from": row["status"],
            "attempt_count": row["attempts_since_resume"],
            "guidance": guidance,
            "answered": answered,
            "channel": channel,
        },
        task_values=values,
    )
    _reopen_run(store, run)
    return store.task(run_id, task_id)


def rewind_to_task(
    store: Store,
    run_id: str,
    task_id: str,
    *,
    channel: str = "api",
    responder: str | None = None,
) -> dict[str, Any]:
    """The workdir back to the checkpoint before `task_id` (the completed task before it in run
    order, or the run's start), then that task and every later one PENDING with fresh counters
    and no agent session (its work is gone), one transaction per task."""
    from orchestrator.checkpoints import Checkpoints
    from orchestrator.consultant import checkpoint_before
    from orchestrator.plans import order

    run = _free_run(store, run_id, "rewind")
    ids = [t.id for t in order(store.plan(run_id))]
    if task_id not in ids:
        raise UserError(f"run {run_id} has no task {task_id!r} (tasks: {', '.join(ids)})")
    meta = json.loads(run["settings_json"])
    if meta.get("checkpoints") is False:
        raise UserError(f"run {run_id} ran without checkpoints, so there is nothing to rewind to")
    rows = {t["task_id"]: t for t in store.tasks(run_id)}
    i = ids.index(task_id)
    before = [t for t in ids[:i] if rows[t]["status"] == "COMPLETED"]
    label = checkpoint_before(task_id, [*before, task_id])
    sha = Checkpoints(Path(run["workdir"]), run_folder(meta, run_id), run_id).revert_to(label)
    requeued = []
    for tid in ids[i:]:
        _answer_open(store, run_id, tid, Answer("retry", "retry"), channel, responder)
        store.record(
            run_id,
            tid,
            event_kind="task_rewound",
            payload={"to": label, "checkpoint": sha, "from": rows[tid]["status"], "by": task_id},
            task_values=task_values("answer_retry", rows[tid]) | {"session_id": None},
        )
        requeued.append(tid)
    _reopen_run(store, run)
    return {"run_id": run_id, "reverted_to": label, "checkpoint": sha, "requeued": requeued}
