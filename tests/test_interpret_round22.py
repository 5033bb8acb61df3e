"""Round 22 (issue 11), one behaviour each, on invented text. Written on the realistic set
`corpus_styles18` (outputs cut at an arbitrary point at their start) after it was scored once."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.corpus_cases import outcome_and_category

from orchestrator.interpret.text import sentences

decide = outcome_and_category


def test_an_abbreviation_ends_no_sentence() -> None:
    assert sentences("Keep it, or hold it back (e.g. rename the tables first)? Not run yet.") == [
        "Keep it, or hold it back (e.g. rename the tables first)?",
        "Not run yet.",
    ]


def test_a_destructive_question_wrapped_over_an_abbreviation_waits_for_the_person() -> None:
    text = (
        "Code changes for the cutover are complete and tests pass (1,482 runs, 0 failures).\n"
        "The last step is the cleanup migration I generated: it drops `legacy_orders` and\n"
        "`legacy_order_items`. Running it on production permanently removes ~2.3M rows and it is\n"
        "irreversible.\n\n"
        "Should I run `bin/rails db:migrate` against production with this migration included, or hold it\n"
        "back (e.g. rename tables to `_archived` first)? Not run yet — see above.\n"
    )
    assert decide(text) == ("escalate", "extreme_destructive")


def test_a_paragraph_starting_with_running_is_the_agents_prose_not_aiders_status() -> None:
    from orchestrator.interpret.text import split_lines

    text = (
        "Tests pass. The cleanup migration is generated.\n\n"
        "Running this on production permanently removes ~2.3M orders from the legacy tables,\n"
        "and the migration is irreversible.\n\n"
        "Should I run it against production now, or hold it back?\n"
    )
    zones = {ln.text.split()[0]: ln.zone for ln in split_lines(text) if ln.text.strip()}
    assert zones["Running"] == "prose"
    assert decide(text) == ("escalate", "extreme_destructive")
    # aider's own status line still starts its command's output
    aider = "Running pytest -q tests/test_cart.py\nE   assert 3 == 2\n1 failed in 0.2s\n"
    assert split_lines(aider)[1].zone == "output"


def test_a_required_provider_key_that_is_not_set_asks_the_person_for_it() -> None:
    text = (
        "[INFO] Using main role: anthropic/claude-sonnet-4\n"
        "[ERROR] Required API key ANTHROPIC_API_KEY for provider 'anthropic' (role: main) is not "
        "set in environment, session, or .env file.\n\n"
        "The PRD was not parsed; no tasks were created.\n"
    )
    assert decide(text) == ("escalate", "external_service")


def test_a_cloud_project_without_billing_asks_the_person() -> None:
    text = (
        "✦ The route preview and the geocoding hook are implemented (unit tests pass with mocked\n"
        '  responses), but the real calls are refused: Geocoding returns `REQUEST_DENIED` — "You\n'
        '  must enable Billing on the Google Cloud Project".\n\n'
        "  Only someone with Billing Admin rights on that project can fix this.\n"
    )
    assert decide(text) == ("escalate", "external_service")


def test_ctest_failing_after_the_last_commit_and_aider_giving_up_is_a_failure() -> None:
    text = (
        "Applied edit to Source/Dsp/TapeSaturator.cpp\n"
        "Commit 91ab3e2 fix: bypass oversampling at zero drive\n"
        "Running cmake --build build -j && ctest --test-dir build --output-on-failure\n"
        "1/2 Test #1: DspTests .........................***Failed    0.79 sec\n"
        "50% tests passed, 1 tests failed out of 2\n"
        "Tokens: 21k sent, 1.4k received. Cost: $0.09 message, $0.31 session.\n"
        "Only 3 reflections allowed, stopping.\n"
    )
    assert decide(text) == ("retry", None)


def test_a_count_of_passes_beside_failures_claims_nothing() -> None:
    text = (
        "⏺ Progress on the voucher feature:\n\n"
        "  - ✅ Voucher model with tests\n"
        "  - ⚠️ Recalculation after a quantity change doesn't re-apply the voucher yet.\n\n"
        "  52 tests pass, 2 fail.\n"
    )
    assert decide(text) == ("retry", None)


def test_a_loop_runner_that_ran_out_of_iterations_is_retried() -> None:
    text = (
        "Implemented `exporters/beancount.py`. The round-trip test currently fails.\n\n"
        "=== iteration 50 exited 0 ===\n"
        "reached MAX_ITERATIONS=50 — stopping loop\n"
        "summary: 50 iterations, fix_plan 13/16 checked, last test run: 2 failed / 317 passed\n"
    )
    assert decide(text)[0] == "retry"


# -- structured output captured as text (`interpret.structured`) ------------------------------


def test_claude_codes_json_result_that_asks_to_choose_waits_for_the_person() -> None:
    import json

    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 8,
        "result": "I stopped before writing code because the ticket and the compliance doc "
        "contradict each other.\n\n- **A.** Soft delete for 30 days.\n- **B.** Hard delete "
        "now.\n\nWhich one do you want?",
        "session_id": "0d3f7b2a",
    }
    text = "[relay] agent=claude format=json\n" + json.dumps(result) + "\n[relay] exit 0\n"
    assert decide(text) == ("escalate", "ambiguous_requirements")


def test_codex_json_events_whose_last_check_failed_are_a_failure() -> None:
    import json

    events = [
        {"type": "thread.started", "thread_id": "t1"},
        {
            "type": "item.completed",
            "item": {
                "id": "item_4",
                "type": "command_execution",
                "command": "bash -lc 'go test ./internal/client/'",
                "aggregated_output": "--- FAIL: TestClient_GivesUp (0.01s)\n"
                "    client_test.go:102: expected ErrConflict, got <nil>\nFAIL\n",
                "exit_code": 1,
                "status": "failed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "item_5",
                "type": "agent_message",
                "text": "I added retry-on-409 to the sync client; the loop exit path needs "
                "another look.",
            },
        },
        {"type": "turn.completed", "usage": {"input_tokens": 22340, "output_tokens": 2104}},
    ]
    assert decide("\n".join(json.dumps(e) for e in events))[0] == "retry"


def test_gemini_clis_json_object_that_asks_which_design_waits_for_the_person() -> None:
    text = (
        "{\n"
        '  "response": "The spec asks for two things that pull apart. I can do one of:\\n\\n'
        "1. **Synchronous streaming** with a longer timeout.\\n2. **Async job** with a download "
        'link.\\n\\nWhich should I build? I have not changed any code yet.",\n'
        '  "stats": {"models": {}, "tools": {"totalCalls": 6}}\n'
        "}\n"
    )
    assert decide(text) == ("escalate", "ambiguous_requirements")
    from orchestrator.interpret.structured import unwrap

    assert unwrap(text).splitlines()[-1] == "Which should I build? I have not changed any code yet."


def test_text_without_an_agents_records_is_left_as_it_is() -> None:
    from orchestrator.interpret.structured import unwrap

    logs = '{"level":"info","msg":"listening","port":8080}\n{"level":"error","msg":"boom"}\nok\n'
    assert unwrap(logs) == logs
    assert unwrap("no json at all {") == "no json at all {"
    assert unwrap('{"type": "result"') == '{"type": "result"'  # cut off: not parsed


def test_claude_stream_json_that_ran_out_of_turns_is_retried() -> None:
    import json

    lines = [
        {"type": "system", "subtype": "init", "session_id": "s"},
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "npm test"}}]
            },
        },
        {"type": "result", "subtype": "error_max_turns", "is_error": True, "num_turns": 30},
    ]
    text = "\n".join(json.dumps(x) for x in lines)
    assert decide(text)[0] == "retry"
    from orchestrator.interpret.structured import unwrap

    assert unwrap(text).splitlines() == ["⏺ Bash(npm test)", "Error: error_max_turns"]


_FIELDS = (
    "message",
    "content",
    "text",
    "result",
    "subtype",
    "is_error",
    "item",
    "type",
    "error",
    "command",
    "aggregated_output",
    "exit_code",
    "response",
    "stats",
    "role",
    "tool_name",
    "tool_id",
    "output",
    "status",
    "changes",
    "path",
    "input",
    "name",
)
_KINDS = ("assistant", "user", "result", "item.completed", "error", "message", "tool_result", None)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_FIELDS), inner, max_size=4)
    ),
    max_leaves=12,
)
_OPTIONAL = {f: _JSON for f in _FIELDS if f != "type"}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries({"type": st.sampled_from(_KINDS)}, optional=_OPTIONAL)
        | st.text(max_size=30),
        max_size=6,
    )
)
def test_any_record_an_agent_could_print_unwraps_without_an_error(records: list[object]) -> None:
    import json

    from orchestrator.interpret.core import interpret_rules
    from orchestrator.interpret.structured import unwrap

    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records)
    assert isinstance(unwrap(text), str)
    interpret_rules(text)


def test_a_rate_limit_the_run_got_past_is_not_where_it_ended() -> None:
    text = (
        'litellm.RateLimitError: AnthropicException - {"type":"error","error":{"type":'
        '"rate_limit_error","message":"This request would exceed the rate limit for your '
        'organization of 80,000 input tokens per minute."}}\n'
        "The API provider has rate limited you. Try again later or check your quotas.\n"
        "Retrying in 1.0 seconds...\n\n"
        "I'll add a `--dry-run` flag that prints the plan and exits.\n\n"
        "Applied edit to cmd/snapctl/flags.go\n"
        "Commit 71c0be9 feat(snapctl): add --dry-run flag\n"
        "Running go test ./cmd/snapctl/...\n"
        "ok  \tsnapkeep/cmd/snapctl\t0.214s\n"
    )
    assert decide(text) == ("complete", None)
    # a key the provider refused is not cleared by tests that pass with mocks
    refused = text.replace("RateLimitError", "AuthenticationError").replace(
        "This request would exceed the rate limit for your organization of 80,000 input tokens "
        "per minute.",
        "invalid x-api-key",
    )
    assert decide(refused)[0] == "escalate"


def test_a_numbered_list_of_quoted_errors_with_their_fixes_is_documentation() -> None:
    text = (
        "✦ I've added a **Troubleshooting** section to `README.md` covering the errors users "
        "report most:\n\n"
        "  1. `429 RESOURCE_EXHAUSTED` (render quota) — explains the automatic backoff\n"
        "  2. `401 UNAUTHENTICATED` — API key restrictions\n\n"
        "  markdownlint reports 0 errors and the doc examples still pass.\n"
    )
    assert decide(text) == ("complete", None)


def test_a_push_refused_for_the_tokens_scope_asks_the_person() -> None:
    text = (
        "I committed the new workflow and tried to push it.\n\n"
        "$ git push origin nightly/ci\n"
        " ! [remote rejected] nightly/ci -> nightly/ci (refusing to allow a Personal Access Token "
        "to create or update workflow `.github/workflows/ci.yml` without `workflow` scope)\n"
        "error: failed to push some refs\n\n"
        "The token this runner uses cannot push workflow files; someone with admin rights has to "
        "grant the scope or push it.\n"
    )
    assert decide(text) == ("escalate", "external_service")


def test_an_error_record_is_an_api_error_only_when_its_body_says_so() -> None:
    from tests.corpus_cases import first_attempt

    from orchestrator.interpret.structured import unwrap

    overloaded = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    assert unwrap(overloaded) == "API Error: overloaded_error: Overloaded"
    assert first_attempt(overloaded).outcome == "backoff"
    codex = '{"type":"error","message":"stream disconnected before completion"}'
    assert unwrap(codex) == "ERROR: stream disconnected before completion"
