"""Unit tests for the output interpreter: markers, heuristics, extraction, categories."""

from __future__ import annotations

import json

import pytest

from orchestrator.interpret import (
    WHY,
    Interpretation,
    classify_command,
    interpret,
    is_extreme_destructive,
)

# ------------------------------------------------------------------------------ markers


def test_status_needs_human_with_question_options_recommendation() -> None:
    r = interpret(
        "STATUS: needs_human\n\nQUESTION: The task says to add caching but doesn't specify the type.\n\n"
        "OPTIONS:\nA) Redis (distributed, persistent)\nB) In-memory (fast, local only)\n"
        "C) File-based (simple, persistent)\n\nRECOMMENDATION: B for simplicity\n"
    )
    assert (r.verdict, r.source, r.confident) == ("needs_human", "marker", True)
    assert r.question == "The task says to add caching but doesn't specify the type."
    assert r.options == [
        "Redis (distributed, persistent)",
        "In-memory (fast, local only)",
        "File-based (simple, persistent)",
    ]
    assert r.recommendation == "B for simplicity"
    assert r.category == "ambiguous_requirements"
    assert r.why == WHY["ambiguous_requirements"]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Done with the export.\nSTATUS: completed", "completed"),
        ("**STATUS:** completed", "completed"),
        ("Build broke.\nSTATUS: failed\nmissing header", "failed"),
        ("STATUS: needs_human", "needs_human"),
        ("status: Needs_Human", "needs_human"),
    ],
)
def test_status_marker_values(text: str, verdict: str) -> None:
    r = interpret(text)
    assert (r.verdict, r.source) == (verdict, "marker")


def test_failed_marker_keeps_the_error_line() -> None:
    r = interpret("Ran validation.\nSTATUS: failed\n17 fixtures fail validation against schema v3")
    assert r.error == "17 fixtures fail validation against schema v3"
    assert r.why is None


def test_needs_human_prefix_is_the_question() -> None:
    r = interpret("Prepared the release.\nNEEDS_HUMAN: Please give me the npm OTP code.")
    assert (r.verdict, r.question, r.category) == (
        "needs_human",
        "Please give me the npm OTP code.",
        None,
    )
    assert r.why and r.why not in WHY.values()


def test_options_marker_alone_means_needs_human_and_inline_options_parse() -> None:
    r = interpret("OPTIONS: A) keep the alias B) remove it now")
    assert r.verdict == "needs_human"
    assert r.options == ["keep the alias", "remove it now"]


def test_a_later_status_line_wins_over_an_earlier_marker() -> None:
    r = interpret(
        "<promise>COMPLETE</promise>\nlater I found a problem\nSTATUS: failed\nflaky test"
    )
    assert r.verdict == "failed"


@pytest.mark.parametrize(
    ("category", "why_user"),
    [
        ("ambiguous_requirements", "Both are plausible."),
        ("extreme_destructive", "Deletes everything."),
        ("external_service", "The key was revoked."),
    ],
)
def test_recovery_escalate_block(category: str, why_user: str) -> None:
    r = interpret(
        "## RECOVERY ESCALATE\n\n**Type:** x\n**Category:** " + category + "\n"
        "**Diagnosis:** Something the agent found,\nwrapped over two lines.\n"
        f"**Why User Needed:** {why_user}\n**Suggested Action:** Do the thing.\n"
    )
    assert (r.verdict, r.category, r.source) == ("needs_human", category, "marker")
    assert r.question == "Something the agent found, wrapped over two lines."
    assert r.recommendation == "Do the thing."
    assert r.why == WHY[category]  # type: ignore[index]


def test_recovery_complete_and_failed() -> None:
    assert interpret("## RECOVERY COMPLETE\n\n**Fix applied:** x").verdict == "completed"
    r = interpret("## RECOVERY FAILED\n\n**Attempted:** a\n**Result:** still times out\n")
    assert (r.verdict, r.error) == ("failed", "still times out")


GSD_DECISION = """## CHECKPOINT REACHED

**Type:** decision
**Plan:** 04-01
**Progress:** 1/3 tasks complete

### Completed Tasks

| Task | Name | Commit | Files |
| ---- | ---- | ------ | ----- |
| 1    | Model | 8d2f1a0 | src/models.py |

### Current Task

**Task 2:** Choose the search backend
**Status:** awaiting decision
**Blocked by:** backend choice

### Checkpoint Details

**Decision needed:**
Which search backend to use.

**Options:**

| Option       | Pros        | Cons          |
| ------------ | ----------- | ------------- |
| postgres-fts | no service  | weak ranking  |
| meilisearch  | typo-proof  | new service   |

### Awaiting

Select: postgres-fts or meilisearch
"""


def test_gsd_checkpoint_decision() -> None:
    r = interpret(GSD_DECISION)
    assert (r.verdict, r.category, r.source) == ("needs_human", "ambiguous_requirements", "marker")
    assert r.question == "Which search backend to use."
    assert r.options == ["postgres-fts", "meilisearch"]


def test_gsd_checkpoint_human_verify_and_action() -> None:
    verify = interpret(
        "## CHECKPOINT REACHED\n\n**Type:** human-verify\n\n### Checkpoint Details\n\n"
        '**What was built:**\nDark mode.\n\n### Awaiting\n\nType "approved".\n'
    )
    assert (verify.verdict, verify.category) == ("needs_human", None)
    assert verify.question == 'Dark mode. Type "approved".'
    assert "check" in (verify.why or "")
    action = interpret(
        "## CHECKPOINT REACHED\n**Type:** human-action\n### Checkpoint Details\n"
        '**What you need to do:**\nClick the email link.\n### Awaiting\nType "done".'
    )
    assert action.verdict == "needs_human" and "Click the email link." in (action.question or "")


def test_gsd_plan_complete() -> None:
    assert interpret("## PLAN COMPLETE\n\n**Plan:** 03-02\n**Tasks:** 3/3").verdict == "completed"


RALPH = """Did some work.

---RALPH_STATUS---
STATUS: {status}
TASKS_COMPLETED_THIS_LOOP: {done}
FILES_MODIFIED: 2
TESTS_STATUS: {tests}
WORK_TYPE: IMPLEMENTATION
EXIT_SIGNAL: {exit}
RECOMMENDATION: {rec}
---END_RALPH_STATUS---
"""


@pytest.mark.parametrize(
    ("status", "done", "tests", "exit_", "verdict"),
    [
        ("COMPLETE", 1, "PASSING", "true", "completed"),
        ("BLOCKED", 0, "NOT_RUN", "false", "needs_human"),
        ("IN_PROGRESS", 1, "PASSING", "false", "completed"),
        ("IN_PROGRESS", 0, "FAILING", "false", "failed"),
        ("IN_PROGRESS", 0, "NOT_RUN", "false", "failed"),
    ],
)
def test_ralph_status_block(status: str, done: int, tests: str, exit_: str, verdict: str) -> None:
    r = interpret(
        RALPH.format(status=status, done=done, tests=tests, exit=exit_, rec="Ask about the speaker")
    )
    assert (r.verdict, r.source) == (verdict, "marker")
    if verdict == "needs_human":
        assert r.question == "Ask about the speaker"


def test_ralph_template_in_output_is_ignored() -> None:
    template = RALPH.format(
        status="IN_PROGRESS | COMPLETE | BLOCKED",
        done="<number>",
        tests="PASSING | FAILING",
        exit="false | true",
        rec="<one line>",
    )
    assert interpret(template + "\nI was unable to finish; the build fails.").verdict == "failed"


def test_promise_and_taskmaster_markers() -> None:
    assert interpret("All done.\n<promise>COMPLETE</promise>").verdict == "completed"
    blocked = interpret("<loop-blocked>Needs Xcode to export the iOS build</loop-blocked>")
    assert (blocked.verdict, blocked.question) == (
        "needs_human",
        "Needs Xcode to export the iOS build",
    )
    assert interpret("<loop-complete>ALL_DONE</loop-complete>").verdict == "completed"
    # the prompt's placeholder echoed back is not a report
    assert (
        interpret("If blocked, emit <loop-blocked>REASON</loop-blocked>.").verdict != "needs_human"
    )


# ------------------------------------------------------------------------------ offers are completed


@pytest.mark.parametrize(
    "offer",
    [
        "Would you like me to also add docs?",
        "Let me know if you want different lifetimes.",
        "Shall I also update the CHANGELOG?",
        "Do you want me to run the tests too?",
        "If you'd like, I can also add a retry decorator.",
        "What would you like me to tackle next — the export or the filters?",
        "Want me to add the same option to the list command?",
        "Soll ich noch die OpenAPI-Beschreibung ergänzen?",
        "Möchtest du, dass ich auch ODS-Dateien unterstütze?",
        "Sag Bescheid, falls du es anders haben möchtest.",
    ],
)
def test_offers_after_finished_work_are_completed(offer: str) -> None:
    text = (
        "I've implemented the CSV export with streaming.\n\n- `export.py`: yields chunks\n"
        "- tests: 14 new\n\nAll 112 tests pass.\n\n" + offer
    )
    r = interpret(text)
    assert r.verdict == "completed", offer
    assert r.why is None and r.question is None


def test_retry_offer_after_failure_is_failed() -> None:
    r = interpret(
        "I couldn't get the reconnect test to pass; it still times out.\n\n"
        "Would you like me to try a different approach?"
    )
    assert r.verdict == "failed"
    assert r.error and "couldn't get the reconnect test" in r.error


def test_real_choice_after_finished_work_still_asks() -> None:
    r = interpret(
        "I've implemented the endpoint and all tests pass.\n\n"
        "Which base URL should the examples use, staging or production?"
    )
    assert r.verdict == "needs_human"


# ------------------------------------------------------------------------------ heuristics


def test_seed_scenario_a_unmarked() -> None:
    r = interpret(
        "The task says to add caching but doesn't specify the type.\n\nOPTIONS:\nA) Redis (distributed, "
        "persistent)\nB) In-memory (fast, local only)\nC) File-based (simple, persistent)\n\n"
        "RECOMMENDATION: B for simplicity\n\nWhat would you prefer?"
    )
    assert r.verdict == "needs_human"
    assert len(r.options) == 3 and r.recommendation == "B for simplicity"


@pytest.mark.parametrize(
    "text",
    [
        "Should I use Redis or the in-memory cache?",
        "I'm not sure whether the limit applies per user or per API key.",
        "Please confirm the price table before I continue.",
        "The task doesn't specify the date format. Could you clarify which one is intended?",
        "Welche Variante soll ich umsetzen?",
        "Bevor ich anfange: Soll ich Redis oder In-Memory verwenden?",
    ],
)
def test_blocking_questions_need_a_human(text: str) -> None:
    assert interpret(text).verdict == "needs_human"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\nKeyError: 'id'",
            "KeyError",
        ),
        ("I was unable to get the integration test to pass.", "unable"),
        (
            "$ pytest -q\n..F.\nFAILED tests/test_x.py::test_y - assert 1 == 2\n1 failed, 3 passed in 0.2s",
            "failed",
        ),
        ("The build still fails with error TS2345 in orders.ts.", "still fails"),
        ("Error: Process completed with exit code 1.", "exit code 1"),
        ("Die Tests schlagen weiterhin fehl, ich konnte den Fehler nicht beheben.", "konnte"),
        ("I hit the turn limit before finishing the migration.", "turn limit"),
    ],
)
def test_failure_signals(text: str, needle: str) -> None:
    r = interpret(text)
    assert r.verdict == "failed"
    assert r.error and needle in r.error


def test_errors_fixed_earlier_in_a_log_do_not_fail_a_green_run() -> None:
    log = (
        "$ pytest -q\nFAILED tests/a.py::test_x - assert 6 == 3\n1 failed, 9 passed\n\n"
        "The importer inserted duplicates; I made it upsert by external id.\n\n"
        "$ pytest -q\n..........\n10 passed in 0.4s\n\nImport is idempotent now; all 10 tests pass."
    )
    assert interpret(log).verdict == "completed"


def test_no_signal_defaults_to_unconfident_completed_and_empty_output_to_failed() -> None:
    r = interpret("I looked at the parser module.")
    assert (r.verdict, r.source, r.confident) == ("completed", "default", False)
    empty = interpret("   \n")
    assert (empty.verdict, empty.confident) == ("failed", False)


def test_questions_inside_code_blocks_are_not_questions() -> None:
    r = interpret(
        "I've added the FAQ page. All docs checks pass.\n\n```markdown\n## Should I use Redis or "
        "memory?\nUse Redis for several workers.\n```\n"
    )
    assert r.verdict == "completed"


def test_german_summary_is_completed() -> None:
    r = interpret("Ich habe die Paginierung umgesetzt.\n\nAlle 174 Tests sind grün.")
    assert (r.verdict, r.confident) == ("completed", True)


def test_interpretation_is_json_serialisable_and_frozen() -> None:
    r = interpret(
        "Should I use Redis or in-memory caching?\nA) Redis\nB) In-memory\nI recommend B."
    )
    data = json.loads(json.dumps(r.to_dict()))
    assert data["verdict"] == "needs_human" and data["options"] == ["Redis", "In-memory"]
    assert Interpretation(**data) == r
    with pytest.raises(Exception):
        r.verdict = "completed"  # type: ignore[misc]


# ------------------------------------------------------------------------------ option / recommendation styles

QUESTION = "\n\nWhich one do you want?"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("A) Redis\nB) In-memory\nC) File", ["Redis", "In-memory", "File"]),
        ("A. Redis\nB. In-memory", ["Redis", "In-memory"]),
        ("(a) Redis\n(b) In-memory", ["Redis", "In-memory"]),
        ("a) Redis\nb) In-memory", ["Redis", "In-memory"]),
        ("1. Redis\n2. In-memory\n3. File", ["Redis", "In-memory", "File"]),
        ("1) Redis\n2) In-memory", ["Redis", "In-memory"]),
        ("Two options:\n- Redis\n- In-memory", ["Redis", "In-memory"]),
        ("The approaches I see:\n* Redis\n* In-memory", ["Redis", "In-memory"]),
        (
            "**Option A: Redis**\nDistributed.\n\n**Option B: In-memory**\nLocal only.",
            ["Redis", "In-memory"],
        ),
        (
            "### Option 1: Redis\nDistributed.\n\n### Option 2: In-memory\nLocal.",
            ["Redis", "In-memory"],
        ),
        ("**1. Redis**\nDistributed.\n\n**2. In-memory**\nLocal.", ["Redis", "In-memory"]),
        (
            "| Option | Pros |\n|---|---|\n| Redis | shared |\n| In-memory | fast |",
            ["Redis", "In-memory"],
        ),
        (
            "| Approach | Effort |\n|----------|--------|\n| **Redis** | medium |\n| In-memory | small |",
            ["Redis", "In-memory"],
        ),
        ("Optionen:\nA) Redis\nB) In-Memory", ["Redis", "In-Memory"]),
    ],
)
def test_option_styles(block: str, expected: list[str]) -> None:
    r = interpret("The task doesn't say which cache to use.\n\n" + block + QUESTION)
    assert r.verdict == "needs_human"
    assert r.options == expected


def test_either_or_question_gives_two_options() -> None:
    assert interpret("Should login use session or JWT?").options == ["session", "JWT"]


def test_a_list_of_changes_is_not_a_set_of_options() -> None:
    r = interpret(
        "Here is my plan:\n1. Add rq\n2. Port the tasks\n3. Remove Celery\n\n"
        "Before I start, can you confirm this plan?"
    )
    assert r.verdict == "needs_human"
    assert r.options == []
    assert r.category is None


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I recommend B for simplicity.", "B for simplicity"),
        ("I'd recommend the in-memory cache.", "the in-memory cache"),
        ("I'd lean towards Option A, because it is simpler.", "Option A, because it is simpler"),
        ("I lean toward Redis.", "Redis"),
        ("My suggestion: UUIDv7 stored as uuid.", "UUIDv7 stored as uuid"),
        ("My recommendation is B.", "B"),
        ("I'd go with (b) since it is explicit.", "(b) since it is explicit"),
        ("Ich empfehle Variante 2, weil sie einfacher ist.", "Variante 2, weil sie einfacher ist"),
        ("Meine Empfehlung: B.", "B"),
        ("RECOMMENDATION: B for simplicity", "B for simplicity"),
    ],
)
def test_recommendation_styles(sentence: str, expected: str) -> None:
    r = interpret(
        "The task doesn't say which cache to use.\n\nA) Redis\nB) In-memory\n\n"
        + sentence
        + "\n\nWhich one do you want?"
    )
    assert r.recommendation == expected


def test_recommendation_wrapped_over_lines_is_whole() -> None:
    r = interpret(
        "A) Redis\nB) In-memory\n\nI recommend B, since the service runs as a\nsingle process today.\n\n"
        "What would you prefer?"
    )
    assert r.recommendation == "B, since the service runs as a single process today"


def test_bare_question_gets_its_context() -> None:
    r = interpret(
        "The task says to add caching but doesn't specify the type.\n\nA) Redis\nB) In-memory\n\n"
        "What would you prefer?"
    )
    assert (
        r.question
        == "The task says to add caching but doesn't specify the type. What would you prefer?"
    )


# ------------------------------------------------------------------------------ categories: destructive


@pytest.mark.parametrize(
    "cmd",
    [
        "DROP TABLE users;",
        "drop database shop_staging",
        "TRUNCATE TABLE events;",
        "DELETE FROM sessions;",
        "npx prisma migrate reset --force",
        "cd api && npx prisma migrate reset",
        "prisma db push --force-reset",
        "bin/rails db:reset",
        "rails db:drop",
        "bundle exec rake db:schema:load",
        "python manage.py flush --noinput",
        "php artisan migrate:fresh --seed",
        "rm -rf /",
        "sudo rm -rf /*",
        "rm -rf ~",
        "rm -rf ~/",
        "rm -rf $HOME",
        "rm -rf .",
        "rm -rf *",
        "rm -fr data/",
        "rm -r -f ./data/uploads",
        "rm -rf /srv/app/shared/uploads/*",
        "rm -rf /var/lib/postgresql/16/main",
        "rm -rf .git",
        "git push --force origin main",
        "git push -f origin master",
        "git push origin +main",
        "git push --force-with-lease origin main",
        "git push --force",
        "git push origin --delete main",
        "git push --mirror",
        "bash -lc 'rm -rf ~/'",
        "terraform destroy -target=module.vpc",
        "kubectl delete namespace prod",
        "docker compose down -v",
        "docker volume rm pgdata",
        "aws s3 rm s3://bucket/ --recursive",
        "redis-cli FLUSHALL",
        "psql -c 'DROP TABLE orders_old'",
        "dropdb shop",
    ],
)
def test_destructive_commands(cmd: str) -> None:
    assert classify_command(cmd) == "extreme_destructive", cmd
    assert is_extreme_destructive(cmd)


@pytest.mark.parametrize(
    "cmd",
    [
        "rm -rf node_modules",
        "rm -rf node_modules package-lock.json && npm install",
        "rm -rf build dist *.egg-info",
        "rm -rf .cache __pycache__ .pytest_cache",
        "rm -rf /tmp/work-1234",
        "rm -rf ./tmp/screenshots",
        "rm -rf target/ coverage/ .next",
        "rm -rf src/legacy",
        "rm file.txt",
        "git push --force-with-lease origin feature/search-filters",
        "git push --force-with-lease",
        "git push -u origin feature/login",
        "git push --force origin fix/typo",
        "npx prisma migrate dev",
        "rails db:migrate",
        "docker compose down",
        "SELECT * FROM users WHERE id = 1",
        "DELETE FROM sessions WHERE expires_at < now();",
        "echo 'truncate the title'",
        "pytest -q",
    ],
)
def test_routine_commands_are_not_destructive(cmd: str) -> None:
    assert classify_command(cmd) is None, cmd


def test_proposed_destructive_command_escalates() -> None:
    r = interpret(
        "The migration drifted. The quickest fix would be `npx prisma migrate reset`, which drops "
        "the database and re-seeds it. Should I go ahead?"
    )
    assert (r.verdict, r.category, r.source) == ("needs_human", "extreme_destructive", "category")
    assert r.why == WHY["extreme_destructive"]
    assert r.evidence == "npx prisma migrate reset"


def test_destructive_proposal_overrides_a_failed_verdict() -> None:
    r = interpret(
        "I couldn't apply the migration: column contains null values.\n\nTo fix it I need to run:\n\n"
        "```bash\nrails db:reset\n```\n"
    )
    assert (r.verdict, r.category) == ("needs_human", "extreme_destructive")


@pytest.mark.parametrize(
    "text",
    [
        # code it was asked to write
        "Created the migration `db/0003.sql`:\n\n```sql\nALTER TABLE a ADD b int;\nDROP TABLE old_a;\n```\n\n"
        "Applied it to the throwaway test DB; all tests pass.",
        # routine clean-up
        "I fixed the build with a clean reinstall:\n\n```bash\nrm -rf node_modules .cache\nnpm ci\n```\n\n"
        "The build now succeeds and 87 tests pass.",
        # mentioned in passing / negated
        "The old bootstrap issued `DROP TABLE audit_log` before each session. I replaced that with "
        "transactions that roll back. All 640 tests pass.",
        "I won't use `prisma migrate reset` here since CI uses a persistent database. I wrote a "
        "nullable migration instead and all tests pass.",
        "Never run `DROP TABLE` against shared databases, the new CONTRIBUTING section says. Docs build passes.",
        # force-with-lease to its own branch
        "Rebased and pushed with `git push --force-with-lease origin feature/x`. All tests pass.",
    ],
)
def test_destructive_words_without_intent_do_not_escalate(text: str) -> None:
    r = interpret(text)
    assert r.category is None
    assert r.verdict == "completed"


# ------------------------------------------------------------------------------ categories: external


@pytest.mark.parametrize(
    "text",
    [
        "The refund test fails:\n\n```\nstripe.error.AuthenticationError: Invalid API Key provided (Status 401)\n```",
        "openai.RateLimitError: Error code: 429 - {'error': {'code': 'insufficient_quota'}}",
        "requests.exceptions.HTTPError: 403 Client Error: rate limit exceeded for url: https://api.github.com/x",
        "FetchError: request to https://sandbox.pay.example/v2 failed, reason: getaddrinfo ENOTFOUND sandbox.pay.example",
        'connection to server at "db.prod.internal" (10.2.0.7), port 5432 failed: Connection refused',
        "npm ERR! code E401\nnpm ERR! Unable to authenticate, your authentication token seems to be invalid.",
        "An error occurred (ExpiredToken) when calling the PutObject operation",
        "fatal: unable to access 'https://git.vendor.example/hal.git/': Could not resolve host: git.vendor.example",
        "Der API-Key ist abgelaufen: 401 Unauthorized von https://api.partner.example/v1",
    ],
)
def test_external_service_trouble_escalates(text: str) -> None:
    r = interpret(text)
    assert (r.verdict, r.category) == ("needs_human", "external_service"), text
    assert r.why == WHY["external_service"]


@pytest.mark.parametrize(
    "text",
    [
        # its own test server on localhost
        'psycopg.OperationalError: connection to server at "127.0.0.1", port 5432 failed: Connection refused\n'
        "I couldn't run the migration tests.",
        "waiting for http://localhost:5173: Error: connect ECONNREFUSED 127.0.0.1:5173\nI couldn't start the dev server.",
        # its own app's status codes in a failing test
        "FAILED tests/api/test_projects.py::test_viewer_cannot_delete - assert 401 == 403\nThe check is not done yet.",
        "FAILED tests/auth/test_rate_limit.py::test_blocked - AssertionError: expected 429, got 200\nNot fixed.",
    ],
)
def test_local_or_own_errors_are_ordinary_failures(text: str) -> None:
    r = interpret(text)
    assert (r.verdict, r.category) == ("failed", None), text


@pytest.mark.parametrize(
    "text",
    [
        "I've written the API docs. The error table lists 401 (missing token), 403 (missing scope) and 429 "
        "(more than 100 requests per minute). `mkdocs build --strict` passes.",
        "I've added retries for ECONNREFUSED and ETIMEDOUT; a 401 or 403 from the receiver is logged. "
        "All 64 tests pass.",
        "I've implemented the rate limiter: over-budget keys get `429 Too Many Requests`. All tests pass.",
    ],
)
def test_docs_and_features_about_errors_are_completed(text: str) -> None:
    r = interpret(text)
    assert (r.verdict, r.category) == ("completed", None), text


# ------------------------------------------------------------------------------ categories: ambiguous


def test_ambiguous_requirements_from_options() -> None:
    r = interpret(
        "The spec doesn't say which unit system to use.\n\n1. Kilometres\n2. Device locale\n\n"
        "Which one should I implement?"
    )
    assert (r.verdict, r.category, r.confident) == ("needs_human", "ambiguous_requirements", True)


def test_approval_question_is_not_ambiguous() -> None:
    r = interpret(
        "CONTRIBUTING.md says new dependencies need approval. Is it OK to add `weasyprint`?"
    )
    assert (r.verdict, r.category) == ("needs_human", None)
    assert r.why and r.why not in WHY.values()


def test_contradictory_task_that_fails_stays_failed() -> None:
    """Seed 000's doomed task: the agent reports failure, it asks nothing — a retry case, not a human."""
    r = interpret(
        "I created the file with 100 lines, but the task cannot be completed as specified: the criteria "
        "contradict each other. The task failed: 2 of 3 acceptance criteria are unmet."
    )
    assert (r.verdict, r.category) == ("failed", None)


def test_no_hostile_output_hangs_the_interpreter() -> None:
    """`bench/bench_interpret.py`'s 64 KB shapes (blank-line runs, unclosed tags, fragments),
    judged in a child process given two minutes for all of them: each takes well under a second
    (the bench measures that); a pattern whose line-start marks ran on over blank lines took
    minutes on one of them, and the suite did not notice."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    code = (
        "import sys; sys.path.insert(0, 'bench'); import bench_interpret as b; "
        "[b.interpret_rules(t) for t in b.cases().values()]"
    )
    subprocess.run([sys.executable, "-c", code], cwd=root, timeout=120, check=True)
