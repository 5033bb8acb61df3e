"""The shared failure-reading rules (`orchestrator.rules`), table by table."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.brain import Brain, rules_decision
from orchestrator.consultant import (
    ACCEPTANCE_KEY,
    Analysis,
    ConsultantDecision,
    DecisionBody,
    ModelSwitch,
    PlanRevert,
    apply_decision,
    read_decision_file,
)
from orchestrator.models import UserError
from orchestrator.rules.external import external_line, service_error_kind
from orchestrator.rules.failure import (
    error_signature,
    failing_gates,
    failing_test_ids,
    failing_tests,
    key_error_line,
)
from orchestrator.rules.hints import HINTS, consultant_hint, guidance_for
from orchestrator.rules.signals import ESCALATIONS

PYTEST_LOG = (
    "Gate `pytest -q` failed (exit 1):\n"
    "    def test_total():\n"
    ">       assert total([1, 2]) == 3\n"
    "E       assert 4 == 3\n"
    "tests/test_model.py:8: AssertionError\n"
    "FAILED tests/test_model.py::test_total - assert 4 == 3\n"
    "FAILED tests/test_model.py::test_mean - ZeroDivisionError: division by zero\n"
)


# -- failure --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PYTEST_LOG, "assert 4 == 3"),
        ("Traceback (most recent call last):\n  File 'x.py'\nKeyError: 'id'\n", "KeyError: 'id'"),
        ("FAILED tests/a.py::test_x - ValueError: bad\n1 failed", "ValueError: bad"),
        ("step 1 ok\nError: the widget gave up\nexit status 1", "Error: the widget gave up"),
        ("\x1b[31merror[E0308]: mismatched types\x1b[0m", "error[E0308]: mismatched types"),
        ("all good\nbut stopped", "but stopped"),
        ("Gate `pytest` failed (exit 1):", None),
        ("", None),
    ],
)
def test_key_error_line(text: str, expected: str | None) -> None:
    assert key_error_line(text) == expected


def test_key_error_line_is_one_bounded_line() -> None:
    line = key_error_line("ValueError: " + "x " * 500)
    assert line is not None and len(line) == 200 and line.endswith("…")


@pytest.mark.parametrize(
    ("text", "gates", "tests", "ids"),
    [
        (
            PYTEST_LOG,
            ["pytest -q"],
            ["tests/test_model.py"],
            ["tests/test_model.py::test_total", "tests/test_model.py::test_mean"],
        ),
        (
            "Gate `npm test` failed (exit 1):\n FAIL src/app.test.ts\n",
            ["npm test"],
            ["src/app.test.ts"],
            [],
        ),
        (
            "Gate `ruff check` failed (exit 1):\nGate `ruff check` failed (exit 1):",
            ["ruff check"],
            [],
            [],
        ),
        ("nothing failed", [], [], []),
    ],
)
def test_failing_gates_and_tests(
    text: str, gates: list[str], tests: list[str], ids: list[str]
) -> None:
    assert failing_gates(text) == gates
    assert failing_tests(text) == tests
    assert failing_test_ids(text) == ids


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PYTEST_LOG, "ZeroDivisionError"),
        ("src/a.ts(3,1): error TS2345: Argument", "TS2345"),
        ("src/a.py:1:1: E501 line too long", "E501"),
        ("all good", None),
    ],
)
def test_error_signature(text: str, expected: str | None) -> None:
    assert error_signature(text) == expected


# -- external services ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "external"),
    [
        ("openai.AuthenticationError: Error code: 401 - invalid api key", True),
        ("HTTP 429 Too Many Requests from api.example.com", True),
        ("curl: (6) Could not resolve host: registry.internal.example", True),
        ("Error: connect ECONNREFUSED 10.20.30.40:5432", True),
        ("npm ERR! code E401\nnpm ERR! Unable to authenticate", True),
        ("FAILED tests/test_api.py::test_login - assert 401 == 200", False),
        ("Error: connect ECONNREFUSED 127.0.0.1:5432", False),
        (
            "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: http://localhost/x",
            False,
        ),
        ("The handler answers 429 Too Many Requests when the budget is spent; expected 429", False),
        ("", False),
    ],
)
def test_external_line(text: str, external: bool) -> None:
    assert (external_line(text) is not None) is external


@pytest.mark.parametrize(
    ("message", "status", "code", "kind"),
    [
        ("insufficient_quota: You exceeded your current quota", None, None, "quota"),
        ("Error: 401 Unauthorized", None, None, "authentication"),
        ("API key not valid. Please pass a valid API key.", None, None, "authentication"),
        ("PERMISSION_DENIED: the caller lacks access", None, None, "permission"),
        (None, 402, None, "billing"),
        (None, 429, None, "rate limit"),
        (None, None, "authentication_failed", "authentication"),
        (None, None, "rate_limit", "rate limit"),
        ("TypeError: x is undefined", 500, "server_error", None),
        (None, None, None, None),
    ],
)
def test_service_error_kind(
    message: str | None, status: int | None, code: str | None, kind: str | None
) -> None:
    assert service_error_kind(message, status=status, error_code=code) == kind


# -- error → hint ---------------------------------------------------------------------------------
EXAMPLES = {
    "a missing module": "ModuleNotFoundError: No module named 'pandas'",
    "a broken import": "ImportError: cannot import name 'Cache' from 'app.store'",
    "a circular import": "Failed: circular import between a and b",
    "a syntax error": "SyntaxError: '(' was never closed",
    "an undefined name": "NameError: name 'Cache' is not defined",
    "a missing attribute": "AttributeError: 'Row' object has no attribute 'cells'",
    "a type error": "TypeError: expected str, got int",
    "a missing file": "FileNotFoundError: [Errno 2] No such file or directory: 'data/seed.json'",
    "a missing command": "sh: 1: jq: not found",
    "a timeout": "subprocess.TimeoutExpired: Command 'x' timed out after 60 seconds",
    "a refused local connection": "redis.exceptions.ConnectionError: connection refused",
    "a missing key": "KeyError: 'user_id'",
    "an index error": "IndexError: list index out of range",
    "a failing test": "FAILED tests/test_a.py::test_b - assert 1 == 2",
    "a failing assertion": "AssertionError: totals differ",
    "lint/type errors": "src/a.py:3:1: F401 `os` imported but unused",
    "a compile error": "error[E0308]: mismatched types",
    "an exception": "ZeroDivisionError: division by zero",
}


def test_every_hint_has_an_example_that_reaches_it() -> None:
    assert {h.label for h in HINTS} == set(EXAMPLES)


@pytest.mark.parametrize(("label", "line"), EXAMPLES.items())
def test_guidance_comes_from_the_entry_of_its_kind(label: str, line: str) -> None:
    guidance, got, confident = guidance_for(f"collected 3 items\n{line}\n")
    assert got == label
    assert guidance and confident is (label != "an exception")


@pytest.mark.parametrize(
    ("signature", "line", "starts"),
    [
        ("ModuleNotFoundError", "ModuleNotFoundError: No module named 'x'", "Fix the import"),
        (None, "Error: Cannot find module './routes'", "Fix the import"),
        ("SyntaxError", None, "The code does not parse"),
        ("NameError", None, "A name is used"),
        ("AttributeError", None, "An object lacks the attribute"),
        ("TypeError", None, "Check the signatures"),
        (None, "open: No such file", "A file the code"),
        (None, "the command timed out", "The command timed out"),
        ("E501", None, "Run the linter"),
        ("KeyError", "KeyError: 'x'", None),
        (None, None, None),
    ],
)
def test_consultant_hint(signature: str | None, line: str | None, starts: str | None) -> None:
    hint = consultant_hint(signature, line)
    assert (hint is None) if starts is None else (hint or "").startswith(starts)


# -- what a retry cannot fix ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "category", "word"),
    [
        ("PermissionError: [Errno 13] Permission denied: '/etc/hosts'", None, "permission"),
        ("I need clarification: should totals include tax?", "ambiguous_requirements", "clarif"),
        (
            "This requires an architectural change to the storage layer",
            "ambiguous_requirements",
            "design",
        ),
    ],
)
def test_escalation_signals(text: str, category: str | None, word: str) -> None:
    hits = [(why, cat) for pattern, why, cat in ESCALATIONS if pattern.search(text)]
    assert hits and hits[0][1] == category and word in hits[0][0].lower()


# -- the brain does not run the loop detector twice -----------------------------------------------
def test_loops_checked_skips_the_brains_own_loop_detection() -> None:
    same = ["KeyError: 'id'\nFAILED tests/test_a.py::test_b"] * 3
    assert rules_decision("1.1", "t", same, 3).decision == "escalate"  # standalone: a loop
    checked = rules_decision("1.1", "t", same, 3, loops_checked=True)
    assert checked.decision == "retry"  # the judge found no loop; the brain trusts it
    assert checked.guidance_for_retry and "try a different one" in checked.guidance_for_retry
    brain = Brain()
    assert brain.should_retry_or_escalate("1.1", "t", same, 3).decision == "escalate"
    assert brain.should_retry_or_escalate("1.1", "t", same, 3, loops_checked=True).decision == (
        "retry"
    )


# -- applying a consultant decision ---------------------------------------------------------------
def _decision(**body: object) -> ConsultantDecision:
    return ConsultantDecision(
        analysis=Analysis(failure_summary="s", root_cause="c", attempts_analyzed=3),
        decision=DecisionBody.model_validate(
            {"plan_revert": PlanRevert(current_task="1.2"), **body}
        ),
        expected_outcome="o",
        confidence=0.5,
    )


@pytest.mark.parametrize(
    ("body", "current", "overrides", "revert_to"),
    [
        ({}, {}, {"hints": []}, None),
        ({}, {"model": "a", "hints": ["old"], "x": 1}, {"model": "a", "hints": [], "x": 1}, None),
        (
            {"model_switch": ModelSwitch.model_validate({"from": "a", "to": "b", "reasoning": ""})},
            {"model": "a"},
            {"model": "b", "hints": []},
            None,
        ),
        (
            {"additional_hints": ["h1"], "spec_updates": {ACCEPTANCE_KEY: ["`pytest` passes"]}},
            {"hints": ["old"]},
            {"hints": ["h1", "Acceptance criterion: `pytest` passes"]},
            None,
        ),
        (
            {"plan_revert": PlanRevert(enabled=True, revert_to_task="1.1", current_task="1.2")},
            {},
            {"hints": []},
            "1.1",
        ),
        (
            {"plan_revert": PlanRevert(enabled=False, revert_to_task="1.1", current_task="1.2")},
            {},
            {"hints": []},
            None,
        ),
    ],
)
def test_apply_decision(
    body: dict[str, object],
    current: dict[str, object],
    overrides: dict[str, object],
    revert_to: str | None,
) -> None:
    d = _decision(**body)
    applied = apply_decision(d, current)
    assert applied.overrides == overrides
    assert applied.revert_to == revert_to
    before = dict(current)
    apply_decision(d, current)
    assert current == before  # the caller's overrides are not changed in place


# -- user-decision.json ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "valid"),
    [
        ('{"chosen_option": "A"}', True),
        ('{"user_comment": "use a semicolon"}', True),
        ('{"action": "Skip"}', True),
        ('{"user_comment": "   "}', False),
        ('{"action": "later"}', False),
        ("{}", False),
        ("[]", False),
        ('{"chosen_option": "A",', False),
        (b"\x80\x81", False),
        ("[" * 5000, False),
    ],
)
def test_read_decision_file(tmp_path: Path, content: str | bytes, valid: bool) -> None:
    path = tmp_path / "user-decision.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    if valid:
        assert isinstance(read_decision_file(path), dict)
    else:
        with pytest.raises(UserError) as err:
            read_decision_file(path)
        assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)
    assert read_decision_file(tmp_path / "missing.json") is None
