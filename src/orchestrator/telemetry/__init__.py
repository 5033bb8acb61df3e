"""OpenTelemetry export of runs: traces (`traces.py`) and the store's metrics pushed over OTLP
(`push.py`), both observers of the run events.

Off and free unless an OTLP endpoint is configured — the standard variables
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`) or `[telemetry] otlp_endpoint` — and `OTEL_SDK_DISABLED`
is not `true`: this module imports nothing of OpenTelemetry; the SDK loads only in `observers`,
when a run is wired with telemetry on. The standard variables win over `[telemetry]`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource

    from orchestrator.config import Settings, TelemetryConfig
    from orchestrator.events import Event, Observer
    from orchestrator.store import Store

logger = logging.getLogger("orchestrator.telemetry")

Signal = Literal["traces", "metrics"]

DEFAULT_SERVICE = "orchestrator"


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def enabled(signal: Signal, config: TelemetryConfig, env: Mapping[str, str] | None = None) -> bool:
    """Whether `signal` is exported: an endpoint for it is set (env or config), the SDK is not
    disabled (`OTEL_SDK_DISABLED=true`) and its exporter is not `none` (`OTEL_TRACES_EXPORTER`,
    `OTEL_METRICS_EXPORTER`)."""
    env = os.environ if env is None else env
    if _true(env.get("OTEL_SDK_DISABLED")):
        return False
    if env.get(f"OTEL_{signal.upper()}_EXPORTER", "").strip().lower() == "none":
        return False
    return bool(
        env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
        or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or config.otlp_endpoint
    )


def endpoint(signal: Signal, config: TelemetryConfig, env: Mapping[str, str] | None = None) -> str:
    """The signal's full OTLP/HTTP URL: `OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT` as it is, else
    `OTEL_EXPORTER_OTLP_ENDPOINT` or `[telemetry] otlp_endpoint` with `/v1/<signal>` added."""
    env = os.environ if env is None else env
    if own := env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT"):
        return own
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or config.otlp_endpoint or ""
    return f"{base.removesuffix('/')}/v1/{signal}"


def config_headers(
    signal: Signal, config: TelemetryConfig, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`[telemetry] headers` the environment does not set (`OTEL_EXPORTER_OTLP_HEADERS`, or the
    signal's own variable): the exporter reads those itself, and they win."""
    env = os.environ if env is None else env
    raw = env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_HEADERS") or env.get(
        "OTEL_EXPORTER_OTLP_HEADERS", ""
    )
    named = {part.split("=", 1)[0].strip().lower() for part in raw.split(",") if "=" in part}
    return {k: v for k, v in config.headers.items() if k.strip().lower() not in named}


EXPORT_TIMEOUT = 5.0
"""Seconds one export may take, retries included, unless `OTEL_EXPORTER_OTLP_TIMEOUT` says: a
dead collector delays the end of a run by at most this, per signal."""


def timeout(signal: Signal, env: Mapping[str, str] | None = None) -> float | None:
    """`EXPORT_TIMEOUT`, or None when the environment sets the exporter's timeout itself."""
    env = os.environ if env is None else env
    own = env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_TIMEOUT")
    return None if own or env.get("OTEL_EXPORTER_OTLP_TIMEOUT") else EXPORT_TIMEOUT


def service_name(config: TelemetryConfig, env: Mapping[str, str] | None = None) -> str | None:
    """The `service.name` to set, or None when the environment names it (`OTEL_SERVICE_NAME`,
    `service.name` in `OTEL_RESOURCE_ATTRIBUTES`): the SDK then takes it from there."""
    env = os.environ if env is None else env
    attrs = [p.split("=", 1)[0].strip() for p in env.get("OTEL_RESOURCE_ATTRIBUTES", "").split(",")]
    if env.get("OTEL_SERVICE_NAME") or "service.name" in attrs:
        return None
    return config.service_name or DEFAULT_SERVICE


def resource(config: TelemetryConfig) -> Resource:
    """`service.name` (`OTEL_SERVICE_NAME` > `OTEL_RESOURCE_ATTRIBUTES` > `[telemetry]
    service_name` > `orchestrator`), `service.version`, and what `OTEL_RESOURCE_ATTRIBUTES` adds."""
    from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource

    from orchestrator import __version__

    attributes: dict[str, str] = {SERVICE_VERSION: __version__}
    if (name := service_name(config)) is not None:
        attributes[SERVICE_NAME] = name
    return Resource.create(attributes)


def observers(settings: Settings, store: Store, run_id: str) -> list[Observer]:
    """The telemetry observers this run's settings and environment ask for (none: nothing of
    OpenTelemetry is imported)."""
    out: list[Observer] = []
    if enabled("traces", settings.telemetry):
        from orchestrator.telemetry.traces import TracingObserver

        out.append(TracingObserver.create(settings.telemetry, store, run_id))
    if enabled("metrics", settings.telemetry):
        from orchestrator.telemetry.push import MetricsPush

        push = MetricsPush(settings.telemetry, store)
        out = [Together(out[0], push)] if out else [push]
    return out


class Together:
    """Traces and the metrics push of one run. At RunFinished the push (queries of the store and a
    POST) runs on a thread while the spans are flushed (encoding and a POST), so the end of the
    run waits for the longer of the two, not for both one after the other."""

    def __init__(self, traces: Observer, push: Observer) -> None:
        from orchestrator.events import RunFinished

        self.traces, self.push, self.last = traces, push, RunFinished

    def notify(self, event: Event) -> None:
        if not isinstance(event, self.last):
            self.traces.notify(event)
            return
        pushing = threading.Thread(target=self._push, args=(event,), name="orchestrator-push")
        pushing.start()
        try:
            self.traces.notify(event)
        finally:
            pushing.join()

    def _push(self, event: Event) -> None:
        try:
            self.push.notify(event)
        except Exception as exc:  # as the bus does for an observer that fails
            logger.warning("telemetry: pushing metrics failed: %s", exc)
