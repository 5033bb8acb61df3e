"""The retry brain: seed 001 Task 3.1's tests and Task 3.4's script, the rules, the LLM path."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from orchestrator.brain import Brain, RetryDecision, guidance_for, rules_decision
from orchestrator.loops import similarity
from orchestrator.models import ConfigError

PANDAS = "Failed: ImportError - no module named pandas"


@pytest.fixture
def brain() -> Brain:
    return Brain(backend="rules")


def decide(brain: Brain, history: list[str]) -> RetryDecision:
    return brain.should_retry_or_escalate(
        task_id="1.1",
        task_title="Create data model",
        attempt_history=history,
        attempt_count=len(history),
    )


# --- seed 001 Task 3.1's five tests ---------------------------------------------------------


def test_first_fixable_failure_retries_with_guidance(brain: Brain) -> None:
    result = decide(brain, [PANDAS])
    assert result.decision == "retry"
    assert result.guidance_for_retry is not None
    assert "`pandas`" in result.guidance_for_retry
    assert result.guidance_for_retry.startswith("Install or add the missing dependency `pandas`")
    assert result.confident


def test_same_error_three_times_escalates(brain: Brain) -> None:
    result = decide(brain, [PANDAS, PANDAS, PANDAS])
    assert result.decision == "escalate"
    assert result.guidance_for_retry is None
    assert "Task 1.1 failed 3 times with similar errors" in result.reason
    assert "Error similarity: 100%" in result.reason


def test_different_errors_each_time_retry(brain: Brain) -> None:
    result = decide(brain, [PANDAS, "Failed: TypeError - expected str, got int"])
    assert result.decision == "retry"
    assert "making progress" in result.reason
    assert result.guidance_for_retry is not None
    assert "expected str, got int" in result.guidance_for_retry
    assert result.guidance_for_retry.startswith("Check the types at the failing call")


def test_i_need_clarification_escalates(brain: Brain) -> None:
    result = decide(
        brain, ["Failed: I need clarification: should the cache be per-user or global?"]
    )
    assert result.decision == "escalate"
    assert result.category == "ambiguous_requirements"
    assert "clarification" in result.reason


def test_architecture_issue_escalates(brain: Brain) -> None:
    result = decide(
        brain,
        [
            "Failed: circular import between orchestrator.store and orchestrator.runner; "
            "the modules must be restructured, which is an architecture decision"
        ],
    )
    assert result.decision == "escalate"
    assert "design/architecture" in result.reason


# --- seed 001 Task 3.4's verification script, offline with the rules backend -----------------

TASK_3_4_SCRIPT = """
from orchestrator.haiku_brain import HaikuBrain

brain = HaikuBrain()

# Test 1: First failure - should retry
result = brain.should_retry_or_escalate(
    task_id='1.1',
    task_title='Create data model',
    attempt_history=['Failed: ImportError - no module named pandas'],
    attempt_count=1,
)
print(f'Test 1 - First failure: decision={result.decision}, guidance={result.guidance_for_retry}')
assert result.decision == 'retry', f'Expected retry, got {result.decision}'
assert result.guidance_for_retry is not None, 'Expected guidance for retry'

# Test 2: Same error 3x - should escalate
result = brain.should_retry_or_escalate(
    task_id='1.1',
    task_title='Create data model',
    attempt_history=[
        'Failed: ImportError - no module named pandas',
        'Failed: ImportError - no module named pandas',
        'Failed: ImportError - no module named pandas',
    ],
    attempt_count=3,
)
print(f'Test 2 - Same error 3x: decision={result.decision}')
assert result.decision == 'escalate', f'Expected escalate, got {result.decision}'

# Test 3: Different errors - making progress, should retry
result = brain.should_retry_or_escalate(
    task_id='1.1',
    task_title='Create data model',
    attempt_history=[
        'Failed: ImportError - no module named pandas',
        'Failed: TypeError - expected str, got int',
    ],
    attempt_count=2,
)
print(f'Test 3 - Different errors: decision={result.decision}')
assert result.decision == 'retry', f'Expected retry, got {result.decision}'

print('SUCCESS: All retry decision tests passed')
"""


def test_seed_001_task_3_4_script_passes_offline(tmp_path: Path) -> None:
    script = TASK_3_4_SCRIPT.replace(
        "from orchestrator.haiku_brain import HaikuBrain\n\nbrain = HaikuBrain()",
        'from orchestrator.brain import Brain\n\nbrain = Brain(backend="rules")',
    )
    assert "HaikuBrain" not in script
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},  # no API keys, no network
    )
    assert proc.returncode == 0, proc.stderr
    assert "SUCCESS: All retry decision tests passed" in proc.stdout
    assert "Test 2 - Same error 3x: decision=escalate" in proc.stdout


# --- the rules -------------------------------------------------------------------------------


def test_a_b_a_escalates(brain: Brain) -> None:
    a = "FAILED tests/test_cache.py::test_evicts_oldest - KeyError: 'a'"
    b = "src/cache.py:12:1: F401 `collections.OrderedDict` imported but unused"
    result = decide(brain, [a, b, a])
    assert result.decision == "escalate"
    assert "oscillating" in result.reason


def test_same_error_twice_retries_with_a_different_approach(brain: Brain) -> None:
    result = decide(brain, [PANDAS, PANDAS])
    assert result.decision == "retry"
    assert "Same error as the previous attempt" in result.reason
    assert result.guidance_for_retry is not None
    assert "try a different one" in result.guidance_for_retry


@pytest.mark.parametrize(
    "error",
    [
        "PermissionError: [Errno 13] Permission denied: '/etc/hosts'",
        "npm ERR! Error: EACCES: permission denied, mkdir '/usr/lib/node_modules/x'",
        "cp: cannot create regular file '/usr/bin/tool': Operation not permitted",
    ],
)
def test_permissions_escalate(brain: Brain, error: str) -> None:
    result = decide(brain, [error])
    assert result.decision == "escalate"
    assert "permission" in result.reason


@pytest.mark.parametrize(
    "error",
    [
        "openai.AuthenticationError: Error code: 401 - invalid api key",
        "HTTP 429 Too Many Requests from api.example.com",
        "anthropic.RateLimitError: rate_limit_error: quota exceeded for this month",
        "Error: Invalid API key provided",
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.stripe.com', "
        "port=443): Max retries exceeded (Caused by NewConnectionError: [Errno 111] "
        "Connection refused)",
        "Error: connect ECONNREFUSED 10.20.30.40:5432",
        "curl: (6) Could not resolve host: registry.internal.example",
    ],
)
def test_external_services_escalate(brain: Brain, error: str) -> None:
    result = decide(brain, [error])
    assert result.decision == "escalate"
    assert result.category == "external_service"


@pytest.mark.parametrize(
    "error",
    [
        # the app under test answering 401 is a coding bug, not an external service
        "FAILED tests/test_api.py::test_login - assert 401 == 200",
        # a local service the task itself should start
        "Error: connect ECONNREFUSED 127.0.0.1:5432",
        # a CPU architecture, not a software design question
        "ld: warning: ignoring file libfoo.a, building for macOS-arm64 but attempting to link "
        "with file built for unknown-unsupported file format (wrong architecture x86_64)",
    ],
)
def test_look_alikes_are_retried(brain: Brain, error: str) -> None:
    assert decide(brain, [error]).decision == "retry"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            "FAILED tests/test_cache.py::test_evicts_oldest - AssertionError: assert 'a' in {}",
            "The test `tests/test_cache.py::test_evicts_oldest` asserts "
            "`AssertionError: assert 'a' in {}`; make the code satisfy it, do not edit the test.",
        ),
        ("TypeError - expected str, got int", "Check the types at the failing call: expected str"),
        (
            "  File \"src/a.py\", line 3\nSyntaxError: '(' was never closed",
            "Fix the SyntaxError in",
        ),
        ("NameError: name 'Cache' is not defined", "`Cache` is used but never defined"),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: 'data/seed.json'",
            "`data/seed.json` does not exist",
        ),
        ("Timeout >300.0s", "The attempt timed out"),
        ("bash: line 1: jq: command not found", "The command `jq` is not available"),
        ("AttributeError: 'NoneType' object has no attribute 'get'", "`NoneType` objects have"),
        (
            "ImportError: cannot import name 'Store' from partially initialized module "
            "'orchestrator.store' (most likely due to a circular import)",
            "Break the circular import",
        ),
        ("Error: Cannot find module './routes/users'", "The imported file `./routes/users`"),
        ("src/a.py:3:1: F401 `os` imported but unused", "Fix what the linter/type checker"),
    ],
)
def test_guidance_is_drawn_from_the_error(error: str, expected: str) -> None:
    guidance, _, confident = guidance_for(error)
    assert guidance.startswith(expected), guidance
    assert confident


def test_guidance_reads_a_pytest_log_from_its_end() -> None:
    log = textwrap.dedent(
        """\
        ============================= test session starts ==============================
        platform linux -- Python 3.11.9, pytest-8.2.0, pluggy-1.5.0
        plugins: timeout-2.3.1
        collected 12 items

        tests/test_model.py ..F.F.......                                          [100%]

        =================================== FAILURES ===================================
        _________________________________ test_total __________________________________

            def test_total():
        >       assert total([1, 2]) == 3
        E       assert 4 == 3

        tests/test_model.py:8: AssertionError
        =========================== short test summary info ============================
        FAILED tests/test_model.py::test_total - assert 4 == 3
        FAILED tests/test_model.py::test_mean - ZeroDivisionError: division by zero
        ========================= 2 failed, 10 passed in 0.31s =========================
        """
    )
    guidance, _, _ = guidance_for(log)
    assert "ZeroDivisionError" in guidance
    assert "Failing tests: `tests/test_model.py::test_total`, `tests/test_model.py::test_mean`" in (
        guidance
    )
    assert "timed out" not in guidance


def test_unknown_failures_quote_the_key_line_and_are_not_confident(brain: Brain) -> None:
    result = decide(brain, ["step 1 ok\nError: the widget frobnicator gave up\nexit status 1"])
    assert result.decision == "retry"
    assert not result.confident
    assert result.guidance_for_retry is not None
    assert "`Error: the widget frobnicator gave up`" in result.guidance_for_retry


def test_rules_decision_needs_no_brain_object() -> None:
    result = rules_decision("1.1", "Create data model", [PANDAS] * 3, 3)
    assert result.decision == "escalate"
    assert result.source == "rules"


def test_three_field_construction_still_works() -> None:
    decision = RetryDecision("retry", "because", "do this")
    assert decision.confident is True
    assert decision.source == "rules"


def test_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown brain backend"):
        Brain(backend="haiku")  # type: ignore[arg-type]


# --- the LLM backends, against a real OpenAI-compatible server on 127.0.0.1 ------------------


class ChatServer:
    """A scripted OpenAI chat-completions endpoint; records every prompt it is sent."""

    def __init__(self, answers: list[tuple[int, str]]) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.auth: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.prompts.append(body["messages"][-1]["content"])
                server.auth.append(self.headers.get("Authorization"))
                status, content = server.answers.pop(0) if server.answers else (500, "")
                if self.path != "/v1/chat/completions":
                    status, content = 404, "not found"
                payload = (
                    {
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}}
                        ]
                    }
                    if status == 200
                    else {"error": {"message": content or "scripted failure"}}
                )
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def chat() -> Iterator[Callable[..., ChatServer]]:
    servers: list[ChatServer] = []

    def start(*answers: tuple[int, str]) -> ChatServer:
        servers.append(ChatServer(list(answers)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def llm_brain(server: ChatServer, backend: str = "openai") -> Brain:
    return Brain(
        backend=backend,  # type: ignore[arg-type]
        llm_backend="openai",
        base_url=server.url,
        model="scripted",
        api_key="sk-test-not-a-real-key",
        timeout=10,
    )


def test_openai_backend_decides_with_seed_prompt(chat: Callable[..., ChatServer]) -> None:
    answer = {
        "decision": "escalate",
        "reason": "pandas cannot be installed in this sandbox",
        "guidance_for_retry": None,
    }
    server = chat((200, "```json\n" + json.dumps(answer) + "\n```"))
    result = decide(llm_brain(server), [PANDAS])
    assert result.decision == "escalate"
    assert result.reason == "pandas cannot be installed in this sandbox"
    assert result.guidance_for_retry is None
    assert result.source == "llm:openai"
    [prompt] = server.prompts
    assert prompt.startswith(
        "You are deciding whether to retry a failed task or escalate to a human.\n\n"
        "Task: 1.1 - Create data model\n\nAttempt history:\n"
        "Attempt 1: Failed: ImportError - no module named pandas\n\n"
        "Current attempt count: 1\n"
    )
    assert '"decision": "retry" | "escalate",' in prompt
    assert prompt.endswith("Return ONLY the JSON, no other text.\n")
    assert server.auth == ["Bearer sk-test-not-a-real-key"]


def test_llm_retry_without_guidance_gets_the_rules_guidance(
    chat: Callable[..., ChatServer],
) -> None:
    server = chat((200, '{"decision": "retry", "reason": "fixable", "guidance_for_retry": null}'))
    result = decide(llm_brain(server), [PANDAS])
    assert result.decision == "retry"
    assert result.reason == "fixable"
    assert result.guidance_for_retry is not None
    assert "`pandas`" in result.guidance_for_retry


@pytest.mark.parametrize(
    "answer",
    [
        (200, "I think you should retry, probably."),
        (200, '{"decision": "maybe", "reason": "?"}'),
        (500, "upstream exploded"),
        (429, "rate limited"),
    ],
)
def test_a_failing_llm_leaves_the_rules_decision(
    chat: Callable[..., ChatServer], caplog: pytest.LogCaptureFixture, answer: tuple[int, str]
) -> None:
    server = chat(answer)
    with caplog.at_level(logging.WARNING, logger="orchestrator.brain"):
        result = decide(llm_brain(server), [PANDAS])
    assert len(server.prompts) == 1
    assert result.decision == "retry"
    assert result.source == "rules (llm failed)"
    assert result.guidance_for_retry is not None and "`pandas`" in result.guidance_for_retry
    [record] = [r for r in caplog.records if r.name == "orchestrator.brain"]
    assert "LLM backend openai failed for task 1.1" in record.getMessage()
    assert "sk-test-not-a-real-key" not in caplog.text


def test_unreachable_llm_leaves_the_rules_decision(caplog: pytest.LogCaptureFixture) -> None:
    server = ChatServer([])
    server.close()  # nothing listens on that port any more
    with caplog.at_level(logging.WARNING, logger="orchestrator.brain"):
        result = decide(llm_brain(server), [PANDAS, PANDAS, "I need clarification"])
    assert result.decision == "escalate"
    assert result.source == "rules (llm failed)"
    assert "failed for task 1.1" in caplog.text


def test_guardrails_escalate_without_asking_the_llm(chat: Callable[..., ChatServer]) -> None:
    server = chat((200, '{"decision": "retry", "reason": "try again", "guidance_for_retry": "x"}'))
    brain = llm_brain(server)
    looped = decide(brain, [PANDAS, PANDAS, PANDAS])
    assert looped.decision == "escalate" and looped.source == "rules"
    external = decide(brain, ["openai.RateLimitError: Error code: 429 - insufficient_quota"])
    assert external.decision == "escalate" and external.category == "external_service"
    assert server.prompts == []


def test_auto_asks_the_llm_only_when_the_rules_are_unsure(
    chat: Callable[..., ChatServer],
) -> None:
    server = chat(
        (
            200,
            '{"decision": "escalate", "reason": "the widget service is down", '
            '"guidance_for_retry": null}',
        )
    )
    brain = llm_brain(server, backend="auto")
    sure = decide(brain, [PANDAS])
    assert sure.source == "rules" and sure.confident
    assert server.prompts == []
    unsure = decide(brain, ["Error: the widget frobnicator gave up"])
    assert unsure.decision == "escalate"
    assert unsure.source == "llm:openai"
    assert len(server.prompts) == 1
    assert "Attempt 1: Error: the widget frobnicator gave up" in server.prompts[0]


def test_llm_prompt_carries_only_the_tail_of_huge_logs(chat: Callable[..., ChatServer]) -> None:
    server = chat((200, '{"decision": "retry", "reason": "r", "guidance_for_retry": "g"}'))
    log = "noise line\n" * 200_000 + "Error: the widget frobnicator gave up"
    decide(llm_brain(server), [log])
    [prompt] = server.prompts
    assert len(prompt) < 5_000
    assert prompt.count("Error: the widget frobnicator gave up") == 1


def test_misconfigured_llm_backend_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORCHESTRATOR_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("ORCHESTRATOR_LLM_MODEL", raising=False)
    with pytest.raises(ConfigError, match="ORCHESTRATOR_LLM_BASE_URL"):
        Brain(backend="openai")


def test_megabyte_logs_are_judged_by_their_end(brain: Brain) -> None:
    noise = "".join(
        f"12:00:{i % 60:02d} step {i} ok (plugins: timeout-2.3.1)\n" for i in range(50_000)
    )
    assert len(noise) > 2_000_000
    log = noise + "ModuleNotFoundError: No module named 'pandas'\n"
    first = decide(brain, [log])
    assert first.decision == "retry"
    assert first.guidance_for_retry is not None and "`pandas`" in first.guidance_for_retry
    assert decide(brain, [log, log.replace("12:00", "13:07"), log]).decision == "escalate"


def test_paraphrased_loop_escalates() -> None:
    """The same failure in slightly different words each time (line numbers, paths, a reworded
    sentence) is a loop, though a character ratio scores it just under the threshold."""
    history = [
        "Build failed: the test suite reported 3 failing tests in tests/test_api.py (login "
        "returned 500, expected 200) after 12.3s",
        "After 9.8s the test suite reported 4 failing tests in tests/test_api.py: expected 200, "
        "login returned 500. Build failed",
        "tests/test_api.py: 3 failing tests reported by the test suite; login returned 500 "
        "(expected 200). Build failed after 11.0s",
    ]
    assert max(similarity(history[0], history[1]), similarity(history[1], history[2])) < 0.75
    d = rules_decision("1", "t", history, 3)
    assert d.decision == "escalate" and "other words" in d.reason
    different = [*history[:2], "ImportError: cannot import name 'Session' from 'app.db'"]
    assert rules_decision("1", "t", different, 3).decision == "retry"


def test_credentials_above_a_long_log_in_a_later_attempt_escalate() -> None:
    """A bad key printed above a long test log in the second attempt: the tail scan misses it,
    the brain does not."""
    log = "\n".join(f"tests/test_mod_{k}.py::test_case PASSED" for k in range(400))
    second = (
        "The agent reported failure:\nError: 401 Unauthorized: invalid x-api-key for "
        f"api.anthropic.com\n{log}\nFAILED tests/test_sync.py::test_push - RuntimeError"
    )
    d = rules_decision("1", "t", ["TypeError: x is None", second], 2)
    assert d.decision == "escalate" and d.category == "external_service"


def test_a_credential_the_app_rejects_in_a_later_attempt_escalates() -> None:
    """Once the tests get far enough to run the app, its own error blames a key it was given:
    only the person has the right one."""
    first = "FAIL src/signup.test.ts\n  Expected: visible\n  Received: <element(s) not found>"
    app = '{"error": "Could not save order", "details": "API key for the payments vendor is malformed"}'
    d = rules_decision("1", "t", [first, app], 2)
    assert d.decision == "escalate" and d.category == "external_service"
    # a test that checks the app's message about a key is not the trouble itself
    checked = "FAIL src/key.test.ts\n  expect(body.error).toEqual('auth token missing') failed"
    assert rules_decision("1", "t", [first, checked], 2).decision == "retry"
