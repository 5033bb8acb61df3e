"""Notifications as an observer: the person a run needs learns it on the channel they use (any
apprise URL: desktop, ntfy, Slack, Telegram, Discord, email, JSON/form webhooks) before the run
starts waiting, with the question and every way to answer it.

Sending is bounded: each channel gets its own thread and all of them together get
`notify.timeout` seconds, so a dead or hanging channel costs the run at most that; what happened
is recorded in the store (`notification_sent` / `notification_failed`) and a failure is logged.
A channel is only ever named by `redaction.redact_url`: its URL holds its secrets.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from orchestrator.config import NotifyConfig
from orchestrator.events import EscalationOpened, Event, RunFinished, Waiting
from orchestrator.humans import RETRY_WHY, choices, panel_actions
from orchestrator.interpret.model import WHY_GENERIC, why_sentence
from orchestrator.redaction import redact_text, redact_url
from orchestrator.store import Store

logger = logging.getLogger("orchestrator.notify")

NTFY_BUTTONS = 3
"""ntfy shows at most three action buttons on a notification."""

LONG_WAIT = 900.0
"""A usage-limit wait at least this long is worth telling: the run is idle for it, on purpose."""


@dataclass(frozen=True)
class Message:
    title: str
    body: str
    buttons: list[dict[str, Any]] = field(default_factory=list)
    """ntfy `http` actions (https://docs.ntfy.sh/publish/#action-buttons); other channels have none."""
    click: str | None = None
    """Where tapping the notification leads (the web page's inbox)."""


@dataclass
class Notifier:
    """Sends a message for the events `config.events` names; the store records each delivery."""

    config: NotifyConfig
    store: Store
    serve_token: str | None = field(
        default_factory=lambda: os.environ.get("ORCHESTRATOR_SERVE_TOKEN") or None
    )

    def __post_init__(self) -> None:
        _prepare()  # apprise loaded now, not in the seconds a notification may take

    def notify(self, event: Event) -> None:
        if isinstance(event, EscalationOpened) and "escalation" in self.config.events:
            msg = escalation_message(event, self.config.public_url, self.serve_token)
            what = {"event": "escalation", "escalation_id": event.escalation["id"]}
            self.send(event.run_id, event.task_id, msg, what)
        elif isinstance(event, Waiting) and "wait" in self.config.events:
            if event.until - time.time() >= LONG_WAIT:
                msg = wait_message(event, self.config.public_url)
                what = {"event": "wait", "until": round(event.until)}
                self.send(event.run_id, event.task_id, msg, what)
        elif isinstance(event, RunFinished):
            kind = {0: "run_finished", 1: "run_failed"}.get(event.exit_code)
            if kind is not None and kind in self.config.events:
                msg = finished_message(event, self.config.public_url)
                self.send(event.run_id, None, msg, {"event": kind})

    def send(self, run_id: str, task_id: str | None, msg: Message, what: dict[str, Any]) -> None:
        for channel, error, seconds in deliver(self.config.urls, msg, self.config.timeout):
            payload = what | {"channel": channel, "duration_s": round(seconds, 3)}
            if error is None:
                self.store.add_event(run_id, "notification_sent", payload, task_id)
            else:
                logger.warning("notification to %s failed: %s", channel, error)
                self.store.add_event(
                    run_id, "notification_failed", payload | {"error": error}, task_id
                )


def deliver(urls: list[str], msg: Message, timeout: float) -> list[tuple[str, str | None, float]]:
    """(redacted channel, error or None, seconds) per URL, all sent at once and waited for at
    most `timeout` seconds together; a channel still sending then is given up on (its daemon
    thread may finish later, unseen)."""
    results: dict[int, tuple[str | None, float]] = {}
    started = time.monotonic()

    def one(i: int, url: str) -> None:
        t0 = time.monotonic()
        try:
            error = _send(url, msg, timeout)
        except Exception as exc:  # a plugin's bug is one failed channel, nothing more
            error = f"{type(exc).__name__}: {exc}"
        results[i] = (None if error is None else redact_text(error)[:500], time.monotonic() - t0)

    threads = [
        threading.Thread(target=one, args=(i, u), name=f"notify-{i}", daemon=True)
        for i, u in enumerate(urls)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, started + timeout - time.monotonic()))
    return [
        (redact_url(url), *results[i])
        if i in results
        else (redact_url(url), f"no answer within {timeout:g}s; gave up", timeout)
        for i, url in enumerate(urls)
    ]


class _Capture(logging.Handler):
    """Apprise says why a send failed only in its log: keep each sending thread's warnings."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: dict[int, list[str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread in self.lines:
            self.lines[record.thread].append(record.getMessage())


_capture = _Capture()
_setup = threading.Lock()


def _prepare() -> None:
    import apprise  # noqa: F401 (a third of a second: paid once, before any deadline)

    with _setup:
        log = logging.getLogger("apprise")
        if _capture not in log.handlers:
            log.addHandler(_capture)
            log.propagate = False  # its lines come back once, redacted, as ours


def _send(url: str, msg: Message, timeout: float) -> str | None:
    """One apprise delivery; None when the channel took it, else why not."""
    import apprise

    _prepare()
    plugin = apprise.Apprise.instantiate(with_ntfy_extras(url, msg))
    if plugin is None:
        return "apprise does not understand this URL (check its scheme and parts)"
    plugin.socket_connect_timeout = plugin.socket_read_timeout = timeout
    me = threading.get_ident()
    _capture.lines[me] = []
    try:
        ok = plugin.notify(body=msg.body, title=msg.title)
    finally:
        said = _capture.lines.pop(me, [])
    return None if ok else (said[-1] if said else "the channel did not accept the message")


def with_ntfy_extras(url: str, msg: Message) -> str:
    """An ntfy URL with the message's buttons and click target added (apprise's ntfy plugin
    sends `actions` as ntfy's `X-Actions` header: a JSON array, ASCII-escaped); a value the URL
    sets itself wins. Other URLs as they are."""
    scheme = url.partition("://")[0].lower()
    if scheme not in ("ntfy", "ntfys"):
        return url
    extra = []
    if msg.buttons and "actions=" not in url:
        # the plugin unquotes the value once more after the query parser: `%` is escaped twice
        actions = json.dumps(msg.buttons[:NTFY_BUTTONS]).replace("%", "%25")
        extra.append("actions=" + quote(actions, safe=""))
    if msg.click and "click=" not in url:
        extra.append("click=" + quote(msg.click, safe=""))
    if not extra:
        return url
    return url + ("&" if "?" in url else "?") + "&".join(extra)


def escalation_message(e: EscalationOpened, public_url: str | None, token: str | None) -> Message:
    """The question with its options (keys as the terminal panel shows them), the
    recommendation, the why, and how to answer: the exact command, and the web page."""
    esc = e.escalation
    panel = choices(esc["options"], panel_actions(esc["options"], esc.get("detail")))
    phase = str(e.request.get("phase") or e.task_id)
    lines = [f"Needs a human: task {phase} (run {e.run_id}, escalation {esc['id']}).", ""]
    lines += [esc["question"].strip()]
    if panel:
        lines += ["", "Options:"] + [f"  {c.key}) {c.text}" for c in panel]
    if esc["recommendation"]:
        lines += ["", f"Recommendation: {esc['recommendation']}"]
    fallback = RETRY_WHY if esc["asker"] == "orchestrator" else WHY_GENERIC
    lines += [f"Why: {why_sentence(esc['why'], esc['category'], fallback)}"]
    n = esc["id"]
    lines += ["", "Answer:"]
    if panel:
        lines += [f"  orchestrator answer {n} --option {panel[0].key}   (any key above)"]
    if esc["recommendation"]:
        lines += [f"  orchestrator answer {n} --recommended"]
    lines += [f'  orchestrator answer {n} "guidance for the agent"   (or --retry, --skip, --abort)']
    then = {
        "no-wait": f"  then: orchestrator resume {e.run_id}",
        "wait": "  the run is waiting and goes on by itself",
        "terminal": "  or at the terminal, where the run is asking now",
    }
    lines += [then[e.mode]] if e.mode in then else []
    buttons: list[dict[str, Any]] = []
    if public_url:
        lines += [f"  or on the web page: {public_url}/"]
        api = f"{public_url}/api/escalations/{n}/answer"
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for c in panel[:NTFY_BUTTONS]:
            body = (
                {"action": c.action}
                if c.action in ("retry", "skip", "abort")
                else {"option": c.key}
            ) | {"channel": "ntfy"}
            label = f"{c.key}) {c.text}"
            buttons.append(
                {
                    "action": "http",
                    "label": label if len(label) <= 40 else label[:39] + "…",
                    "url": api,
                    "method": "POST",
                    "headers": headers,
                    "body": json.dumps(body),
                    "clear": True,
                }
            )
    return Message(
        title=f"orchestrator: task {e.task_id} needs you",
        body="\n".join(lines),
        buttons=buttons,
        click=f"{public_url}/" if public_url else None,
    )


def wait_message(e: Waiting, public_url: str | None) -> Message:
    """A long wait for a usage limit's reset: when it ends, why, and how to stop it."""
    until = time.strftime("%a %d %b %H:%M %Z", time.localtime(e.until))
    hours = (e.until - time.time()) / 3600
    lines = [
        f"Run {e.run_id}, task {e.task_id}: waiting until {until} ({hours:.1f} h) for a usage "
        "limit to reset, then it goes on by itself.",
        "",
        redact_text(e.reason)[:300],
        "",
        f"Nothing to answer. To stop instead: Ctrl-C, or kill the runner and later "
        f"`orchestrator resume {e.run_id}`.",
    ]
    if public_url:
        lines.append(f"Web page: {public_url}/")
    return Message(
        title=f"orchestrator: waiting {hours:.1f} h for a limit to reset",
        body="\n".join(lines),
        click=f"{public_url}/" if public_url else None,
    )


def finished_message(e: RunFinished, public_url: str | None) -> Message:
    """The run's end: its status, time, money and each task's status (the first 20)."""
    word = "finished" if e.exit_code == 0 else "failed"
    cost = sum(float(t.get("cost_usd") or 0) for t in e.summary)
    lines = [f"Run {e.run_id} {word}: {e.status} after {e.elapsed_s:.0f}s, ${cost:.2f}.", ""]
    for t in e.summary[:20]:
        lines.append(f"  {t.get('task_id')} {t.get('title', '')}: {t.get('status')}")
    if len(e.summary) > 20:
        lines.append(f"  … and {len(e.summary) - 20} more")
    lines += ["", f"Details: orchestrator status {e.run_id}"]
    if public_url:
        lines.append(f"Web page: {public_url}/")
    return Message(
        title=f"orchestrator: run {word}",
        body="\n".join(lines),
        click=f"{public_url}/" if public_url else None,
    )
