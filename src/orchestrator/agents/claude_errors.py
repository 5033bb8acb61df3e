"""Claude Code's errors: its structure (a rejected rate-limit event, the result's subtype and API
status, the assistant message's error code) translated into a `rules.platform` kind, the result's
error text, and a crash of the SDK or the binary in one line.

`error_max_turns` is the `max_turns` kind (retried with guidance). `error_during_execution` says
only that the session broke: its `errors` name the kind when they are an API error, else the
attempt is an ordinary failure (counted, judged by the ladder). `error_max_budget_usd` is not a
platform error: the adapter asks about the budget itself."""

from __future__ import annotations

from typing import Any

from orchestrator.rules.platform import PlatformError, kind_of, kind_of_status, reset_time

ERROR_KINDS = {
    "authentication_failed": "authentication",
    "billing_error": "billing",
    "rate_limit": "rate_limit",
    "server_error": "server_error",
}
"""The SDK's assistant-message `error` codes → `rules.platform` kinds."""


def platform_error(
    r: Any, text: str, code: str | None, limit: dict[str, Any] | None
) -> PlatformError | None:
    """Claude Code's structure → a platform error: a rejected rate-limit event (a plan's usage
    limit, with its reset), the result's `error_max_turns`, its API status, the assistant
    message's error code; the message only names the kind when the structure does not, and
    the reset time when it says one ("Please try again in 2 seconds")."""
    status = getattr(r, "api_error_status", None)
    if limit is not None:
        limited = "usage_limit" if limit.get("rate_limit_type") else "rate_limit"
        at = limit.get("retry_at")
        return PlatformError(limited, text, at, status, "claude rate_limit_event", "Claude Code")
    kind: str | None = None
    if getattr(r, "subtype", "") == "error_max_turns":
        kind = "max_turns"
    else:
        kind = kind_of_status(status) or ERROR_KINDS.get(code or "") or kind_of(text)
    if kind is None:
        return None
    return PlatformError(kind, text, reset_time(text), status, "claude result", "Claude Code")


def result_error_text(r: Any) -> str:
    if r is None:
        return ""
    errors = [e for e in (getattr(r, "errors", None) or []) if isinstance(e, str) and e.strip()]
    if errors:
        return "; ".join(errors)
    if getattr(r, "is_error", False) and getattr(r, "result", None):
        return str(r.result)
    subtype = str(getattr(r, "subtype", "") or "")
    return subtype if subtype and subtype != "success" else ""


def is_exit_after_result(e: BaseException) -> bool:
    from claude_agent_sdk import ProcessError

    return isinstance(e, ProcessError)


def crash_message(e: BaseException, stderr: list[str]) -> str:
    from claude_agent_sdk import CLINotFoundError

    if isinstance(e, CLINotFoundError):
        return f"Claude Code binary not found ({e}); reinstall claude-agent-sdk or set cli_path"
    if "No conversation found with session ID" in str(e):
        return (
            f"cannot resume the Claude Code session: {str(e).strip().splitlines()[0]} "
            "(sessions are kept per workdir under CLAUDE_CONFIG_DIR); start a fresh attempt"
        )
    tail = " | ".join(line.strip() for line in stderr[-5:] if line.strip())
    text = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    if "root/sudo" in tail or "root/sudo" in str(e):
        text += " — as root, set IS_SANDBOX=1 or use permission_mode=default"
    return f"{text} [{tail}]" if tail else text
