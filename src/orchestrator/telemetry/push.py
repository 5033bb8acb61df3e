"""The store's metrics (`orchestrator.metrics.read`) pushed over OTLP/HTTP when a run ends.

The store is the source of truth, so every push carries the totals of every run sharing it
(cumulative, from the store's first run): a push from another process, or a later one, never
resets a counter, and two processes pushing the same store push the same values. Histograms
(attempt duration, human wait) come with their buckets from the store, which is why the points are
built here and handed to the OTLP exporter, not recorded through SDK instruments (an observable
histogram does not exist). Names are the Prometheus ones, a counter's without `_total` (an
OTLP-to-Prometheus translation adds it back), so one dashboard fits a scrape and a push.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    Gauge,
    Histogram,
    HistogramDataPoint,
    Metric,
    MetricExportResult,
    MetricsData,
    NumberDataPoint,
    ResourceMetrics,
    ScopeMetrics,
    Sum,
)
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from sqlalchemy import func, select

from orchestrator import __version__, telemetry
from orchestrator.events import Event, RunFinished
from orchestrator.redaction import redact_text
from orchestrator.schema import runs
from orchestrator.storebase import hot

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource

    from orchestrator.config import TelemetryConfig
    from orchestrator.metrics import Series
    from orchestrator.store import Store

logger = logging.getLogger("orchestrator.telemetry")

_FIRST_RUN = select(func.min(runs.c.created_at))
"""When the store's counters started: built once, compiled once per process (`storebase.hot`)."""

UNITS = {"seconds": "s"}
"""metrics.py's units as UCUM (OTLP's); others pass as they are."""


def to_metric(series: Series, start_ns: int, now_ns: int) -> Metric:
    """One series as an OTLP metric: a cumulative monotonic sum, a gauge or a histogram."""

    def attrs(labels: tuple[tuple[str, str], ...]) -> dict[str, Any]:
        return dict(labels)

    data: Sum | Gauge | Histogram
    if series.kind == "histogram":
        data = Histogram(
            [
                HistogramDataPoint(
                    attrs(h.labels),
                    start_ns,
                    now_ns,
                    h.count,
                    h.sum,
                    list(h.per_bucket()),
                    list(series.bounds),
                    cast(float, None),  # min and max are not in the store: left unset
                    cast(float, None),
                )
                for h in series.histograms
            ],
            AggregationTemporality.CUMULATIVE,
        )
    else:
        points = [
            NumberDataPoint(attrs(s.labels), start_ns, now_ns, s.value) for s in series.samples
        ]
        data = (
            Sum(points, AggregationTemporality.CUMULATIVE, is_monotonic=True)
            if series.kind == "counter"
            else Gauge(points)
        )
    name = series.name.removesuffix("_total") if series.kind == "counter" else series.name
    return Metric(name, series.help, UNITS.get(series.unit, series.unit), data)


def metrics_data(series: list[Series], resource: Resource, start_ns: int) -> MetricsData:
    now = time.time_ns()
    scope = InstrumentationScope("orchestrator", __version__)
    metrics = [to_metric(s, start_ns, now) for s in series if s.samples or s.histograms]
    return MetricsData([ResourceMetrics(resource, [ScopeMetrics(scope, metrics, "")], "")])


@dataclass
class MetricsPush:
    """At RunFinished: the store's metrics, once, to the OTLP metrics endpoint."""

    config: TelemetryConfig
    store: Store

    def notify(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self.push()

    def push(self) -> bool:
        from orchestrator import metrics

        exporter = OTLPMetricExporter(
            endpoint=telemetry.endpoint("metrics", self.config),
            headers=telemetry.config_headers("metrics", self.config) or None,
            timeout=telemetry.timeout("metrics"),
        )
        try:
            with self.store.engine.connect() as conn:
                first = hot(conn, _FIRST_RUN, {}).fetchone()[0]
            start = int((first or time.time()) * 1e9)
            data = metrics_data(metrics.read(self.store), telemetry.resource(self.config), start)
            ok = exporter.export(data) is MetricExportResult.SUCCESS
        finally:
            exporter.shutdown()
        if not ok:
            logger.warning(
                "telemetry: pushing metrics to %s failed",
                redact_text(telemetry.endpoint("metrics", self.config)),
            )
        return ok
