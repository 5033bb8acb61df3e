"""The plan's milestone verification as a last task, so it is attempted, judged, escalated and
resumed like any other."""

from __future__ import annotations

from orchestrator.models import VERIFICATION_KIND, Plan, Task


def with_verification(plan: Plan) -> Plan:
    """A last task that depends on all others; its checks run first, and only if they fail does an
    agent get fix attempts (max_e2e_fix_attempts)."""
    if not plan.verification:
        return plan
    ids = {t.id for t in plan.tasks}
    task_id = next(x for x in ("E2E", "E2E-verification", "milestone-verification") if x not in ids)
    body = (
        "All tasks of this milestone are done, but the milestone verification fails. Find the cause "
        "and fix it without breaking what the earlier tasks built. The checks:\n"
        + "\n".join(f"- `{c}`" for c in plan.verification)
    )
    final = Task(
        id=task_id,
        title="Milestone verification",
        type="VERIFICATION",
        body=body,
        verify=list(plan.verification),
        depends_on=[t.id for t in plan.tasks],
        source=plan.path,
        extra={"kind": VERIFICATION_KIND},
    )
    return plan.model_copy(update={"tasks": [*plan.tasks, final]})
