"""The brain on attempt histories handed to it directly (issue 11, the brain's round on realistic
histories): what the latest attempt's agent said counts, not only the errors around it. Texts
here are invented; each test failed on the brain before the mechanism it names."""

from __future__ import annotations

import pytest

from orchestrator.brain import Brain, RetryDecision


def decide(history: list[str]) -> RetryDecision:
    return Brain(backend="rules").should_retry_or_escalate(
        task_id="4.2",
        task_title="Ship the export",
        attempt_history=history,
        attempt_count=len(history),
    )


SPEC_FAILS = """$ bundle exec rspec spec/models/invoice_spec.rb
  1) Invoice#due_on uses the customer's terms
     Failure/Error: expect(invoice.due_on).to eq(Date.new(2025, 4, 30))
       expected: 2025-04-30
            got: 2025-05-01
12 examples, 1 failure
"""

ASKS = (
    SPEC_FAILS
    + """
The spec counts net-30 from the invoice date, the task text counts it from delivery. Both are
plausible and they give different due dates. Which one does accounting use? I left the code
counting from delivery until you say.
"""
)

HOLDS_A_DROP = (
    SPEC_FAILS
    + """
The only way to make the old rows fit the new NOT NULL column is `DROP TABLE invoice_lines;`
and a rebuild from the import, which permanently deletes every line entered by hand since March.
I have not run it. Please confirm before I do.
"""
)


@pytest.mark.parametrize(
    ("latest", "category"),
    [(ASKS, "ambiguous_requirements"), (HOLDS_A_DROP, "extreme_destructive")],
    ids=["asks-which-rule", "holds-a-drop-for-approval"],
)
def test_an_agent_asking_the_person_escalates_with_its_category(latest: str, category: str) -> None:
    d = decide([SPEC_FAILS, latest])
    assert (d.decision, d.category) == ("escalate", category)
    assert d.reason.startswith("The agent asked for a decision only a person can make")


def test_a_question_in_a_programs_log_is_not_the_agent_asking() -> None:
    log = (
        "\x1b[1A\x1b[2K  1 failed\n"
        "    [chromium] › tests/e2e/chat.spec.ts:50:7 › Chat › sends a message\n"
        "\x1b[1A\x1b[2KBROWSER LOG: Sending message: What should I cook tonight?\n"
    )
    assert decide([SPEC_FAILS, log]).decision == "retry"


def test_the_judge_does_not_have_the_agents_words_read_twice() -> None:
    """In a run the interpreter has already read the output and found no question
    (`loops_checked=True`): the brain does not re-read the judge's shortened failure text, where
    a tool's hint ("Did you mean to match …?") loses the context that made it the tool's."""
    d = Brain(backend="rules").should_retry_or_escalate(
        "4.2", "Ship the export", [SPEC_FAILS, ASKS], 2, loops_checked=True
    )
    assert d.decision == "retry"


FIRST = "error TS2339: Property 'role' does not exist on type 'Session'.\nFound 1 error."

EXPECTED_401 = """$ npx jest src/billing/provider.spec.ts
 FAIL  src/billing/provider.spec.ts
  ● ProviderClient › explains a revoked key

    expect(received).toEqual(expected)

    - Expected  - 1
    + Received  + 1

    - "Payment provider rejected the API key: 401 Unauthorized"
    + "Provider rejected API key"

Tests:       1 failed, 11 passed, 12 total
"""

EXPECTED_FORBIDDEN = """  Failed Ledger.Tests.AuthTests.Auditor_cannot_close [88 ms]
  Error Message:
   Assert.Equal() Failure: Values differ
Expected: Forbidden
Actual:   Unauthorized
Failed!  - Failed:     1, Passed:    23, Skipped:     0, Total:    24
"""

PYTEST_SHOWS = """tests/api/test_auth.py:36: in test_problem_json
    assert body["title"] == "Unauthorized"
E   KeyError: 'title'
E   body = {'detail': 'invalid bearer token', 'status': 401, 'error': 'Unauthorized'}
FAILED tests/api/test_auth.py::test_problem_json - KeyError: 'title'
1 failed, 5 passed in 0.88s
"""

PERMISSION_UNDER_TEST = """  Documents RBAC
    ✓ viewer gets 403 "permission denied" on delete (33 ms)
    ✕ viewer can download but not share (35 ms)
  ● Documents RBAC › viewer can download but not share
    expect(received).toEqual(expected)
Tests:       1 failed, 3 passed, 4 total
"""


@pytest.mark.parametrize(
    "latest",
    [EXPECTED_401, EXPECTED_FORBIDDEN, PYTEST_SHOWS, PERMISSION_UNDER_TEST],
    ids=["jest-diff", "xunit-expected-actual", "pytest-variable", "passing-test-title"],
)
def test_an_auth_error_a_test_expects_is_the_code_under_test(latest: str) -> None:
    d = decide([FIRST, latest])
    assert d.decision == "retry", d.reason


def test_an_auth_error_the_test_run_hit_still_escalates() -> None:
    hit = (
        "tests/test_sync.py F\n"
        "E   requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: "
        "https://api.github.com/repos/acme/sync/issues\n"
        "FAILED tests/test_sync.py::test_live_sync - requests.exceptions.HTTPError: 401\n"
    )
    d = decide([FIRST, hit])
    assert (d.decision, d.category) == ("escalate", "external_service")
