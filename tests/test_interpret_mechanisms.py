"""The general mechanisms added for issue 11's real outputs, one behaviour each: whose voice a line
is, what the agent's own ask tool means, where failure evidence sits, what is a question for the
user, and the agent platform's own errors in text."""

from __future__ import annotations

from orchestrator.interpret import interpret
from orchestrator.interpret.asktool import final_ask_call
from orchestrator.interpret.text import split_lines


def test_quoted_lines_are_not_the_agents_voice() -> None:
    text = "Done: added the endpoint.\n> Has it been deleted from the file system?\n"
    zones = [ln.zone for ln in split_lines(text) if ln.text.strip()]
    assert zones == ["prose", "output"]
    # an answered Aider prompt after finished work asks nothing
    out = interpret(
        "I've created the cron service and registered it in AppModule.\n\n"
        "> Allow creation of new file src/cron/cron.service.ts? y\n"
        "> Applied edit to src/cron/cron.service.ts\n"
        "> Commit 8c7927a aider: Created cron job boilerplate files\n"
    )
    assert out.verdict == "completed"


def test_a_wholly_quoted_transcript_is_read_as_usual() -> None:
    out = interpret("> I couldn't fix the build.\n> The tests still fail with 3 errors.\n")
    assert out.verdict == "failed"


def test_a_final_ask_followup_question_call_is_a_question() -> None:
    text = (
        "I fixed the middleware.\n<ask_followup_question>\n<question>Run only the middleware "
        "tests?</question>\n<follow_up><suggest>Yes</suggest><suggest>No, all tests</suggest>"
        "</follow_up>\n</ask_followup_question>\n"
    )
    call = final_ask_call(text)
    assert call is not None and call.options == ["Yes", "No, all tests"]
    out = interpret(text)
    assert (out.verdict, out.question, out.source) == (
        "needs_human",
        "Run only the middleware tests?",
        "marker",
    )
    # something after the call (a failure banner) means it is not what the turn ended on
    assert final_ask_call(text + "\nThe model did not use any tool.\n") is None


def test_failure_printed_after_the_agents_last_words_outweighs_its_claims() -> None:
    text = (
        "The implementation is complete! I've implemented the grace period and added tests.\n\n"
        "> Applied edit to backend/src/jobs.ts\n> Commit 8bd0230 feat: grace period\n>\n"
        "> # Fix any errors below, if possible.\n>\n"
        "> ## See relevant line below marked with █.\n> 235█  interestRate Float\n"
    )
    assert interpret(text).verdict == "failed"
    # the same result before the agent's summary is history, not the verdict
    early = (
        "> # Fix any errors below, if possible.\n> 235█  x\n\n"
        "I fixed the lint error and re-ran pylint: all checks passed.\n"
    )
    assert interpret(early).verdict == "completed"


def test_imperatives_the_next_step_hangs_on_are_questions() -> None:
    for ending in (
        "Tell me your choices on those three and I'll wire it, then re-run the sweep.",
        'Just a "go" or "change X". If you say go, I make all of the above happen.',
        "Once you've renamed the folder and reopened it, let me know and I'll pick the rest up.",
        "Would you like the other files too? Please confirm and I'll provide those.",
    ):
        out = interpret("I reviewed the gate results and wrote the plan.\n\n" + ending)
        assert out.verdict == "needs_human", ending


def test_which_step_comes_next_after_finished_work_is_follow_up() -> None:
    done = "I applied option A; all 42 tests pass and the build is green.\n\n"
    for ending in (
        "Which next step should I take?",
        "Do you want me to add the javaagent to Surefire now, or stop here?",
        "Want me to fix the SKIP bug and/or the venv gap?",
    ):
        assert interpret(done + ending).verdict == "completed", ending


def test_asking_to_delete_files_is_extreme_destructive_and_announcing_is_not() -> None:
    asked = interpret(
        "The converted site is live. The old build artefacts are unreferenced. "
        "Want me to delete them to tidy up?"
    )
    assert (asked.verdict, asked.category) == ("needs_human", "extreme_destructive")
    said = interpret("All tests pass. I removed the temporary files and documented the change.")
    assert said.category is None


def test_ending_on_an_intention_is_an_unfinished_turn_in_any_language() -> None:
    for text in (
        "I am continuing P5 with Terra/high. No user input or manual action is required.",
        "Entendido. Vou verificar o código do frontend e aplicar as devidas correções.",
    ):
        assert interpret(text).verdict == "failed", text


def test_platform_errors_in_text() -> None:
    cases = {
        "Sorry, your request was rate-limited. Please wait 8 seconds before trying again.": (
            "rate_limit"
        ),
        "❯ whoami\n  ⎿  Credit balance too low · Add funds: https://platform.claude.com/billing": (
            "billing"
        ),
        "401 No auth credentials found": "authentication",
        "Connection failed. If the problem persists, please check your internet connection or "
        "VPN": "stream_disconnected",
        "✕ [API Error: Please submit a new query to continue with the Flash model.]": (
            "model_switched"
        ),
        "⚠  stream error: exceeded retry limit, last status: 401 Unauthorized; retrying 3/5 in "
        "789ms…": "authentication",
    }
    for text, kind in cases.items():
        assert interpret(text).platform == kind, text
    # a platform's own retry that is still going on is no verdict
    going = "⚠  stream error: last status: 401 Unauthorized; retrying 1/5 in 214ms…\nDone."
    assert interpret(going).platform is None


def test_a_cli_permission_menu_at_the_end_waits_for_approval() -> None:
    text = (
        "• Ran nl -ba myfile.sh\n"
        "╭──────────────────────────────╮\n"
        "│Allow command?                │\n"
        "│  ❯ Yes (y)                   │\n"
        "│    No, and keep going (n)    │\n"
        "╰──────────────────────────────╯\n"
    )
    out = interpret(text)
    assert (out.verdict, out.question) == ("needs_human", "Allow command?")
    # a menu printed earlier and answered is history
    assert interpret(text + "\nI ran it; all 12 tests pass.\n").verdict == "completed"


def test_an_error_quoted_in_inline_code_is_a_diagnosis() -> None:
    out = interpret(
        'The log says `Could not import module "main"` because uvicorn started in the wrong '
        "directory. Run `cd backend` first, then `uvicorn main:app --reload`."
    )
    assert out.verdict != "failed"


def test_aiders_prompts_about_its_own_loop_ask_nothing_about_the_task() -> None:
    lint = (
        "I rewrote the script in Python.\n\n> Applied edit to metrics_check.py\n"
        "> Commit 8717274 feat: rewrite in Python\n> Attempt to fix lint errors? (Y)es/(N)o [Yes]:"
    )
    assert interpret(lint).verdict != "needs_human"
    files = "Please add these files to the chat.\n\n> Add file to the chat? (Y)es/(N)o [Yes]:"
    assert interpret(files).verdict == "needs_human"
