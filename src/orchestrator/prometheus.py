"""The store's metrics (`orchestrator.metrics.read`) as Prometheus families: a custom collector, read
afresh on every scrape, and the text exposition `orchestrator serve` answers `GET /metrics` with."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from orchestrator.metrics import HasEngine, Series, read

CONTENT_TYPE = CONTENT_TYPE_LATEST


def family(series: Series) -> Metric:
    """One neutral series as its Prometheus family (a counter's `_total` is added back by the
    exposition)."""
    if series.kind == "histogram":
        hist = HistogramMetricFamily(series.name, series.help, labels=series.labels)
        for h in series.histograms:
            buckets = [(_bound(b), float(n)) for b, n in zip(series.bounds, h.buckets, strict=True)]
            buckets.append(("+Inf", float(h.count)))
            hist.add_metric([v for _, v in h.labels], buckets, h.sum)
        return hist
    kind = CounterMetricFamily if series.kind == "counter" else GaugeMetricFamily
    metric = kind(series.name, series.help, labels=series.labels)
    for s in series.samples:
        metric.add_metric([v for _, v in s.labels], s.value)
    return metric


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class StoreCollector(Collector):
    """Every scrape reads the store again: nothing is kept in this process."""

    def __init__(self, store: HasEngine) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        for series in read(self.store):
            yield family(series)


def exposition(store: HasEngine) -> bytes:
    """The Prometheus text format of the store's metrics (a fresh registry each time)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(store))
    return generate_latest(registry)
