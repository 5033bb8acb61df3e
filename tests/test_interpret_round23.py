"""Round 23 (issue 11), one behaviour each, on invented text. Written on the realistic set
`styles24` (Copilot, Cursor, Cline, Roo, OpenHands, Goose, OpenCode and Amp in their own output
shapes) after it was scored once: the platform's own error lines these CLIs print."""

from __future__ import annotations

from tests.corpus_cases import first_attempt

from orchestrator.interpret.structured import unwrap
from orchestrator.rules.platform import find_platform_error


def outcome(text: str) -> str:
    return str(first_attempt(text).outcome)


def test_a_cli_error_line_saying_rate_limited_waits_for_the_named_reset() -> None:
    text = (
        "[amp] ✓ Edit  api/openapi.yaml  (+190 -0)\n\n"
        "Error: Rate limited. You have sent too many requests in a short period.\n"
        "Try again in 4 minutes.\n"
    )
    err = find_platform_error(text)
    assert err is not None and err.kind == "rate_limit"
    assert outcome(text) in ("wait", "backoff")


def test_hitting_the_rate_limit_for_a_model_is_a_rate_limit() -> None:
    text = (
        "Editing reports/generators/sales.py\n\n"
        "Error: You've hit the rate limit for sonnet-4.5 on your current plan.\n"
        "Try again in about 20 minutes, or switch to Auto to keep going now.\n"
    )
    err = find_platform_error(text)
    assert err is not None and err.kind == "rate_limit"
    assert outcome(text) in ("wait", "backoff")


def test_copilots_usage_footer_does_not_hide_the_error_above_it() -> None:
    text = (
        "✓ Edit pkg/rpc/interceptors.go (+19 -4)\n\n"
        "✗ Error: Sorry, you've hit a rate limit that restricts the number of\n"
        "  Copilot model requests you can make within a specific time period.\n"
        "  Please try again in 37 minutes.\n"
        "  (Request ID: 7C1E:3F0A:11B2D4)\n\n"
        "Total usage est:       1 Premium request\n"
        "Total duration (API):  22s\n"
        "Total duration (wall): 41s\n"
        "Total code changes:    19 lines added, 4 lines removed\n"
        "Usage by model:\n"
        "    claude-sonnet-4.5    61.4k input, 1.2k output, 40.0k cache read\n"
    )
    err = find_platform_error(text)
    assert err is not None and err.kind == "rate_limit"
    assert outcome(text) in ("wait", "backoff")


def test_a_cli_whose_session_expired_needs_the_person_to_sign_in() -> None:
    text = (
        "Reading package.json\nReading .eslintrc.cjs\n\n"
        "Error: Authentication required. Your session has expired or was revoked.\n\n"
        "Please run `cursor-agent login` to sign in again, or set CURSOR_API_KEY for\n"
        "non-interactive use.\n"
    )
    err = find_platform_error(text)
    assert err is not None and err.kind == "authentication"
    d = first_attempt(text)
    assert d.outcome == "escalate" and d.escalation is not None
    assert d.escalation.category == "external_service"


def test_a_headless_max_turns_record_is_read_alone_not_with_the_paths_above_it() -> None:
    text = (
        '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"edit_file",'
        '"input":{"path":"src/billing/period.ts"}}]}}\n'
        '{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":80,'
        '"error":"Maximum number of turns (80) reached"}\n'
    )
    err = find_platform_error(text)
    assert err is not None and err.kind == "max_turns"
    assert outcome(text) == "retry"


def test_an_app_answering_authentication_required_is_no_platform_error() -> None:
    text = (
        "✓ Edit src/middleware/auth.ts\n"
        "The middleware now answers 401 with the body 'Authentication required' when the\n"
        "header is missing, and rate limited clients get a Retry-After; tests pass (14 passed).\n"
    )
    assert find_platform_error(text) is None
    assert outcome(text) == "complete"


RUNNER_REPORT = """
── runner ──
exit code:   1
duration:    5m 07s
edits:       cli/build.js, lib/watch.js (new) — not run, not tested
pending:     partial-dependency map in lib/pages.js, tests, README section
note:        each request in this session was ~27k tokens, so consecutive calls collide.
Design notes the agent wrote before the limit:
  - debounce file events by 100 ms so editors that write twice don't trigger two rebuilds
  - on partial change, rebuild every page whose dependency set includes the partial
  - on config change, do a full rebuild
"""


def test_a_platform_error_above_a_runners_report_of_a_failed_run_is_where_it_ended() -> None:
    text = (
        "[cline] Edit lib/watch.js\n"
        "API Request Failed\n"
        '  429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would '
        'exceed the rate limit for your organization of 30,000 input tokens per minute."}}\n'
        "Auto-retrying in 29 seconds... (attempt 3 of 3)\n"
        "API Request Failed\n"
        "  429 rate_limit_error (input tokens per minute)\n\n"
        "Task ended: API request failed after 3 retries.\n" + RUNNER_REPORT
    )
    assert outcome(text) in ("wait", "backoff")


def test_a_platform_error_the_run_got_past_is_not_read_through_a_report() -> None:
    text = (
        "API Error (529 Overloaded) · retrying in 2s (attempt 1/10)\n"
        "✓ Edit lib/watch.js\n✓ Bash npm test\n  Tests  41 passed (41)\n\n"
        "The watcher now rebuilds only the pages whose partials changed; all tests pass.\n"
        + RUNNER_REPORT.replace("exit code:   1", "exit code:   0")
    )
    assert outcome(text) == "complete"


def test_the_agents_own_count_short_of_the_total_is_no_finished_work() -> None:
    text = (
        "✓ Edit src/cart/discounts.ts\n✓ Edit src/cart/discounts.test.ts\n\n"
        "The stacking rules are implemented and the checkout page shows the combined discount.\n\n"
        "**Tests**: 116 of 118 pass.\n**Lint**: clean.\n"
    )
    assert outcome(text) == "retry"


def test_dbt_progress_lines_are_no_count_of_passes() -> None:
    text = (
        "17:41:09  14 of 16 PASS not_null_mart_customer_churn_customer_id ...... [PASS in 0.33s]\n"
        "17:41:10  16 of 16 PASS assert_churn_flag_consistent .................. [PASS in 0.52s]\n"
        "17:41:10  Completed successfully\n\n"
        "The churn models are built and all 16 nodes passed.\n"
    )
    assert outcome(text) == "complete"


def test_a_plan_that_waits_for_the_persons_go_ahead_or_pick_escalates() -> None:
    plan = (
        "## Plan\n1. Bump Django to 4.2 and fix the three deprecations.\n"
        "2. Set CSRF_TRUSTED_ORIGINS from the list below.\n\n"
    )
    for last in (
        "I'll wait for your go-ahead (and the origin list) before starting.",
        "No code changes yet. Once you pick an option I expect about half a day including tests.",
    ):
        assert outcome(plan + last + "\n") == "escalate", last


def test_a_runners_bare_red_summary_after_the_claim_is_a_failure() -> None:
    claim = "The date picker is migrated and the booking flow is ready.\n\n"
    for tail in (
        "✓ Bash    pnpm -F web e2e -- booking\n\n  ✘  2 [chromium] › booking.spec.ts:34:5\n"
        "  2 failed\n  5 passed (40.9s)\n",
        "Roo wants to execute this command:\n  pnpm -r typecheck\n"
        "  packages/app typecheck: src/lib/dates.ts(14,10): error TS2305: no exported member.\n"
        "  packages/app typecheck: Found 1 error in 1 file.\n"
        "   ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  packages/app typecheck: `tsc --noEmit`\n"
        "  Exit status 2\n",
    ):
        assert outcome(claim + tail) == "retry", tail


def test_a_sentence_saying_nothing_failed_is_no_red_summary() -> None:
    text = "The flaky retry is gone; across 20 runs 0 failed.\n\nAll 48 tests pass.\n"
    assert outcome(text) == "complete"


OPENHANDS_END = (
    "{t} - openhands:ERROR: agent_controller.py:318 - [Agent Controller 0f3a] Error while running "
    "the agent: {error}\n"
    "{t} - openhands:INFO: agent_controller.py:644 - [Agent Controller 0f3a] Setting "
    "agent(CodeActAgent) state from AgentState.RUNNING to AgentState.ERROR\n"
    "{t} - openhands:INFO: main.py:286 - Agent finished. Final state: AgentState.ERROR\n\n"
    "=== run summary (resolver wrapper) ===\nissue: #214\nbranch: openhands-fix-issue-214\n"
)


def test_openhands_ending_in_its_error_state_failed_whatever_was_said_before() -> None:
    before = "Agent: I switched the limiter to a sliding window and the tests pass.\n"
    for error, expected in (
        ("AgentStuckInLoopError: Agent got stuck in a loop", ("retry",)),
        (
            "RuntimeError: Agent reached maximum iteration in headless mode. Current iteration: "
            "100, max iteration: 100",
            ("retry",),
        ),
        (
            "litellm.ServiceUnavailableError: AnthropicException - 503 Service Unavailable",
            ("backoff", "wait", "retry"),
        ),
    ):
        text = before + OPENHANDS_END.format(t="07:12:55", error=error)
        assert outcome(text) in expected, error


def test_opencode_json_events_are_read_as_its_console() -> None:
    events = [
        '{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}',
        '{"type":"tool_use","sessionID":"ses_1","part":{"type":"tool","tool":"bash","state":'
        '{"status":"completed","input":{"command":"go test ./api/..."},"output":"--- FAIL: '
        'TestWriteError (0.00s)\\nFAIL\\tgithub.com/example/app/api\\t0.014s\\n"}}}',
        '{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"Added '
        '`ERROR_QUOTA_EXCEEDED` (HTTP 429) to the error code table; go test passes."}}',
        '{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"stop"}}',
    ]
    shown = unwrap("\n".join(events))
    assert "⏺ Bash(go test ./api/...)" in shown and "--- FAIL: TestWriteError" in shown
    assert "⏺ Added `ERROR_QUOTA_EXCEEDED`" in shown
    d = first_attempt("\n".join(events))
    assert d.outcome != "escalate"  # the code it wrote names a quota: no quota trouble
