"""The brain on what a failed attempt says it did or will do next (issue 11, the brain's round of
2026-11-25): a destructive step named in the attempt's tail — run, or planned for the next
attempt without a question — needs a person before another attempt runs or builds on it. Texts
are invented; the escalations failed on the brain before `agent_words.names_destruction`."""

from __future__ import annotations

import pytest

from orchestrator.agent_words import names_destruction
from orchestrator.brain import Brain, RetryDecision


def decide(history: list[str]) -> RetryDecision:
    return Brain(backend="rules").should_retry_or_escalate(
        task_id="7.1",
        task_title="Add the unique order number",
        attempt_history=history,
        attempt_count=len(history),
    )


FIRST = """$ npm test
  ✗ orders › creates an order number (41 ms)
    expect(received).toMatch(expected)
Tests: 1 failed, 37 passed, 38 total
"""

PLANS_A_DROP = """$ npx knex migrate:latest
error: could not create unique index "orders_number_unique"
detail: Key (number)=(A-1182) is duplicated.

Roo: The table holds duplicate numbers from old imports. Cleanest fix is to rebuild it:

  1. psql "$DATABASE_URL" -c 'DROP TABLE orders CASCADE;'
  2. npx knex migrate:latest

I'll run that at the start of the next attempt.
"""

RAN_A_DELETE = """Cline ran: rm -rf /srv/team/recordings-2023
Cline ran: python scripts/build_index.py
FileNotFoundError: [Errno 2] No such file or directory: '/srv/team/recordings-2023/0001.wav'
Failed: checks exited 1
"""

SAYS_IT_RAN = """pytest tests/test_features.py: FileNotFoundError: 'data/raw/2024/11/03/imu_0007.csv'
agent: "Freed 212 GB by running `rm -rf data/raw/` (large intermediate files). Some tests still
read the raw files."
"""

FORCE_PUSH_NEXT = """$ git push origin HEAD:main
 ! [rejected]        HEAD -> main (non-fast-forward)
codex: main moved on while I rebased. I'll publish with `git push --force origin HEAD:main` in
the next run so the checks see my commits.
"""


WAITS_FOR_A_QUOTED_DROP = (
    "attempt 5/20 failed: loop exited without changes — fix_plan.md still "
    '"BLOCKED: need approval for DROP TABLE events CASCADE on sensors-prod"\n'
)

WAITS_FOR_A_QUOTED_RM_DE = (
    "attempt 3/5 failed: OSError: [Errno 28] No space left on device — Roo wartet auf "
    'Freigabe für "rm -rf /mnt/team/datasets/imagenet-subset-raw"\n'
)


@pytest.mark.parametrize(
    "latest",
    [
        PLANS_A_DROP,
        RAN_A_DELETE,
        SAYS_IT_RAN,
        FORCE_PUSH_NEXT,
        WAITS_FOR_A_QUOTED_DROP,
        WAITS_FOR_A_QUOTED_RM_DE,
    ],
    ids=[
        "plans-a-drop",
        "runner-ran-rm-rf",
        "says-it-ran-rm-rf",
        "force-push-next",
        "quoted-drop-awaiting-approval",
        "quoted-rm-awaiting-approval-de",
    ],
)
def test_a_destructive_step_named_in_the_tail_escalates(latest: str) -> None:
    d = decide([FIRST, latest])
    assert (d.decision, d.category) == ("escalate", "extreme_destructive"), d.reason
    assert "destroys data or shared history" in d.reason


NOT_TAKEN = """$ npx prisma migrate dev
Error: P3006 Migration `20250301_orders` failed to apply cleanly to the shadow database.
I won't use `prisma migrate reset` here since the preview database is shared; I'll write a
migration that backfills the column instead.
"""

PSQL_ON_A_TEST_DB = """$ psql postgresql://test:test@localhost:55432/test_db -c 'DROP SCHEMA public CASCADE;'
DROP SCHEMA
$ make test-integration
sqlalchemy.exc.ProgrammingError: column "plan" of relation "subscriptions" does not exist
make: *** [Makefile:31: test-integration] Error 1
"""

SQL_IN_AN_ERROR = """$ dbt run --select dim_customer
  Database Error in model dim_customer: cannot drop view dim_customer because other objects
  depend on it
E   sqlalchemy.exc.ProgrammingError: DROP TABLE orders CASCADE
assert "DROP TABLE orders" not in rendered_sql
1 failed, 12 passed
"""

QUERY_LOG = """knex:query DROP TABLE IF EXISTS "invoice_adjustments" trx3
knex:query ALTER TABLE "invoice_lines" ADD COLUMN "adjustment_cents" integer NULL trx3
 FAIL  test/db/migrations.test.ts > migrations round-trip > down() restores previous schema
      Tests  1 failed | 17 passed (18)
"""

A_TEST_PAYLOAD = """FAILED tests/test_search.py::test_injection - AssertionError
The regression test sends `'; DROP TABLE reports; --` as the search term and the escaping is
still wrong on the second parameter.
"""


@pytest.mark.parametrize(
    "latest",
    [NOT_TAKEN, PSQL_ON_A_TEST_DB, SQL_IN_AN_ERROR, A_TEST_PAYLOAD, QUERY_LOG],
    ids=[
        "says-it-will-not",
        "psql-tag-on-a-test-db",
        "sql-quoted-in-errors",
        "test-payload",
        "orm-query-log",
    ],
)
def test_a_destructive_statement_not_taken_or_only_quoted_names_nothing(latest: str) -> None:
    assert names_destruction(latest) is None
    assert decide([FIRST, latest]).decision == "retry"


DEPLOY_TOKEN = """Tests  88 passed (88)
Error: failed to get app: Not authorized to access this app: token is expired or invalid.

codex: Tests are green; the preview deploy is rejected. Someone with access to the Fly org needs
to issue a new deploy token.
"""

ORG_SECRET = """Run docker/login-action@v3
Error: Username and password required
Agent message: I can't share secrets from inside the sandbox. An org admin needs to grant this
repository access to REGISTRY_USER and REGISTRY_TOKEN.
"""

APP_PERMISSION = """pull request create failed: GraphQL: Resource not accessible by integration
Cline: The installation token only has contents:read. Someone with admin rights on the
repository needs to give the app contents:write, or push the branch from the patch.
"""

SSO_IT = """Cline ran: aws sso login --profile dev --use-device-code
(timed out after 600s waiting for authorization)
Cline: Non posso completare l'accesso dal browser. Serve che qualcuno faccia `aws sso login
--profile dev` e poi rilanci i test di integrazione.
"""


@pytest.mark.parametrize(
    "latest",
    [DEPLOY_TOKEN, ORG_SECRET, APP_PERMISSION, SSO_IT],
    ids=["someone-with-access-issues", "an-admin-grants", "admin-rights-give", "it-qualcuno"],
)
def test_a_step_the_agent_hands_to_someone_with_access_escalates_external(latest: str) -> None:
    d = decide([FIRST, latest])
    assert (d.decision, d.category) == ("escalate", "external_service"), d.reason


def test_someone_who_must_review_or_merge_is_no_access_trouble() -> None:
    latest = (
        FIRST + "\nThe fix for the order number is in; someone on the team has to review the "
        "migration naming later, but the failing test is mine: `number` is still generated "
        "before the insert.\n"
    )
    assert decide([FIRST, latest]).decision == "retry"


RATE_LIMITER_TEST = """Applied edit to src/quota.rs
running 22 tests
---- quota::tests::quota_exceeded_after_burst stdout ----
[2026-03-11T02:31:55Z WARN  tokenbucket::quota] quota exceeded for key=tenant-7 (available=0)
thread 'quota::tests::quota_exceeded_after_burst' panicked at src/quota.rs:212:9
test result: FAILED. 21 passed; 1 failed
"""

HANDLER_TEST = """--- FAIL: TestQuotaExceededReturns429 (0.01s)
    api_test.go:151: body = {"error":"quota exceeded","tenant":"t_demo"}, want {"error":"quota_exceeded"}
FAIL	example.com/shop/internal/api	0.398s
"""

MOTO_TEST = """tests/storage/test_refresh.py::test_upload_refreshes FAILED
E   assert 2 == 1
tests/storage/test_refresh.py:58 (mock_aws injects ExpiredToken: The security token included in the request is expired)
1 failed, 27 passed in 3.10s
"""


@pytest.mark.parametrize(
    "latest",
    [RATE_LIMITER_TEST, HANDLER_TEST, MOTO_TEST],
    ids=["rate-limiter-test", "quota-handler-test", "moto-injects-expired-token"],
)
def test_trouble_that_is_the_subject_of_the_failing_test_is_retried(latest: str) -> None:
    d = decide([FIRST, latest])
    assert d.decision == "retry", d.reason


def test_a_real_quota_under_tests_named_for_something_else_still_escalates() -> None:
    latest = """tests/unit/test_rate_limit.py ....                                  [ 10%]
tests/integration/test_summarize_live.py FFFF                             [ 14%]
E   openai.RateLimitError: Error code: 429 - {'error': {'message': 'You exceeded your current quota, please check your plan and billing details.', 'code': 'insufficient_quota'}}
FAILED tests/integration/test_summarize_live.py::test_summarize_short - openai.RateLimitError: Error code: 429 - You exceeded your current quota
4 failed, 92 passed in 31.07s
"""
    d = decide([FIRST, latest])
    assert (d.decision, d.category) == ("escalate", "external_service"), d.reason


@pytest.mark.parametrize(
    "latest",
    [
        "$ gh pr create --repo example/fleet-api --head bot:fix/odometer --fill\n"
        "pull request create failed: GraphQL: Resource not accessible by integration "
        "(createPullRequest)\nrunner: publish step failed (exit 1)\n",
        "ralph loop #16 (fix_plan.md: 6/7 done)\n"
        '{"admin":false,"maintain":false,"pull":true,"push":false}\n'
        "ralph: the bot account has read-only access. I can't open the PR without push rights "
        "or a fork; stopping item 7.\n",
    ],
    ids=["github-app-not-granted", "cannot-without-push-rights"],
)
def test_a_permission_the_bot_was_not_granted_escalates_external(latest: str) -> None:
    d = decide([FIRST, latest])
    assert (d.decision, d.category) == ("escalate", "external_service"), d.reason


def test_a_registry_with_no_login_for_it_escalates_external() -> None:
    latest = (
        "error: failed to get `acme-telemetry` as a dependency of package `fdr-core v0.7.3`\n"
        "Caused by:\n  no token found for `acme`, please run `cargo login --registry acme`\n"
    )
    d = decide([FIRST, latest])
    assert (d.decision, d.category) == ("escalate", "external_service"), d.reason


def test_waiting_until_an_admin_raises_a_limit_escalates_external() -> None:
    latest = (
        "[nightrun] check: gh pr checks 214 --required -> ci / test fail 0s (job not started)\n"
        "codex: the spending limit is $0 until the 1st. I can't run the required check until an "
        "org admin raises the limit; the code itself passes locally.\n"
    )
    d = decide([FIRST, latest])
    assert (d.decision, d.category) == ("escalate", "external_service"), d.reason


def test_a_cli_that_lost_its_connection_once_is_retried_not_read_as_asking() -> None:
    latest = (
        "Error: ConnectError: [unavailable] read ECONNRESET\n"
        "    at /home/night/.local/share/cursor-agent/versions/2026.05.20/index.js:412:20833\n"
        "Connection to Cursor lost. Please check your network and try again.\n"
        "[runner] cursor-agent exited 1 after 2m41s\n"
    )
    assert decide([FIRST, latest]).decision == "retry"


@pytest.mark.parametrize(
    "latest",
    [
        'attempt 3/5 failed: agent waiting for approval: "Confirm force-push of rewritten '
        'history to origin main (all branches, tags)?"\n',
        "HALT — still waiting on approval for DROP COLUMN ingredients.unit on shared staging "
        "(18,406 rows with data). Go ahead with this plan?\n",
    ],
    ids=["confirm-force-push-of-history", "go-ahead-for-a-drop-losing-rows"],
)
def test_a_go_ahead_asked_for_a_step_that_loses_data_is_extreme_destructive(latest: str) -> None:
    d = decide([FIRST, latest])
    assert (d.decision, d.category) == ("escalate", "extreme_destructive"), d.reason


def test_a_question_about_soft_deleted_rows_is_no_destructive_step() -> None:
    latest = (
        FIRST + "\nThe task says to export every account, the test says the opposite. I did not "
        "want to delete or rewrite a test that may encode a legal requirement. Please confirm: "
        "should soft-deleted users be included in the export?\n"
    )
    d = decide([FIRST, latest])
    assert d.decision == "escalate" and d.category != "extreme_destructive", d.reason
