"""Round 15 (issue 11), one behaviour each, on invented text. Written on the spent realistic sets
`tests/corpus_styles4`-`6` and the spent real sets `holdback9`/`holdback10`: the last result a
tool printed speaks against the agent's claim (a failing run with nothing passing after it, in
whatever layout the log gives it), and a runner's success line counts wherever the layout put
it."""

from __future__ import annotations

import pytest
from tests.corpus_cases import outcome_and_category

from orchestrator.interpret import interpret

decide = outcome_and_category

CLAIMS_OVER_A_FAILING_RUN = [
    # Claude Code: the claim follows a red run and nothing ran after it
    "⏺ Bash(npx vitest run)\n  ⎿   FAIL  src/cart.test.ts > applies coupon\n"
    "     Tests  2 failed | 11 passed (13)\n\n"
    "⏺ The coupon rules are implemented and the cart tests cover them. Ready for review.",
    # Gemini CLI's box around a Maven build, then a claim in Polish
    " ╭──────────────────────────────╮\n │ ✔  Shell mvn -q compile       │\n"
    " │    [ERROR] Foo.java:[12,3] cannot find symbol │\n │    [INFO] BUILD FAILURE │\n"
    " ╰──────────────────────────────╯\n✦ Gotowe. Dodałem klasę `Raport` i metodę `generuj()`.",
    # an edit tool that changed nothing, then a claim of the change
    " ╭──────────────────────────────╮\n │ x  Edit src/lib/slug.ts      │\n"
    " │    Failed to edit, 0 occurrences found for old_string. No edits made. │\n"
    " ╰──────────────────────────────╯\n"
    "✦ Slugs now keep unicode letters, so 'Crème brûlée' becomes 'crème-brûlée'.",
]


@pytest.mark.parametrize("text", CLAIMS_OVER_A_FAILING_RUN)
def test_a_claim_made_over_a_failing_last_result_is_a_failure(text: str) -> None:
    assert decide(text) == ("retry", None)


def test_a_completion_marker_after_a_failing_run_is_refuted() -> None:
    text = (
        "```\nFAILED tests/test_export.py::test_headers - KeyError: 'sheet'\n"
        "2 failed, 40 passed in 1.31s\n```\n"
        "Marked the export item done in fix_plan.md.\n<promise>COMPLETE</promise>\n"
    )
    i = interpret(text)
    assert i.verdict == "failed"
    assert i.error is not None and "2 failed" in i.error


RUNS_THAT_PASSED_AFTER_A_FAILURE = [
    # Claude Code's result prefix before `go test`'s ok line
    "⏺ Bash(go test ./...)\n  ⎿  --- FAIL: TestRefill (0.00s)\n      FAIL\n"
    "⏺ Update(limiter/bucket.go)\n  ⎿  Updated limiter/bucket.go with 2 additions\n"
    "⏺ Bash(go test ./...)\n  ⎿  ok  \texample.com/gate/limiter\t0.012s\n\n"
    "⏺ The limiter refills fractionally now; the earlier failure was my rounding bug.",
    # a Codex log whose runner lines its layout leaves bare
    "exec\n/bin/bash -lc 'cargo test' in /w/p exited 101:\n"
    "test result: FAILED. 30 passed; 1 failed; 0 ignored\n\n"
    "file update\nM /w/p/src/date.rs\n"
    "exec\n/bin/bash -lc 'cargo test' in /w/p succeeded in 4.1s:\n"
    "test result: ok. 31 passed; 0 failed; 0 ignored\n\n"
    "codex\nLowercase offsets are accepted now and every parser test passes.\n",
]


@pytest.mark.parametrize("text", RUNS_THAT_PASSED_AFTER_A_FAILURE)
def test_a_run_that_passed_after_the_failure_speaks_for_the_claim(text: str) -> None:
    assert decide(text) == ("complete", None)


@pytest.mark.parametrize(
    "ending",
    [
        "I'll hold here until you give the go-ahead to switch the production traffic.",
        "The new dependency needs a maintainer's approval, so I'm pausing here for your OK.",
        "The story stays in Draft until you review it. Approve it to move it on, or tell me what to change.",
        "Both layouts are plausible, and I need someone to confirm which one is current.",
        "Il piano è pronto. Attendo la tua approvazione prima di iniziare il task 1.",
        "코드는 작성했습니다. 테스트 계정 값을 넣어 주시면 E2E 테스트를 실행하겠습니다.",
        "サーバー側の実装は完了しました。テスト用アカウントを用意していただければ、残りの確認を続行します。",
    ],
)
def test_the_agent_stopping_until_the_person_acts_waits(ending: str) -> None:
    text = "I read the spec and the current module.\n\n" + ending
    assert decide(text)[0] == "escalate"


def test_a_japanese_request_after_a_tool_table_is_the_agents_prose() -> None:
    text = (
        "$ task-master show 7\n┌────────┬──────────┐\n│ ID:    │ 7        │\n└────────┴──────────┘\n\n"
        "決済のサーバー側コードと単体テスト 9 件は完成し、すべて成功しています。\n"
        "ただし、サンドボックスの購入確認にはストア管理者のテスター用アカウントが必要で、私には用意できません。\n"
        "用意していただければ、7.3 を続行します。\n"
    )
    assert decide(text)[0] == "escalate"


def test_a_destructive_command_held_back_in_german_is_destructive() -> None:
    text = (
        "⏺ Die alten Tabellen werden im Code nicht mehr referenziert.\n"
        "  Geplanter Befehl (noch nicht ausgeführt):\n  ```sql\n  DROP SCHEMA archiv CASCADE;\n  ```\n"
        "  Das entfernt rund 300.000 Zeilen unwiderruflich. Ich führe das erst aus, wenn du es freigibst.\n"
    )
    assert decide(text) == ("escalate", "extreme_destructive")


@pytest.mark.parametrize(
    "question",
    [
        "Qual opção o produto quer? Nenhum arquivo foi alterado.",
        "¿Cuál de las dos variantes debo implementar?",
        "Quale delle due regole vale per il saldo?",
    ],
)
def test_a_which_question_in_other_languages_asks_to_choose(question: str) -> None:
    text = (
        "[2026-03-15T14:02:18] bash -lc 'cat docs/req.md' succeeded in 9ms:\n- 2.1 saldo em reais\n\n"
        "[2026-03-15T14:02:31] codex\nOs requisitos se contradizem:\n"
        "1. Converter tudo para BRL.\n2. Manter saldos separados.\n\n" + question + "\n"
        "[2026-03-15T14:02:31] tokens used: 4,102\n"
    )
    assert decide(text) == ("escalate", "ambiguous_requirements")


MENUS = [
    # Claude Code's plan approval: the cursor rests on an option that is not "Yes"
    "Here is the plan: split the importer into a reader and a writer.\n\n"
    "   1. Yes, clear context and auto-accept edits (shift+tab)\n"
    "   2. Yes, auto-accept edits\n   3. Yes, manually approve edits\n"
    " ❯ 4. Type here to tell Claude what to change\n",
    # Codex's approval panel, its last line a hint under the Yes/No choice
    "• Proposed Change src/report.ts (+12 -3)\n\n▌Apply changes?\n▌ Yes   No, provide feedback\n"
    "▌ Approve and apply the changes\n",
]


@pytest.mark.parametrize("text", MENUS)
def test_a_menu_the_output_ends_on_waits_for_the_person(text: str) -> None:
    assert decide(text)[0] == "escalate"


def test_a_numbered_list_after_the_work_is_no_menu() -> None:
    text = (
        "I updated the parser and all 14 tests pass.\n\nWhat changed:\n"
        "1. Yes/no flags are parsed case-insensitively\n2. Empty values are rejected\n"
    )
    assert decide(text)[0] == "complete"


def test_a_destructive_command_a_cli_holds_for_approval_is_destructive() -> None:
    text = "• Ran ls -la /srv/cache\n  └ total 0\n\n• Proposed Command\n  └ rm -rf /srv/data --no-preserve-root\n"
    assert decide(text) == ("escalate", "extreme_destructive")


def test_an_excerpt_that_begins_inside_a_code_block_ends_it_at_the_first_fence() -> None:
    text = (
        "        return f'ch={ch}'\n```\n\nStep 2 done: the hopper sweeps every channel.\n\n"
        "Which of the two parsers should I write next, the beacon parser or the probe parser?\n"
    )
    assert decide(text) == ("escalate", "ambiguous_requirements")


def test_a_question_in_bold_is_a_question() -> None:
    text = (
        "## Option 1: a shell alias\nQuick, but per machine.\n\n## Option 2: a global script\n"
        "Works in every project.\n\n**Which approach would you prefer?** \n\nLet me know and I'll set it up!"
    )
    assert decide(text) == ("escalate", "ambiguous_requirements")


@pytest.mark.parametrize(
    "notice",
    [
        "The 'gpt-9-codex' model is not supported when using Codex with a ChatGPT account.",
        'Codex encountered an error: {"detail":"The \'gpt-9\' model is not supported when using Codex with a ChatGPT account."}',
        "Your organization must be verified to use the model 'gpt-9'. Please go to the settings page.",
        "When using Gemini API, you must specify the GEMINI_API_KEY environment variable.\n"
        "Update your environment and try again (no reload needed if using .env)!",
    ],
)
def test_an_account_that_must_change_before_the_model_answers_asks_a_person(notice: str) -> None:
    assert decide(notice) == ("escalate", "external_service")


def test_a_menu_of_more_work_left_open_is_an_offer() -> None:
    text = (
        "The hydration error is resolved: the history list now renders on the client only.\n\n"
        "Would you like me to:\n1. Add error boundaries?\n2. Add more features to the UI?\n"
        "3. Something else?\n"
    )
    assert decide(text) == ("complete", None)
    closed = text.replace("3. Something else?\n", "3. Revert to server rendering?\n")
    assert decide(closed)[0] == "escalate"


def test_all_done_then_whats_next_is_finished_work() -> None:
    assert decide("All done! What's next on the agenda?") == ("complete", None)


@pytest.mark.parametrize(
    "explained",
    [
        "The other 155 tests pass; `test_defaults` is pre-existing: your `.env` overrides the "
        "default model.",
        "`go vet` and the tests pass. The only lint finding is in `third_party/jwt`, which the task "
        "said not to modify.",
    ],
)
def test_a_failure_the_last_words_explain_as_not_this_works_is_no_verdict(explained: str) -> None:
    text = (
        "⏺ Bash(make check)\n  ⎿  FAILED tests/test_config.py::test_defaults - AssertionError\n"
        "     1 failed, 155 passed in 3.10s\n\n"
        "⏺ The exporter now sends the configured model and retries on timeouts. " + explained
    )
    assert decide(text) == ("complete", None)


# Round 16, written on the spent holdback11 and corpus_styles7 after they were scored once.


def test_aiders_exhausted_context_window_is_an_ordinary_failure() -> None:
    text = (
        "Model openai/gpt-4o has hit a token limit!\nToken counts below are approximate.\n\n"
        "Input tokens: ~131,920 of 128,000 -- possibly exhausted context window!\n"
        "Output tokens: ~0 of 16,384\n"
        "Total tokens: ~131,920 of 128,000 -- possibly exhausted context window!\n\n"
        "To reduce input tokens:\n- Use /tokens to see token usage.\n- Use /drop to remove files.\n"
        "- Use /clear to clear the chat history.\n- Break your code into smaller source files.\n"
    )
    assert decide(text)[0] == "retry"


def test_a_codex_patch_that_did_not_apply_refutes_the_claim() -> None:
    text = (
        "[2026-11-24T08:32:44] apply_patch(auto_approved=true) exited 1 in 7ms:\n"
        "Failed to find expected lines in /w/app/src/api.ts\n"
        "[2026-11-24T08:32:58] exec bash -lc 'git status --short' in /w/app\n"
        "[2026-11-24T08:32:58] bash -lc 'git status --short' succeeded in 15ms:\n\n"
        "[2026-11-24T08:33:03] codex\nImplemented the ten-minute cache in `fetchForecast()`.\n"
        "[2026-11-24T08:33:03] tokens used: 7,731\n"
    )
    assert decide(text) == ("retry", None)


def test_a_codex_command_that_is_no_check_says_nothing_about_the_work() -> None:
    text = (
        "[2026-11-24T09:01:02] bash -lc 'grep -rn TODO src' exited 1 in 9ms:\n\n"
        "[2026-11-24T09:01:40] bash -lc 'npm test' succeeded in 4.2s:\nTests: 12 passed, 12 total\n\n"
        "[2026-11-24T09:01:44] codex\nThe TODOs are resolved and all 12 tests pass.\n"
        "[2026-11-24T09:01:44] tokens used: 3,120\n"
    )
    assert decide(text) == ("complete", None)


@pytest.mark.parametrize(
    ("ending", "outcome"),
    [
        ('✅ Successfully updated task 14 status from "in-progress" to "done"', "complete"),
        ('✅ Successfully updated task 16 status from "pending" to "blocked"', "escalate"),
        ("Recommended status: ✓ Ready for Done", "complete"),
        ("Recommended status: ✗ Changes Required — see unchecked items above", "retry"),
    ],
)
def test_the_status_the_run_set_last_is_its_verdict(ending: str, outcome: str) -> None:
    text = (
        "$ task-master show 14\n│ Status:       │ ► in-progress │\n\n"
        "Implemented the NIP validator with seven tests.\n\n" + ending + "\n"
    )
    assert decide(text)[0] == outcome


def test_a_cloud_permission_only_an_owner_can_grant_asks_a_person() -> None:
    text = (
        " │ ERROR: (gcloud.run.deploy) PERMISSION_DENIED: Permission 'run.services.create' denied │\n"
        " ╰──────────────────────────────────────╯\n"
        "✦ The change is committed and tests pass, but the deploy cannot run: the service account "
        "lacks `roles/run.admin`. I don't have rights to change IAM; someone with owner access "
        "needs to grant that role.\n"
    )
    assert decide(text) == ("escalate", "external_service")


def test_a_list_of_quoted_messages_with_their_fixes_is_documentation() -> None:
    text = (
        "I wrote `docs/errors.md`, listing the messages users report most, with their fix:\n"
        "- `FATAL: quota exceeded for project` → ask an org admin to raise the quota.\n"
        "- `AuthError: 401 Unauthorized: invalid api key` — the key was revoked; create a new one.\n"
        "Lint is clean and the page renders in the docs preview.\n"
    )
    assert decide(text) == ("complete", None)


@pytest.mark.parametrize(
    "ending",
    [
        "おすすめは 2 ですが、要件の解釈次第なので、判断をお願いします。",
        "どちらを優先するか決めていただく必要があります。",
    ],
)
def test_a_decision_asked_of_the_person_in_japanese_waits(ending: str) -> None:
    text = "要件が矛盾しています。\n1. 監査要件を優先する\n2. 保持期間を短くする\n" + ending
    assert decide(text)[0] == "escalate"


def test_a_numbered_menus_own_prompt_on_the_last_line_waits() -> None:
    text = (
        "**Advanced elicitation options**\n1. Stakeholder round table\n2. Pre-mortem\n"
        "3. Red team vs blue team\n9. Proceed / No further actions\n"
        "Select 0-9 or just type your question/comment:\n"
    )
    assert decide(text)[0] == "escalate"


def test_a_request_to_confirm_before_an_external_write_waits() -> None:
    text = (
        "Row 33's next empty cell is AB33. I'm ready to append the fix summary there.\n"
        "This is an external Google Sheet edit. Confirm that I should write it now."
    )
    assert decide(text)[0] == "escalate"


@pytest.mark.parametrize(
    "notice",
    [
        "[ERROR] AI service call failed for role research (Provider: perplexity):\n"
        "  429 Too Many Requests: rate limit exceeded for sonar-pro. Retry-After: 84\n\n"
        "Error: Research failed. Nothing was saved to task 14.",
        '✕ [API Error: {"error":{"code":429,"message":"Quota exceeded for quota metric \'requests '
        'per minute\' of service \'generativelanguage.example\'","status":"RESOURCE_EXHAUSTED"}}]\n'
        "  Please wait and try again later.",
    ],
)
def test_a_providers_per_minute_limit_is_waited_out(notice: str) -> None:
    assert decide(notice)[0] in ("wait", "backoff")


# Round 17, written on the spent corpus_styles8 after it was scored once.


def test_a_cli_holding_a_destructive_command_under_its_spinner_is_destructive() -> None:
    text = (
        "✦ The cleanest fix is to delete the namespace and let Argo recreate it.\n"
        "╭──────────────────────────────────────────────╮\n"
        "│ ?  Shell kubectl delete namespace staging-payments --wait=true │\n"
        "│ Allow execution of: 'kubectl'?                                 │\n"
        "│ ● 1. Yes, allow once                                           │\n"
        "│   2. Yes, allow always ...                                     │\n"
        "│   3. No, suggest changes (esc)                                 │\n"
        "╰──────────────────────────────────────────────╯\n"
        "⠏ Waiting for user confirmation...\n"
    )
    assert decide(text) == ("escalate", "extreme_destructive")


def test_aiders_run_prompt_over_a_destructive_command_is_destructive() -> None:
    text = (
        "Tokens: 12k sent, 188 received. Cost: $0.05 message, $0.44 session.\n"
        'psql "$STAGING_URL" -c "TRUNCATE TABLE raw_events RESTART IDENTITY CASCADE;"\n'
        "alembic upgrade head\nRun shell commands? (Y)es/(N)o/(D)on't ask again [Yes]:\n"
    )
    assert decide(text) == ("escalate", "extreme_destructive")


def test_a_select_prompt_in_russian_waits() -> None:
    text = (
        "Нужен ваш выбор:\n1. SSO для всех\n2. PIN на терминалах\n3. Гибрид\n"
        "Выберите 1–3 или опишите свой вариант.\n"
    )
    assert decide(text)[0] == "escalate"


def test_a_wrapped_quota_error_that_names_a_per_minute_limit_is_waited_out() -> None:
    text = (
        '✕ [API Error: {"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).\n'
        "  Quota exceeded for quota metric 'Generate Content API requests per minute' and limit\n"
        "  'GenerateContent request limit per minute for a region'. Please retry in 38.2s.\",\n"
        '  "status":"RESOURCE_EXHAUSTED"}}]\n'
        "~/app (main)    no sandbox (see /docs)    gemini-2.5-pro (95% context left)\n"
    )
    assert decide(text)[0] in ("wait", "backoff")


@pytest.mark.parametrize(
    ("ending", "outcome"),
    [
        ("## ✓ Plan 06-01 complete — 3/3 tasks, SUMMARY written", "complete"),
        (
            "### Blockers\n- 08-03 depends on 08-02\nReturning to planner for revision (iteration 1/3)…",
            "retry",
        ),
    ],
)
def test_gsds_own_plan_verdicts(ending: str, outcome: str) -> None:
    text = "Task 3: Persist theme preference\n  ✓ vitest: 8 passed\n\n" + ending + "\n"
    assert decide(text)[0] == outcome


def test_a_cli_status_line_still_running_at_the_end_is_unfinished() -> None:
    text = (
        "│ vite v5.4.8 building for production...                 │\n"
        "╰────────────────────────────────────────╯\n"
        "⠼ Compiling the bundle, hold tight... (esc to cancel, 9m 51s)\n"
    )
    assert decide(text)[0] == "retry"


def test_a_story_whose_task_list_has_open_items_is_not_done() -> None:
    text = (
        "## Tasks / Subtasks\n- [x] Task 1: events table (AC: 1)\n"
        "- [ ] Task 2: real-time push (AC: 2)\n  - [x] Channel auth\n  - [ ] Broadcast on write\n"
        "- [x] Task 3: feed UI (AC: 3)\n\n## Dev Agent Record\n`npm test` → 203 passed\n\n"
        "Status: Ready for Review\nAll done — the activity feed is live and ready for QA.\n"
    )
    assert decide(text)[0] == "retry"
    ticked = text.replace("- [ ]", "- [x]")
    assert decide(ticked)[0] == "complete"


def test_a_command_that_only_names_a_build_folder_is_no_check() -> None:
    text = (
        "[2026-11-24T09:01:02] bash -lc 'pytest -q' exited 1 in 2.1s:\n1 failed, 9 passed\n\n"
        "[2026-11-24T09:01:40] bash -lc 'cat build/report.txt' succeeded in 9ms:\nok\n\n"
        "[2026-11-24T09:01:44] codex\nThe report is generated and the parser handles empty rows.\n"
        "[2026-11-24T09:01:44] tokens used: 3,120\n"
    )
    assert decide(text)[0] == "retry"
