"""What one step of the loop records and announces: an attempt that ran (`Finished`) or an answer
being applied (`Applying`). The runner hands either to its one `transition`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.agents.base import AgentResult
from orchestrator.events import (
    AttemptFinished,
    EscalationAnswered,
    Event,
    LevelReached,
    LoopDetected,
)
from orchestrator.gates import GateResult
from orchestrator.humans import Answer
from orchestrator.judge import Decision
from orchestrator.rows import EscalationRow, TaskRow
from orchestrator.transitions import TABLE, Outcome


@dataclass
class Finished:
    """An attempt that ran, and what the judge made of it."""

    number: int
    decision: Decision
    result: AgentResult
    agent: str
    model: str | None
    cap: int
    """Attempts allowed at this ladder level (max_attempts, or max_e2e_fix_attempts)."""
    row: TaskRow
    """The task as it was before the attempt (counters, guidance)."""
    checks: list[GateResult] = field(default_factory=list)
    """The gates the judge read."""

    @property
    def failed(self) -> bool:
        return self.decision.verdict == "failed"

    @property
    def session_to_resume(self) -> str | None:
        """The agent's session, kept when it stopped to ask, so the answer continues it."""
        return self.result.session_id if self.result.question is not None else None

    def values(self) -> dict[str, Any]:
        r, d = self.result, self.decision
        return {
            "exit_code": r.exit_code,
            "cost_usd": r.cost_usd,
            "tokens_in": r.tokens_in,
            "tokens_out": r.tokens_out,
            "turns": r.turns,
            "session_id": r.session_id,
            "error_summary": d.error_summary,
            "decision": d.action,
            "guidance": d.guidance,
        }

    def payload(self) -> dict[str, Any]:
        """The `attempt_finished` event's: with the attempt's row (decision, guidance, error),
        the whole decision and the gates it read. (It was also written as the attempt's
        decision.json: one file more per attempt, ~0.1-0.3 ms of the next commit's journal.)"""
        d = self.decision
        out: dict[str, Any] = {
            "attempt": self.number,
            "verdict": d.verdict,
            "action": d.action,
            "reason": d.reason,
            "loop": d.loop.kind if d.loop else None,
        }
        if self.checks:
            out["gates"] = [
                {"command": g.command, "exit_code": g.exit_code, "log": str(g.log_path)}
                for g in self.checks
            ]
        return out

    def events(self, run_id: str, task_id: str, row: TaskRow) -> list[Event]:
        d, r = self.decision, self.result
        esc = d.escalation
        out: list[Event] = [
            AttemptFinished(
                run_id,
                task_id,
                self.number,
                self.agent,
                self.model,
                d.verdict,
                d.outcome,
                d.reason,
                d.error_summary,
                d.guidance,
                r.exit_code,
                r.cost_usd,
                r.tokens_in,
                r.tokens_out,
                r.turns,
                r.duration_s,
                row["level"],
                row["level_attempts"] + (1 if self.failed else 0),
                self.cap,
                esc.category if esc else None,
                esc.asker if esc else None,
            )
        ]
        if d.loop is not None:
            out.append(
                LoopDetected(
                    run_id,
                    task_id,
                    d.loop.kind,
                    d.loop.similarity,
                    d.loop.message,
                    d.loop.similarity_line,
                )
            )
        if (
            d.headline
            and d.outcome in ("consult", "escalate")
            and (esc is None or esc.asker != "agent")
        ):
            out.append(LevelReached(run_id, task_id, d.headline))
        return out


@dataclass
class Applying:
    """A recorded answer on its way to becoming the task's next step."""

    escalation: EscalationRow
    answer: Answer
    kind: str
    """The answer's kind with option actions resolved (an option that means retry is `retry`)."""
    guidance: str | None

    def payload(self, outcome: Outcome) -> dict[str, Any]:
        return {
            "escalation_id": self.escalation["id"],
            "kind": self.answer.kind,
            "status": TABLE[outcome].status,
            "reason": f"human_{self.kind}",
        }

    def event(self, run_id: str, task_id: str) -> EscalationAnswered:
        esc = self.escalation
        return EscalationAnswered(
            run_id,
            task_id,
            esc["id"],
            self.answer.text,
            self.answer.kind,
            self.kind,
            esc["responder"],
            esc["channel"],
            esc["wait_s"],
        )
