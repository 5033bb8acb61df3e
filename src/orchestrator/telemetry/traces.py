"""OpenTelemetry traces of a run, as an observer of its events: one trace per run, however many
processes carry it out.

    orchestrator.run                       the run (the first process that ran it)
    ├── orchestrator.task                  a task, from its first step to its end (or the pause)
    │   ├── orchestrator.attempt           agent, model, verdict, category, cost, tokens, turns, exit code
    │   │   └── orchestrator.gate          command, exit code, duration
    │   ├── orchestrator.loop_detected     kind, similarity, reason
    │   ├── orchestrator.consultant        level 1: root cause, hints, model switch, revert
    │   ├── orchestrator.rate_limit_wait   the loop sleeping until a rate limit resets
    │   └── orchestrator.escalation        asked and answered in this process (a terminal, --wait)
    ├── orchestrator.escalation            asked by one process, answered before another resumed
    └── orchestrator.resume                each later process (`orchestrator resume`), with its tasks

Every span is created by the process that ends it. A span open across a pause (the task waiting
for a human) is ended at the pause; the escalation span is made when its answer is applied, with
the times the store recorded (opened, answered), so a pause of two days is one span of two days.
The run span's ids are kept in the run's stored settings (`otel`: trace and span id, hex) so a
later process joins the same trace, its spans parented to a remote span context built from them.

Agent and human text (questions, answers, reasons, gate commands) goes through
`redaction.redact_text` before it becomes an attribute: no secret enters a span.

Spans are made on the run's thread, as the events arrive, as plain records (`spans.py`) that
become the SDK's spans only when they end: the SDK's own cost ~20 µs each to start and end, most
of what telemetry cost a run besides the export. A thread building them instead (woken after each
attempt, or as the agent starts) made the run slower, not faster — it holds the interpreter just
when the run's thread comes back from a commit or from the agent. So did encoding and sending them
in a process of their own (tried 2026-11-24: 1.2-1.4× telemetry off on 2 cores, against ~1.1×
here): its start and its encoding took the core the agents and the file system's flushes use.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

from orchestrator import __version__, telemetry
from orchestrator.events import (
    AttemptFinished,
    AttemptInterrupted,
    AttemptStarted,
    CheckpointMade,
    ConsultantActed,
    EscalationAnswered,
    EscalationOpened,
    Event,
    GateFinished,
    LevelReached,
    LoopDetected,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    Waiting,
)
from orchestrator.redaction import known_secrets, redact_text
from orchestrator.telemetry.spans import Recorded, Spans

if TYPE_CHECKING:
    from orchestrator.config import TelemetryConfig
    from orchestrator.rows import EscalationRow
    from orchestrator.store import Store

logger = logging.getLogger("orchestrator.telemetry")

QUESTION_CHARS = 200
"""Seed 000: the escalation span's question, truncated."""
TEXT_CHARS = 500
"""Any other text attribute (a reason, an answer, an error summary)."""
META_KEY = "otel"
"""Where a run's stored settings keep its trace: `{"trace_id": hex, "span_id": hex, "sampled"}`."""


EXPORT_EVERY_MS = 250.0
"""How often finished spans are sent (the SDK's default is 5 s; `OTEL_BSP_SCHEDULE_DELAY` wins):
a runner killed with -9 loses at most this much, and the run's end has little left to encode,
the rest having been sent on the exporter's thread while the run waited on its agents."""


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _attrs(**values: Any) -> dict[str, Any]:
    """Attributes without the unset ones (OpenTelemetry refuses None)."""
    return {k.replace("__", "."): v for k, v in values.items() if v is not None}


def provider_for(config: TelemetryConfig) -> tuple[TracerProvider, BatchSpanProcessor]:
    """A tracer provider of its own (never the global one: each run flushes and shuts its own)
    and its processor, exporting over OTLP/HTTP in batches; the standard variables win over
    `config`."""
    exporter = OTLPSpanExporter(
        endpoint=telemetry.endpoint("traces", config),
        headers=telemetry.config_headers("traces", config) or None,
        timeout=telemetry.timeout("traces"),
    )
    provider = TracerProvider(resource=telemetry.resource(config), shutdown_on_exit=False)
    every = None if "OTEL_BSP_SCHEDULE_DELAY" in os.environ else EXPORT_EVERY_MS
    processor = BatchSpanProcessor(exporter, schedule_delay_millis=every)
    provider.add_span_processor(processor)  # its shutdown flushes and stops the processor
    return provider, processor


def remote_parent(ids: dict[str, Any]) -> SpanContext | None:
    """The context of a span another process made, from its stored ids (None if they are unusable)."""
    try:
        ctx = SpanContext(
            trace_id=int(str(ids["trace_id"]), 16),
            span_id=int(str(ids["span_id"]), 16),
            is_remote=True,
            trace_flags=TraceFlags(TraceFlags.SAMPLED if ids.get("sampled", True) else 0),
        )
    except (KeyError, TypeError, ValueError):
        return None
    return ctx if ctx.is_valid else None


@dataclass
class TracingObserver:
    """Turns one runner's events into spans; flushes and shuts its provider down at RunFinished
    (Ctrl-C and SIGTERM end in RunFinished too; anything else, at exit)."""

    provider: TracerProvider
    processor: BatchSpanProcessor
    store: Store
    run_id: str
    spans: Spans = field(init=False)
    root: SpanContext | None = None
    """The run span's context (this process's or, resumed, the first process's)."""
    segment: Recorded | None = None
    """This process's run span: `orchestrator.run`, or `orchestrator.resume` when resumed."""
    tasks: dict[str, Recorded] = field(default_factory=dict)
    attempts: dict[str, Recorded] = field(default_factory=dict)
    waits: dict[str, Recorded] = field(default_factory=dict)
    asked_in: dict[int, SpanContext] = field(default_factory=dict)
    """Escalations opened in this process: the context of their task's span."""
    prev_ns: dict[str, int] = field(default_factory=dict)
    """When each task's event before this one arrived (the consultant starts as the attempt ends)."""
    last_ns: dict[str, int] = field(default_factory=dict)
    closed: bool = False
    secrets: dict[str, str] = field(default_factory=dict)
    """The environment's credential variables, read once: redaction then scans only these."""
    redacted: dict[str, str] = field(default_factory=dict)
    """Texts already redacted (a reason, a title, a gate command recur from attempt to attempt)."""

    @classmethod
    def create(cls, config: TelemetryConfig, store: Store, run_id: str) -> TracingObserver:
        return cls(*provider_for(config), store, run_id)

    def __post_init__(self) -> None:
        scope = InstrumentationScope("orchestrator", __version__)
        self.spans = Spans(self.provider, self.processor, scope)
        values = set(known_secrets())
        self.secrets = {k: v for k, v in os.environ.items() if v in values}
        atexit.register(self.close)

    def text(self, value: str | None, limit: int = TEXT_CHARS) -> str:
        """Agent or human text fit for a span: secrets out first (a cut secret would not match),
        then cut."""
        value = value or ""
        if (done := self.redacted.get(value)) is None:
            done = redact_text(value, self.secrets)
            if len(value) <= 1000 and len(self.redacted) < 4096:
                self.redacted[value] = done
        return done[:limit]

    # -- events -----------------------------------------------------------------------------------
    def notify(self, event: Event) -> None:
        handler = _HANDLERS.get(type(event))
        if self.closed or handler is None:  # the agent's own activity (many a second) makes none
            return
        now = time.time_ns()
        task_id: str | None = getattr(event, "task_id", None)
        if task_id is not None:
            if (wait := self.waits.pop(task_id, None)) is not None:
                wait.end(now)
            self.prev_ns[task_id] = self.last_ns.get(task_id, now)
            self.last_ns[task_id] = now
        handler(self, event, now)

    def run_started(self, e: RunStarted, now: int) -> None:
        row = self.store.run(self.run_id)
        meta: dict[str, Any] = json.loads(row["settings_json"]) if row else {}
        attrs = _attrs(
            orchestrator__run__id=e.run_id,
            orchestrator__plan=self.text(e.plan_path),
            orchestrator__tasks=e.tasks,
            orchestrator__agent=e.agent,
            orchestrator__run__resumed=e.resumed,
        )
        parent = remote_parent(meta[META_KEY]) if isinstance(meta.get(META_KEY), dict) else None
        if parent is not None:
            self.root = parent
            self.segment = self.spans.start("orchestrator.resume", parent, attrs, now)
            return
        self.segment = self.spans.start("orchestrator.run", None, attrs, now)
        ctx = self.root = self.segment.context
        meta[META_KEY] = {
            "trace_id": trace.format_trace_id(ctx.trace_id),
            "span_id": trace.format_span_id(ctx.span_id),
            "sampled": ctx.trace_flags.sampled,  # a later process samples as the first did
        }
        if row is not None:  # lost only with the machine's power: a resume then starts a trace
            self.store.update_settings(self.run_id, meta, durable=False)

    def run_finished(self, e: RunFinished, now: int) -> None:
        if self.segment is not None:
            self.segment.set_attributes(
                _attrs(
                    orchestrator__run__status=e.status,
                    process__exit__code=e.exit_code,
                    orchestrator__run__elapsed_s=round(e.elapsed_s, 3),
                )
            )
            if e.status == "FAILED":
                self.segment.set_status(Status(StatusCode.ERROR, "a task failed"))
        self.close(now, e.status)

    def task_started(self, e: TaskStarted, now: int) -> None:
        old = self.tasks.pop(e.task_id, None)
        if old is not None:  # started again (reverted by the consultant): the old one ends here
            old.end(now)
        self.tasks[e.task_id] = self.spans.start(
            "orchestrator.task",
            self._segment_ctx(),
            attributes=_attrs(
                orchestrator__task__id=e.task_id, orchestrator__task__title=self.text(e.title)
            ),
            start_time=now,
        )

    def task_finished(self, e: TaskFinished, now: int) -> None:
        span = self.tasks.pop(e.task_id, None) or self._task(e.task_id, now)
        span.set_attributes(
            _attrs(
                orchestrator__task__status=e.status,
                orchestrator__task__reason=e.reason,
                orchestrator__task__duration_s=round(e.duration_s, 3),
                orchestrator__cost_usd=e.cost_usd,
            )
        )
        if e.status == "FAILED":
            span.set_status(Status(StatusCode.ERROR, self.text(e.reason)))
        span.end(now)

    def attempt_started(self, e: AttemptStarted, now: int) -> None:
        task = self._task(e.task_id, now)
        self.attempts[e.task_id] = self.spans.start(
            "orchestrator.attempt",
            task.context,
            attributes=_attrs(
                orchestrator__task__id=e.task_id,
                orchestrator__attempt__number=e.number,
                orchestrator__agent=e.agent,
                gen_ai__request__model=e.model,
            ),
            start_time=now,
        )

    def gate_finished(self, e: GateFinished, now: int) -> None:
        parent = self.attempts.get(e.task_id) or self._task(e.task_id, now)
        span = self.spans.start(
            "orchestrator.gate",
            parent.context,
            attributes=_attrs(
                orchestrator__gate__command=self.text(e.command),
                process__exit__code=e.exit_code,
                orchestrator__gate__passed=e.passed,
                orchestrator__gate__duration_s=round(e.duration_s, 3),
            ),
            start_time=now - _ns(e.duration_s),
        )
        if not e.passed:
            span.set_status(Status(StatusCode.ERROR, self.text(e.summary, 200)))
        span.end(now)

    def attempt_finished(self, e: AttemptFinished, now: int) -> None:
        span = self.attempts.pop(e.task_id, None)
        if span is None:  # no AttemptStarted seen: made now, as long as the attempt took
            span = self.spans.start(
                "orchestrator.attempt",
                self._task(e.task_id, now).context,
                attributes=_attrs(
                    orchestrator__task__id=e.task_id,
                    orchestrator__attempt__number=e.number,
                    orchestrator__agent=e.agent,
                    gen_ai__request__model=e.model,
                ),
                start_time=now - _ns(e.duration_s),
            )
        span.set_attributes(  # the task, number, agent and model were set when it started
            _attrs(
                orchestrator__attempt__verdict=e.verdict,
                orchestrator__attempt__outcome=e.outcome,
                orchestrator__attempt__category=e.category,
                orchestrator__attempt__reason=self.text(e.reason),
                orchestrator__attempt__error=self.text(e.error_summary)
                if e.error_summary
                else None,
                process__exit__code=e.exit_code,
                orchestrator__cost_usd=e.cost_usd,
                gen_ai__usage__input_tokens=e.tokens_in,
                gen_ai__usage__output_tokens=e.tokens_out,
                orchestrator__attempt__turns=e.turns,
                orchestrator__attempt__duration_s=round(e.duration_s, 3),
                orchestrator__level=e.level,
            )
        )
        if e.verdict == "failed":
            span.set_status(Status(StatusCode.ERROR, self.text(e.error_summary or e.reason, 200)))
        span.end(now)

    def loop_detected(self, e: LoopDetected, now: int) -> None:
        span = self.spans.start(
            "orchestrator.loop_detected",
            self._task(e.task_id, now).context,
            attributes=_attrs(
                orchestrator__task__id=e.task_id,
                orchestrator__loop__kind=e.kind,
                orchestrator__loop__similarity=round(e.similarity, 4),
                orchestrator__loop__reason=self.text(e.reason),
            ),
            start_time=now,
        )
        span.end(now)

    def level_reached(self, e: LevelReached, now: int) -> None:
        self._task(e.task_id, now).add_event(
            "orchestrator.level_reached", {"orchestrator.headline": self.text(e.headline)}, now
        )

    def consultant_acted(self, e: ConsultantActed, now: int) -> None:
        span = self.spans.start(
            "orchestrator.consultant",
            self._task(e.task_id, now).context,
            attributes=_attrs(
                orchestrator__task__id=e.task_id,
                orchestrator__consultant__root_cause=self.text(e.root_cause),
                orchestrator__consultant__hints=[self.text(h, 200) for h in e.hints],
                orchestrator__consultant__model=e.model,
                orchestrator__consultant__reverted_to=e.reverted_to,
                orchestrator__consultant__redo=list(e.redo),
                orchestrator__consultant__trigger=self.text(str(e.trigger.get("reason") or "")),
            ),
            start_time=self._before(e.task_id, now),
        )
        span.end(now)

    def escalation_opened(self, e: EscalationOpened, now: int) -> None:
        task = self._task(e.task_id, now)
        esc = e.escalation
        self.asked_in[esc["id"]] = task.context
        task.add_event(
            "orchestrator.escalation_opened",
            _attrs(
                escalation__id=esc["id"],
                escalation__question=self.text(esc["question"], QUESTION_CHARS),
                escalation__level=esc["level"],
                escalation__mode=e.mode,
            ),
            now,
        )

    def escalation_answered(self, e: EscalationAnswered, now: int) -> None:
        esc: EscalationRow | None = self.store.escalation(e.escalation_id)
        opened = _ns(esc["created_at"]) if esc else now - _ns(e.wait_s or 0.0)
        answered = _ns(esc["answered_at"]) if esc and esc["answered_at"] else now
        parent = self.asked_in.pop(e.escalation_id, None) or self.root or self._segment_ctx()
        attrs = _attrs(
            orchestrator__task__id=e.task_id,
            escalation__id=e.escalation_id,
            escalation__response=self.text(e.response),
            escalation__response_kind=e.kind,
            escalation__action=e.action,
            escalation__channel=e.channel,
            escalation__responder=self.text(e.responder) if e.responder else None,
            escalation__wait_seconds=round(
                e.wait_s if e.wait_s is not None else (answered - opened) / 1e9, 3
            ),
        )
        if esc is not None:
            attrs |= _attrs(
                escalation__level=esc["level"],
                escalation__category=esc["category"],
                escalation__asker=esc["asker"],
                escalation__question=self.text(esc["question"], QUESTION_CHARS),
                escalation__options=[self.text(o, QUESTION_CHARS) for o in esc["options"]],
                escalation__recommendation=self.text(esc["recommendation"])
                if esc["recommendation"]
                else None,
                orchestrator__attempt__number=esc["attempt_number"],
            )
        span = self.spans.start(
            "orchestrator.escalation", parent, attributes=attrs, start_time=opened
        )
        span.end(max(answered, opened))

    def waiting(self, e: Waiting, now: int) -> None:
        self.waits[e.task_id] = self.spans.start(
            "orchestrator.rate_limit_wait",
            self._task(e.task_id, now).context,
            attributes=_attrs(
                orchestrator__task__id=e.task_id,
                orchestrator__wait__until=e.until,
                orchestrator__wait__reason=self.text(e.reason),
            ),
            start_time=now,
        )

    def attempt_interrupted(self, e: AttemptInterrupted, now: int) -> None:
        if self.segment is not None:
            self.segment.add_event(
                "orchestrator.attempt_interrupted",
                {"orchestrator.task.id": e.task_id, "orchestrator.attempt.number": e.number},
                now,
            )

    def checkpoint_made(self, e: CheckpointMade, now: int) -> None:
        span = self.tasks.get(e.task_id) or self.segment
        if span is not None:
            span.add_event("orchestrator.checkpoint", {"vcs.ref.head.revision": e.sha}, now)

    # -- spans ------------------------------------------------------------------------------------
    def _segment_ctx(self) -> SpanContext:
        if self.segment is None:  # an event before RunStarted: a run span of its own
            self.segment = self.spans.start(
                "orchestrator.run", None, {"orchestrator.run.id": self.run_id}, time.time_ns()
            )
        return self.segment.context

    def _task(self, task_id: str, now: int) -> Recorded:
        """The task's open span; one is started if the task's steps began without TaskStarted
        (an answer applied at a resume, before the loop picks the task)."""
        if task_id not in self.tasks:
            self.tasks[task_id] = self.spans.start(
                "orchestrator.task",
                self._segment_ctx(),
                attributes={"orchestrator.task.id": task_id},
                start_time=now,
            )
        return self.tasks[task_id]

    def _before(self, task_id: str, now: int) -> int:
        """When the step that led here began: the task's previous event (this one's is `now`)."""
        return min(self.prev_ns.get(task_id, now), now)

    def close(self, now: int | None = None, status: str = "ABORTED") -> None:
        """Ends what is open (a task paused for a human ends here; its answer makes the
        escalation span later), then flushes and shuts the provider down. Idempotent."""
        if self.closed:
            return
        self.closed = True
        atexit.unregister(self.close)
        now = now or time.time_ns()
        for group in (self.waits, self.attempts, self.tasks):
            for span in group.values():
                span.set_attribute("orchestrator.ended_by", f"run_{status.lower()}")
                span.end(now)
            group.clear()
        if self.segment is not None:
            self.segment.end(now)
        try:
            self.provider.shutdown()  # the batch processor exports what is left, then stops
        except Exception as exc:  # a dead collector costs a warning, never the run
            logger.warning("telemetry: exporting traces failed: %s", exc)


_HANDLERS: dict[type, Any] = {
    RunStarted: TracingObserver.run_started,
    RunFinished: TracingObserver.run_finished,
    TaskStarted: TracingObserver.task_started,
    TaskFinished: TracingObserver.task_finished,
    AttemptStarted: TracingObserver.attempt_started,
    GateFinished: TracingObserver.gate_finished,
    AttemptFinished: TracingObserver.attempt_finished,
    LoopDetected: TracingObserver.loop_detected,
    LevelReached: TracingObserver.level_reached,
    ConsultantActed: TracingObserver.consultant_acted,
    EscalationOpened: TracingObserver.escalation_opened,
    EscalationAnswered: TracingObserver.escalation_answered,
    Waiting: TracingObserver.waiting,
    AttemptInterrupted: TracingObserver.attempt_interrupted,
    CheckpointMade: TracingObserver.checkpoint_made,
}
