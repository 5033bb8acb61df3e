"""`orchestrator serve`: the web page to see every run and answer from anywhere (a phone, another
machine), over the same store and `orchestrator.api` as the CLI. `create_app` builds the ASGI app
(with `extra_mounts`, e.g. the MCP server at `/mcp`); `server.serve` runs it."""
