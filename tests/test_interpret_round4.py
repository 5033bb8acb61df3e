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
