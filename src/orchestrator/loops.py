"""Loop detection: is an agent failing the same way again, or flipping between two failures?

Failure texts are normalised first (timestamps, line numbers, addresses, temp paths, PIDs,
durations, UUIDs, hashes and colour codes vary between runs of the *same* failure), then
compared with rapidfuzz. Megabyte logs stay cheap because only a bounded tail is compared:
test runners, compilers and tracebacks put the failure at the end of their output.

The detector holds no state: callers pass the failure texts recorded since the last human
resume, so a run rebuilt from the store after a crash reaches the same verdict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz

__all__ = [
    "RAW_TAIL_CHARS",
    "TAIL_CHARS",
    "LoopDetector",
    "LoopDetectorConfig",
    "LoopVerdict",
    "error_signature",
    "normalise_error",
    "similarity",
]

TAIL_CHARS = 8_192
"""Characters of *normalised* text that `similarity` compares (about the last 100 log lines)."""

RAW_TAIL_CHARS = 4 * TAIL_CHARS
"""Characters of raw text normalised before the tail is taken (normalising shrinks text)."""

_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"

# Order matters: colour codes first (they split tokens), temp paths before line numbers
# (`/tmp/x/app.py:3:1`), timestamps before times and durations, UUIDs before hashes.
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"), ""),
    (re.compile(r"\r(?!\n)"), "\n"),
    (
        re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
        "<uuid>",
    ),
    # Temp locations, keeping what follows the per-run random directory.
    (
        re.compile(
            r"(?:/private)?/var/folders/[\w.-]+/[\w.-]+/T/(?:pytest-of-[^/\s]+/pytest-\d+|[^/\s'\")]+)"
            r"|/(?:tmp|dev/shm)/(?:pytest-of-[^/\s]+/pytest-\d+|[^/\s'\")]+)"
            r"|pytest-of-[^/\\\s]+[/\\]pytest-\d+"
            r"|\\AppData\\Local\\Temp\\[^\\\s'\")]+",
            re.IGNORECASE,
        ),
        "<tmp>",
    ),
    (re.compile(r"\btmp[a-z0-9_]{6,}\b"), "<tmp>"),
    # Timestamps: ISO 8601 / RFC 3339, then syslog dates, then bare clock times.
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        ),
        "<ts>",
    ),
    (re.compile(rf"\b(?:{_MONTHS})\s+\d{{1,2}}\b"), "<date>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    (re.compile(r"\b1[5-9]\d{8}(?:\.\d+)?\b"), "<epoch>"),
    # Addresses, network ports, long hex hashes (need a digit and a letter: not English words).
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x<addr>"),
    (re.compile(r"\b((?:\d{1,3}\.){3}\d{1,3}|localhost):\d{2,5}\b"), r"\1:<port>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b"), "<hash>"),
    (re.compile(r"\b(?=[0-9A-F]*\d)(?=[0-9A-F]*[A-F])[0-9A-F]{16,}\b"), "<hash>"),
    # Line and column numbers.
    (re.compile(r"\b(line|lineno|ln|col|column)([ =:]+)\d+", re.IGNORECASE), r"\1\2<n>"),
    (re.compile(r"(\.[A-Za-z]\w*)(?::\d+){1,2}\b"), r"\1:<n>"),
    (re.compile(r"(\.[A-Za-z]\w*)\(\d+(?:,\s*\d+)?\)"), r"\1(<n>)"),
    (re.compile(r":\d+:"), ":<n>:"),
    # Process ids.
    (re.compile(r"\b(pid|process|thread|tid)([ =:#]+)\d+", re.IGNORECASE), r"\1\2<n>"),
    (re.compile(r"\[\d{2,7}\]"), "[<n>]"),
    # Durations: 0.53s, 12ms, 1.2 seconds, 0m1.234s.
    (re.compile(r"\b\d+m\d+(?:\.\d+)?s\b"), "<dur>"),
    (
        re.compile(
            r"\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b",
            re.IGNORECASE,
        ),
        "<dur>",
    ),
    # Whitespace last: one space between words, no blank lines, no indentation.
    (re.compile(r"[^\S\n]+"), " "),
    (re.compile(r" ?\n[\s]*"), "\n"),
)

# A line that states what went wrong, as opposed to context (commands, frames, source lines).
_KEY_LINE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)\b|\bFAILED\b|\bFAIL\b|\berror\b"
    r"|^E |\bpanic(?:ked)?\b|\bfatal\b|\bassert|\bcannot\b|\bcould not\b|\bnot found\b"
    r"|\bTraceback\b",
    re.IGNORECASE | re.MULTILINE,
)
_BOILERPLATE = re.compile(r"^Traceback \(most recent call last\):$|^During handling of", re.I)
_ERROR_NAME = re.compile(
    r"\b([A-Z]\w*(?:Error|Exception))\b|\b(E\d{3,4}|TS\d{4}|[A-Z]{1,3}\d{3})\b"
)
_KEY_LINES_KEPT = 20
_DIFFERENT_ERROR_PENALTY = 0.75


def normalise_error(text: str, *, max_chars: int | None = None) -> str:
    """Strip what varies between two runs of the same failure, so that they compare equal.

    `max_chars` keeps only the raw text's last `max_chars` characters (from a line start)
    before normalising; by default the whole text is normalised.

    >>> normalise_error("2024-05-01 12:00:03 [4242] app.py:42: TypeError in 0.53s at 0x7f3a")
    '<ts> [<n>] app.py:<n>: TypeError in <dur> at 0x<addr>'
    """
    if max_chars is not None and len(text) > max_chars:
        text = _from_line_start(text[-max_chars:])
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text.strip()


def _from_line_start(chunk: str) -> str:
    """Drop the partial first line of a tail cut, unless that would drop nearly everything."""
    cut = chunk.find("\n")
    return chunk[cut + 1 :] if 0 <= cut < len(chunk) // 2 else chunk


def _prepare(text: str, tail_chars: int) -> str:
    normalised = normalise_error(text, max_chars=4 * tail_chars)
    if len(normalised) > tail_chars:
        normalised = _from_line_start(normalised[-tail_chars:])
    return normalised


def _key_lines(normalised: str) -> str:
    lines = [
        line
        for line in normalised.split("\n")
        if _KEY_LINE.search(line) and not _BOILERPLATE.search(line)
    ]
    return "\n".join(lines[-_KEY_LINES_KEPT:])


def error_signature(text: str) -> str | None:
    """The name of the last error class or code in `text` (`TypeError`, `E501`, `TS2345`)."""
    last: str | None = None
    for match in _ERROR_NAME.finditer(_prepare(text, TAIL_CHARS)):
        last = match.group(1) or match.group(2)
    return last


@dataclass(frozen=True)
class _Prepared:
    text: str
    key: str
    signature: str | None

    @classmethod
    def of(cls, raw: str, tail_chars: int) -> _Prepared:
        text = _prepare(raw, tail_chars)
        key = _key_lines(text)
        signature: str | None = None
        for match in _ERROR_NAME.finditer(key):
            signature = match.group(1) or match.group(2)
        return cls(text, key, signature)


def _score(a: _Prepared, b: _Prepared) -> float:
    if not a.text and not b.text:
        return 1.0
    if not a.text or not b.text:
        return 0.0
    overall = fuzz.ratio(a.text, b.text) / 100.0
    if not (a.key and b.key):
        return overall
    # Shared context (commands, traceback frames, progress lines) inflates a whole-text
    # ratio; the lines that say what went wrong get two thirds of the weight, and a different
    # final error class (ImportError vs TypeError) marks a different failure however alike
    # the context is.
    key = fuzz.ratio(a.key, b.key) / 100.0
    score = (overall + 2.0 * key) / 3.0
    if a.signature and b.signature and a.signature != b.signature:
        score *= _DIFFERENT_ERROR_PENALTY
    return score


def similarity(a: str, b: str, *, tail_chars: int = TAIL_CHARS) -> float:
    """How alike two failures are, in [0, 1], after normalisation.

    Compares the last `tail_chars` normalised characters of each text: one third the
    whole-text Indel ratio (rapidfuzz's `fuzz.ratio`), two thirds the ratio of the error
    lines alone (when both have some), times 0.75 when the final error class differs.
    Two empty texts are identical.

    >>> similarity("12:00:01 app.py:10: KeyError 'x'", "12:07:55 app.py:31: KeyError 'x'")
    1.0
    """
    return _score(_Prepared.of(a, tail_chars), _Prepared.of(b, tail_chars))


@dataclass(frozen=True)
class LoopDetectorConfig:
    max_task_attempts: int = 3
    max_e2e_fix_attempts: int = 5
    error_similarity_threshold: float = 0.8


LoopKind = Literal["repeated", "oscillation", "max_attempts"]


@dataclass(frozen=True)
class LoopVerdict:
    """Why retrying further would waste money; `similarity` is in [0, 1]."""

    kind: LoopKind
    similarity: float
    message: str

    @property
    def similarity_line(self) -> str:
        """The console line seed 000 prints under the verdict."""
        return f"Error similarity: {self.similarity:.0%}"


class LoopDetector:
    """Pure checks over failure texts (oldest first) recorded since the last human resume."""

    def __init__(
        self, config: LoopDetectorConfig | None = None, *, tail_chars: int = TAIL_CHARS
    ) -> None:
        self.config = config or LoopDetectorConfig()
        self.tail_chars = tail_chars

    def pairwise(self, errors: Sequence[str]) -> list[float]:
        """Similarity of each error to the one before it (len(errors) - 1 values)."""
        return self._pairwise(self._prepare_all(errors))

    def _prepare_all(self, errors: Sequence[str]) -> list[_Prepared]:
        return [_Prepared.of(e, self.tail_chars) for e in errors]

    @staticmethod
    def _pairwise(prepared: Sequence[_Prepared]) -> list[float]:
        return [_score(prepared[i - 1], prepared[i]) for i in range(1, len(prepared))]

    def check(self, errors: Sequence[str], *, task_id: str | None = None) -> LoopVerdict | None:
        """The same error `max_task_attempts` times in a row, or A-B-A; else None."""
        subject = f"Task {task_id}" if task_id else "The task"
        return self._check(errors, subject, self.config.max_task_attempts)

    def check_e2e(self, errors: Sequence[str]) -> LoopVerdict | None:
        """Stop milestone-verification fixes at the cap, on a repeat, or on A-B-A."""
        cap = self.config.max_e2e_fix_attempts
        verdict = self._check(errors, "Milestone verification", cap)
        if verdict is not None:
            return verdict
        if len(errors) >= cap:
            sims = self.pairwise(errors[-cap:])
            mean = sum(sims) / len(sims) if sims else 0.0
            return LoopVerdict(
                "max_attempts",
                mean,
                f"Milestone verification failed {len(errors)} times "
                f"(limit {cap}); fixes are not converging",
            )
        return None

    def check_attempts(
        self, errors: Sequence[str], *, task_id: str | None = None
    ) -> LoopVerdict | None:
        """Seed 000's count rule: `max_task_attempts` failures, similar or not."""
        verdict = self.check(errors, task_id=task_id)
        if verdict is not None or len(errors) < self.config.max_task_attempts:
            return verdict
        sims = self.pairwise(errors)
        mean = sum(sims) / len(sims) if sims else 0.0
        subject = f"Task {task_id}" if task_id else "The task"
        return LoopVerdict("max_attempts", mean, f"{subject} failed {len(errors)} times")

    def _check(self, errors: Sequence[str], subject: str, repeat: int) -> LoopVerdict | None:
        if len(errors) < 2:
            return None
        # Only the last `repeat` errors decide; older ones cannot change the verdict.
        window = self._prepare_all(errors[-max(repeat, 3) :])
        sims = self._pairwise(window)
        threshold = self.config.error_similarity_threshold

        run = 0  # consecutive similar pairs ending at the newest error
        for value in reversed(sims):
            if value < threshold:
                break
            run += 1
        if repeat >= 2 and run + 1 >= repeat:
            recent = sims[len(sims) - (repeat - 1) :]
            mean = sum(recent) / len(recent)
            return LoopVerdict(
                "repeated", mean, f"{subject} failed {repeat} times with similar errors"
            )

        if len(window) >= 3 and sims[-1] < threshold:
            aba = _score(window[-3], window[-1])
            if aba >= threshold:
                return LoopVerdict(
                    "oscillation",
                    aba,
                    f"{subject} is oscillating between two errors (A-B-A over the last 3 "
                    "attempts): fixing one brings the other back",
                )
        return None
