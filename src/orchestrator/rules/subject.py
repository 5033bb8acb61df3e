"""What the code under test is about, read from the names its checks print (test names, test
files, source paths): trouble whose words are the code's own subject is what the tests exercise,
not trouble of the run.

A rate limiter's test that expects a `quota exceeded`, an auth module that logs `401
Unauthorized: refresh token reused`, a fixture that injects `ExpiredToken`: the words of an
external-service failure, printed while the suite ran, about the very thing the task changes.
A provider's own refusal stops the agent before any test runs; a credential the application
needs and lacks fails tests whose names say nothing of credentials."""

from __future__ import annotations

import re

__all__ = ["about_the_code"]

_NAMED = re.compile(r"[\w./:-]*(?:test|spec|Test|Spec|TEST)[\w./:-]*")
"""A test's name or file (`quota::tests::quota_exceeded_after_burst`, `StorageQuotaTest`)."""
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_TROUBLE_WORDS: dict[str, frozenset[str]] = {
    "quota": frozenset({"quota", "quotas"}),
    "rate": frozenset({"rate", "ratelimit", "ratelimiter", "limiter", "throttle", "throttling"}),
    "limit": frozenset({"limit", "limits", "limiter", "ratelimit"}),
    "429": frozenset({"rate", "limit", "limiter", "throttle", "quota"}),
    "401": frozenset({"unauthorized", "unauthorised", "token", "tokens", "login"}),
    "403": frozenset({"forbidden", "permission", "permissions", "acl", "rbac", "authz"}),
    "unauthorized": frozenset({"unauthorized", "token", "login", "session"}),
    "forbidden": frozenset({"forbidden", "permission", "permissions", "authz", "rbac"}),
    "token": frozenset({"token", "tokens", "refresh", "jwt"}),
    "expired": frozenset({"expired", "expiry", "expiring", "expires", "refresh", "ttl"}),
    "credential": frozenset({"credential", "credentials", "creds"}),
    "billing": frozenset({"billing", "invoice", "invoices", "payment", "payments"}),
    "credit": frozenset({"credit", "credits", "billing"}),
}
_TROUBLE = re.compile(r"\b(?:" + "|".join(_TROUBLE_WORDS) + r")", re.I)
_FIXTURE = re.compile(r"\b(?:moto|mock_aws|injects?|simulat\w+)\b", re.I)
"""A test double named on the trouble's line: the test made the trouble on purpose."""


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _names(line: str) -> set[str]:
    return _words(" ".join(m.group(0) for m in _NAMED.finditer(line)))


def about_the_code(text: str, trouble: str) -> bool:
    """TROUBLE (an external-service or platform line found in TEXT) is the subject of the code
    under test: its line names a test double that injects it, or its trouble words are in the
    names of the test it belongs to: on its own line (a runner's FAILED line, `api_test.go:151`),
    and the nearest test named above it (within five lines) and below it (within three)."""
    lines = text.splitlines()
    at = next((i for i in range(len(lines) - 1, -1, -1) if trouble[:60] in lines[i]), None)
    if at is None:
        return False
    if _FIXTURE.search(lines[at]):
        return True
    above = (_names(x) for x in reversed(lines[max(0, at - 5) : at]))
    below = (_names(x) for x in lines[at + 1 : at + 4])
    names = _names(lines[at]) | next((n for n in above if n), set())
    names |= next((n for n in below if n), set())
    return any(_TROUBLE_WORDS[m.group(0).lower()] & names for m in _TROUBLE.finditer(trouble))
