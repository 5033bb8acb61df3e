"""Spans kept as plain records while open and handed, ended, to the SDK's batch processor.

The SDK's own spans (`Tracer.start_span`) cost ~20 µs each to start, fill and end: a sampler
call, a lock, attribute validation and a context per span. A run makes two or three per attempt,
on its own thread, so that was most of what telemetry cost a run beyond the export itself.
A `Recorded` span costs ~3 µs: its ids come from the provider's id generator, and it becomes the
SDK's `ReadableSpan` only when it ends, the form the processor and the OTLP exporter take. Batching,
export, retries and shutdown stay the SDK's.

Sampling is decided once per trace, for its root span, by the provider's sampler (the standard
`OTEL_TRACES_SAMPLER` variables); every other span of the trace follows its parent, as the
default parent-based samplers do (for `traceidratio`, `always_on` and `always_off` the decision
is the same for every span of a trace anyway). Attribute values are ours, bounded where they are
made (`traces.TEXT_CHARS`), so the SDK's span limits are not applied again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.sampling import Decision
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

UNSET = Status(StatusCode.UNSET)


class Spans:
    """Starts `Recorded` spans of one provider; each goes to `processor` when it ends."""

    def __init__(
        self, provider: TracerProvider, processor: SpanProcessor, scope: InstrumentationScope
    ) -> None:
        self.provider, self.processor, self.scope = provider, processor, scope
        self.resource = provider.resource
        self.ids = provider.id_generator

    def start(
        self,
        name: str,
        parent: SpanContext | None,
        attributes: Mapping[str, Any],
        start_time: int,
    ) -> Recorded:
        """A span under `parent` (None: the root of a new trace, sampled by the provider's
        sampler), open from `start_time` (ns since the epoch)."""
        attrs = dict(attributes)
        if parent is None:
            trace_id = self.ids.generate_trace_id()
            result = self.provider.sampler.should_sample(
                None, trace_id, name, SpanKind.INTERNAL, attrs
            )
            if result.attributes:
                attrs.update(result.attributes)
            flags = TraceFlags(
                TraceFlags.SAMPLED if result.decision is Decision.RECORD_AND_SAMPLE else 0
            )
            ctx = SpanContext(
                trace_id, self.ids.generate_span_id(), False, flags, result.trace_state
            )
        else:
            ctx = SpanContext(
                parent.trace_id,
                self.ids.generate_span_id(),
                False,
                parent.trace_flags,
                parent.trace_state,
            )
        return Recorded(self, name, ctx, parent, start_time, attrs)


class Recorded:
    """An open span: what the SDK's span offers that the tracing observer uses."""

    __slots__ = ("attributes", "context", "ended", "events", "name", "parent", "spans", "start",
                 "status")  # fmt: skip

    def __init__(
        self,
        spans: Spans,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        start: int,
        attributes: dict[str, Any],
    ) -> None:
        self.spans, self.name, self.context, self.parent = spans, name, context, parent
        self.start, self.attributes = start, attributes
        self.events: list[Event] = []
        self.status = UNSET
        self.ended = False

    def get_span_context(self) -> SpanContext:
        return self.context

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        self.attributes.update(attributes)

    def set_status(self, status: Status) -> None:
        self.status = status

    def add_event(self, name: str, attributes: Mapping[str, Any], timestamp: int) -> None:
        self.events.append(Event(name, dict(attributes), timestamp))

    def end(self, end_time: int) -> None:
        """Hands the span to the processor (once; an unsampled span goes nowhere)."""
        if self.ended:
            return
        self.ended = True
        if not self.context.trace_flags.sampled:
            return
        spans = self.spans
        spans.processor.on_end(
            ReadableSpan(
                self.name,
                self.context,
                self.parent,
                spans.resource,
                self.attributes,
                tuple(self.events),
                status=self.status,
                start_time=self.start,
                end_time=max(end_time, self.start),
                instrumentation_scope=spans.scope,
            )
        )
