"""The run metrics, read from the store: the store is the source of truth, so a counter never resets
when a process exits and a scrape sees every run of every process sharing the store.

`read(store)` answers with neutral `Series` (name, kind, help, labelled samples, histogram buckets)
computed by a few aggregate queries (GROUP BY; rows come back per label set, never per attempt),
so it stays cheap on a store with 100k attempts. `orchestrator.prometheus` turns them into
Prometheus families for `orchestrator serve`'s `/metrics`; an OTLP exporter can push the same.

Label values are categories, levels, channels, verdicts, statuses, agent and model names: never a
question, an answer or any other free text. A missing value (an escalation not answered yet has
no channel; the replay agent has no model) is `none`.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sqlalchemy import Connection, Engine, Select, case, func, select

from orchestrator.rows import RunStatus, TaskStatusName
from orchestrator.schema import attempts, escalations, events, runs, tasks
from orchestrator.storebase import hot, rows

Kind = Literal["counter", "gauge", "histogram"]
Labels = tuple[tuple[str, str], ...]
"""A sample's labels as (name, value) pairs, in the order of its series' `labels`."""

NONE = "none"
"""The label value of a missing one (no channel yet, no model)."""

ATTEMPT_BUCKETS: tuple[float, ...] = (1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200)
"""Upper bounds (seconds) of an attempt's duration: a replay takes a second, an agent hours."""
WAIT_BUCKETS: tuple[float, ...] = (
    10,
    30,
    60,
    300,
    600,
    1800,
    3600,
    3 * 3600,
    8 * 3600,
    24 * 3600,
    3 * 24 * 3600,
    7 * 24 * 3600,
)
"""Upper bounds (seconds) of a human's wait: from an answer at the terminal to a week's pause."""

TASK_STATUSES: tuple[TaskStatusName, ...] = (
    "PENDING",
    "RUNNING",
    "COMPLETED",
    "FAILED",
    "PAUSED_FOR_INTERVENTION",
    "SKIPPED",
)
RUN_STATUSES: tuple[RunStatus, ...] = ("RUNNING", "COMPLETED", "FAILED", "PAUSED", "INTERRUPTED")
LOOP_TYPES = ("task", "e2e")
"""Seed 000's `type`: a plan task's loop, or the milestone verification's (its fix attempts)."""
LOOP_KINDS = ("repeated", "oscillation", "max_attempts")
"""`loops.LoopKind`: the same failure again, A-B-A, the verification's fix cap."""
E2E_SUBJECT = "Milestone verification"
"""How the loop detector names the verification in its message (`LoopDetector.check_e2e`)."""


@dataclass(frozen=True)
class Sample:
    """One value of a counter or gauge."""

    labels: Labels
    value: float


@dataclass(frozen=True)
class HistogramSample:
    """One label set of a histogram: `buckets[i]` counts the observations <= `bounds[i]`
    (cumulative, as Prometheus wants them); `count` is every observation (the +Inf bucket)."""

    labels: Labels
    buckets: tuple[int, ...]
    count: int
    sum: float

    def per_bucket(self) -> tuple[int, ...]:
        """Observations in each bucket alone, the +Inf one last (OTLP's `bucket_counts`)."""
        edges = (*self.buckets, self.count)
        return tuple(b - a for a, b in zip((0, *edges[:-1]), edges, strict=True))


@dataclass(frozen=True)
class Series:
    """One metric: its Prometheus name (a counter's ends in `_total`), kind, help and values."""

    name: str
    kind: Kind
    help: str
    labels: tuple[str, ...] = ()
    samples: tuple[Sample, ...] = ()
    histograms: tuple[HistogramSample, ...] = ()
    bounds: tuple[float, ...] = field(default=())
    """A histogram's bucket upper bounds (without +Inf)."""
    unit: str = ""

    def sample_names(self) -> tuple[str, ...]:
        """The names a query may use: a histogram's `_bucket`, `_count` and `_sum`."""
        if self.kind == "histogram":
            return (f"{self.name}_bucket", f"{self.name}_count", f"{self.name}_sum")
        return (self.name,)

    def value(self, **labels: str) -> float:
        """The sample with exactly these labels (0 when there is none): for tests and tools."""
        want = tuple(sorted(labels.items()))
        return next((s.value for s in self.samples if tuple(sorted(s.labels)) == want), 0.0)


class HasEngine(Protocol):
    """A `Store` (or anything with its engine): the metrics only read."""

    @property
    def engine(self) -> Engine: ...


def read(store: HasEngine) -> list[Series]:
    """Every metric, from one connection and five aggregate queries."""
    with store.engine.connect() as conn:
        return [
            *_escalation_series(conn),
            _loop_series(conn),
            *_attempt_series(conn),
            _status_gauge(
                conn,
                tasks.c.status,
                "orchestrator_tasks",
                "Tasks of every run in the store, by status",
                TASK_STATUSES,
            ),
            _status_gauge(
                conn,
                runs.c.status,
                "orchestrator_runs",
                "Runs in the store, by status",
                RUN_STATUSES,
            ),
        ]


def names() -> frozenset[str]:
    """Every name a query may use (samples included), read off an empty result's shape."""
    return frozenset(n for s in _shapes() for n in s.sample_names())


def _label(value: Any) -> str:
    return NONE if value is None or value == "" else str(value)


def _bucket(column: Any, bounds: Sequence[float]) -> Any:
    """The index of the first bucket a value fits in (len(bounds): only +Inf; -1: no value), so
    the database evaluates one CASE per row and groups by it."""
    return case(
        (column.is_(None), -1),
        *((column <= bound, i) for i, bound in enumerate(bounds)),
        else_=len(bounds),
    ).label("bucket")


class _Histogram:
    """Per-bucket counts from grouped rows, summed into the histogram's own label sets."""

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.groups: dict[Labels, list[float]] = defaultdict(lambda: [0.0] * (len(bounds) + 2))

    def add(self, labels: Labels, bucket: Any, count: Any, total: Any) -> None:
        if bucket is None or int(bucket) < 0:
            return
        acc = self.groups[labels]
        acc[int(bucket)] += float(count or 0)
        acc[-1] += float(total or 0.0)

    def samples(self) -> tuple[HistogramSample, ...]:
        out = []
        for labels, acc in sorted(self.groups.items()):
            running, cumulative = 0, []
            for n in acc[: len(self.bounds)]:
                running += int(n)
                cumulative.append(running)
            count = running + int(acc[len(self.bounds)])
            out.append(HistogramSample(labels, tuple(cumulative), count, acc[-1]))
        return tuple(out)


@dataclass(frozen=True)
class _Queries:
    escalations: Select[Any]
    loops: Select[Any]
    attempts: Select[Any]
    by_status: dict[str, Select[Any]]


@functools.cache
def _queries() -> _Queries:
    """The aggregate queries, built once and run through `storebase.hot`: compiled once per
    process and kind of database, not once per store (a process that ends many runs, each
    pushing its store's metrics, compiled these five each time, ~1 ms apiece)."""
    wait = func.coalesce(escalations.c.wait_s, escalations.c.answered_at - escalations.c.created_at)
    answered = escalations.c.status == "answered"
    keys = (
        escalations.c.category,
        escalations.c.level,
        escalations.c.channel,
        escalations.c.status,
    )
    bucket = _bucket(case((answered, wait), else_=None), WAIT_BUCKETS)
    escalation_q = select(
        *keys,
        bucket,
        func.count().label("n"),
        func.sum(case((answered, wait), else_=None)).label("wait_sum"),
    ).group_by(*keys, bucket)

    payload = events.c.payload_json
    kind = case(
        *((payload.contains(f'"loop": "{k}"', autoescape=True), k) for k in LOOP_KINDS),
        else_="other",
    ).label("kind")
    e2e = payload.contains(f'"reason": "{E2E_SUBJECT}', autoescape=True)
    loop_type = case((e2e, "e2e"), else_="task").label("type")
    loop_q = (
        select(loop_type, kind, func.count().label("n"))
        .where(
            events.c.kind == "attempt_finished",
            payload.contains('"loop": "', autoescape=True),
        )
        .group_by(loop_type, kind)
    )

    a = attempts.c
    duration = _bucket(a.duration_s, ATTEMPT_BUCKETS)
    attempt_q = (
        select(
            a.agent,
            a.model,
            a.verdict,
            duration,
            func.count().label("n"),
            func.coalesce(func.sum(a.cost_usd), 0.0).label("cost"),
            func.coalesce(func.sum(a.duration_s), 0.0).label("seconds"),
        )
        .where(a.verdict.is_not(None))
        .group_by(a.agent, a.model, a.verdict, duration)
    )
    by_status = {
        t.name: select(t.c.status.label("status"), func.count().label("n")).group_by(t.c.status)
        for t in (tasks, runs)
    }
    return _Queries(escalation_q, loop_q, attempt_q, by_status)


def _escalation_series(conn: Connection | None) -> list[Series]:
    """Opened escalations by category, level and answering channel; the open ones; the waits."""
    totals: dict[Labels, float] = defaultdict(float)
    open_now = 0.0
    waits = _Histogram(WAIT_BUCKETS)
    if conn is not None:
        for row in rows(hot(conn, _queries().escalations, {})):
            channel = _label(row["channel"])
            labels = (
                ("category", _label(row["category"])),
                ("level", _label(row["level"])),
                ("channel", channel),
            )
            totals[labels] += row["n"]
            if row["status"] == "open":
                open_now += row["n"]
            else:
                waits.add((("channel", channel),), row["bucket"], row["n"], row["wait_sum"])
    return [
        Series(
            "orchestrator_escalations_total",
            "counter",
            "Escalations opened (questions put to a human), by category, ladder level and the "
            "channel that answered (`none` while open)",
            ("category", "level", "channel"),
            _samples(totals),
        ),
        Series(
            "orchestrator_open_escalations",
            "gauge",
            "Escalations waiting for a human now",
            samples=(Sample((), open_now),),
        ),
        Series(
            "orchestrator_human_wait_seconds",
            "histogram",
            "How long answered escalations waited for their human (answered - opened), by channel",
            ("channel",),
            histograms=waits.samples(),
            bounds=WAIT_BUCKETS,
            unit="seconds",
        ),
    ]


def _loop_series(conn: Connection | None) -> Series:
    """Loop detections: each is an `attempt_finished` event whose payload names the loop's kind
    (`"loop": "repeated"`; null when there was none). The database counts them by matching the
    payload's JSON text: a key can only match where it is a key, since a quote inside a string
    value is escaped; the verification's loops are the ones its message names (`E2E_SUBJECT`)."""
    counts: dict[Labels, float] = {
        (("type", t), ("kind", k)): 0.0 for t in LOOP_TYPES for k in LOOP_KINDS
    }
    if conn is not None:
        for row in rows(hot(conn, _queries().loops, {})):
            key = (("type", str(row["type"])), ("kind", str(row["kind"])))
            counts[key] = counts.get(key, 0.0) + float(row["n"])
    return Series(
        "orchestrator_loops_detected_total",
        "counter",
        "Loops the detector stopped: type `task` (a plan task) or `e2e` (the milestone "
        "verification); kind `repeated`, `oscillation` (A-B-A) or `max_attempts` (the fix cap)",
        ("type", "kind"),
        _samples(counts),
    )


def _attempt_series(conn: Connection | None) -> list[Series]:
    """Finished attempts (an attempt still running has no verdict yet) by agent and verdict, their
    cost by agent and model, their duration by agent."""
    count: dict[Labels, float] = defaultdict(float)
    cost: dict[Labels, float] = defaultdict(float)
    durations = _Histogram(ATTEMPT_BUCKETS)
    if conn is not None:
        for row in rows(hot(conn, _queries().attempts, {})):
            agent = ("agent", _label(row["agent"]))
            count[(agent, ("verdict", _label(row["verdict"])))] += row["n"]
            cost[(agent, ("model", _label(row["model"])))] += float(row["cost"])
            durations.add((agent,), row["bucket"], row["n"], row["seconds"])
    return [
        Series(
            "orchestrator_attempts_total",
            "counter",
            "Finished agent attempts, by agent and verdict",
            ("agent", "verdict"),
            _samples(count),
        ),
        Series(
            "orchestrator_cost_usd_total",
            "counter",
            "Money the agents reported spending (USD), by agent and model",
            ("agent", "model"),
            _samples(cost),
            unit="usd",
        ),
        Series(
            "orchestrator_attempt_duration_seconds",
            "histogram",
            "How long finished attempts took, by agent",
            ("agent",),
            histograms=durations.samples(),
            bounds=ATTEMPT_BUCKETS,
            unit="seconds",
        ),
    ]


def _status_gauge(
    conn: Connection | None, column: Any, name: str, help_text: str, statuses: Iterable[str]
) -> Series:
    counts: dict[Labels, float] = {(("status", s),): 0.0 for s in statuses}
    if conn is not None:
        for row in rows(hot(conn, _queries().by_status[column.table.name], {})):
            counts[(("status", _label(row["status"])),)] = float(row["n"])
    return Series(name, "gauge", help_text, ("status",), _samples(counts))


def _samples(values: dict[Labels, float]) -> tuple[Sample, ...]:
    return tuple(Sample(labels, value) for labels, value in sorted(values.items()))


def _shapes() -> list[Series]:
    """Every series with no data: the names and labels `read` produces."""
    return [
        *_escalation_series(None),
        _loop_series(None),
        *_attempt_series(None),
        _status_gauge(None, tasks.c.status, "orchestrator_tasks", "", ()),
        _status_gauge(None, runs.c.status, "orchestrator_runs", "", ()),
    ]
