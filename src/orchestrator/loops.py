"""Loop detection: is an agent failing the same way again, or flipping between two failures?

Failure texts are normalised first by `orchestrator.rules.failure` (timestamps, line numbers,
addresses, temp paths, PIDs, durations, UUIDs, hashes and colour codes vary between runs of the
*same* failure), then compared with rapidfuzz. Megabyte logs stay cheap because only a bounded tail is compared:
test runners, compilers and tracebacks put the failure at the end of their output.

The detector holds no state: callers pass the failure texts recorded since the last human
resume, so a run rebuilt from the store after a crash reaches the same verdict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from rapidfuzz import fuzz

from orchestrator.rules.failure import (
    TAIL_CHARS,
    compiler_errors,
    error_signature,
    failing_names,
    key_lines,
    normalise_error,
    normalised_tail,
    signature_of_key_lines,
)
from orchestrator.rules.platform import find_platform_error
from orchestrator.rules.summaries import (
    fewer_failing,
    is_summary,
    moved_on,
    same_failure,
    says_circling,
)

__all__ = [
    "RAW_TAIL_CHARS",
    "TAIL_CHARS",
    "LoopDetector",
    "LoopDetectorConfig",
    "LoopVerdict",
    "comparable",
    "did_not_run",
    "error_signature",
    "failed_count",
    "fewer_failures",
    "normalise_error",
    "paraphrased_loop",
    "similarity",
]

RAW_TAIL_CHARS = 4 * TAIL_CHARS
"""Characters of raw text normalised before the tail is taken (normalising shrinks text)."""

_KEY_LINES_KEPT = 20
_DIFFERENT_ERROR_PENALTY = 0.75


@dataclass(frozen=True)
class _Prepared:
    text: str
    key: str
    signature: str | None
    tests: frozenset[str] = frozenset()

    @classmethod
    def of(cls, raw: str, tail_chars: int) -> _Prepared:
        text = normalised_tail(raw, tail_chars)
        key = key_lines(text, _KEY_LINES_KEPT)
        return cls(text, key, signature_of_key_lines(key), failing_names(text))


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
    elif a.tests and b.tests and not a.tests & b.tests:
        # other tests fail now: the runner's boilerplate around them is what looks alike
        score *= _DIFFERENT_ERROR_PENALTY
    return score


def similarity(a: str, b: str, *, tail_chars: int = TAIL_CHARS) -> float:
    """How alike two failures are, in [0, 1], after normalisation.

    Compares the last `tail_chars` normalised characters of each text: one third the
    whole-text Indel ratio (rapidfuzz's `fuzz.ratio`), two thirds the ratio of the error
    lines alone (when both have some), times 0.75 when the final error class differs or the
    runner names failing tests in both and none in common.
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
        errors = comparable(errors)
        if len(errors) < 2:
            return None
        if fewer_failures(errors[-max(repeat, 3) :]) is not None:
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

        same_tests = _same_tests(window[-repeat:], sims[len(sims) - (repeat - 1) :], threshold)
        if repeat >= 3 and len(window) >= repeat and same_tests is not None:
            return LoopVerdict(
                "repeated",
                same_tests,
                f"{subject} failed the same tests the same way {repeat} times in a row",
            )
        if repeat >= 3 and len(errors) >= repeat and _same_compiler_error(errors[-repeat:]):
            return LoopVerdict(
                "repeated",
                min(sims[len(sims) - (repeat - 1) :], default=threshold),
                f"{subject} failed {repeat} times on the same compiler error in the same file",
            )
        need = max(0.5, threshold - _REWORDED_NAMES)
        reworded = _reworded(errors[-repeat:], window[-repeat:], need) if repeat >= 2 else None
        if len(errors) >= repeat and reworded is not None:
            return LoopVerdict(
                "repeated",
                reworded,
                f"{subject} failed {repeat} times with the same failure in other words",
            )
        last_few = errors[-repeat:]
        if (
            repeat >= 3
            and len(last_few) >= repeat
            and all(is_summary(e) for e in last_few)
            and says_circling(last_few[-1])
            and not moved_on(last_few[-1])
        ):
            return LoopVerdict(
                "repeated", threshold, f"{subject} failed {repeat} times and is going in circles"
            )
        window_back = max(repeat * 2, _RECURRENCE_WINDOW)
        back = errors[-window_back:]
        # the window's failures are prepared already; only the older ones are added
        prepared_back = [*self._prepare_all(back[: len(back) - len(window)]), *window]
        came_back = _came_back(prepared_back, threshold, repeat, back, need)
        if repeat >= 3 and came_back is not None:
            return LoopVerdict(
                "repeated",
                came_back,
                f"{subject} failed the same way {repeat} times, with other failures in between",
            )

        # an A that only counts failures cannot say the same failure came back
        if (
            len(window) >= 3
            and sims[-1] < threshold
            and _has_detail(window[-3])
            and _has_detail(window[-1])
        ):
            aba = _score(window[-3], window[-1])
            if all(is_summary(e) for e in errors[-3:]):  # summaries: also by what they name
                again = same_failure(errors[-3], errors[-1], need)
                if again is not None and same_failure(errors[-2], errors[-1], need) is None:
                    aba = max(aba, threshold)
            if aba >= threshold:
                return LoopVerdict(
                    "oscillation",
                    aba,
                    f"{subject} is oscillating between two errors (A-B-A over the last 3 "
                    "attempts): fixing one brings the other back",
                )
        return None


_RECURRENCE_WINDOW = 6
_REWORDED_NAMES = 0.3
"""Summaries are compared by what they name; the share they must have in common is the
similarity threshold less this (at least half): 0.5 at the default 0.8."""


def _reworded(raws: Sequence[str], prepared: Sequence[_Prepared], need: float) -> float | None:
    """The least shared part of what they name when every failure of RAWS is a short summary
    of the same failure as the one before, in other words (`rules.summaries`); else None.
    Summaries in which the runner names other failing tests are other failures."""
    if len(raws) < 2 or not all(is_summary(r) for r in raws) or fewer_failing(raws):
        return None
    for a, b in pairwise(prepared):
        if a.tests and b.tests and not a.tests & b.tests:
            return None
    shares = [same_failure(a, b, need) for a, b in pairwise(raws)]
    return None if any(s is None for s in shares) else min(s for s in shares if s is not None)


_SAME_TESTS_SLACK = 0.3
"""How much less alike than the threshold two failures of the same tests may be: a race report's
addresses and goroutines, a compiler's other line, a value that moved."""


def _same_tests(
    window: Sequence[_Prepared], sims: Sequence[float], threshold: float
) -> float | None:
    """The lowest likeness of the failures in WINDOW when all name a failing test in common (one
    by one, not only its file) with the same final error class, and each is at least nearly
    alike the one before: the same tests failing the same way in changing words. Else None."""
    if len(window) < 2 or not window[0].tests:
        return None
    common = frozenset.intersection(*(p.tests for p in window))
    if not common or any(p.signature != window[0].signature for p in window):
        return None
    lowest = min(sims) if sims else 1.0
    return lowest if lowest >= threshold - _SAME_TESTS_SLACK else None


def _same_compiler_error(raws: Sequence[str]) -> bool:
    """Every failure of RAWS has a compiler or type-checker error with a code in common (rustc
    `E0502`, tsc `TS2344`, mypy `[arg-type]`) in a source file in common, and their error counts
    do not go down one after the other: the same error moved around the same code, however its
    lines and frames change (fixes that land shrink the count)."""
    found = [compiler_errors(raw) for raw in raws]
    counts = [count if count is not None else -1 for _, _, count in found]
    shrinking = min(counts) >= 0 and all(a > b for a, b in pairwise(counts))
    return (
        not shrinking
        and bool(frozenset.intersection(*(files for files, _, _ in found)))
        and bool(frozenset.intersection(*(codes for _, codes, _ in found)))
    )


def _came_back(
    window: Sequence[_Prepared],
    threshold: float,
    repeat: int,
    raws: Sequence[str],
    need: float,
) -> float | None:
    """The mean likeness when the newest failure of WINDOW is alike `repeat - 1` or more earlier
    ones (the same failure `repeat` times, with other failures in between), else None. Short
    summaries (RAWS) are alike when they name the same failure (`rules.summaries`)."""
    if len(window) < repeat or not _has_detail(window[-1]):
        return None
    scores = [_score(p, window[-1]) for p in window[:-1]]
    if is_summary(raws[-1]) and not fewer_failing(raws):
        last = window[-1].tests
        for k, raw in enumerate(raws[:-1]):
            if not is_summary(raw) or (window[k].tests and last and not window[k].tests & last):
                continue
            if same_failure(raw, raws[-1], need) is not None:
                scores[k] = max(scores[k], threshold)
    alike = [s for s in scores if s >= threshold]
    return sum(alike) / len(alike) if len(alike) >= repeat - 1 else None


# -- what an attempt's text says beyond its similarity -------------------------------------------

_DID_NOT_RUN = re.compile(
    r"\b(?:npm|pnpm|yarn) (?:ERR!|error) (?:code ENOENT|Missing script)|"
    r"Could(?: not|n't) (?:read|find) (?:a )?package\.json|No package\.json (?:was )?found|"
    r"ERR_PNPM_NO_IMPORTER_MANIFEST_FOUND|can't open file '[^']*\.py'",
    re.I,
)
_FAILED_COUNT = re.compile(
    r"\b(\d+) failed(?=,| \||\s+in\b| \(|[ =]*$)|✖ (\d+) problems?\b", re.I | re.M
)
_RAN = re.compile(
    r"\b\d+ (?:passed|failed)\b|^\s*(?:FAIL|FAILED|✕|×)\s|\berror TS\d{4}", re.I | re.M
)


def did_not_run(text: str) -> bool:
    """The check command could not start (no package.json where it ran, a missing script, a
    script file that is not there) and no test or compiler output follows: the attempt says
    nothing about the code, only about where the command was run."""
    tail = text[-RAW_TAIL_CHARS:]
    return bool(_DID_NOT_RUN.search(tail)) and not _RAN.search(tail)


def comparable(errors: Sequence[str]) -> list[str]:
    """The failures that say something about the code: `did_not_run` ones and those the model
    API's passing trouble cut off are left out (an agent that alternates a check run from the
    wrong folder with real runs is not oscillating), unless every failure is one (then that is
    the loop)."""
    kept = [e for e in errors if not did_not_run(e) and not _passing_trouble(e)]
    return kept if kept else list(errors)


def _passing_trouble(text: str) -> bool:
    """The attempt was cut off by the model API's passing trouble (overloaded, a 5xx, a dropped
    stream): it says nothing about the code, so it is neither a repeat nor the B of an A-B-A."""
    err = find_platform_error(text[-RAW_TAIL_CHARS:])  # its end, as for the failure itself
    return err is not None and err.spec.transient


def failed_count(text: str) -> int | None:
    """How many tests the runner's last summary line says failed (pytest `4 failed, 39 passed`,
    jest `Tests: 3 failed`, vitest `Tests  21 failed | 63 passed`, playwright `1 failed`), or
    how many problems ESLint's summary counts (`✖ 12 problems`)."""
    last = None
    for match in _FAILED_COUNT.finditer(text[-RAW_TAIL_CHARS:]):
        last = match
    return int(last.group(1) or last.group(2)) if last else None


def fewer_failures(errors: Sequence[str]) -> tuple[int, int] | None:
    """(first, last) failing-test counts when the newest failure reports fewer failing tests
    than the oldest of `errors` that reports a count: fixes are landing, however alike the
    texts around the counts look. None otherwise."""
    counts = [failed_count(e) for e in errors]
    known = [c for c in counts[:-1] if c is not None]
    last = counts[-1] if counts else None
    if last is None or not known or last >= known[0]:
        return None
    return known[0], last


_COUNT_LINE = re.compile(
    r"^\W*(?:(?:Tests?|Test (?:Files|Suites)):?\s+)?\d+ failed\b[^\n]*$", re.I | re.M
)


def _has_detail(prepared: _Prepared) -> bool:
    """Whether a failure names what failed (an error, a test), not only how many failed."""
    return any(line and not _COUNT_LINE.match(line) for line in prepared.key.split("\n"))


PARAPHRASE_THRESHOLD = 0.85


def paraphrased_loop(
    errors: Sequence[str], *, repeat: int = 3, threshold: float = PARAPHRASE_THRESHOLD
) -> float | None:
    """The lowest pairwise likeness of the last `repeat` failures when they all say the same
    thing in slightly different words (numbers, paths, hex, timestamps normalised away, then
    words compared as sets, order and repetition ignored), else None. Catches the loop whose
    text changes a little each time, which a character ratio on the tail scores just under the
    threshold."""
    errors = comparable(errors)
    if len(errors) < repeat or fewer_failures(errors[-repeat:]) is not None:
        return None
    prepared = [_Prepared.of(e, TAIL_CHARS) for e in errors[-repeat:]]
    # a text that only counts failures is a subset of any fuller one: it proves no likeness
    if not all(p.text and _has_detail(p) for p in prepared):
        return None
    texts = [p.text.lower() for p in prepared]
    lowest = 1.0
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            a, b = prepared[i].tests, prepared[j].tests
            if a and b and not a & b:
                return None  # other tests fail: the same words are the runner's
            lowest = min(lowest, fuzz.token_set_ratio(texts[i], texts[j]) / 100.0)
            if lowest < threshold:
                return None
    return lowest
