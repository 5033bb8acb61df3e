"""Third round of general mechanisms for real outputs (issue 11), one behaviour each, on invented
text: an offer to start work nothing was done for yet, a request to run something and report
back, and the platform's own errors the table now reads."""

from __future__ import annotations

from orchestrator.interpret import interpret
from orchestrator.interpret.text import split_lines


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
    out = interpret(review)
    assert (out.verdict, out.category) == ("needs_human", "ambiguous_requirements")


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


def test_a_request_with_its_purpose_is_not_an_offer() -> None:
    out = interpret(
        "The repository has no remote named `upstream` yet.\n\n"
        "Could you send me the URL of the upstream repository so I can add it for you?"
    )
    assert out.verdict == "needs_human"


def test_a_step_the_user_does_and_reports_back_blocks_even_after_finished_work() -> None:
    out = interpret(
        "I've written the seed script and all 8 tests pass.\n\n"
        "Run it against the staging database from the admin console. Let me know when the "
        "import is complete and I'll help you with the next steps."
    )
    assert out.verdict == "needs_human"
    assert (
        interpret(
            "I've written the seed script.\n\nLet me know if anything else is needed."
        ).verdict
        == "completed"
    )


def test_running_out_of_funds_needs_a_person() -> None:
    out = interpret("You seem to have run out of funds in your account. Add more to continue.")
    assert (out.verdict, out.category) == ("needs_human", "external_service")


def test_which_follow_up_to_do_next_after_finished_work_is_not_a_blocker() -> None:
    out = interpret(
        "I've trimmed the export and all 14 checks pass.\n\n"
        "If you'd like, I can:\n- archive the old files,\n- or split the export by year.\n\n"
        "Which would you like me to do next?"
    )
    assert out.verdict == "completed"


def test_a_request_for_access_to_a_remote_service_is_external_service() -> None:
    out = interpret(
        "The deploy needs your Fly.io account, which this session cannot use.\n\n"
        "Could you please generate an API token at https://fly.io/user/personal_access_tokens "
        "and paste it here?"
    )
    assert (out.verdict, out.category) == ("needs_human", "external_service")
    # the same words describing how a login works ask for nothing remote
    out = interpret(
        "Should the admin page use the proxy's login prompt or the app's own form?\n\n"
        "With the proxy, you provide valid credentials and nginx lets you in."
    )
    assert out.category != "external_service"


def test_a_question_about_what_only_the_user_sees_is_for_the_user() -> None:
    out = interpret(
        "The config in `app.py` looks right to me. If the server isn't starting, the cause may be "
        "elsewhere. What exact error are you getting when you start it?"
    )
    assert out.verdict == "needs_human"


BLOCK = (
    "Here is the corrected block:\n\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n"
    ">>>>>>> REPLACE\n```\n\nThis will set x to 2.\n\n> Tokens: 1.2k sent, 80 received.\n"
)


def test_an_edit_block_never_applied_is_a_failed_attempt() -> None:
    assert interpret(BLOCK).verdict == "failed"
    assert interpret(BLOCK + "> Applied edit to app.py\n").verdict == "completed"
    # a block handed to an edit tool is applied by the tool
    tool = BLOCK.replace(
        "> Tokens", "[replace_in_file for 'app.py'] Result:\nThe file was saved.\n> T"
    )
    assert interpret(tool).verdict != "failed"


def test_a_list_of_questions_is_requirements_still_open_in_any_language() -> None:
    out = interpret(
        "要件を確認させてください。\n\n- 地図: どれを使いますか?\n- 保存: 必要ですか?\n"
        "- 共有: 必要ですか?\n\n回答をいただければ計画を立てます。"
    )
    assert (out.verdict, out.category) == ("needs_human", "ambiguous_requirements")
    counted = interpret(
        "The plan is in `PLAN.md`.\n\nTwo open questions are blocking the start: confirmation of "
        "the target package name, and the docs layout."
    )
    assert counted.category == "ambiguous_requirements"


def test_a_checkers_summary_printed_after_the_claims_without_a_fence_is_tool_output() -> None:
    for summary in (
        "Tests:       1 failed, 12 passed, 13 total",
        "✖ 5 problems (3 errors, 2 warnings)",
        'src/a.py:3:5 - error: "foo" is not defined\n1 error, 0 warnings, 0 informations',
    ):
        out = interpret(f"I've fixed the date util.\n\n{summary}")
        assert out.verdict == "failed", summary
    assert interpret("I've fixed the date util.\n\nTests:       13 passed, 13 total").verdict == (
        "completed"
    )


def test_ending_on_a_checklist_with_items_still_open_is_unfinished() -> None:
    ticked = "Progress:\n\n- [x] Add the schema\n- [x] Backfill users\n- [ ] Backfill orders"
    assert interpret(ticked).verdict == "failed"
    todo = "● Update Todos\n  ⎿  ☒ Add the schema\n     ☐ Switch the reads"
    assert interpret(todo).verdict == "failed"
    plan = "Plan:\n\n- [ ] Add the schema\n- [ ] Backfill users\n\nShall I start?"
    assert interpret(plan).verdict != "failed"
    done = "- [x] Add the schema\n- [x] Backfill users\n\nAll 40 tests pass."
    assert interpret(done).verdict == "completed"


def test_a_plan_step_that_drops_a_table_asked_about_after_its_consequence_is_destructive() -> None:
    plan = (
        "Plan:\n1. Truncate the `events` table\n2. Reload it from the archive\n\n"
        "This removes all current rows. Shall I go ahead?"
    )
    assert interpret(plan).category == "extreme_destructive"
    done = (
        "I dropped the unused `tmp_sessions` table from the schema and all 30 tests pass. "
        "Would you like me to also clean up the fixtures?"
    )
    assert interpret(done).verdict == "completed"


def test_the_access_asked_for_can_be_named_in_the_sentence_before_the_request() -> None:
    out = interpret(
        "The Mailgun delivery test needs `MAILGUN_API_KEY`, which is not set here. "
        "Could you add it to the environment?"
    )
    assert (out.verdict, out.category) == ("needs_human", "external_service")


def test_a_claim_inside_what_the_agent_could_not_do_is_no_claim() -> None:
    out = interpret(
        "I reworked the loader but couldn't get the test suite to pass: the fixture still "
        "raises on the second run."
    )
    assert out.verdict == "failed"
    ok = interpret(
        "I couldn't reproduce the flaky run, but I've fixed the race; all 30 tests pass."
    )
    assert ok.verdict == "completed"


def test_a_tool_calls_result_is_tool_output_and_the_next_message_is_prose() -> None:
    codex = "• Updated the parser to accept empty input.\n\n• Ran pytest -q\n  └ F..\n    1 failed, 2 passed in 0.3s"
    assert interpret(codex).verdict == "failed"
    claude = (
        "⏺ I've added the benchmark.\n\n⏺ Bash(python bench.py)\n"
        "  ⎿  Error: Command timed out after 2m 0.0s"
    )
    assert interpret(claude).verdict == "failed"
    after = (
        "⏺ Bash(pytest -q)\n  ⎿  3 failed, 9 passed\n\n"
        "⏺ I fixed the three failures (a stale fixture); the rerun is green: all 12 tests pass."
    )
    assert interpret(after).verdict == "completed"
    zones = [ln.zone for ln in split_lines("⏺ Bash(ls)\n  ⎿  a.py\n⏺ Done: listed the files.")]
    assert zones == ["output", "output", "prose"]


def test_last_words_that_only_say_what_will_be_done_are_a_plan_waiting_for_a_go() -> None:
    plan = (
        "Here is how I'd set it up:\n\n"
        "1. `app/db.py` (new): it will create the async engine and the session factory.\n"
        "2. `app/deps.py` (new): it will provide the session to each request.\n"
        "3. `main.py`: this will register the routers, and it will add CORS.\n"
        "4. `tests/`: they will cover the health check."
    )
    out = interpret(plan)
    assert (out.verdict, out.category, out.options) == ("needs_human", None, [])
    done = plan.replace("Here is how I'd set it up", "I've created the files")
    assert interpret(done).verdict == "completed"


def test_a_plan_tool_call_the_output_ends_on_waits_for_approval() -> None:
    cursor = (
        "Creating the plan:\n\n---\n\n"
        '<tool-use data-tool-type="unknown" data-tool-name="create_plan">\n<details>\n'
        "<summary>Tool use: **create_plan**</summary>\n\nParameters:\n\n```json\n"
        '{\n  "plan": "# Add a nightly export\\n1. Write the job",\n  "todos": []\n}\n```\n'
    )
    assert interpret(cursor).verdict == "needs_human"
    cline = "<plan_mode_respond>\n<response>\n1. Add the job\n2. Schedule it\n</response>\n</plan_mode_respond>"
    assert interpret(cline).verdict == "needs_human"
    approved = (
        "⏺ ExitPlanMode(plan: add the nightly export)\n  ⎿  User approved the plan\n\n"
        "⏺ I've added the nightly export job; all 12 tests pass."
    )
    assert interpret(approved).verdict == "completed"


def test_no_way_to_authenticate_to_a_remote_service_from_here_is_external_service() -> None:
    out = interpret(
        "The tag was created locally, but pushing it to GitLab fails because SSH credentials "
        "aren't configured in this sandbox. You can push it yourself with `git push --tags`."
    )
    assert (out.verdict, out.category) == ("needs_human", "external_service")
    local = interpret(
        "I've added the login form; the credentials are not stored in localStorage any more "
        "and all 9 tests pass."
    )
    assert local.verdict == "completed"


def test_a_bare_question_mark_asks_nothing() -> None:
    out = interpret(
        "Let me read the config files first.\n\n?\n\nLet me look at the config files to see how the "
        "service starts. I'll check app.yaml and deploy.sh next."
    )
    assert out.verdict == "failed"  # it ends on what it is about to do


def test_permission_menus_in_other_clis_wait_for_approval() -> None:
    gemini = (
        "╭──────────────────────────────╮\n│ ?  Shell make clean          │\n"
        "│ Allow execution of: 'make'?  │\n│ ● 1. Yes, allow once         │\n"
        "│   2. No, suggest changes     │\n╰──────────────────────────────╯"
    )
    assert interpret(gemini).verdict == "needs_human"
    one_line = "▌ Allow command?\n▌ make deploy\n▌ Yes (y)  No (n)  Always (a)"
    assert interpret(one_line).verdict == "needs_human"
    answered = "Yes (y)  No (n): y\n\nI've deployed the site; the health check returns 200."
    assert interpret(answered).verdict == "completed"
