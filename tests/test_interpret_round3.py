"""Third round of general mechanisms for real outputs (issue 11), one behaviour each, on invented
text: an offer to start work nothing was done for yet, a request to run something and report
back, and the platform's own errors the table now reads."""

from __future__ import annotations

from orchestrator.interpret import interpret


def test_an_offer_to_start_work_not_yet_done_waits_for_a_yes() -> None:
    plan = (
        "The parser has three stages: tokenising, folding and emitting.\n\n"
        "1. Tokenise the input into words.\n2. Fold the words into nodes.\n\n"
        "Should I start with the tokeniser and its tests?"
    )
    assert interpret(plan).verdict == "needs_human"
    review = (
        "Your `Order` model mixes camelCase and snake_case names.\n\n"
        "I'd recommend using one style throughout.\n\n"
        "Would you like me to write the revised `Order` class?"
    )
    assert interpret(review).verdict == "needs_human"


def test_the_same_offer_after_work_done_is_follow_up() -> None:
    done = (
        "All handlers are created under `src/handlers/`; the router is unchanged.\n\n"
        "```\nsrc/handlers/\n  users.py\n  orders.py\n```\n\n"
        "Would you like me to show you an example for the docs?"
    )
    assert interpret(done).verdict == "completed"
    listed = (
        "Changes:\n1. Added the retry wrapper\n2. Fixed the timeout default\n\n"
        "Would you like me to update the README?"
    )
    assert interpret(listed).verdict == "completed"
    more = "The cache layer is explained above.\n\nWould you like me to also add a diagram?"
    assert interpret(more).verdict != "needs_human"


def test_asking_the_user_to_run_something_and_report_back_is_a_question() -> None:
    out = interpret(
        "The sandbox has no GPU, so I can't profile the kernel here. Please run "
        "`python bench.py` on your machine and share the timings."
    )
    assert out.verdict == "needs_human"
