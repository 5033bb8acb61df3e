"""Test helpers that are real implementations: scripted model servers for real agent CLIs.

    from orchestrator.testing import AnthropicServer, Fail, Text, ToolCall

    with AnthropicServer([ToolCall("Write", {"file_path": str(wd / "hello.py"), "content": "x"}),
                          "Done."]) as server:
        env = server.claude_code_env(tmp_path / "home")   # offline Claude Code, temp config
        ...run the agent with that env...
        assert server.model_requests[0].contains("Write hello.py")

Provider-neutral turn types are in `script`, the HTTP base in `server` (its docstring says how
to add a provider), the Anthropic Messages API in `anthropic`.
"""

from __future__ import annotations

from orchestrator.testing.anthropic import AnthropicServer, tool_result_text, tool_results
from orchestrator.testing.script import Fail, McpCall, RecordedRequest, Reply, Stall, Text, ToolCall
from orchestrator.testing.server import ScriptedServer

__all__ = [
    "AnthropicServer",
    "Fail",
    "McpCall",
    "RecordedRequest",
    "Reply",
    "ScriptedServer",
    "Stall",
    "Text",
    "ToolCall",
    "tool_result_text",
    "tool_results",
]
