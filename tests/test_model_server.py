"""The scripted Anthropic Messages server, spoken to over real HTTP with httpx."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from orchestrator.testing import AnthropicServer, Fail, Reply, Stall, Text, ToolCall
from orchestrator.testing.script import RecordedRequest

TOOLS = [{"name": "Write", "input_schema": {"type": "object"}}]


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def post(server: AnthropicServer, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}/v1/messages?beta=true",
        json=body,
        headers={"x-api-key": "secret-value", **headers},
        timeout=10,
    )


def test_streams_text_then_tool_use_in_the_messages_wire_format() -> None:
    script = [
        Reply(
            (
                Text("I'll write it."),
                ToolCall("Write", {"file_path": "/w/a.py", "content": "x = 1\n"}),
            )
        )
    ]
    with AnthropicServer(script) as server:
        r = post(server, {"model": "claude-x", "stream": True, "tools": TOOLS, "messages": []})
    assert r.headers["content-type"].startswith("text/event-stream")
    events = sse_events(r.text)
    names = [e for e, _ in events]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    assert names.count("content_block_start") == 2
    text_delta = next(d for e, d in events if e == "content_block_delta" and d["index"] == 0)
    assert text_delta["delta"] == {"type": "text_delta", "text": "I'll write it."}
    start = next(d for e, d in events if e == "content_block_start" and d["index"] == 1)
    assert (
        start["content_block"]["type"] == "tool_use" and start["content_block"]["name"] == "Write"
    )
    partial = next(d for e, d in events if e == "content_block_delta" and d["index"] == 1)
    assert json.loads(partial["delta"]["partial_json"]) == {
        "file_path": "/w/a.py",
        "content": "x = 1\n",
    }
    delta = next(d for e, d in events if e == "message_delta")
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"]["output_tokens"] == 5


def test_non_streaming_json_reply_and_shorthand_turns() -> None:
    with AnthropicServer(
        ["plain text", ToolCall("Bash", {"command": "ls"}, id="toolu_fixed")]
    ) as server:
        first = post(server, {"model": "m", "tools": TOOLS}).json()
        second = post(server, {"model": "m", "tools": TOOLS}).json()
    assert first["content"] == [{"type": "text", "text": "plain text"}]
    assert first["stop_reason"] == "end_turn"
    assert second["content"][0] == {
        "type": "tool_use",
        "id": "toolu_fixed",
        "name": "Bash",
        "input": {"command": "ls"},
    }
    assert second["stop_reason"] == "tool_use"


def test_auxiliary_requests_do_not_consume_turns() -> None:
    with AnthropicServer(["the real turn"], aux_text="A title") as server:
        aux = post(
            server, {"model": "small", "messages": [{"role": "user", "content": "title?"}]}
        ).json()
        count = httpx.post(
            f"{server.url}/v1/messages/count_tokens", json={"messages": []}, timeout=10
        )
        probe = httpx.get(f"{server.url}/v1/models", timeout=10)
        real = post(server, {"model": "m", "tools": TOOLS}).json()
    assert aux["content"][0]["text"] == "A title"
    assert count.status_code == 200 and count.json()["input_tokens"] >= 1
    assert probe.status_code == 404
    assert real["content"][0]["text"] == "the real turn"
    assert [r.auxiliary for r in server.requests] == [True, True, True, False]
    assert server.model_requests[0].turn == 0 and server.turns_left == 0


def test_records_bodies_and_redacts_secrets(tmp_path: Path) -> None:
    with AnthropicServer(["ok"]) as server:
        post(
            server,
            {
                "model": "m",
                "tools": TOOLS,
                "messages": [{"role": "user", "content": "use In-memory"}],
            },
            authorization="Bearer tok",
        )
    req = server.requests[0]
    assert req.contains("use In-memory")
    assert req.body["model"] == "m"
    headers = {k.lower(): v for k, v in req.headers.items()}
    assert headers["x-api-key"] == "<redacted>" and headers["authorization"] == "<redacted>"
    assert "secret-value" not in json.dumps(req.headers)
    server.dump_requests(tmp_path / "requests.jsonl")
    dumped = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    assert dumped[0]["body"]["model"] == "m" and "secret-value" not in json.dumps(dumped)


def test_failures_carry_status_error_type_and_retry_after() -> None:
    with AnthropicServer(
        [Fail(401), Fail(429, retry_after=7), Fail(500, body={"custom": True}), "after"]
    ) as server:
        r401 = post(server, {"tools": TOOLS})
        r429 = post(server, {"tools": TOOLS})
        r500 = post(server, {"tools": TOOLS})
        ok = post(server, {"tools": TOOLS})
    assert r401.status_code == 401 and r401.json()["error"]["type"] == "authentication_error"
    assert r429.status_code == 429 and r429.headers["retry-after"] == "7"
    assert r429.json()["error"]["type"] == "rate_limit_error"
    assert r500.json() == {"custom": True}
    assert ok.json()["content"][0]["text"] == "after"


def test_stall_opens_the_stream_then_drops_it_unfinished() -> None:
    with AnthropicServer([Stall(0.3), "next"]) as server:
        r = post(server, {"stream": True, "tools": TOOLS})
        names = [e for e, _ in sse_events(r.text)]
        nxt = post(server, {"tools": TOOLS})
    assert r.status_code == 200
    assert names == ["message_start"]
    assert nxt.json()["content"][0]["text"] == "next"


def test_callable_turns_see_the_request_and_exhaustion_has_a_default() -> None:
    def echo(req: RecordedRequest) -> str:
        return f"you sent {len(req.body['messages'])} messages"

    with AnthropicServer([echo], when_exhausted="nothing left") as server:
        first = post(server, {"tools": TOOLS, "messages": [{}, {}]}).json()
        extra = post(server, {"tools": TOOLS}).json()
        server.add("added later")
        added = post(server, {"tools": TOOLS}).json()
    assert first["content"][0]["text"] == "you sent 2 messages"
    assert extra["content"][0]["text"] == "nothing left"
    assert server.requests[1].turn is None
    assert added["content"][0]["text"] == "added later"


def test_binds_loopback_on_an_ephemeral_port() -> None:
    with AnthropicServer() as a, AnthropicServer() as b:
        assert a.url.startswith("http://127.0.0.1:") and a.port != b.port
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{a.url}/v1/messages", timeout=2)
