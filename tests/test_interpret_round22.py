"""Round 22 (issue 11), one behaviour each, on invented text. Written on the realistic set
`corpus_styles18` (outputs cut at an arbitrary point at their start) after it was scored once."""

from __future__ import annotations

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
