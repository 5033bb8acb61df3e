"""When a platform's limit resets, read from its message: an epoch, a delay ("retry in 30s",
"in 2 hours"), a clock time ("resets 3pm", "try again at 3:05 PM") or a date ("Try again at Nov
24th, 2026 1:02 AM"). Kept apart from the platform table (`platform.py`) that uses it."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta

__all__ = ["delay_named", "reset_time", "resets_within_hours"]

_UNITS = {
    "d": 86400,
    "day": 86400,
    "h": 3600,
    "hr": 3600,
    "hour": 3600,
    "m": 60,
    "min": 60,
    "minute": 60,
    "s": 1,
    "sec": 1,
    "second": 1,
    "ms": 0.001,
}
_EPOCH = re.compile(r"\|\s*(\d{10})(?:\d{3})?\b|\b(?:reset|resets_at|retry_at)\W{1,3}(\d{10})\b")
_IN = re.compile(
    r"(?:\b(?:in|after|wait|about)\s+|~\s*)((?:\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s|ms)"
    r"(?:\b|(?=\d))[,\s]*(?:and\s+)?)+)|\"?retryDelay\"?\s*:\s*\"(\d+(?:\.\d+)?)s\"|"
    r"\b(?:retry-after|retry_after)\W{1,3}(\d+(?:\.\d+)?)\b",
    re.I,
)
_PART = re.compile(
    r"(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s|ms)(?:\b|(?=\d))",
    re.I,
)
_AT = re.compile(
    r"\b(?:resets?|reset time|try again|retry|available(?: again)?|again)\b[^\n]{0,24}?"
    r"(?:\bat\b|\bon\b|·|∙|:)?\s*(?:(\d{4}-\d{2}-\d{2})[T ])?"
    r"(\d{1,2})(?::(\d{2}))?(?::\d{2}(?:\.\d+)?)?\s*([ap]\.?m\.?)?(?![\d:])",
    re.I,
)


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = "|".join(m.title() for m in _MONTHS)
"""`Jan|Feb|…`, for a reset on a date and for a limit that names one."""
_AT_DATE = re.compile(
    r"\b(?:resets?|try again|retry|available(?: again)?|again)\b[^\n]{0,12}?\b"
    rf"({_MONTH})[a-z]*\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+"
    r"(\d{4}),?\s+(?:at\s+)?(\d{1,2}):(\d{2})\s*([ap]\.?m\.?)?",
    re.I,
)
"""Codex's reset on another day: `Try again at Nov 24th, 2026 1:02 AM.`"""


def _dated(m: re.Match[str]) -> float | None:
    month = _MONTHS.index(m.group(1).lower()[:3]) + 1
    hour, minute, ampm = int(m.group(4)), int(m.group(5)), m.group(6)
    if ampm:
        hour = hour % 12 + (12 if ampm.lower().startswith("p") else 0)
    try:
        return datetime(int(m.group(3)), month, int(m.group(2)), hour, minute).timestamp()
    except ValueError:
        return None


def delay_named(text: str) -> float | None:
    """The wait a message names relative to now, in seconds ("Try again in 9 minutes", `retryDelay:
    "23s"`), or None: unlike a clock time or an epoch it means the same whatever the hour it is
    read at, so a decision taken on it does not depend on when the rules run. Only a delay said
    of the reset counts, not the runner's "exited 1 after 3s".

    >>> delay_named("You've hit your usage limit. Try again in 9 minutes.")
    540.0
    """
    if _EPOCH.search(text):
        return None
    for m in _IN.finditer(text):
        said = (
            m.group(2) or m.group(3) or _RESET_WORD.search(text[max(0, m.start() - 40) : m.end()])
        )
        if said and (seconds := _seconds(m)) is not None:
            return seconds
    return None


def resets_within_hours(text: str) -> bool:
    """The message names a reset a few hours away at most, whatever the hour it is read at: a
    delay of up to six hours (a five-hour session window), or a clock time with no date
    ("resets 4:10pm") of a limit it does not call daily, weekly or monthly; not a date ("Usage
    resets on Aug 14")."""
    if _LONG_WINDOW.search(text) or _AT_DATE.search(text):
        return False
    delay = delay_named(text)
    if delay is not None:
        return delay <= 6 * 3600
    return any(
        (m.group(4) or m.group(3)) and not m.group(1) and _RESET_WORD.search(m.group(0))
        for m in _AT.finditer(text)
    )


_RESET_WORD = re.compile(
    r"\b(?:try(?:ing)? again|retry|resets?|reset time|available(?: again)?|wait\w*|again)\b", re.I
)
_LONG_WINDOW = re.compile(
    r"\b(?:daily|weekly|monthly|billing (?:cycle|period)|(?:this|per) (?:day|week|month)|midnight|"
    r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|"
    rf"(?:{_MONTH})[a-z]*\.? \d{{1,2}}(?:st|nd|rd|th)?)\b",
    re.I,
)


def _seconds(m: re.Match[str]) -> float | None:
    """The delay an `_IN` match names, in seconds; None for a zero one."""
    if m.group(2) or m.group(3):
        return float(m.group(2) or m.group(3))
    seconds = sum(
        float(n) * _UNITS[unit.lower().rstrip("s") or "s"]
        if unit.lower() not in ("s", "ms")
        else float(n) * _UNITS[unit.lower()]
        for n, unit in _PART.findall(m.group(1))
    )
    return seconds if seconds > 0 else None


def reset_time(text: str, *, now: float | None = None) -> float | None:
    """When a limit resets, read from a platform's message: an epoch (`…limit reached|1750000000`),
    a delay (`try again in 4 days 3 hours`, `Please retry in 23.5s`, `retryDelay: "23s"`), or a
    clock time (`resets 3pm`, `try again at 3:05 PM`, `resets at 2025-06-01T15:00`; the next one
    from now, in local time). None when the text names no time.

    >>> reset_time("Claude AI usage limit reached|1750000000")
    1750000000.0
    >>> reset_time("Please retry in 30s.", now=100.0)
    130.0
    """
    now = time.time() if now is None else now
    if m := _EPOCH.search(text):
        return float(m.group(1) or m.group(2))
    if (m := _IN.search(text)) and (seconds := _seconds(m)) is not None:
        return now + seconds
    if (md := _AT_DATE.search(text)) and (at_date := _dated(md)) is not None:
        return at_date
    for m in _AT.finditer(text):
        date, hour, minute, ampm = m.group(1), int(m.group(2)), int(m.group(3) or 0), m.group(4)
        if not (ampm or m.group(3) or date):
            continue  # a bare number ("retry 3") is no clock time
        if ampm:
            if not 1 <= hour <= 12:
                continue
            hour = hour % 12 + (12 if ampm.lower().startswith("p") else 0)
        if hour > 23 or minute > 59:
            continue
        base = datetime.fromtimestamp(now)
        if date:
            try:
                day = datetime.strptime(date, "%Y-%m-%d")
            except ValueError:
                continue
            return day.replace(hour=hour, minute=minute).timestamp()
        at = base.replace(hour=hour, minute=minute, second=0, microsecond=0)
        if (
            at.timestamp() <= now - 600
        ):  # minutes ago is "now" (a rounded time); hours ago, tomorrow
            at += timedelta(days=1)
        return at.timestamp()
    return None


_NOTICE_LINE = re.compile(r"^[ℹ⚡⚠✕!]")
"""A CLI's own notice line (Gemini CLI's `ℹ ⚡ …`), not the agent's prose about the error."""


def reset_near(lines: list[str], k: int, *, now: float | None = None) -> float | None:
    """The reset of the limit reported on line K of LINES (stripped, non-empty): named on it or
    the two lines under it, in the CLI's notice just above it (Gemini CLI: "Your quota will reset
    at 00:00" over the API error), or a few lines further down, where a loop runner prints its
    wait ("Waiting for usage limit reset (about 2h 16m)...")."""
    notice = " ".join(ln for ln in lines[max(0, k - 3) : k] if _NOTICE_LINE.match(ln))
    return (
        reset_time(" ".join(lines[k : k + 3]), now=now)
        or reset_time(notice, now=now)
        or reset_time(" ".join(lines[k + 3 : k + 6]), now=now)
    )
