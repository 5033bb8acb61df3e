"""The general mechanisms added for real agent outputs (issue 11 §3): where the output ends,
proposed vs offered work, questions as labels, a CLI prompt left open, which-questions."""

from __future__ import annotations

import pytest

from orchestrator.interpret import interpret
from orchestrator.rules.platform import find_platform_error


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        # a harness's failure banner at the end outranks earlier claims
        (
            "I've updated the parser.\n\nRoo appears to be stuck in a loop, attempting the same "
            "action (read_file) repeatedly.",
            "failed",
        ),
        ("Working on it.\n[ERROR] You did not use a tool in your previous response!", "failed"),
        (
            "■ Conversation interrupted - tell the model what to do differently. Something went "
            "wrong? Hit `/feedback` to report the issue.",
            "failed",
        ),
        # an intention is not a result
        (
            "Understood. I'm continuing now with that comparison and will return results once "
            "complete.",
            "failed",
        ),
        # an offer of new work after delivered work is not a question for a human
        (
            "Created `train.py` and `loss.py`.\n\nWould you like me to create an example script "
            "that demonstrates using all the new modules together?",
            "completed",
        ),
        # ...but what it just proposed waits for approval
        (
            "Plan:\n1. Tag the baseline\n2. Branch for the hybrid\n\nWant me to set this up now?",
            "needs_human",
        ),
        # a question as a label the text answers
        (
            "Q2: De novo vs pre-existing methylation?\nPre-existing: hypo islands are enriched "
            "for H3K27me3.\n\nAll analyses are written to results/.",
            "completed",
        ),
        # a Roo/Cline tool call with no result after it waits for approval
        (
            "<thinking>Amend the commit.</thinking>\n<use_mcp_tool>\n<server_name>git</server_name>\n"
            "<tool_name>git_commit</tool_name>\n</use_mcp_tool>",
            "needs_human",
        ),
        # a CLI prompt left unanswered
        ("> Add file to the chat? (Y)es/(N)o [Yes]:", "needs_human"),
    ],
)
def test_mechanisms(text: str, verdict: str) -> None:
    assert interpret(text).verdict == verdict


def test_which_question_is_a_choice_even_with_offer_words() -> None:
    r = interpret(
        "The build is green again.\n\nOption A: revert the pom edit.\nOption B: keep the copy "
        "step.\n\nWhich fix do you want me to apply now?"
    )
    assert r.verdict == "needs_human" and r.category == "ambiguous_requirements"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "You've hit your global rate limit. Please upgrade your plan or wait 6 seconds.",
            "rate_limit",
        ),
        (
            "OpenHands encountered an error: **LLM budget has been exceeded, please re-fill.**",
            "billing",
        ),
        ("Error: No authentication information found.", "authentication"),
        ("ℹ The session has reached the maximum number of turns: 25.", "max_turns"),
        # a bad key explains the dropped stream printed after it
        (
            "unexpected status 401 Unauthorized\n\nstream disconnected before completion",
            "authentication",
        ),
        # the code of a message wrapped onto its next line
        (
            ' ✗ Model call failed: {"message":"Sorry, you have exceeded your token usage.\n'
            '   Please review our terms","code":"rate_limited"}',
            "rate_limit",
        ),
    ],
)
def test_platform_sentences(text: str, kind: str) -> None:
    err = find_platform_error(text)
    assert err is not None and err.kind == kind
