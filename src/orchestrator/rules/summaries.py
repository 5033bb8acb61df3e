"""Short failure summaries (`Failed: mypy reports service.py:57 Incompatible return value`): one
to a few lines, written by a person, a runner or the agent, in other words each time.

A character ratio cannot tell two of them apart: the same failure reworded scores low, two
failures written alike score high. What a summary *names* does tell (the file, the test, the
error code, the quoted value), and so do its own words: "fails again", "still red" say the
failure came back; "passes now", "green", fewer failing tests than at first say it moved on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "SUMMARY_CHARS",
    "fewer_failing",
    "is_summary",
    "moved_on",
    "named",
    "reports_a_question",
    "same_failure",
    "says_again",
    "says_circling",
]

SUMMARY_CHARS = 600
"""A failure text this short (stripped) is a summary, not a log."""

_NAME = re.compile(
    # dotted, pathed or scoped names: src/app/service.py, parser::tests::nested, Suite.testX()
    r"[A-Za-z_][\w$]*(?:(?:::|[./\\#>-])[A-Za-z_][\w$]*)+(?:\(\))?|"
    # snake_case, camelCase and PascalCase words, error codes (TS2345, CS8602, E0502)
    r"\b[A-Za-z]*_\w+|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{1,4}\d{3,5}\b|"
    # an HTTP status or another three-digit code, a quoted value
    r"\b\d{3}\b|'[^'\n]{3,40}'|\"[^\"\n]{3,40}\"|`[^`\n]{3,40}`"
)
_PART = re.compile(r"::|[./\\#]")
_CLAUSE = re.compile(r"[;()|\n]| [—–-] ")
_PASSES = re.compile(r"\b(?:pass(?:es|ed|ing)?|green|ok)\b", re.I)
_FAILS = re.compile(r"\b(?:fail\w*|errors?|red|exception|panic\w*)\b", re.I)
_AGAIN = re.compile(
    r"\b(?:again|still|same|once more|unchanged|persists?|no change|keeps? failing)\b", re.I
)
_CIRCLING = re.compile(
    r"\bkeeps? (?:flipping|coming back|reappearing|going back)\b|\bflip-?flopp?\w*|\bwhack-a-mole\b|"
    r"\b(?:going|goes|went) (?:round |around )?in circles\b|\breappears?\b|\breappearing\b|"
    r"\bback (?:to|on) (?:square one|where (?:it|we) started)\b",
    re.I,
)
_ASKED = re.compile(
    r"\b(?:it|he|she|they|the agent|agent|[\w-]+-agent|claude|codex|gemini|copilot|aider|cline|roo|"
    r"cursor|openhands)\s+(?:now\s+)?(?:asks|asked|is asking|wants to know|needs to know|needs "
    r"you to (?:decide|choose|confirm))\b(?:\s+(?:whether|if|which|what|how|who|for))?",
    re.I,
)
_MOVED_ON = re.compile(
    r"\b(?:pass(?:es|ing)? now|now pass(?:es|ing)?|green(?: now)?|(?:is |now )ok|"
    r"ok now|succeeds now|now succeeds|no longer)\b",
    re.I,
)
_COUNT = re.compile(
    r"\b(\d+) (?:previous |more |tests? |examples? |specs? |checks? )?(?:failed|failing|failures?|errors?)\b",
    re.I,
)


def is_summary(text: str) -> bool:
    return len(text.strip()) <= SUMMARY_CHARS


def named(text: str) -> frozenset[str]:
    """What a summary names as failing, lower-cased: files (and their base names), tests, scoped
    names and their snake/camel parts, error codes, three-digit codes, quoted values; line
    numbers off. A clause that only says something passes ("DateFormatterTest green now") is
    left out."""
    out: set[str] = set()
    failing = " ".join(
        c for c in _CLAUSE.split(text) if not (_PASSES.search(c) and not _FAILS.search(c))
    )
    for match in _NAME.finditer(failing):
        raw = match.group(0).strip("'\"`").removesuffix("()")
        name = re.sub(r":\d+(?::\d+)?$", "", raw.lower())
        if len(name) < 3:
            continue
        out.add(name)
        for part in _PART.split(raw):
            if len(part) > 4 and ("_" in part or re.search(r"[a-z][A-Z]", part)):
                out.add(part.lower())
        if "/" in name:
            out.add(name.rsplit("/", 1)[-1])
    return frozenset(out)


def says_again(text: str) -> bool:
    return bool(_AGAIN.search(text))


def says_circling(text: str) -> bool:
    """The summary says the work goes round in circles ("keeps flipping between them", "the
    errors reappear in the next module")."""
    return bool(_CIRCLING.search(text))


def reports_a_question(text: str) -> str | None:
    """The sentence in which a summary reports that the agent asked the person something ("It
    asks whether to merge or delete"), else None."""
    match = _ASKED.search(text)
    if match is None:
        return None
    start = max(text.rfind(". ", 0, match.start()) + 1, 0)
    end = text.find(".", match.end())
    return text[start : end + 1 if end >= 0 else len(text)].strip()


def _count(text: str) -> int | None:
    counts = _COUNT.findall(text)
    return int(counts[-1]) if counts else None


def moved_on(after: str) -> bool:
    """AFTER says the failure before it moved on: something passes now, is green or ok."""
    return bool(_MOVED_ON.search(after))


def fewer_failing(summaries: Sequence[str]) -> bool:
    """The last of SUMMARIES that counts failing tests counts fewer than the first that does."""
    counts = [c for c in (_count(t) for t in summaries) if c is not None]
    return len(counts) >= 2 and counts[-1] < counts[0]


def same_failure(before: str, after: str, need: float = 0.5) -> float | None:
    """How much of what the two summaries name they share (over the smaller), when AFTER is the
    failure of BEFORE again: at least NEED of what the shorter one names is in the other, or it
    says so itself ("again", "still") and shares a name or names none; and it does not say it
    moved on. None otherwise."""
    if moved_on(after):
        return None
    a, b = named(before), named(after)
    shared = len(a & b) / min(len(a), len(b)) if a and b else 0.0
    if shared >= need:
        return shared
    if says_again(after) and (a & b or not a or not b):
        return max(shared, need)
    return None
