"""The brain on the model API refusing the request itself (issue 11): once is an ordinary
failure; the same refusal in two attempts in a row, or the context running out twice, means the
next attempt would send the same request, so a person has to change something."""

from __future__ import annotations

from orchestrator.brain import Brain, RetryDecision

BAD_REQUEST = (
    'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
    '"messages.12: `tool_use` ids were found without `tool_result` blocks"},"request_id":"req_%d"}'
)


def decide(history: list[str]) -> RetryDecision:
    return Brain(backend="rules").should_retry_or_escalate(
        task_id="2.1",
        task_title="Wire the importer",
        attempt_history=history,
        attempt_count=len(history),
    )


def test_one_refusal_of_the_request_is_retried() -> None:
    assert decide([BAD_REQUEST % 1]).decision == "retry"


def test_the_same_refusal_twice_escalates_even_when_its_ids_differ() -> None:
    d = decide(
        ["FAILED test_import.py::test_rows - KeyError: 'id'", BAD_REQUEST % 1, BAD_REQUEST % 2]
    )
    assert (d.decision, d.category) == ("escalate", None)
    assert "refused the request itself with the same status (400)" in d.reason


def test_a_404_twice_is_the_remote_services_setting() -> None:
    page = "Error: 404 404 page not found\n    at generate (cli.js:11:53269)"
    d = decide([page, page])
    assert (d.decision, d.category) == ("escalate", "external_service")


def test_different_refusals_are_no_loop() -> None:
    d = decide([BAD_REQUEST % 1, "Error: 404 404 page not found"])
    assert d.decision == "retry"


def test_running_out_of_context_twice_escalates() -> None:
    d = decide(
        [
            'Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
            '"prompt is too long: 205030 tokens > 200000 maximum"}}',
            "/compact\n  ⎿ Error: Error during compaction: Error: Conversation too long. Press esc "
            "to go up a few messages and try again.",
        ]
    )
    assert d.decision == "escalate"


def test_a_credit_refusal_keeps_its_own_category() -> None:
    credit = (
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
        '"Your credit balance is too low to access the Anthropic API."}}'
    )
    d = decide([credit, credit])
    assert (d.decision, d.category) == ("escalate", "external_service")


def test_a_rate_limit_that_resets_within_minutes_is_retried() -> None:
    limit = (
        "> litellm.RateLimitError: GroqException - Rate limit reached for model `llama3-70b` on "
        "tokens per minute (TPM): Limit 6000, Used 4187, Requested 5830. Please try again in "
        "40.165s. Need more tokens? Upgrade at https://console.example.com/settings/billing"
    )
    d = decide([limit, limit, limit])
    assert d.decision == "retry"


FAILING_TEST = (
    "--- FAIL: TestTransferIdempotent (0.14s)\n    store_test.go:41: got 2 rows, want 1\nFAIL"
)


def test_a_usage_window_that_resets_within_hours_is_waited_for() -> None:
    for limit in (
        "■ You've hit your usage limit. Try again in 9 minutes.",
        '{"type":"error","message":"You\'ve hit your usage limit. Try again in 2 hours 10 minutes."}',
    ):
        d = decide([FAILING_TEST, limit])
        assert d.decision == "retry", limit
        assert "resets in" in d.reason and d.guidance_for_retry


def test_a_session_limit_that_resets_at_a_clock_time_is_waited_for_whatever_the_hour() -> None:
    # a clock time with no date is less than a day away, whatever the hour the rules run at
    limit = (
        "● Update(app/api/exports.py)\n  ⎿  You've hit your limit · resets 4:10pm (Europe/Lisbon)"
    )
    assert decide([FAILING_TEST, limit]).decision == "retry"


def test_a_usage_limit_days_away_asks_the_person() -> None:
    for limit in (
        "■ You've hit your usage limit. Try again in 4 days 3 hours.",
        "You have reached your weekly usage limit · resets 3pm",
        "Error: You've hit your usage limit\nYour team's included usage for this billing cycle "
        "is used up. Usage resets on Aug 14.\nFailed: cursor-agent exited 1 after 3s",
    ):
        d = decide([FAILING_TEST, limit])
        assert (d.decision, d.category) == ("escalate", "external_service"), limit
    from orchestrator.rules.reset_time import delay_named

    # only a delay said of the reset counts, not the runner's timing
    assert delay_named("resets 3am") is None and delay_named("limit reached|1750000000") is None
    assert delay_named("Failed: cursor-agent exited 1 after 3s") is None
    assert delay_named("Try again in 9 minutes.") == 540.0


def test_a_per_minute_quota_with_billing_advice_is_a_rate_limit() -> None:
    from orchestrator.rules.platform import kind_of

    message = (
        "429 You exceeded your current quota, please check your plan and billing details. "
        '"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"'
    )
    assert kind_of(message) == "rate_limit"
    # a free tier whose limit is 0 never refills: the account must change
    assert kind_of(message + ', "quotaValue": "limit: 0"') != "rate_limit"


def test_a_link_is_no_message() -> None:
    from orchestrator.rules.platform import kind_of

    assert kind_of(
        "Rate limit reached. Upgrade at https://console.example.com/settings/billing"
    ) == ("rate_limit")
    assert kind_of("Request too large for model `llama3-70b` on tokens per minute") == "permission"


def test_a_429_whose_body_says_no_credit_is_billing_not_a_rate_limit() -> None:
    retries = "\n".join(
        f"[2024-11-04T01:03:{30 + k}] stream error: unexpected status 429 Too Many Requests: "
        '{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}; '
        f"retrying {k}/5 in 400ms…"
        for k in range(1, 6)
    )
    latest = retries + "\n[2024-11-04T01:03:51] ERROR: exceeded retry limit, last status: 429"
    d = decide([FAILING_TEST, latest])
    assert (d.decision, d.category) == ("escalate", "external_service")
    # retries of a plain rate limit under the same closing line stay a rate limit, retried once
    plain = latest.replace(
        '{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}', ""
    )
    assert decide([FAILING_TEST, plain]).decision == "retry"
