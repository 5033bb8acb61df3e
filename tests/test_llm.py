"""LLM backends against real local servers: a scripted OpenAI-compatible endpoint, and the bundled
Claude Code against the scripted Anthropic Messages server."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from orchestrator.interpret import interpret
from orchestrator.llm import ClaudeBackend, LLMError, OpenAIBackend, extract_json, get_backend
from orchestrator.models import ConfigError

Responder = Callable[[dict[str, Any]], tuple[int, str, float]]
"""request body -> (status, response body, seconds to wait before answering)."""


@contextmanager
def chat_server(respond: Responder) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A tiny OpenAI-style `/v1/chat/completions` server on 127.0.0.1, recording requests."""
    seen: list[dict[str, Any]] = []
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            seen.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            )
            status, text, delay = respond(body)
            stop.wait(delay)
            try:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def chat_reply(content: str) -> str:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
    )


UNSURE = "I changed a few things in the parser."  # no signal: the rules are not confident
ASKS = json.dumps(
    {
        "needs_human": True,
        "question": "Which parser should I keep?",
        "options": ["old", "new"],
        "recommendation": "new",
        "task_completed": False,
        "task_failed": False,
        "error_message": None,
        "category": "ambiguous_requirements",
    }
)


# ------------------------------------------------------------------------------ extract_json


def test_extract_json_plain_fenced_and_with_prose() -> None:
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('Here you go:\n```json\n{"a": 2, "b": [1]}\n```\nDone.') == {
        "a": 2,
        "b": [1],
    }
    assert extract_json('Sure. {"needs_human": false, "nested": {"x": 1}} Hope that helps') == {
        "needs_human": False,
        "nested": {"x": 1},
    }


@pytest.mark.parametrize(
    "bad", ["", "   ", "no json here", "[1, 2]", '{"a": ', "```json\nnope\n```"]
)
def test_extract_json_rejects_non_objects(bad: str) -> None:
    with pytest.raises(LLMError):
        extract_json(bad)


# ------------------------------------------------------------------------------ openai backend


def test_openai_backend_sends_chat_request_and_returns_text() -> None:
    with chat_server(lambda body: (200, chat_reply("hello"), 0)) as (url, seen):
        backend = OpenAIBackend(url, "local-model", api_key="sk-test-123")
        assert backend.complete("say hello", timeout=5) == "hello"
    assert seen[0]["path"] == "/v1/chat/completions"
    assert seen[0]["auth"] == "Bearer sk-test-123"
    assert seen[0]["body"]["model"] == "local-model"
    assert seen[0]["body"]["messages"] == [{"role": "user", "content": "say hello"}]
    assert "sk-test-123" not in repr(backend)


def test_openai_backend_valid_json_decides_when_rules_unsure() -> None:
    with chat_server(lambda body: (200, chat_reply("```json\n" + ASKS + "\n```"), 0)) as (
        url,
        seen,
    ):
        result = interpret(UNSURE, llm=OpenAIBackend(url, "m"))
    assert result.source == "llm"
    assert result.verdict == "needs_human"
    assert result.category == "ambiguous_requirements"
    assert result.options == ["old", "new"]
    assert result.recommendation == "new"
    assert result.why == "I found multiple valid approaches and need you to decide."
    assert UNSURE in seen[0]["body"]["messages"][0]["content"]


def test_llm_not_consulted_when_rules_are_confident() -> None:
    with chat_server(lambda body: (200, chat_reply(ASKS), 0)) as (url, seen):
        result = interpret("STATUS: completed", llm=OpenAIBackend(url, "m"))
    assert result.verdict == "completed" and result.source == "marker"
    assert seen == []


def test_llm_only_skips_the_rules() -> None:
    completed = json.dumps({"needs_human": False, "task_completed": True, "task_failed": False})
    with chat_server(lambda body: (200, chat_reply(completed), 0)) as (url, seen):
        result = interpret(
            "STATUS: needs_human\nQUESTION: Redis or memcached?",
            llm=OpenAIBackend(url, "m"),
            llm_only=True,
        )
    assert len(seen) == 1
    assert (result.verdict, result.source) == ("completed", "llm")


def _rules_stand(respond: Responder, caplog: pytest.LogCaptureFixture, timeout: float = 5) -> None:
    text = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: boom'
    rules = interpret(text)
    assert not rules.confident  # so the LLM is asked
    with (
        caplog.at_level(logging.WARNING, logger="orchestrator.interpret"),
        chat_server(respond) as (url, seen),
    ):
        result = interpret(text, llm=OpenAIBackend(url, "m"), timeout=timeout)
    assert len(seen) == 1
    assert result == rules
    assert result.verdict == "failed"  # never "assume completed"
    assert any(
        r.name == "orchestrator.interpret" and "failed" in r.getMessage() for r in caplog.records
    )


def test_invalid_json_answer_leaves_the_rules_answer(caplog: pytest.LogCaptureFixture) -> None:
    _rules_stand(lambda body: (200, chat_reply("I think the task went fine!"), 0), caplog)


def test_json_without_verdict_fields_leaves_the_rules_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    _rules_stand(lambda body: (200, chat_reply('{"question": null}'), 0), caplog)


def test_http_500_leaves_the_rules_answer(caplog: pytest.LogCaptureFixture) -> None:
    _rules_stand(lambda body: (500, '{"error": {"message": "model crashed"}}', 0), caplog)


def test_timeout_leaves_the_rules_answer(caplog: pytest.LogCaptureFixture) -> None:
    _rules_stand(lambda body: (200, chat_reply(ASKS), 3.0), caplog, timeout=0.5)


def test_unreachable_server_raises_llm_error() -> None:
    with chat_server(lambda body: (200, "", 0)) as (url, _seen):
        pass  # server is gone now
    with pytest.raises(LLMError, match=r"unreachable|timed out"):
        OpenAIBackend(url, "m").complete("hi", timeout=2)


def test_llm_only_falls_back_to_rules_when_llm_fails(caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="orchestrator.interpret"),
        chat_server(lambda body: (503, "overloaded", 0)) as (url, _seen),
    ):
        result = interpret(
            "STATUS: failed\nbuild broke", llm=OpenAIBackend(url, "m"), llm_only=True
        )
    assert (result.verdict, result.source) == ("failed", "marker")
    assert caplog.records


def test_long_output_is_clipped_keeping_the_end() -> None:
    text = "x" * 50_000 + "\nFINAL WORDS: Which cache should I use?"
    with chat_server(lambda body: (200, chat_reply(ASKS), 0)) as (url, seen):
        interpret(text, llm=OpenAIBackend(url, "m"), llm_only=True)
    prompt = seen[0]["body"]["messages"][0]["content"]
    assert "FINAL WORDS" in prompt
    assert len(prompt) < 20_000


# ------------------------------------------------------------------------------ get_backend


def test_get_backend_reads_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCHESTRATOR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("ORCHESTRATOR_LLM_MODEL", "qwen")
    monkeypatch.delenv("ORCHESTRATOR_LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    backend = get_backend("openai")
    assert isinstance(backend, OpenAIBackend)
    assert (backend.base_url, backend.model, backend.name) == (
        "http://127.0.0.1:9/v1",
        "qwen",
        "openai",
    )
    claude = get_backend("claude", model="claude-haiku-4-5")
    assert isinstance(claude, ClaudeBackend) and claude.model == "claude-haiku-4-5"


def test_get_backend_errors_are_one_line_user_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORCHESTRATOR_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("ORCHESTRATOR_LLM_MODEL", raising=False)
    with pytest.raises(ConfigError, match="ORCHESTRATOR_LLM_BASE_URL"):
        get_backend("openai")
    with pytest.raises(ConfigError, match="unknown LLM backend 'gpt'"):
        get_backend("gpt")


# ------------------------------------------------------------------------------ claude backend


@pytest.mark.claude
def test_claude_backend_through_bundled_claude_code(tmp_path: Path) -> None:
    anthropic = pytest.importorskip("orchestrator.testing.anthropic")
    answer = json.dumps(
        {
            "needs_human": True,
            "question": "Redis or in-memory?",
            "options": ["Redis", "In-memory"],
            "recommendation": "In-memory",
            "task_completed": False,
            "task_failed": False,
            "error_message": None,
            "category": "ambiguous_requirements",
        }
    )
    # the interpreter's request carries no tools, so it must not count as an auxiliary call
    with anthropic.AnthropicServer(
        [answer], when_exhausted=answer, aux_text=answer, auxiliary=lambda req: False
    ) as server:
        env = server.claude_code_env(tmp_path / "home")
        backend = ClaudeBackend("claude-haiku-4-5", env=env, cwd=tmp_path)
        started = time.monotonic()
        result = interpret("I changed a few things.", llm=backend, timeout=120)
        elapsed = time.monotonic() - started
        bodies = [
            r.body for r in server.requests if isinstance(r.body, dict) and r.body.get("messages")
        ]
    assert result.source == "llm", f"fell back to rules after {elapsed:.1f}s"
    assert result.verdict == "needs_human"
    assert result.options == ["Redis", "In-memory"]
    assert bodies, "Claude Code never called the scripted server"
    assert all(b.get("model") == "claude-haiku-4-5" for b in bodies)
    assert not any(b.get("tools") for b in bodies), "the interpreter must run without tools"
    assert any("I changed a few things." in json.dumps(b) for b in bodies)
    assert not list((tmp_path / "home").rglob("*.jsonl")), "no session transcript may be persisted"


@pytest.mark.claude
def test_claude_backend_failure_is_llm_error(tmp_path: Path) -> None:
    anthropic = pytest.importorskip("orchestrator.testing.anthropic")
    script = pytest.importorskip("orchestrator.testing.script")
    with anthropic.AnthropicServer(
        [script.Fail(401)], when_exhausted=script.Fail(401), auxiliary=lambda req: False
    ) as server:
        backend = ClaudeBackend(env=server.claude_code_env(tmp_path / "home"), cwd=tmp_path)
        with pytest.raises(LLMError):
            backend.complete("hello", timeout=120)
