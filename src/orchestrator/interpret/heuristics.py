"""Reading unmarked output: did the agent finish, fail, or stop to ask?

The agent's last words weigh most. Claims of finished work ("I've implemented…", "all 112 tests
pass") and admissions of failure ("I wasn't able to…", "still fails") are counted in its final
prose; the last test or build result printed by a tool counts too. A question stops the attempt
only when it blocks the work — a decision, missing information, an approval. Offers at the end
of finished work ("Would you like me to also add docs?", "Let me know if…", "Soll ich noch…?")
are not questions for a human, and neither is "shall I try another approach?" after a failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from orchestrator.interpret.choices import approval_menu, numbered_choice, open_menu, select_prompt
from orchestrator.interpret.endings import (
    announced_step,
    asks_to_continue,
    awaits_go_ahead,
    ends_on_intention,
)
from orchestrator.interpret.phrases import (
    _ALTERNATIVES,
    _BLOCKING,
    _CONDITIONAL_REQUEST,
    _DECISION,
    _DONE_VERBS,
    _EXTENSION,
    _HUMAN_ACTION,
    _OFFER_LEAD,
    _RESULT_OK,
    _W,
    CAVEAT,
    COMPLETION,
    ERRORS_LEFT,
    FAILURE,
    FIX_CLAIMED,
    NOT_FAILURE,
    OFFERED_CHOICE,
    UNCERTAIN,
    WHICH_WORDS,
)
from orchestrator.interpret.results import output_status, short_of_all
from orchestrator.interpret.text import Line, LineFinder, final_prose, join, sentences
from orchestrator.models import Verdict
from orchestrator.rules.failure import (
    CLI_PROMPT,
    FINAL_FAILURE,
    LABELLED_QUESTION,
    PENDING_TOOL,
    PROPOSED,
    WHICH_QUESTION,
    final_failure,
)

QKind = Literal["offer", "decision", "generic"]


@dataclass
class Question:
    text: str
    kind: QKind
    line: int


@dataclass
class Reading:
    verdict: Verdict
    confident: bool
    source: Literal["heuristic", "default"] = "heuristic"
    question: Question | None = None
    questions: list[Question] = field(default_factory=list)
    completion: int = 0
    failure: int = 0
    output_status: Literal["success", "failure"] | None = None
    evidence: str | None = None
    error: str | None = None
    uncertain: bool = False
    plan: bool = False
    """A plan of work not done yet: its numbered steps are no options to choose from."""


def _score(patterns: _W, text: str) -> tuple[int, str | None]:
    total = 0
    first: str | None = None
    for rx, weight in patterns:
        m = rx.search(text)
        if m:
            total += weight
            if first is None:
                first = m.group(0)
    return total, first


def _sentence_of(text: str, needle: str | None) -> str | None:
    if not needle:
        return None
    for s in sentences(text):
        if needle in s:
            return s
    return needle


_CHOICE = re.compile(
    r"\b(?:which|prefer|choose|pick|whether|clarify|welche[nrsm]?|bevorzugst|entscheide)\b|\b(?:or|oder)\b[^?]*\?|"
    # "which one" in es/pt/fr/it/nl/pl, and "or" before the question mark
    r"\b(?:" + WHICH_WORDS + r")\b[^?\n]*\?|"
    r"\b(?:o|ou|oppure|czy)\b[^?\n]{3,}\?",
    re.I,
)


_NEXT_WORK = re.compile(
    r"\bnext (?:step|task|phase|thing|item)s?\b|\b(?:or|and) stop here\b|\bstop here\?|"
    r"\bproceed (?:with|to) (?:step|phase|stage|part) \d|\bmove on to (?:step|phase|the next)\b|"
    r"\b(?:do|tackle|work on|look at) next\?|\bwhat['’]?s next\b[^.!\n]*\?",
    re.I,
)
"""What to do after finished work: the next step, or stopping — follow-up, not a blocker."""


_AFTERCARE = re.compile(
    r"^\W*if you (?:encounter|run into|see|get|hit|have|notice|face|experience)\b"
    r"[^.?!\n]{0,40}\b(?:issues?|problems?|errors?|bugs?|questions?|trouble)\b",
    re.I,
)
"""After-care: "If you encounter any further issues, please share the logs" asks for nothing now."""

_OR_ANYTHING_ELSE = re.compile(r"\bor (?:[\w'’]+ ){0,6}(?:anything|something) else\b", re.I)
"""'… or help you with anything else?': no second option, only an open offer."""


_PAUSED_HERE = re.compile(
    r"\b(?:I['’]m|I am|I['’]ve|I have) (?:pausing|paused|holding|stopped|stopping) (?:here|now|before)\b",
    re.I,
)
"""The agent stopped to wait ("Step 4 touches production, so I'm pausing here"): a yes/no question
after it is the gate, not an offer of more work."""
_CLAUSES = re.compile(r",?\s+but\s+|;\s+|\s+—\s+")
_PURPOSE = re.compile(
    r"\b(?:so|so that|and|then)\s+I\s+(?:can|could)\b|" + _CONDITIONAL_REQUEST, re.I
)


def _classify(
    sentence: str, done: bool, failed: bool, paused: bool = False, stopped: bool = False
) -> QKind:
    """PAUSED: the agent said elsewhere that it is holding something back ("so I've paused
    here", "I haven't changed anything"); STOPPED: that it stopped here to wait ("I'm pausing
    here")."""
    # "Which fix do you want me to apply?" asks for a choice, not whether to do more
    # "… so I can set it up" is the purpose of a request, not an offer
    offer = bool(_OFFER_LEAD.search(_PURPOSE.sub(" ", sentence))) and not WHICH_QUESTION.search(
        sentence
    )
    if offer and any(
        _HUMAN_ACTION.search(c) and not _OFFER_LEAD.search(c) for c in _CLAUSES.split(sentence)
    ):
        offer = False  # "I can do any of these, but I need you to choose:": the request decides
    # once it said it paused to wait, "Shall I go ahead with the deploy?" is the gate, not more work
    blocking = bool(_BLOCKING.search(sentence)) or (
        (paused and bool(_HUMAN_ACTION.search(sentence))) or (stopped and offer)
    )
    alternatives = bool(_ALTERNATIVES.search(sentence.replace("and/or", "and")))
    if _AFTERCARE.search(sentence) and not blocking:
        return "offer"  # "If you encounter any further issues, please share the logs!"
    if not done and OFFERED_CHOICE.search(sentence):
        return "decision"  # options laid out for the user before (or instead of) the work
    if done and not blocking:
        # after finished and tested work only a real choice or a request still blocks; the rest
        # is follow-up,
        # including which step comes next ("Which next step should I take?", "…, or stop here?")
        if (_EXTENSION.search(sentence) and offer) or _NEXT_WORK.search(sentence):
            return "offer"
        if _HUMAN_ACTION.search(_PURPOSE.sub(" ", sentence)) and not offer:
            # a request still blocks after the work ("Please tell me the hostnames"); "if you
            # can share more data, I can add tests" is optional
            return "decision"
        return "decision" if alternatives or (_CHOICE.search(sentence) and not offer) else "offer"
    if offer and not blocking:
        more = _EXTENSION.search(sentence) and (done or failed)
        if (
            _NEXT_WORK.search(sentence)
            or _OR_ANYTHING_ELSE.search(sentence)
            or (more and (failed or not alternatives))
        ):
            # "would you like me to also…", "…try a different approach?" after work or a failure;
            # but "Should I do X, or would you prefer a more detailed plan?" before any work still
            # asks to choose, and "Would you like me to implement these too?" when nothing was
            # done yet is the agent stopping for a yes before it does anything
            return "offer"
        if (done or failed) and not alternatives:
            return "offer"  # a yes/no offer after finished (or failed) work
        if not (alternatives or _DECISION.search(sentence) or PROPOSED.search(sentence)):
            return "offer"  # "would you like me to create an example?": more work, no choice
    if (
        blocking
        or _DECISION.search(sentence)
        or _ALTERNATIVES.search(sentence)
        or _HUMAN_ACTION.search(sentence)
    ):
        return "decision"
    return "generic"


def find_questions(tail: list[Line], done: bool, failed: bool) -> list[Question]:
    """Questions and requests in the agent's final prose, each classified."""
    said = " ".join(" ".join(ln.text.split()) for ln in tail)
    paused, stopped = bool(_BLOCKING.search(said)), bool(_PAUSED_HERE.search(said))
    out: list[Question] = []
    for ln_sents in _sentences_with_lines(tail):
        no, s = ln_sents
        asks = s.rstrip().rstrip("*_ ").endswith("?")  # "**Which approach would you prefer?**"
        is_q = asks or bool(_HUMAN_ACTION.search(s)) or bool(OFFERED_CHOICE.search(s))
        if not is_q or (asks and LABELLED_QUESTION.match(s)) or len(re.findall(r"\w+", s)) < 2:
            # a bare "?" (a user's turn in an export) asks nothing; a heading glued to a request
            # ("## Recommended Approach Start with solutions 1 and 2") is still one
            continue
        out.append(Question(s, _classify(s, done, failed, paused, stopped), no))
    return out


def _sentences_with_lines(tail: list[Line]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    para: list[Line] = []

    def flush() -> None:
        if not para:
            return
        text = "\n".join(ln.text for ln in para)
        finder = LineFinder(para)
        for s in sentences(text):
            no = finder.first(s[-20:])
            out.append((para[-1].no if no is None else no, s))
        para.clear()

    prev = None
    for ln in tail:
        if prev is not None and ln.no != prev + 1:
            flush()
        para.append(ln)
        prev = ln.no
    flush()
    return out


_AUTO_PROMPT = re.compile(
    r"\b(?:Attempt to fix (?:lint|test) errors|Open (?:documentation )?URL for more info|"
    r"Run shell commands?|Add command output to the chat)\?",
    re.I,
)
"""Aider's prompts about its own loop (fix the lint errors it found, open a docs link): with
`--yes-always` they answer themselves; they ask nothing about the task."""
_WORK_DONE = re.compile(
    rf"\b(?:I'?ve|I have|I|we'?ve|we have)\s+(?:now\s+|also\s+|successfully\s+|just\s+)?(?:{_DONE_VERBS})\b|"
    rf"\b(?:is|are|was|were|has been|have been)\s+(?:now\s+|all\s+|successfully\s+)?(?:{_DONE_VERBS})\b|"
    rf"^(?:[^\w\n]|\d+[.)]){{0,4}}[^\S\n]*(?:{_DONE_VERBS}|Applied|Edited|Modified|Changed)\b|"
    r"^[^\w\n]{0,4}(?:Applied edit to|Commit [0-9a-f]{7}|(?:Update|Edit|Write|MultiEdit)\()",
    re.I | re.M,
)
"""Work the agent did, anywhere in the output: its own claims (`All modules are created.`,
`I've updated…`) or its tools' records (`Applied edit to`, `⏺ Update(…)`, a commit). A line's
leading marks never run on into the next line: 'any non-word' or 'any space' would (each of
64 KB of blank lines then rescanned all the blank lines after it, minutes long)."""


_EDIT_BLOCK_END = re.compile(r"^\s*>{5,7} ?REPLACE\s*$")
_EDIT_APPLIED = re.compile(
    r"^\W{0,4}(?:Applied edit to|Commit [0-9a-f]{7}|Wrote |Created )|\bResult:|</\w*diff>|"
    r"</(?:replace_in_file|apply_diff|write_to_file|edit_file|parameter|invoke)>|\bTool Use\b",
    re.I,
)
"""A record after the block that it went to a tool (Cline / Roo's diff tools) or was applied."""


def _edit_not_applied(lines: list[Line]) -> str | None:
    """A SEARCH/REPLACE edit block the agent printed with no record of it being applied after it
    (Aider prints `Applied edit to <file>` for each one it applies): the edit was only proposed,
    the files are unchanged."""
    ends = [k for k, ln in enumerate(lines) if _EDIT_BLOCK_END.match(ln.text)]
    if not ends or any(_EDIT_APPLIED.search(ln.text) for ln in lines[ends[-1] :]):
        return None
    return "the edit block was printed but never applied"


_CHECK_ITEM = re.compile(r"^[\s│|⎿]*(?:[-*•]\s*|\d+[.)]\s*)?(\[[ xX✓]\]|☐|⬜|🔲|☒|☑|✅|✔)\s*\S")
_UNCHECKED = ("[ ]", "☐", "⬜", "🔲")


_RESULTLESS_TOOL = re.compile(
    r"<tool-use\b[^>\n]*>\s*(?:<details>)?\s*<summary>[^<\n]*</summary>\s*</details>\s*</tool-use>\s*$"
)
"""A chat export's tool call with nothing in it but its name, where the output ends (SpecStory's
`<tool-use …><details><summary>Tool use: **run_terminal_command_v2**</summary></details>`): the
call never returned — the run stopped (stuck, cancelled) inside it."""


_STILL_RUNNING = re.compile(r"\((?:esc|ctrl\+c|Esc) to (?:cancel|interrupt)\b[^)\n]{0,40}\)\s*$")
"""A CLI's live status line ("⠼ Compiling the bundle... (esc to cancel, 9m 51s)") as the last thing
printed: the run was still going when the output ended."""


def _ends_in_tool_call(lines: list[Line]) -> str | None:
    last = "\n".join(ln.text.strip() for ln in lines[-12:] if ln.text.strip())
    if _RESULTLESS_TOOL.search(last[-600:]):
        return "the output ends on a tool call that never returned"
    if _STILL_RUNNING.search(last[-200:]):
        return "the output ends while the agent was still working"
    return None


_STORY_TASKS = re.compile(r"^(?:#{1,4}\s*|\*\*)Tasks\s*/\s*Subtasks\b", re.I)
_STORY_TASK_ITEM = re.compile(r"^\s*[-*]\s*\[([ xX])\]\s*(?:\*\*)?Task \d+\b")
"""A story's task as BMAD prints it ("- [ ] Task 4: Invalidate all sessions (AC: 4)"), under its
"## Tasks / Subtasks" heading or not."""
_DRAFTED = re.compile(r"^\W*Status\W*:?\W*Draft\b|\bstory draft checklist\b", re.I)


def _story_tasks_open(filled: list[str]) -> str | None:
    """A BMAD story's `## Tasks / Subtasks` section with items still unticked, wherever it stands:
    whatever its status line says, the story's own list says it is not done."""
    if any(_DRAFTED.search(text) for text in filled):
        return None  # a story just drafted: its tasks are for the developer, none done yet
    at = next((k for k in range(len(filled) - 1, -1, -1) if _STORY_TASKS.match(filled[k])), None)
    if at is None:
        ticks = [m.group(1) for t in filled if (m := _STORY_TASK_ITEM.match(t))]
        if " " in ticks and len(set(ticks) - {" "}) > 0:
            n = ticks.count(" ")
            return f"the story's task list has {n} of {len(ticks)} tasks still open"
        return None
    items = []
    for text in filled[at + 1 :]:
        if text.lstrip().startswith("#"):
            break
        if (m := _CHECK_ITEM.match(text)) is not None:
            items.append(m.group(1))
    open_items = sum(i in _UNCHECKED for i in items)
    if open_items:
        return f"the story's task list has {open_items} of {len(items)} items still open"
    return None


def _partial_checklist(lines: list[Line]) -> str | None:
    """The output ends on a checklist (a todo list, `- [x]` items) with some items ticked and
    others not, or a BMAD story's task list has items unticked: the work stopped part way."""
    filled = [ln.text for ln in lines if ln.text.strip()]
    if (story := _story_tasks_open(filled)) is not None:
        return story
    items: list[str] = []
    for text in reversed(filled):
        m = _CHECK_ITEM.match(text)
        if m is None:
            break
        items.append(m.group(1))
    open_items = sum(i in _UNCHECKED for i in items)
    if open_items and open_items < len(items):
        return f"the checklist it ends on has {open_items} of {len(items)} items still open"
    return None


_NEGATED_CLAIM = re.compile(
    r"\bneither\b[^.\n]{0,80}\bnor\b[^.\n]{0,60}|"
    r"\b(?:could(?:n't| not)|can(?:no|')t|did(?:n't| not)|was(?:n't| not) able to|unable to|failed to|"
    r"never managed to)\s+(?:get|make|see|confirm|verify)\b[^.;:!?,\n]*?(?=[.;:!?,\n]|\bbut\b|$)",
    re.I,
)
"""A claim inside what the agent could not do ("couldn't get the build to pass") is no claim."""
_SOME_FAILED = re.compile(
    r"\b\d[\d,]*\s+(?:tests?\s+|specs?\s+)?pass(?:ed|ing|es)?\b[^.\n]{0,40}?[,;/]\s*"
    r"[1-9]\d*\s+(?:tests?\s+|specs?\s+)?(?:fail|fails|failed|failing|errors?)\b|"
    r"\b[1-9]\d*\s+(?:tests?\s+|specs?\s+)?(?:failed|failing)\s*[,;/]\s*\d[\d,]*\s+"
    r"(?:tests?\s+|specs?\s+)?pass(?:ed|ing)\b",
    re.I,
)
"""A count of passing tests beside failing ones ("52 tests pass, 2 fail"; "2 failed / 317
passed"): the line's passes claim nothing."""


_FUTURE = re.compile(
    r"\b(?:I|we|it|this|they|these|that)(?:['’]ll| will| is going to| are going to| am going to)\b|"
    r"\b(?:will be (?:created|added|updated|configured|implemented|moved|replaced|removed))\b",
    re.I,
)


_HEDGED_FIX = re.compile(
    r"\bshould (?:now |then |also )?(?:work|pass|run|succeed|resolve|fix|be (?:fixed|resolved|working|gone))\b",
    re.I,
)
_HAND_OVER = re.compile(
    r"\b(?:Try (?:it|running|again|re-?running)|Please (?:try|test|run|re-?run)|"
    r"You can now (?:re-?run|run|test|try))\b"
)
"""An imperative to the user (capitalised: it opens a sentence or a line), not "I can now try"."""
_VERIFIED = re.compile(
    r"\b(?:I (?:ran|re-?ran|tested|verified|confirmed)|(?:tests?|build) (?:now )?(?:pass\w*|succeed\w*))\b",
    re.I,
)


def _handed_over_unverified(tail_text: str, status: str | None) -> str | None:
    """The agent's last words hand its fix to the user to try and predict it "should work now",
    and nothing in the output shows it was run: the fix is untested."""
    if status == "success" or _VERIFIED.search(tail_text):
        return None
    last = " ".join(sentences(" ".join(tail_text.split()[-80:]))[-3:])
    if _HEDGED_FIX.search(last) and _HAND_OVER.search(last):
        return last
    return None


def _offer_to_start(
    questions: list[Question], tail: list[Line], done: bool | int, failed: int
) -> Question | None:
    """An offer among the agent's last lines to do the work itself ("Should I begin with the
    designer?", "Would you like me to write the revised class?") when nothing it printed claims
    work done and its final words no failure: the turn was analysis or a plan, and the work
    waits for a yes."""
    if done or failed or not questions or not tail:
        return None
    q = questions[-1]
    if q.kind != "offer" or _EXTENSION.search(q.text) or q.line < tail[-min(3, len(tail))].no:
        return None
    return q


def read_unmarked(lines: list[Line]) -> Reading:
    """The heuristic verdict for output without explicit markers."""
    tail = final_prose(lines)
    tail_text = join(tail)
    in_tail = {ln.no for ln in tail}
    # earlier prose, most recent first in importance; capped so megabyte logs stay fast
    earlier = [ln for ln in lines if ln.zone == "prose" and ln.no not in in_tail][-2000:]
    claims = "\n".join(x for x in tail_text.split("\n") if not _SOME_FAILED.search(x))
    done, done_ev = _score(COMPLETION, _NEGATED_CLAIM.sub(" ", claims))
    # an error quoted in inline code (`Could not import module "main"`) is what the agent
    # diagnoses, not what it reports about its own work
    fail_text = NOT_FAILURE.sub(" ", CAVEAT.sub(" ", re.sub(r"`[^`\n]+`", " ", tail_text)))
    failed, fail_ev = _score(FAILURE, fail_text)
    status, status_ev, status_no = output_status(lines)
    if status == "success":
        done += 2
    elif status == "failure" and (
        status_no > (tail[-1].no if tail else -1) or not FIX_CLAIMED.search(tail_text)
    ):
        # the last result a tool printed failed and nothing passed after it: printed after the
        # agent's last words, or before words that neither say it was fixed and run again nor
        # explain it as not this work's ("All tests pass"), the result speaks against its claims
        failed = max(failed + 2, done + 1)
    if short_of_all(claims):
        failed = max(failed, done + 1)  # "116 of 118 pass": the agent's own count says not all
    if ERRORS_LEFT.search(tail_text.strip().rsplit("\n\n", 1)[-1]):
        failed = max(failed, done + 1)  # its last paragraph says errors are left: not done
    uncertain_m = UNCERTAIN.search(tail_text)
    uncertain = uncertain_m is not None

    is_done = done >= 2 and done > failed
    is_failed = failed >= 2 and failed >= done
    # a question inside a failure banner ("Something went wrong? Hit /feedback") asks nothing
    open_items = open_menu(lines)
    questions = [
        replace(q, kind="offer") if q.line in open_items else q
        for q in find_questions(tail, is_done, is_failed)
        if not FINAL_FAILURE.search(q.text)
    ]
    decisions = [q for q in questions if q.kind == "decision"]
    generic = [q for q in questions if q.kind == "generic"]
    error = (
        _sentence_of(tail_text, fail_ev) if fail_ev else status_ev if status == "failure" else None
    )

    base = Reading(
        "completed",
        False,
        completion=done,
        failure=failed,
        output_status=status,
        questions=questions,
        uncertain=uncertain,
        error=error,
    )

    last = [ln for ln in lines if ln.text.strip()][-1:]
    if last and (
        (CLI_PROMPT.search(last[0].text) and not _AUTO_PROMPT.search(last[0].text))
        or PENDING_TOOL.match(last[0].text)
    ):
        q = Question(last[0].text.strip().lstrip("> "), "decision", last[0].no)
        return _with(base, "needs_human", True, question=q, evidence=q.text)
    choice = approval_menu(lines) or select_prompt(lines) or numbered_choice(lines)
    if choice is not None:
        menu = Question(choice[0], "decision", choice[1])
        return _with(base, "needs_human", True, question=menu, evidence=menu.text)
    banner = final_failure([ln.text for ln in lines], _RESULT_OK)
    if banner is not None and done < 4 and not decisions:
        return _with(base, "failed", False, evidence=banner, error=banner)
    if decisions:
        q = decisions[-1]
        strong = bool(
            _BLOCKING.search(tail_text)
            or _ALTERNATIVES.search(q.text)
            or len(decisions) > 1
            or not (is_done or is_failed)
        )
        return _with(base, "needs_human", strong, question=q, evidence=q.text)
    if not failed and (go_on := asks_to_continue(tail)) is not None:
        q = Question(go_on.text.strip(), "decision", go_on.no)
        return _with(base, "needs_human", False, question=q, evidence=q.text)
    if uncertain_m is not None and not is_done and not is_failed:
        return _with(base, "needs_human", False, evidence=uncertain_m.group(0))
    if generic and not is_done and not is_failed and failed == 0:
        return _with(base, "needs_human", False, question=generic[-1], evidence=generic[-1].text)
    worked = done or _WORK_DONE.search("\n".join(ln.text for ln in lines)) is not None
    # a menu of more work is no offer to start the task's own work
    offer = _offer_to_start(
        [q for q in questions if q.line not in open_items], tail, worked, failed
    )
    if offer is not None:
        return _with(base, "needs_human", False, question=offer, evidence=offer.text)
    if (gate := awaits_go_ahead(tail_text)) is not None and not failed:
        base.plan = True
        return _with(base, "needs_human", False, evidence=gate)
    if (announced := announced_step(tail)) is not None:
        return _with(
            base, "failed", False, evidence=announced, error="the output stopped at: " + announced
        )
    if failed > 0 and failed >= done:
        confident = failed >= 3 and failed - done >= 2
        return _with(base, "failed", confident, evidence=error or fail_ev)
    if (
        unapplied := _edit_not_applied(lines)
        or _partial_checklist(lines)
        or _ends_in_tool_call(lines)
    ) is not None:
        return _with(base, "failed", False, evidence=unapplied, error=unapplied)
    if (handed := _handed_over_unverified(tail_text, status)) is not None:
        return _with(
            base, "failed", False, evidence=handed, error="the fix was not tried: " + handed
        )
    if done > 0:
        confident = (done >= 3 and failed == 0) or done - failed >= 4
        return _with(
            base, "completed", confident, evidence=_sentence_of(tail_text, done_ev) or status_ev
        )
    if ends_on_intention(tail_text):
        return _with(base, "failed", False, evidence="the output ends on an intention")
    if not worked and not failed and len(_FUTURE.findall(tail_text)) >= 4:
        # its last words only say what *will* be done, and nothing was: a plan, waiting for a go
        base.plan = True
        return _with(
            base, "needs_human", False, evidence="the output is a plan of work not done yet"
        )
    # nothing in the final words: look further back
    early_fail, early_ev = _score(FAILURE, NOT_FAILURE.sub(" ", join(earlier)))
    if early_fail >= 2:
        return _with(base, "failed", False, evidence=early_ev, error=early_ev)
    if generic:
        return _with(base, "needs_human", False, question=generic[-1], evidence=generic[-1].text)
    if not any(ln.text.strip() for ln in lines):
        return _with(
            base,
            "failed",
            False,
            source="default",
            evidence="no output",
            error="the agent produced no output",
        )
    return _with(base, "completed", False, source="default")


def _with(
    base: Reading,
    verdict: Verdict,
    confident: bool,
    *,
    source: Literal["heuristic", "default"] = "heuristic",
    question: Question | None = None,
    evidence: str | None = None,
    error: str | None = None,
) -> Reading:
    base.verdict = verdict
    base.confident = confident
    base.source = source
    base.question = question
    base.evidence = evidence
    if error is not None:
        base.error = error
    if verdict != "failed":
        base.error = None
    return base
