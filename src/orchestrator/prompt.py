"""The prompt an agent gets for one attempt: the task, what will check it, and what went wrong before."""

from __future__ import annotations

from orchestrator.models import Task

NEEDS_HUMAN_PROTOCOL = """\
## If you need a decision from a human
Do not guess. If you have the orchestrator's `ask_human` tool, call it with the question, the
options, your recommendation and a category (`ambiguous_requirements`, `extreme_destructive` or
`external_service`): its result is the human's answer, or tells you to stop and wait.
Without that tool, stop and end your reply with exactly:
STATUS: needs_human
QUESTION: <the question>
OPTIONS:
A) <first option>
B) <second option>
RECOMMENDATION: <the option you would pick, and why>

## When you are done
If you have the orchestrator's `report_status` tool, call it once as your last action: `completed`,
`blocked` (you cannot go on without a person) or `failed`, with a short summary."""
"""How an agent asks a person and says how the task ended: the `agent_mcp` tools where the agent
has them (Claude Code, Codex, Gemini CLI), the marker block everywhere else."""


def build_prompt(
    task: Task,
    *,
    feedback: list[str] | None = None,
    guidance: list[str] | None = None,
    gates: list[str] | None = None,
) -> str:
    parts = [f"# Task {task.id}: {task.title}"]
    if task.type:
        parts.append(f"Type: {task.type}")
    if task.files:
        parts.append("Files: " + ", ".join(f"`{f}`" for f in task.files))
    if task.body.strip():
        parts.append("## Task\n" + task.body.strip())
    if task.acceptance_criteria and "Acceptance Criteria" not in task.body:
        parts.append(
            "## Acceptance criteria\n" + "\n".join(f"- [ ] {c}" for c in task.acceptance_criteria)
        )
    if gates:
        parts.append(
            "## Checks that will run when you finish (the task is done only when they pass)\n"
            + "\n".join(f"- `{g}`" for g in gates)
        )
    if feedback:
        parts.append("## What went wrong in earlier attempts\n" + "\n\n".join(feedback))
    if guidance:
        parts.append("## Guidance for this attempt\n" + "\n".join(f"- {g}" for g in guidance))
    parts.append(NEEDS_HUMAN_PROTOCOL)
    return "\n\n".join(parts) + "\n"
