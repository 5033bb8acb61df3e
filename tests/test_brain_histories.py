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


def go_race(address: str, frames: tuple[str, str], line: int, goroutine: int) -> str:
    write, read = frames
    return (
        "$ go test -race ./internal/cache/...\n==================\nWARNING: DATA RACE\n"
        f"Write at 0x00c000{address} by goroutine {goroutine}:\n"
        f"  runtime.{write}()\n      /usr/local/go/src/runtime/map_faststr.go:{line * 3} +0x0\n"
        f"  example.com/app/internal/cache.(*TTLCache).sweep()\n      /src/cache/ttl.go:{line} +0x1c4\n"
        f"Previous read at 0x00c000{address} by goroutine {goroutine + 1}:\n"
        f"  runtime.{read}()\n"
        "  example.com/app/internal/cache.(*TTLCache).Get()\n==================\n"
        "--- FAIL: TestTTLCacheConcurrentSweep (0.04s)\n"
        "    testing.go:1398: race detected during execution of test\nFAIL\n"
    )


def test_the_same_go_test_racing_in_changing_frames_is_a_loop() -> None:
    history = [
        go_race("1a4330", ("mapassign_faststr", "mapaccess2_faststr"), 61, 23),
        "Added a sync.Mutex around Set and Get.\n"
        + go_race("11e1b0", ("mapiterinit", "mapassign_faststr"), 93, 9),
        "I refactored sweep() to copy the keys under the read lock and delete them afterwards, "
        "which should eliminate the race. The expiry heap now lives in its own struct with a "
        "separate lock, and Get no longer touches the heap at all. Ran it once more:\n"
        + go_race("210060", ("mapdelete_faststr", "mapaccess1_fast64"), 104, 31)
        + "    cache_test.go:88: 4096 goroutines, 2 sweepers, ttl=5ms\n"
        "    cache_test.go:97: evicted 311 of 4096 keys before the deadline\n"
        "FAIL\tgitlab.local/app/internal/cache\t0.342s\n",
    ]
    d = decide(history)
    assert (d.decision, d.category) == ("escalate", None)
    assert "the same tests the same way 3 times" in d.reason


def jest(test: str, expected: str, received: str) -> str:
    return (
        " FAIL  src/pricing/__tests__/quote.test.ts\n"
        f"  ● quote › {test}\n\n    expect(received).toBe(expected)\n\n"
        f"    Expected: {expected}\n    Received: {received}\n\n"
        "Tests:       1 failed, 33 passed, 34 total\n"
    )


def test_other_tests_of_the_same_file_failing_in_turn_is_progress() -> None:
    history = [
        jest("applies regional VAT before discount", "108.9", "110"),
        jest("rounds each line before summing", "30.03", "30.029999999999998"),
        jest("formats total with currency symbol", '"€ 30,03"', '"€30.03"'),
    ]
    assert decide(history).decision == "retry"


def mypy(adapter: str) -> str:
    return (
        f'src/rates/carriers/{adapter.lower()}.py:12: error: Argument 1 to "register" has '
        f'incompatible type "{adapter}Adapter"; expected "RateProvider"  [arg-type]\n'
        "Found 1 error in 1 file (checked 31 source files)\n"
    )


def test_the_same_failure_a_third_time_with_others_between_is_a_loop() -> None:
    other = (
        'src/rates/protocols.py:40: error: Return type "Sequence[Rate]" of "quote" incompatible '
        'with return type "list[Rate]" in supertype "BaseProvider"  [override]\n'
        "Found 1 error in 1 file (checked 31 source files)\n"
    )
    d = decide([mypy("Dhl"), other, mypy("Dhl"), other.replace("40", "44"), mypy("Fedex")])
    assert d.decision == "escalate"
    assert "with other failures in between" in d.reason


# -- short summaries (seed 001's `Failed: <error>` history) --------------------------------------


def test_the_same_failure_summarised_in_other_words_three_times_is_a_loop() -> None:
    history = [
        "Failed: cargo test — parser::tests::parses_nested_arrays panicked at src/parser.rs:318:9: "
        "assertion `left == right` failed  left: 3  right: 2",
        "Failed: 1 test failed: parser::tests::parses_nested_arrays (left: 3, right: 2)",
        "Failed: test result: FAILED. 57 passed; 1 failed — parses_nested_arrays still wrong",
    ]
    d = decide(history)
    assert (d.decision, d.category) == ("escalate", None)
    assert "the same failure in other words" in d.reason


def test_summaries_that_say_the_failure_came_back_are_a_loop() -> None:
    history = [
        "Failed: xcodebuild test — ReceiptViewTests.testRenderReceipt(): Snapshot does not match "
        "reference. 2.31% of pixels differ",
        "Failed: snapshot mismatch again (2.29% different); padding tweaked",
        "Failed: ReceiptViewTests: 1 failure — snapshot still differs by 2.35%",
    ]
    assert decide(history).decision == "escalate"


def test_summaries_that_move_on_are_progress() -> None:
    history = [
        "Failed: phpunit — Error: Call to undefined method App\\Cart::applyCoupon() in "
        "tests/Unit/CartTest.php:41",
        "Failed: CartTest::testCouponTakesTenPercent — Failed asserting that 90.0 is identical to 90.",
        "Failed: CartTest green now; CartTest::testCouponStacks — Failed asserting that 80.0 is "
        "identical to 81.",
    ]
    assert decide(history).decision == "retry"


def test_two_summaries_flipping_between_two_tests_are_an_oscillation() -> None:
    """What a clause says passes is not part of what fails."""
    history = [
        "Failed: ./gradlew test — ReportControllerTest > exportsIsoDates() FAILED: expected "
        '"2024-03-01" but was "01/03/2024"',
        "Failed: 1 test failing: DateFormatterTest > formatsForLocaleUk() — expected: <01/03/2024> "
        "but was: <2024-03-01>",
        "Failed: ReportControllerTest.exportsIsoDates fails again (got 01/03/2024); "
        "DateFormatterTest green now",
        "Failed: gradle test: DateFormatterTest > formatsForLocaleUk() FAILED (ReportControllerTest "
        "passes; the shared formatter was switched back to ISO)",
    ]
    d = decide(history)
    assert d.decision == "escalate"
    assert "oscillating" in d.reason


def test_a_summary_quoting_the_agents_question_asks_the_person() -> None:
    history = [
        "Failed: phpunit — Tests\\Unit\\PriceTest::testRoundsHalfToEven: Failed asserting that 3.0 "
        "is identical to 2.0.",
        "Failed: Cursor stopped: \"PriceTest requires banker's rounding and CheckoutTest requires "
        'half-up from the same Money::round() call. Which rounding mode is intended for prices?"',
    ]
    d = decide(history)
    assert (d.decision, d.category) == ("escalate", "ambiguous_requirements")


def test_a_ruby_predicate_method_is_not_a_question() -> None:
    history = [
        "Failed: litellm.APIConnectionError: Connection error.",
        "Failed: bundle exec rspec — 1 failure: Invoice#overdue? returns true after due date "
        "(expected true, got false)",
    ]
    assert decide(history).decision == "retry"


@pytest.mark.parametrize(
    "latest",
    [
        "Failed: daily request quota still exhausted for gemini-2.5-pro; CLI stopped",
        "Failed: 0 tests ran. OperationalError on DB connect (password authentication failed for "
        'user "ci_app" at db.staging.internal:5432)',
    ],
    ids=["quota-still-exhausted", "database-login-refused"],
)
def test_trouble_only_a_person_can_fix_in_a_summary(latest: str) -> None:
    d = decide(["Failed: TypeError: cannot read properties of undefined (reading 'id')", latest])
    assert (d.decision, d.category) == ("escalate", "external_service")


RATE_LIMITED = (
    'Failed: API Request Failed: 429 {"type":"error","error":{"type":"rate_limit_error",'
    '"message":"This request would exceed your organization\'s rate limit of 80,000 output '
    'tokens per minute."}}'
)


def test_a_rate_limit_hit_once_is_retried_and_twice_in_a_row_escalates() -> None:
    first = decide(["Failed: 2 tests failing in tests/test_cart.py", RATE_LIMITED])
    assert first.decision == "retry"
    again = decide(["Failed: 2 tests failing in tests/test_cart.py", RATE_LIMITED, RATE_LIMITED])
    assert (again.decision, again.category) == ("escalate", "external_service")


def test_a_choice_asked_in_the_attempt_before_and_left_unanswered_escalates() -> None:
    asked = (
        "The only reachable environment in knexfile.js is `production`. The migration builds a "
        "non-concurrent index on `orders` (48M rows), which locks the table. Should I (1) run it "
        "against production, (2) rewrite it to CREATE INDEX CONCURRENTLY, or (3) only run it "
        "locally? I have not run anything yet."
    )
    still = (
        "No command has been run against any database. The check fails with:\n"
        'Error: Migration 20250312_add_orders_idx.js is pending on environment "production"\n'
        "    at verifyPending (scripts/db-verify.js:31:11)\n"
    )
    d = decide([asked, still])
    assert (d.decision, d.category) == ("escalate", "ambiguous_requirements")
    assert "in the attempt before" in d.reason


def test_an_agent_that_says_it_needs_a_human_decision_escalates() -> None:
    latest = (
        "│ Error: Instance cannot be destroyed\n│ Resource aws_db_instance.analytics has "
        "lifecycle.prevent_destroy set.\n╵\n\ncursor-agent: Encryption cannot be turned on in "
        "place. This needs a human decision: approve a maintenance window, or accept the destroy.\n"
    )
    assert decide(["│ Error: Unsupported argument", latest]).decision == "escalate"


@pytest.mark.parametrize(
    "ran",
    [
        "✦ Retrying push.\n$ git push --force origin main\nremote: error: Cannot force-push to "
        "this branch\nerror: failed to push some refs",
        "COMMAND:\ngit rebase --abort && git push --force origin HEAD:main\nOUTPUT:\nremote: "
        "error: GH006: Protected branch update failed for refs/heads/main.",
    ],
    ids=["shell-prompt", "openhands-command"],
)
def test_an_agent_that_ran_a_destructive_command_escalates(ran: str) -> None:
    d = decide(["error: failed to push some refs to 'origin'", ran])
    assert (d.decision, d.category) == ("escalate", "extreme_destructive")


def test_a_routine_clean_up_it_ran_is_no_reason_to_stop() -> None:
    ran = "$ rm -rf node_modules dist && npm ci\nnpm ERR! code ERESOLVE\nnpm ERR! ERESOLVE could not resolve"
    assert decide(["FAIL src/a.test.ts", ran]).decision == "retry"


def test_the_same_summarised_failure_a_third_time_with_others_between_is_a_loop() -> None:
    history = [
        "Failed: dotnet test — OrderServiceTests.PlaceOrder_AppliesDiscount: "
        "System.NullReferenceException at OrderService.cs:line 73",
        "Failed: NRE moved to DiscountCalculator.Apply(...) in DiscountCalculator.cs:line 22",
        "Failed: PlaceOrder_AppliesDiscount, NullReferenceException in OrderService.cs:line 86",
        "Failed: ShippingQuote.For(...) threw ArgumentException in ShippingQuote.cs:line 9",
        "Failed: NullReferenceException in PlaceOrder_AppliesDiscount (OrderService.cs:line 81)",
    ]
    d = decide(history)
    assert d.decision == "escalate"
    assert "with other failures in between" in d.reason


def test_a_remote_sandbox_down_for_maintenance_is_for_a_person() -> None:
    down = (
        'E   freightlink.carrier.errors.CarrierUnavailable: (503, \'{"status":503,"error":'
        '"SERVICE_UNAVAILABLE","message":"Sandbox is undergoing scheduled maintenance until '
        "2024-11-28T06:00:00Z.\"}')\n4 failed in 2.61s\n"
    )
    d = decide(["FAILED tests/test_booking.py::test_book - KeyError: 'pallets'", down])
    assert (d.decision, d.category) == ("escalate", "external_service")


FIRST_SUMMARY = "Failed: dotnet test: 2 failed in Billing.Tests (Expected 14.52, Actual 14.51)."


@pytest.mark.parametrize(
    "latest",
    [
        "Failed: Copilot CLI stopped: the monthly premium request allowance is used up and paid "
        "premium requests are disabled for this account.",
        "Failed: gemini stopped on its first turn: the daily request quota for gemini-2.5-pro on "
        "this account is used up. Reset at midnight Pacific, about 19 h away.",
        "Failed: codex stopped before its first edit: the plan's usage limit is reached, next "
        "reset in 5 days.",
        "Failed: kubectl apply --dry-run=server: error: You must be logged in to the server "
        "(Unauthorized). The staging kubeconfig token expired overnight.",
        "Failed: the same 7 integration tests fail at the first Stripe call with 'Expired API Key "
        "provided'. The agent cannot create a key.",
        "Failed: aider could not authenticate with the model provider (invalid x-api-key); no "
        "edits made",
    ],
    ids=[
        "allowance-used-up",
        "quota-is-used-up",
        "usage-limit-is-reached",
        "kubectl-login",
        "expired-api-key",
        "could-not-authenticate",
    ],
)
def test_a_summary_of_trouble_only_a_person_can_fix(latest: str) -> None:
    d = decide([FIRST_SUMMARY, latest])
    assert (d.decision, d.category) == ("escalate", "external_service"), d.reason


def test_a_summary_quoting_the_agents_question_in_single_quotes_asks_the_person() -> None:
    latest = (
        "Failed: the agent stopped and asks: 'docs/fx.md requires half-up but the ledger tests "
        "encode half-even. Which rule should currency conversion use?'"
    )
    d = decide([FIRST_SUMMARY, latest])
    assert (d.decision, d.category) == ("escalate", "ambiguous_requirements")


# -- the agent's own report of each attempt ---------------------------------------------------


def test_what_the_agent_says_it_changed_is_not_an_error() -> None:
    latest = (
        "Added a distinct `token expired` message and the `WWW-Authenticate: Bearer "
        'error="invalid_token"` header. I now raise HTTPException(401, "Permission denied").\n\n'
        "    FAILED tests/auth/test_middleware.py::test_valid_token_sets_user - KeyError: 'sub'\n"
        "    1 failed, 26 passed in 1.22s\n"
    )
    assert decide(["5 failed, 22 passed in 1.31s", latest]).decision == "retry"


def test_code_described_as_retrying_a_429_is_no_rate_limit() -> None:
    latest = (
        "- The client waits `Retry-After` seconds (capped at 60s) before retrying a 429, at "
        "most 3 times\n\n    $ npm run lint\n    12:10  error  'sleep' is defined but never used\n"
        "    ✖ 1 problem (1 error, 0 warnings)\n"
    )
    assert decide(["error TS2345: Argument of type 'string | null'", latest]).decision == "retry"


@pytest.mark.parametrize(
    ("latest", "decision"),
    [
        (
            "API Request Failed\n502 <html><head><title>502 Bad Gateway</title></head><body>"
            "<center>cloudflare</center></body></html>\n"
            "Retry attempt 3 of 3 ... failed (502)",
            "retry",
        ),
        (
            "cursor-agent: error: Connection failed. If the problem persists, please check your "
            "internet connection or VPN\n(request id: 1b7c0e9a, ConnectError: read ECONNRESET)",
            "retry",
        ),
        (
            "Error: Access denied by policy settings\nYour organization has disabled Copilot CLI. "
            "Contact your organization administrator to request access.",
            "escalate",
        ),
        (
            "API Streaming Failed\nAccessDeniedException: You don't have access to the model with "
            "the specified model ID.",
            "escalate",
        ),
    ],
    ids=["cline-502-once", "cursor-connection-failed", "copilot-org-policy", "bedrock-no-model"],
)
def test_an_agent_clis_own_error(latest: str, decision: str) -> None:
    d = decide(["FAIL src/a.test.ts\nTests: 1 failed, 20 passed", latest])
    assert d.decision == decision, d.reason
    if decision == "escalate":
        assert d.category == "external_service"


def playwright(step: str) -> str:
    return (
        "      ✘  7 [chromium] › e2e/login.spec.ts:22:7 › login › user can sign in (30.1s)\n"
        f"        TimeoutError: locator.{step}: Timeout 30000ms exceeded.\n"
        "      1 failed\n      17 passed (48.3s)\n"
    )


def test_the_same_e2e_test_timing_out_three_times_is_a_loop() -> None:
    history = [
        "  1) [chromium] › e2e/login.spec.ts:22:7 › login › user can sign in\n"
        + playwright("click")
        + "        attachment #1: screenshot (image/png) test-results/login/test-failed-1.png\n",
        "I switched to getByRole('button'), which pierces shadow DOM.\n" + playwright("click"),
        "I now wait for networkidle and the form first.\n" + playwright("waitFor"),
    ]
    assert decide(history).decision == "escalate"


def rspec(title: str, line: int) -> str:
    return (
        f"Failures:\n  1) {title}\n     Failure/Error: expect(sub.total).to eq(1_500)\n"
        "       expected: 1500\n            got: 3000\n"
        f"18 examples, 1 failure\nrspec ./spec/models/subscription_spec.rb:{line}\n"
    )


def test_other_examples_of_one_spec_file_failing_in_turn_is_progress() -> None:
    history = [
        rspec("Subscription#renew! charges the prorated amount", 38),
        rspec("Subscription#renew! extends current_period_end", 53),
        rspec("Subscription#renew! enqueues a receipt email", 69),
    ]
    assert decide(history).decision == "retry"


@pytest.mark.parametrize(
    ("latest", "category"),
    [
        (
            "Failed: the agent stopped. Its plan is a DELETE of 1,611 older duplicate user rows, "
            "with their orders removed by cascade. It asks whether to merge or delete.",
            "extreme_destructive",
        ),
        (
            "Failed: checks not rerun. The agent asks which of the two refund windows the ticket "
            "means, 14 or 30 days.",
            "ambiguous_requirements",
        ),
    ],
    ids=["asks-before-a-delete", "asks-which-rule"],
)
def test_a_summary_reporting_the_agents_question_asks_the_person(
    latest: str, category: str
) -> None:
    d = decide([FIRST_SUMMARY, latest])
    assert (d.decision, d.category) == ("escalate", category)


def test_a_summary_saying_the_work_goes_in_circles_is_a_loop() -> None:
    history = [
        "Failed: npm run lint: 38 errors, `quotes`: Strings must use singlequote (src/**/*.ts).",
        "Failed: npm run format:check: Code style issues found in 41 files.",
        "Failed: npm run format:check: 41 files would be reformatted. .eslintrc wants single "
        'quotes, .prettierrc has "singleQuote": false; the agent keeps flipping between them.',
    ]
    d = decide(history)
    assert (d.decision, d.category) == ("escalate", None)
    assert "going in circles" in d.reason


@pytest.mark.parametrize(
    "history",
    [
        [
            FIRST_SUMMARY,
            "Failed: codex: 401 Unauthorized (token refresh failed), run `codex login`. No turns.",
        ],
        [
            FIRST_SUMMARY,
            "Failed: Copilot CLI stopped: the monthly premium request allowance is used up.",
            "Failed: same premium-request limit; allowance resets on the 1st, 12 days away.",
        ],
    ],
    ids=["cli-error-line", "the-same-limit-again"],
)
def test_platform_trouble_summarised_in_a_runners_words(history: list[str]) -> None:
    d = decide(history)
    assert (d.decision, d.category) == ("escalate", "external_service")


# -- what the agent's last words ask, after the logs ---------------------------------------------


@pytest.mark.parametrize(
    ("latest", "category"),
    [
        (
            "$ git pull --rebase origin main\nCONFLICT (content): Merge conflict in "
            "src/StockService.java\nerror: could not apply 9c4e2a1... Reserve stock\n\n"
            "● The remote main has 6 new commits that conflict with my change. The simplest way to "
            "land this task is:\n\n  git push --force origin main\n\nThis will overwrite the "
            "remote branch with my local history. Do you want me to run it?",
            "extreme_destructive",
        ),
        (
            "Plan: 1 to add, 0 to change, 1 to destroy.\n\nCheck `plan-guard` failed: plan destroys "
            "protected resource aws_db_instance.main\n\nClaude: RDS cannot encrypt an existing "
            "instance in place, so Terraform replaces it. I can run `terraform apply`; the final "
            "snapshot is skipped, so the current data would not be kept. Should I go ahead?",
            "extreme_destructive",
        ),
    ],
    ids=["force-push-offered", "replace-the-database-offered"],
)
def test_a_question_after_the_failing_tools_records_asks_the_person(
    latest: str, category: str
) -> None:
    d = decide(["error: failed to push some refs", latest])
    assert (d.decision, d.category) == ("escalate", category)


def test_a_log_ending_in_words_without_a_question_asks_nothing() -> None:
    log = (
        "FAILED tests/test_router.py::test_demographic_routes - NameError: name 'x' is not "
        "defined\n1 failed, 122 passed, 1 warning in 8.95s\n"
    )
    assert decide([log, log.replace("8.95", "9.01")]).decision == "retry"


@pytest.mark.parametrize(
    ("latest", "category"),
    [
        (
            "J'ai besoin d'une décision : (a) tout en UTC, (b) tout en local, (c) résumé en local "
            "et export en UTC. Je m'arrête là.",
            "ambiguous_requirements",
        ),
        (
            "Para a migração passar: ALTER TABLE clientes DROP COLUMN legacy_cpf. Isso apagaria "
            "dados de clientes em produção. Não executei. Preciso de confirmação.",
            "extreme_destructive",
        ),
        (
            "Propongo borrar los duplicados. Esto borraría cuentas reales en producción. No lo he "
            "ejecutado. Necesito que alguien decida: ¿fusionar cuentas, borrar, o aplazar?",
            "extreme_destructive",
        ),
    ],
    ids=["fr-decision", "pt-confirmation-for-a-drop", "es-someone-decides-a-delete"],
)
def test_a_decision_asked_for_in_the_users_language(latest: str, category: str) -> None:
    d = decide(["FAILED tests/test_report.py::test_daily - AssertionError", latest])
    assert (d.decision, d.category) == ("escalate", category)


@pytest.mark.parametrize(
    ("latest", "decision"),
    [
        (
            "429 Rate limit reached for gpt-4.1 in organization org-abc on tokens per min (TPM): "
            "Limit 30000, Used 27614, Requested 4108. Please try again in 3.4s.",
            "retry",
        ),
        (
            "Cline is having trouble...\n402 This request requires more credits, or fewer "
            "max_tokens. To increase, visit https://openrouter.ai/settings/credits and add more "
            "credits",
            "escalate",
        ),
        (
            "npm error code E403\nnpm error 403 403 Forbidden - GET /@acme%2fui-kit - You do not "
            "have permission to access this package.",
            "escalate",
        ),
        (
            '[WebServer] AuthRetryableFetchError: {"message":"Project is paused. Resume it from the '
            'dashboard to continue."} at node_modules/@supabase/auth-js/dist/main/lib/fetch.js:52',
            "escalate",
        ),
        (
            "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.\n$ systemctl start "
            "docker\nFailed to start docker.service: Interactive authentication required.",
            "escalate",
        ),
        (
            'middleware_test.go:77: status = 500, want 401; body = {"error":"token is expired"}\n'
            "--- FAIL: TestExpiredToken (0.00s)",
            "retry",
        ),
        (
            "FAIL: test_viewer_gets_permission_denied_on_archive (projects.tests.ArchiveViewTests)\n"
            "AssertionError: 302 != 403",
            "retry",
        ),
    ],
    ids=[
        "openai-tpm-seconds",
        "openrouter-credits",
        "npm-e403-private-package",
        "remote-project-paused",
        "docker-needs-a-login",
        "go-test-wants-401",
        "unittest-title",
    ],
)
def test_what_stops_the_run_in_its_tools_words(latest: str, decision: str) -> None:
    d = decide(["FAILED tests/test_cart.py::test_total - assert 3 == 4", latest])
    assert d.decision == decision, d.reason


@pytest.mark.parametrize(
    "latest",
    [
        "El despliegue sigue fallando con ErrImagePull / 401 Unauthorized. El token del registro "
        "privado guardado en el secreto `regcred` caducó el 3 de noviembre.",
        "Agent: DOCKER_PASSWORD in the environment is rejected (401) - it looks revoked or "
        "expired. Someone with access to the org's registry account needs to rotate it.",
        "API Request Failed\n\n402 This request requires more credits, or fewer max_tokens. To "
        "increase, visit your provider account settings and upgrade to a paid account",
        " Error: Copilot CLI is disabled by your organization's policy. Contact your organization "
        "administrator to enable it.",
    ],
    ids=["es-registry-token-expired", "env-password-rejected", "upgrade-to-paid", "org-policy"],
)
def test_credentials_and_accounts_only_a_person_can_fix(latest: str) -> None:
    d = decide(["FAILED tests/test_cart.py::test_total - assert 3 == 4", latest])
    assert (d.decision, d.category) == ("escalate", "external_service"), d.reason


def gemini_box(size: int) -> str:
    return (
        "│ FAIL Tests\\Feature\\PostIndexTest                             │\n"
        f"│ Failed asserting that actual size {size} matches expected size 4. │\n"
        "│ Tests: 1 failed, 6 passed (19 assertions)                     │\n"
    )


def test_the_same_test_failing_inside_a_clis_box_three_times_is_a_loop() -> None:
    history = [
        "✦ Filtering archived posts in the query builder, with a scope on the model.\n"
        + "│ $ php artisan test --filter PostIndexTest                       │\n"
        + "│ FAILED Tests\\Feature\\PostIndexTest > index hides archived posts │\n"
        + "│ at tests/Feature/PostIndexTest.php:31                          │\n"
        + "│   27▕     $response = $this->get('/posts');                     │\n"
        + "│ ➜ 31▕     $response->assertJsonCount(4, 'data');                │\n"
        + gemini_box(5),
        "✦ Added the scope to the controller as well.\n" + gemini_box(5),
        gemini_box(5),
    ]
    assert decide(history).decision == "escalate"


def test_a_pytest_comparison_of_auth_errors_is_the_test_under_way() -> None:
    latest = (
        "_______________________ test_invalid_api_key_returns_401 _______________________\n"
        "E       AssertionError: assert {'error': 'Unauthorized'} == {'error': 'invalid_api_key'}\n"
        "E   {'error': 'Unauthorized'} != {'error': 'invalid_api_key'}\n"
        "1 failed, 40 passed in 2.01s\n"
    )
    assert decide(["FAILED tests/test_keys.py::test_list - KeyError: 'id'", latest]).decision == (
        "retry"
    )


@pytest.mark.parametrize(
    "latest",
    [
        "⏺ Summary: the Terraform code is complete. Apply fails at every IAM step because the "
        "`ci-deployer` role has no iam:CreateRole permission. This needs someone with IAM admin "
        "access to extend the policy.",
        "codex: The smoke training run cannot start: the token in HF_TOKEN is not authorised for "
        "the gated repo (GatedRepoError 403). Someone needs to request access for the token's "
        "account.",
        "The token endpoint issues a token fine, but every API call returns ACCOUNT_DEACTIVATED "
        "for account SBX-448120.\n3 failed, 41 passed in 14.66s",
        "[WebServer] StripeAuthenticationError: Expired API Key provided: sk_test_****Qx7d\n"
        "[WebServer]   code: 'api_key_expired',\n  1 failed\n  10 passed (47.9s)",
    ],
    ids=["needs-someone-with-access", "someone-needs-to-request", "account-deactivated", "stripe"],
)
def test_access_only_a_person_holds(latest: str) -> None:
    d = decide(["FAILED tests/test_cart.py::test_total - assert 3 == 4", latest])
    assert (d.decision, d.category) == ("escalate", "external_service"), d.reason


def test_fewer_previous_errors_each_time_is_progress() -> None:
    history = [
        "Failed: error[E0425]: cannot find value `cap` in this scope\nerror: could not compile "
        "`lru-store` (lib) due to 3 previous errors",
        "Failed: error[E0308]: mismatched types in src/persist.rs\nerror: could not compile "
        "`lru-store` (lib) due to 2 previous errors",
        "Failed: error[E0599]: no method named `write_all` in src/persist.rs\nerror: could not "
        "compile `lru-store` (lib) due to 1 previous error",
    ]
    assert decide(history).decision == "retry"


def test_a_model_api_hiccup_between_two_failures_is_no_oscillation() -> None:
    code = "FAILED tests/test_slug.py::test_unicode - AssertionError: 'cafe' != 'café'"
    hiccup = 'API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}'
    assert decide([code, hiccup, code.replace("cafe", "caf")]).decision == "retry"


def test_fewer_eslint_problems_each_time_is_progress() -> None:
    def lint(n: int) -> str:
        return (
            "$ npx eslint src\n/src/app/cart.ts\n  12:7  error  'total' is assigned a value but "
            f"never used  no-unused-vars\n\n✖ {n} problems ({n} errors, 0 warnings)\n"
        )

    assert decide([lint(12), lint(7), lint(3)]).decision == "retry"


def test_the_apps_own_rate_limiter_logging_is_no_rate_limit() -> None:
    latest = (
        "WARNING  throttle.bucket:bucket.py:57 rate limit exceeded for key=tenant-42 (tokens=0)\n"
        "FAILED tests/test_bucket.py::test_refill - assert 0 == 1\n1 failed, 30 passed in 0.4s"
    )
    assert decide(["FAILED tests/test_bucket.py::test_take - KeyError: 'k'", latest]).decision == (
        "retry"
    )


def test_words_after_a_log_that_ask_nothing_do_not_escalate() -> None:
    latest = (
        "$ mypy src\nsrc/a.py:3: error: Name 'x' is not defined  [name-defined]\n"
        "Found 1 error in 1 file\n\nmypy のエラーは 5 件から 1 件に減りました？ 残りは未定義の名前です。"
    )
    assert decide(["src/a.py:9: error: Incompatible types", latest]).decision == "retry"


RUST_ATTEMPTS = [
    """Applied edit to src/cache.rs
Commit 8d1e0a7 fix: avoid double borrow in get_or_insert
   Compiling tilecache v0.3.0 (/work/tilecache)
error[E0502]: cannot borrow `self.map` as mutable because it is also borrowed as immutable
  --> src/cache.rs:47:13
44 |         if let Some(v) = self.map.get(&key) {
   |                          -------- immutable borrow occurs here
47 |             self.map.insert(key.clone(), make());
   |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ mutable borrow occurs here
error: could not compile `tilecache` (lib) due to 1 previous error
""",
    """Applied edit to src/cache.rs
Commit 3b77f2c refactor: split lookup and insert in get_or_insert
error[E0502]: cannot borrow `*self` as mutable because it is also borrowed as immutable
  --> src/cache.rs:50:13
46 |         let found = self.map.get(&k);
   |                     -------- immutable borrow occurs here
50 |             self.evict_oldest();
   |             ^^^^^^^^^^^^^^^^^^^ mutable borrow occurs here
51 |             return found.unwrap();
   |                    ----- immutable borrow later used here
""",
    """cargo build --all-targets
warning: unused import: `std::collections::VecDeque`
 --> src/lru.rs:3:5
error[E0502]: cannot borrow `self.entries` as mutable because it is also borrowed as immutable
  --> src/cache.rs:58:17
55 |         match self.entries.iter().find(|e| e.key == key) {
   |               ------------ immutable borrow occurs here
58 |                 self.entries.push_back(Entry::new(key, make()));
   |                 ^^^^^^^^^^^^ mutable borrow occurs here
warning: build failed, waiting for other jobs to finish...
""",
]


def test_the_same_compiler_error_moving_around_one_file_is_a_loop() -> None:
    # other lines, other variables, other code around it: the same borrow error in cache.rs
    d = decide(RUST_ATTEMPTS)
    assert (d.decision, d.category) == ("escalate", None)
    assert "same compiler error in the same file" in d.reason


def test_compiler_errors_that_shrink_are_progress() -> None:
    # the same code in the same file each time, but fewer errors each time: fixes are landing
    shrinking = [
        """$ mypy --strict src/
src/etl/extract.py:12: error: Function is missing a return type annotation  [no-untyped-def]
src/etl/extract.py:30: error: Call to untyped function "fetch_page" in typed context  [no-untyped-call]
src/etl/transform.py:8: error: Missing type parameters for generic type "dict"  [type-arg]
src/etl/load.py:77: error: Returning Any from function declared to return "int"  [no-any-return]
Found 23 errors in 4 files (checked 9 source files)
""",
        """$ mypy --strict src/
src/etl/transform.py:44: error: Argument 1 to "normalise" has incompatible type "object"; expected "Mapping[str, Any]"  [arg-type]
src/etl/load.py:61: error: Library stubs not installed for "psycopg2"  [import-untyped]
src/etl/load.py:77: error: Returning Any from function declared to return "int"  [no-any-return]
Found 9 errors in 2 files (checked 9 source files)
""",
        """Two left, both in load.py; the stubs need a dependency.
src/etl/load.py:61: note: Hint: "python3 -m pip install types-psycopg2"
src/etl/load.py:77: error: Returning Any from function declared to return "int"  [no-any-return]
Found 3 errors in 2 files (checked 9 source files)
""",
    ]
    assert decide(shrinking).decision == "retry"
    # without the counts, the same history is the same error moving around load.py
    still = [t.replace("Found", "Seen") for t in shrinking]
    assert decide(still).decision == "escalate"


def test_the_codes_own_log_notices_about_its_dependencies_are_no_external_trouble() -> None:
    tests_ran = (
        "FAILED tests/test_sync.py::test_retry_schedule - assert 3 == 4\n1 failed, 88 passed"
    )
    for notice in (
        "2025-05-13T01:32:24Z [Test worker] WARN c.a.billing.sync.InvoiceSync - upstream "
        "returned 401 Unauthorized (invalid api key), will retry",
        'time=2025-04-08T05:47:30Z level=WARN msg="upstream rate limited" status=429',
        "WARNING 2025-08-05 03:41:48,711 log Forbidden (Permission denied): /api/appointments/",
    ):
        history = [
            "FAILED tests/test_sync.py::test_backoff - KeyError: 'delay'",
            notice + "\n" + tests_ran,
        ]
        assert decide(history).decision == "retry", notice
    # an error record that stopped the attempt still counts
    stopped = "ERROR app.main: unhandled: 401 Unauthorized from api.stripe.com (invalid api key)"
    assert decide(["FAILED x - KeyError", stopped]).category == "external_service"


def test_a_destructive_command_on_a_throwaway_target_is_no_question_for_a_person() -> None:
    fail = "FAILED tests/test_orders.py::test_unique_number - IntegrityError: duplicate key"
    for command, shared in (
        ('$ psql "$TEST_DATABASE_URL" -c "DROP TABLE orders CASCADE;"', False),
        ("$ terraform -chdir=envs/ci destroy -auto-approve", False),
        ('$ psql "$PROD_DATABASE_URL" -c "DROP TABLE orders CASCADE;"', True),
        ("$ aws s3 rb s3://acme-release-artifacts --force", True),
    ):
        d = decide(["FAILED tests/test_orders.py::test_total - KeyError", f"{command}\n{fail}"])
        assert (d.decision == "escalate") is shared, command


def test_a_connection_that_failed_once_is_retried_and_twice_escalates() -> None:
    blip = (
        "npm ERR! code ECONNRESET\nnpm ERR! request to https://npm.example.com/@types%2fnode "
        "failed, reason: read ECONNRESET"
    )
    first = decide(["FAILED tests/test_cart.py::test_total - assert 3 == 4", blip])
    assert first.decision == "retry" and "failed once" in first.reason
    again = decide(["FAILED tests/test_cart.py::test_total - assert 3 == 4", blip, blip])
    assert (again.decision, again.category) == ("escalate", "external_service")
    # a refusal a person must answer is no blip
    refused = "npm ERR! code E401\nnpm ERR! Unable to authenticate, your token is expired"
    assert decide(["FAILED x - KeyError", refused]).category == "external_service"


def test_a_push_the_git_host_refuses_for_a_rule_or_a_scope_needs_its_admins() -> None:
    for refusal in (
        "remote: error: GH006: Protected branch update failed for refs/heads/main.\n"
        "remote: error: At least 1 approving review is required by reviewers with write access.",
        "! [remote rejected] nightly/ci -> nightly/ci (refusing to allow a Personal Access Token "
        "to create or update workflow `.github/workflows/ci.yml` without `workflow` scope)",
        "requests.exceptions.HTTPError: 410 Client Error: Gone for url: "
        "https://sandbox.carrier.example.com/v1/rates",
    ):
        d = decide(["FAILED tests/test_ship.py::test_rates - KeyError: 'zone'", refusal])
        assert (d.decision, d.category) == ("escalate", "external_service"), refusal
    # a test that expects a 410 is the behaviour under test
    expects = "FAILED tests/test_docs.py::test_deleted - assert 404 == 410  # 410 Gone expected"
    assert decide(["FAILED tests/test_docs.py::test_x - KeyError", expects]).decision == "retry"
