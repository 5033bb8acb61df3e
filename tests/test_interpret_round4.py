"""Fourth round of general mechanisms for real outputs (issue 11), one behaviour each, on invented
text: a tool's own status in an export is not the agent's, and an output that stops right after
announcing its next step is unfinished whatever it claimed before."""

from __future__ import annotations

from orchestrator.interpret import interpret


def test_a_tool_records_status_in_an_export_is_no_verdict() -> None:
    out = interpret(
        '<tool-use data-tool-type="write" data-tool-name="edit_file"><details>\n'
        "<summary>Tool use: **edit_file**</summary>\n\n"
        "Status: **completed**\n\n"
        "</details>\n</tool-use>\n\n"
        "---\n\n"
        "The form still drops the second field. Let me check the handler next:\n"
    )
    assert out.verdict == "failed"
    # the agent's own STATUS line is still a marker
    assert interpret("Added the handler and its tests.\n\nSTATUS: completed\n").verdict == (
        "completed"
    )


def test_ending_on_an_announced_step_is_unfinished() -> None:
    out = interpret(
        "Great! All tests are now passing.\n\n"
        "```\n===== 49 passed in 1.14s =====\n```\n\n"
        "---\n\n"
        "Let's update the README to document the new detection feature:\n\n"
        "---\n\n"
        "Read file: README.md\n\n"
        "---\n"
    )
    assert out.verdict == "failed"
    # the same claims with a closing summary are finished work
    done = interpret(
        "Great! All tests are now passing.\n\n"
        "```\n===== 49 passed in 1.14s =====\n```\n\n"
        "I've updated the README to document the new detection feature.\n"
    )
    assert done.verdict == "completed"
    # "let me know" is no step of the agent's
    assert interpret("I've added the flag and its test. Let me know:").verdict == "completed"


def test_a_platform_notice_glued_to_the_agents_sentence_is_read_on_its_own() -> None:
    from orchestrator.rules.platform import find_platform_error

    text = (
        "Let's update the parser with better error handling: Copilot has been working on this "
        "problem for a while. It can continue to iterate, or you can send a new message to refine "
        "your prompt.\n"
    )
    found = find_platform_error(text)
    assert found is not None and found.kind == "max_turns"
    # a sentence about handling such errors is still not one
    assert find_platform_error("The client now retries on 429 Too Many Requests.\n") is None


def test_an_http_status_with_its_reason_phrase_is_the_platforms_error() -> None:
    from orchestrator.rules.platform import find_platform_error

    found = find_platform_error(
        'got status: 429 Too Many Requests. {"error":{"message":"exception parsing response"}}\n'
    )
    assert found is not None and found.kind == "rate_limit"


def test_a_harness_banner_in_chinese_ends_the_run() -> None:
    out = interpret("我已经读取了目录。\n\n模型响应不完整\n模型在响应中未使用任何工具。\n")
    assert out.verdict == "failed"


def test_an_offer_with_a_second_option_before_any_work_asks_to_choose() -> None:
    out = interpret(
        "The plan is a good blueprint; the type mapping and the constraint handling are solid.\n\n"
        "Would you like me to prioritize implementing specific parts of this plan first, or would "
        "you prefer I provide a more detailed breakdown of a particular section?"
    )
    assert out.verdict == "needs_human"
    # "... or help with anything else?" is one offer, not two options
    assert (
        interpret(
            "The dev server is starting in the background on port 3000.\n\n"
            "Would you like me to verify that it runs or help you with anything else?"
        ).verdict
        != "needs_human"
    )


def test_information_asked_for_as_the_condition_of_the_next_step_is_a_request() -> None:
    out = interpret(
        "The bars may be misaligned because of how the timestamps are read.\n\n"
        "1. They might be seconds, not milliseconds.\n2. The market opens at 9:15.\n\n"
        "If you can provide a sample of the actual timestamp values, I can write a more precise "
        "fix for the resampling function."
    )
    assert out.verdict == "needs_human"
    # after finished work the same sentence is a follow-up offer
    done = interpret(
        "I've fixed the resampling and all 14 tests pass.\n\n"
        "If you can share more sample data, I can add further test cases."
    )
    assert done.verdict == "completed"


def test_code_the_agent_proposes_is_no_failed_run() -> None:
    out = interpret(
        "We could detect the source library from the type itself. Here's how:\n\n"
        "```python\n"
        "def detect(t):\n"
        '    """Raises:\n'
        "    ValueError: If the library cannot be determined\n"
        '    """\n'
        "    raise ValueError(t)\n"
        "```\n\n"
        "This keeps the explicit form working. Would you like me to implement this enhancement?"
    )
    assert out.verdict == "needs_human"
    # the same error printed by a run is one
    ran = interpret(
        "I've added the detection.\n\n```\n$ pytest\nValueError: If the library cannot be "
        "determined\n1 failed\n```\n"
    )
    assert ran.verdict == "failed"


def test_options_laid_out_for_the_user_without_a_question_mark_ask_to_choose() -> None:
    out = interpret(
        "The PRD now has R20; the tech spec is stale and needs re-deriving.\n\n"
        "Let me know if you'd like me to (a) run the tech-spec refinement now, or (b) commit the "
        "PRD-only changes first and revise the spec in a separate session."
    )
    assert (out.verdict, out.category) == ("needs_human", "ambiguous_requirements")
    table = interpret(
        "The table marks these conversions as unsupported, but the code handles them.\n\n"
        "To make the documentation accurate, you could either:\n"
        "1. Mark these conversions as supported\n"
        "2. Add a note that they are untested\n"
        "3. Add explicit tests for them\n"
    )
    assert table.verdict == "needs_human"
    # after finished work the same advice is no question
    done = interpret(
        "I've fixed the import and all 31 tests pass.\n\n"
        "If the deploy complains about the cache, you could either clear it or bump its key."
    )
    assert done.verdict == "completed"


def test_an_export_ending_on_a_tool_call_that_never_returned_is_unfinished() -> None:
    out = interpret(
        "I've committed the PRD change.\n\n"
        "```\n[doc/techspec 12e8846] docs: add R20 to the PRD\n 1 file changed\n```\n"
        "</details>\n</tool-use>\n"
        '<tool-use data-tool-type="shell" data-tool-name="run_terminal_command_v2"><details>\n'
        "<summary>Tool use: **run_terminal_command_v2**</summary>\n"
        "</details></tool-use>\n"
    )
    assert out.verdict == "failed"


def test_roos_trouble_banner_ends_the_run_in_either_language() -> None:
    for banner in (
        "Roo is having trouble... This may indicate a failure in the model's thought process or "
        "inability to use tools properly.",
        "这可能表明模型思维过程失败或无法正确使用工具，可通过用户指导来缓解",
    ):
        assert interpret("I've updated the config.\n\n" + banner + "\n").verdict == "failed"


def test_an_adverb_between_is_and_complete_still_claims_the_work() -> None:
    out = interpret(
        "Feature 2.1 is now officially complete, with the engine and the screen fully "
        "implemented.\n\nNext step on the roadmap: Step 2.2, the favourites list.\n\n"
        "Shall I proceed with Step 2.2?"
    )
    assert out.verdict == "completed"
    # "partially" claims nothing: no claim read, only the default
    partial = interpret("The parser is partially implemented; the emitter is missing.")
    assert partial.source == "default" and not partial.confident


def test_an_account_that_must_change_is_no_transient_error() -> None:
    from orchestrator.rules.platform import find_platform_error

    for text in (
        "Stream disconnected before completion: Your organization must be verified to use the "
        "model `gpt-5-codex`.\n",
        '> litellm.RateLimitError: VertexAIException - "code": 429, "message": "Gemini 2.5 Pro '
        "Preview doesn't have a free quota tier. Please use another model.\"\n",
    ):
        found = find_platform_error(text)
        assert found is not None and found.kind == "permission", text


def test_one_of_several_numbered_solutions_recommended_leaves_the_choice_open() -> None:
    out = interpret(
        "## 1. Socket timeouts\nRaise the socket timeout in the endpoint config.\n\n"
        "## 2. Client heartbeat\nPush a heartbeat every 30 s.\n\n"
        "## 3. Pool settings\nRaise the database pool's idle timeout.\n\n"
        "## Recommended Approach\n"
        "Start with **solutions 1 and 2** (timeouts + heartbeat). This should solve most idle "
        "connection issues."
    )
    assert (out.verdict, out.category) == ("needs_human", "ambiguous_requirements")


def test_a_prediction_that_tests_will_pass_is_no_claim_that_they_did() -> None:
    out = interpret(
        "I changed the slug function to keep the hyphens.\n\n"
        "Your test should now pass and the output should match the expected markdown."
    )
    assert not (out.verdict == "completed" and out.confident)
    ran = interpret("I changed the slug function to keep the hyphens. The tests now pass.")
    assert ran.verdict == "completed"


def test_a_fix_handed_to_the_user_to_try_unverified_is_untested() -> None:
    out = interpret(
        "I've replaced the `@lru_cache` decorator with a dictionary cache keyed by strings.\n\n"
        "Try running your code again. The schema translation should now work without the "
        "unhashable type error. Let me know if you encounter any other issues!"
    )
    assert out.verdict == "failed" and not out.confident
    # the same words after the agent ran it themselves are finished work
    ran = interpret(
        "I've replaced the `@lru_cache` decorator with a dictionary cache keyed by strings, and "
        "I ran the example: the tests now pass.\n\n"
        "Try running your code again. It should now work without the unhashable type error."
    )
    assert ran.verdict == "completed"


def test_an_exhausted_usage_limit_is_the_platforms() -> None:
    from orchestrator.rules.platform import find_platform_error

    found = find_platform_error(
        "Sorry, you have exhausted the agent mode usage limit. Please switch to ask mode and try "
        "again later.\n"
    )
    assert found is not None and found.kind == "usage_limit"


def test_an_attempt_that_was_unsuccessful_failed() -> None:
    out = interpret(
        "An attempt was made to automatically fix this issue, but it was unsuccessful. A branch "
        "named 'fix-issue-12' has been created with the attempted changes."
    )
    assert out.verdict == "failed"


def test_aiders_record_that_no_tracked_file_changed_is_no_finished_edit() -> None:
    out = interpret(
        "These changes implement the dashboard as requested.\n\n"
        "> Applied edit to dashboard.py  \n"
        "> Applied edit to requirements.txt  \n"
        "> No changes made to git tracked files.  \n"
    )
    assert out.verdict == "failed"


def test_being_told_you_have_been_rate_limited_is_the_platforms_rate_limit() -> None:
    from orchestrator.rules.platform import find_platform_error

    found = find_platform_error(
        "Sorry, you have been rate-limited. Please wait a moment before trying again.\n\n"
        "Server Error: rate limit exceeded Error Code: rate_limited\n"
    )
    assert found is not None and found.kind == "rate_limit"
