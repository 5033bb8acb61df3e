"""After every attempt: done, retry with guidance, consult (level 1), or ask a human (level 2).

A pure function of the attempt and what is recorded about the task, so a resumed run decides
exactly as the original would have. The order is the escalation ladder of DESIGN.md:
needs-human and always-escalate categories first, then gates (an agent saying "done" is evidence,
not proof), then the loop detector and the hard cap as guardrails, then the brain.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from orchestrator import transitions
from orchestrator.agents.base import AgentResult
from orchestrator.agents.human_tool import reported
from orchestrator.asking import EscalationDraft, after_failures, agent_question
from orchestrator.brain import Brain
from orchestrator.config import Settings
from orchestrator.gates import GateResult
from orchestrator.interpret import Interpretation, interpret
from orchestrator.interpret.model import why_sentence
from orchestrator.interpret.uncertain import fallback_question
from orchestrator.llm import LLMBackend
from orchestrator.loops import LoopDetector, LoopDetectorConfig, LoopVerdict
from orchestrator.models import Task
from orchestrator.rules.platform import PlatformError, action_for, find_platform_error
from orchestrator.rules.platform_ask import ACTIONS, OPTIONS, question_for

AttemptVerdict = Literal["completed", "needs_human", "failed", "rate_limited"]


Outcome = Literal["complete", "retry", "consult", "escalate", "wait", "backoff"]
"""The judge's share of the outcomes in `transitions.TABLE`."""


@dataclass
class Decision:
    outcome: Outcome
    verdict: AttemptVerdict
    reason: str
    error_summary: str | None = None
    guidance: str | None = None
    escalation: EscalationDraft | None = None
    loop: LoopVerdict | None = None
    interpretation: Interpretation | None = None
    wait_until: float | None = None
    headline: str | None = None
    """Display only: the line that announces a climb of the ladder (`LOOP DETECTED: …`)."""

    @property
    def action(self) -> str:
        """The name recorded in decision.json and the attempts table."""
        return self.outcome


@dataclass
class TaskState:
    """What the store knows about the task before this attempt."""

    failures_since_resume: list[str]
    level: int = 0
    level_attempts: int = 0
    backoffs: Callable[[], int] = field(default=lambda: 0)
    """How many attempts in a row just before this one were backed off from (read only when a
    transient platform error asks for one more)."""


def failure_text(
    result: AgentResult, gates: list[GateResult], interp: Interpretation | None
) -> str:
    parts = []
    if result.error:
        parts.append(f"Agent error: {result.error}")
    elif result.exit_code:
        parts.append(f"Agent exited with code {result.exit_code}")
    parts += [g.summary() for g in gates if not g.passed]
    if not parts and interp is not None and interp.verdict == "failed":
        parts.append(
            "The agent reported failure:\n" + "\n".join(result.output.strip().splitlines()[-20:])
        )
    return "\n\n".join(parts) or "The attempt failed without an error message."


class Judge:
    def __init__(
        self, settings: Settings, llm: LLMBackend | None = None, brain: Brain | None = None
    ) -> None:
        self.settings = settings
        if llm is None and (settings.llm or settings.llm_only):
            from orchestrator.llm import get_backend

            llm = get_backend(settings.llm_backend)
        self.llm = llm
        config = LoopDetectorConfig(
            max_task_attempts=settings.max_attempts,
            max_e2e_fix_attempts=settings.max_e2e_fix_attempts,
            error_similarity_threshold=settings.similarity_threshold,
        )
        # the interpreter's backend serves the brain only when it is the one the brain names
        shared = (
            llm
            if settings.brain == "auto" or getattr(llm, "name", None) == settings.brain
            else None
        )
        self.brain = brain or Brain(
            backend=settings.brain, llm=shared, llm_backend=settings.llm_backend, config=config
        )
        self.loops = LoopDetector(config)

    def interpret(self, text: str) -> Interpretation:
        return interpret(
            text,
            llm=self.llm if (self.settings.llm or self.settings.llm_only) else None,
            llm_only=self.settings.llm_only,
        )

    def decide(
        self,
        task: Task,
        result: AgentResult,
        gates: list[GateResult],
        state: TaskState,
        *,
        max_attempts: int | None = None,
    ) -> Decision:
        max_attempts = max_attempts or self.settings.max_attempts
        if result.platform is not None:
            decided = self._platform(result.platform, result, gates, state)
            if decided is not None:
                return decided
        if result.question is not None:
            retry_at = result.question.detail.get("retry_at")
            if retry_at and float(retry_at) - time.time() <= self.settings.rate_limit_wait:
                return Decision(
                    "wait",
                    "rate_limited",
                    f"rate limited until {time.strftime('%H:%M:%S', time.localtime(float(retry_at)))}",
                    error_summary=result.error,
                    wait_until=float(retry_at),
                )
            return Decision(
                "escalate",
                "needs_human",
                result.question.why or "the agent asked a question",
                escalation=agent_question(result.question, structured=True),
                headline="NEEDS HUMAN INPUT",
            )
        # the agent's own report_status (structure) before its text
        interp = reported(result.reported_status) or self.interpret(result.output)
        found = _platform_of(interp) if result.platform is None else None
        if found is None and result.platform is None and result.error:
            found = find_platform_error(result.error)
        if found is not None:
            decided = self._platform(found, result, gates, state)
            if decided is not None:
                return decided
        if result.error and interp.category is None:
            # an API error from the agent (401, quota, refused connection) is the agent's output too
            err = self.interpret(result.error)
            if err.category is not None:
                interp = err
        gates_failed = any(not g.passed for g in gates)
        if interp.verdict == "needs_human" or interp.category is not None:
            # a human is asked either way (never auto-retry), but agent text outranks no gate:
            # with a failing gate the attempt itself is recorded as failed
            return Decision(
                "escalate",
                "failed" if gates_failed else "needs_human",
                interp.why or "the agent needs a decision",
                error_summary=failure_text(result, gates, interp) if gates_failed else None,
                escalation=EscalationDraft(
                    question=interp.question or fallback_question(result.output),
                    asker="agent",
                    options=list(interp.options),
                    recommendation=interp.recommendation,
                    category=interp.category,
                    why=why_sentence(interp.why, interp.category),
                    detail={"source": interp.source},
                ),
                interpretation=interp,
                headline="NEEDS HUMAN INPUT",
            )
        agent_failed = bool(result.exit_code) or result.error is not None
        said_failed = interp.verdict == "failed" and (interp.source == "marker" or not gates)
        if not (gates_failed or agent_failed or said_failed):
            return Decision(
                "complete",
                "completed",
                "gates passed" if gates else "agent finished",
                interpretation=interp,
            )

        error = failure_text(result, gates, interp)
        errors = [*state.failures_since_resume, error]
        failed_here = state.level_attempts + 1
        # loops are judged within the current ladder level: the consultant's changes start a new window
        window = errors[-failed_here:]

        if task.is_verification:
            loop = self.loops.check_e2e(window)
        else:
            loop = self.loops.check(window, task_id=task.id)
        if loop is not None:
            return self._next_level(
                task,
                state,
                error,
                loop.message,
                loop=loop,
                headline=f"LOOP DETECTED: {loop.message}",
            )
        if len(errors) >= self.settings.max_total_attempts:
            msg = (
                f"Task {task.id} failed {len(errors)} times since the last human resume (hard cap)"
            )
            return self._human(task, error, msg, headline=f"ATTEMPT CAP REACHED: {msg}")
        if failed_here >= max_attempts:
            msg = f"Task {task.id} failed {failed_here} times"
            return self._next_level(task, state, error, msg, headline=f"ESCALATING: {msg}")
        brain = self.brain.should_retry_or_escalate(
            task.id, task.title, window, len(window), loops_checked=True
        )
        platform = result.platform or found
        if platform is not None and platform.spec.guidance and brain.decision == "retry":
            return Decision(
                "retry",
                "failed",
                f"{platform.spec.why[:-1]}; retrying with guidance",
                error_summary=error,
                guidance=f"{platform.spec.guidance} {brain.guidance_for_retry or ''}".strip(),
                interpretation=interp,
            )
        if brain.decision == "escalate":
            return self._human(
                task,
                error,
                brain.reason,
                category=brain.category,
                headline=f"ESCALATING: {brain.reason}",
            )
        return Decision(
            "retry",
            "failed",
            brain.reason,
            error_summary=error,
            guidance=brain.guidance_for_retry,
            interpretation=interp,
        )

    def _platform(
        self, err: PlatformError, result: AgentResult, gates: list[GateResult], state: TaskState
    ) -> Decision | None:
        """The agent platform's own error, through `rules.platform.KINDS`: wait for a near reset,
        back off from a transient error without spending the attempt, or ask a person. None for
        `retry` (an ordinary failed attempt, judged below). Gates that pass outrank the error: the
        work is verified, the error came after it. A reset time already past (a stale message) is
        backed off from like a transient error, so a repeated one cannot spin."""
        if gates and all(g.passed for g in gates):
            return Decision("complete", "completed", f"gates passed (then: {err.message[:200]})")
        now = time.time()
        action = action_for(err, wait_cap=self.settings.rate_limit_wait, now=now)
        if action == "wait" and (err.retry_at or 0) <= now:
            action = "backoff"
        label = err.kind.replace("_", " ")
        summary = f"Agent error: {err.message}"
        if action == "wait" and err.retry_at is not None:
            until = max(err.retry_at, now)
            return Decision(
                "wait",
                "rate_limited",
                f"{label} until {time.strftime('%H:%M:%S', time.localtime(until))}",
                error_summary=summary,
                wait_until=until,
            )
        if action == "backoff":
            done, delays = state.backoffs(), transitions.BACKOFF
            if done < len(delays):
                delay = delays[done]
                return Decision(
                    "backoff",
                    "rate_limited",
                    f"{label} (a transient error): backing off {delay:g}s, then the same attempt "
                    f"again, not counted ({done + 1}/{len(delays)})",
                    error_summary=summary,
                    wait_until=now + delay,
                )
            action = "escalate"
        if action != "escalate":
            return None
        spec = err.spec
        detail = {
            "actions": list(ACTIONS),
            "platform": err.kind,
            "retry_at": err.retry_at,
            "status": err.status,
            "source": err.source,
            "error": err.message[:2000],
        }
        return Decision(
            "escalate",
            "needs_human",
            spec.why,
            error_summary=summary,
            escalation=EscalationDraft(
                question=question_for(err),
                asker="orchestrator",
                options=list(OPTIONS),
                recommendation=OPTIONS[0],
                category=spec.category,
                why=spec.why,
                detail=detail,
            ),
            headline=f"NEEDS HUMAN INPUT: {spec.why}",
        )

    def _next_level(
        self,
        task: Task,
        state: TaskState,
        error: str,
        reason: str,
        *,
        loop: LoopVerdict | None = None,
        headline: str,
    ) -> Decision:
        if self.settings.consultant and state.level == 0:
            return Decision(
                "consult", "failed", reason, error_summary=error, loop=loop, headline=headline
            )
        return self._human(task, error, reason, loop=loop, headline=headline)

    def _human(
        self,
        task: Task,
        error: str,
        reason: str,
        *,
        loop: LoopVerdict | None = None,
        category: str | None = None,
        headline: str,
    ) -> Decision:
        return Decision(
            "escalate",
            "failed",
            reason,
            error_summary=error,
            loop=loop,
            headline=headline,
            escalation=after_failures(
                reason,
                error,
                category=category,
                loop_kind=loop.kind if loop else None,
                similarity=loop.similarity if loop else None,
            ),
        )


def _platform_of(interp: Interpretation) -> PlatformError | None:
    if interp.platform is None:
        return None
    return PlatformError(
        interp.platform, interp.evidence or interp.platform, interp.retry_at, source="text"
    )
