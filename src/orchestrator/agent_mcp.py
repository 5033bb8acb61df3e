"""The MCP server each attempt offers its agent (stdio, the official `mcp` SDK): `ask_human` and
`report_status`, so any agent that speaks MCP (Claude Code, Codex, Gemini CLI) asks a person in
structure instead of prose.

    python -m orchestrator.agent_mcp --socket /tmp/orch-ask-XXXX/s

The agent CLI starts this process as its own child, so a call goes back to the orchestrator over
the attempt's channel (`agents/human_tool.py`): a Unix socket in a private folder, one connection
per call, one JSON line each way — `{"tool": "ask_human", "args": {...}}` out, `{"text": "..."}`
back. With a human present the answer comes back as the tool's result and the agent goes on in
the same session; otherwise the result tells the agent to stop, and the session is resumed with
the answer later.

This module imports only the standard library at load time (the SDK itself costs ~1.5 s to
import, once, when the server starts); the orchestrator process never imports the SDK for it.
"""

from __future__ import annotations

import argparse
import json
import socket
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

SERVER_NAME = "orchestrator"
"""The server's name in every agent's MCP configuration (no underscore: Gemini CLI names its
tools `mcp_<server>_<tool>` and splits at the first underscore)."""
TOOLS = ("ask_human", "report_status")
STATUSES = ("completed", "blocked", "failed")
INSTRUCTIONS = (
    "The orchestrator runs this coding session. Call ask_human when a decision needs a person "
    "(never guess); call report_status once at the end with completed, blocked or failed."
)

CategoryArg = Literal["ambiguous_requirements", "extreme_destructive", "external_service"]
StatusArg = Literal["completed", "blocked", "failed"]


def call(path: str, tool: str, args: dict[str, Any]) -> str:
    """One call over the attempt's channel: the request line out, the answer's text back. No
    timeout: a person may take hours, and the agent's own tool timeout is set to match."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(json.dumps({"tool": tool, "args": args}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    if not data.strip():
        raise RuntimeError("the orchestrator closed the channel without an answer")
    reply = json.loads(data)
    if reply.get("error"):
        raise RuntimeError(str(reply["error"]))
    return str(reply.get("text") or "")


def build_server(path: str) -> MCPServer:
    from mcp.server.mcpserver import MCPServer

    server: MCPServer = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")

    def ask_human(
        question: str,
        options: list[str] | None = None,
        recommendation: str | None = None,
        category: CategoryArg | None = None,
        why: str | None = None,
    ) -> str:
        """Ask a human a decision you must not guess (an unclear requirement, a destructive step,
        a missing credential or account). `question`: one clear question. `options`: the short
        choices, if any. `recommendation`: the option you would pick. `category`:
        ambiguous_requirements, extreme_destructive or external_service. `why`: one sentence on
        why a person is needed. The result is the human's answer, or tells you to stop and wait."""
        args = {
            "question": question,
            "options": list(options or []),
            "recommendation": recommendation,
            "category": category,
            "why": why,
        }
        return call(path, "ask_human", args)

    def report_status(status: StatusArg, summary: str) -> str:
        """Report how the task ended, once, as your last action: `completed` (done and checked),
        `blocked` (you cannot go on without a person; say what is needed) or `failed` (you tried
        and could not). `summary`: a few sentences on what you did and what is left."""
        return call(path, "report_status", {"status": status, "summary": summary})

    for fn in (ask_human, report_status):  # descriptions as one line each, as models read them
        text = " ".join((fn.__doc__ or "").split())
        server.add_tool(fn, name=fn.__name__, description=text, structured_output=False)
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m orchestrator.agent_mcp")
    parser.add_argument("--socket", required=True, help="the attempt's channel (a Unix socket)")
    args = parser.parse_args(argv)
    build_server(args.socket).run("stdio")


if __name__ == "__main__":
    main()
