"""`interpret()`: the layers in order, cheapest first.

1. explicit markers (`markers.py`);
2. heuristics for unmarked text (`heuristics.py`);
3. always-escalate categories (`destructive.py`, `external.py`, ambiguity): these turn a verdict
   into needs_human and are never retried automatically;
4. optionally an LLM (`llm_judge.py`), asked only when the rules are unsure (or always with
   `llm_only=True`); when it fails, the rules' answer stands and the failure is logged.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace

from orchestrator.interpret.asktool import final_ask_call, final_completion_call, final_plan_call
from orchestrator.interpret.destructive import (
    ASK,
    DESTRUCTIVE_VERB,
    awaiting_approval,
    find_destructive_proposal,
    held_for_data_loss,
)
from orchestrator.interpret.external import (
    BLOCKER,
    find_external_trouble,
    passing_trouble,
    platform_reading,
)
from orchestrator.interpret.extract import extract_options, extract_recommendation
from orchestrator.interpret.heuristics import read_unmarked
from orchestrator.interpret.llm_judge import ask_llm
from orchestrator.interpret.markers import read_markers
from orchestrator.interpret.model import WHY, WHY_GENERIC, Interpretation, Source
from orchestrator.interpret.phrases import FIX_CLAIMED, OFFERED_CHOICE, UNCERTAIN, WHICH_WORDS
from orchestrator.interpret.results import file_content, output_status
from orchestrator.interpret.structured import unwrap
from orchestrator.interpret.text import Line, final_prose, sentences, split_lines, strip_md
from orchestrator.interpret.text import tail_text as tail_prose
from orchestrator.interpret.uncertain import uncertainty_question
from orchestrator.llm import LLMBackend
from orchestrator.models import Category, Verdict
from orchestrator.rules.external import remote_access_request
from orchestrator.rules.failure import CLI_PROMPT
from orchestrator.rules.platform import KINDS, kind_of
from orchestrator.rules.signals import DESIGN, PERSON_DECIDES

log = logging.getLogger("orchestrator.interpret")

_CHOICE = re.compile(
    r"\b(?:which|what should|what do you want|what would you prefer|how should|how would you like|prefer|"
    r"choose|pick|clarify|whether|intended|correct|right one|should it be|welche[nrsm]?|wie möchtest|"
    r"wie soll|bevorzugst|entscheide\w*|Entscheidung|Select|decision|decide|choices|questions? (?:are |is )?blocking|"
    r"(?:two|three|four|five|several|\d+) questions|" + WHICH_WORDS + r")\b|"
    r"\b(?:or|oder)\b[^?]*\?",
    re.I,
)


_QUESTION_COUNT = re.compile(
    r"\b(?:two|three|four|five|six|several|\d+) (?:open |blocking )?questions\b|\bquestions? (?:are |is )?blocking\b",
    re.I,
)
"""The agent counts the questions it has: several things to settle, even when one asks to confirm."""


_APPROVAL = re.compile(
    r"\b(?:confirm\w*|approv\w*|permission|ok to|okay to|is it ok|go ahead|proceed|freigabe|freigeben|"
    r"bestätig\w*|darf ich)\b",
    re.I,
)


_WHICH_ONE = re.compile(r"\bwhich (?:option|approach|one|fix|way|of (?:these|the))\b", re.I)
"""A question naming a choice ("which option ... to proceed with") asks to choose, not approve."""


def _prose_only(lines: list[Line]) -> str:
    """The text with code and tool output blanked, line numbers preserved (for option lists)."""
    return "\n".join(ln.text if ln.zone == "prose" else "" for ln in lines)


def _category(
    lines: list[Line], tail_text: str, *, done_confident: bool
) -> tuple[Category | None, str | None]:
    hit = find_destructive_proposal(lines, tail_text) or held_for_data_loss(
        tail_text, waiting=awaiting_approval(lines)
    )
    if hit:
        return "extreme_destructive", hit
    ext = find_external_trouble(lines)
    if ext and (not done_confident or BLOCKER.search(tail_text)) and not _recovered(lines, ext):
        return "external_service", ext
    return None, None


def _paragraphs(text: str) -> str:
    """Lines of one paragraph joined, so a sentence wrapped over lines reads as one."""
    return re.sub(
        r"(?<=\S)[ \t]*\n(?![ \t]*(?:\n|[-*•]\s|\d+[.)]\s|[A-Za-z][.)]\s|\(\w\)\s|#|\||\*\*))[ \t]*",
        " ",
        text,
    )


_CONTEXT_HINT = re.compile(
    r"\b(?:task|spec|requirement|doesn't (?:say|specify)|ways?|options?|approaches|decision|choose|pick|"
    r"trade|interpret\w*|unclear|either|Aufgabe|Varianten?|Optionen|entscheiden)\b",
    re.I,
)


def _with_context(question: str, tail_text: str) -> str:
    """A bare "Which do you prefer?" gets the sentence that says what it is about."""
    if len(question) >= 60:
        return question
    sents = [s.replace("**", "").lstrip("✦ ").strip() for s in sentences(_paragraphs(tail_text))]
    context = next((s for s in sents if UNCERTAIN.search(s) and s != question), None)
    if context is None:
        idx = next((k for k, s in enumerate(sents) if question in s), None)
        prev = [
            s
            for s in sents[: idx or 0]
            if len(s) > 30
            and not re.match(
                r"^(?:[-*•]|\d+[.)]|[A-Za-z][.)]|\(\w\)|(?:Option|Variante|Approach)\s+\w+\s*[:.)])\s",
                s,
            )
            and not extract_recommendation(s)
        ]
        hinted = [s for s in prev if _CONTEXT_HINT.search(s)]
        context = (hinted or prev)[-1] if (hinted or prev) else None
    return f"{context} {question}" if context and question not in context else question


def _blocker_sentence(tail_text: str) -> str | None:
    found = [s for s in sentences(tail_text) if BLOCKER.search(s)]
    return found[-1] if found else None


def _refuted(lines: list[Line], marker: str | None) -> str | None:
    """The last test or build result a tool printed failed, and nothing passed after it: printed
    after the completion marker (`<promise>COMPLETE</promise>` then `--- FAIL: TestRedirect`) or
    before it (`2 failed, 33 passed` then `All items done. <promise>COMPLETE</promise>`), the
    result refutes the claim, unless the words after it say the failure was fixed and run again
    ("Fixed."). The failure line, or None."""
    status, evidence, at = output_status(lines)
    if status != "failure" or not marker:
        return None
    after = "\n".join(ln.text for ln in lines if ln.no > at and ln.zone == "prose")
    return None if FIX_CLAIMED.search(after) else evidence


def _recovered(lines: list[Line], error: str | None) -> bool:
    """The error (a platform's, a remote service's) passes by itself and is not where the run
    ended: a check run after it passed (aider's rate limit, "Retrying in 1.0 seconds...", then
    the edits, a commit and `ok` tests)."""
    kind = kind_of(error) if error else None
    if kind is not None and not (KINDS[kind].transient or kind == "rate_limit"):
        return False  # a key, credit or an account suspended is not cleared by a passing check
    said = (error or "")[:60]
    at = max((ln.no for ln in lines if said and said in ln.text), default=-1)
    status, _, status_no = output_status(lines)
    return at >= 0 and status == "success" and status_no > at


def interpret_rules(text: str) -> Interpretation:
    """The deterministic judgment (layers 1–3), no LLM. The agent platform's own error at the
    end of the output (a usage limit, a bad key, overloaded) outranks everything else.
    Structured output (JSON lines of an agent CLI) is read as the transcript it stands for."""
    text = unwrap(text)
    lines = split_lines(text)
    written = file_content(lines)
    # what a write tool shows of the file it wrote is the file, not the platform's error
    platform = platform_reading(
        "\n".join("" if ln.no in written else ln.text for ln in lines) if written else text
    )
    if platform is not None and not _recovered(lines, platform.evidence):
        return platform
    tail = final_prose(lines)
    tail_text = tail_prose(lines, tail)
    prose = _prose_only(lines)

    marked = read_markers(text)
    if marked is not None:
        if marked.verdict == "completed":
            if (refuted := _refuted(lines, marked.evidence)) is not None:
                return Interpretation(
                    verdict="failed", source="heuristic", evidence=refuted, error=refuted
                )
            return Interpretation(
                verdict="completed", source="marker", confident=True, evidence=marked.evidence
            )
        category = marked.category
        cat_ev: str | None = None
        found, found_ev = _category(lines, tail_text, done_confident=False)
        if category is None or found == "extreme_destructive":
            # a destructive step held at a decision checkpoint is destructive before it is open
            category, cat_ev = found or category, found_ev
        if marked.verdict == "failed" and category is None and marked.kind == "status":
            # a story left in progress whose last words ask the person something waits for them
            after = read_unmarked(lines)
            if after.verdict == "needs_human" and after.confident and after.question:
                marked = replace(marked, verdict="needs_human", question=after.question.text)
        if marked.verdict == "failed" and category is None:
            return Interpretation(
                verdict="failed",
                source="marker",
                confident=True,
                evidence=marked.evidence,
                error=marked.error,
            )
        source: Source = "marker" if marked.verdict == "needs_human" else "category"
        question = marked.question
        if not question:
            reading = read_unmarked(lines)
            question = (
                reading.question.text
                if reading.question
                else uncertainty_question(_paragraphs(tail_text))
                or _blocker_sentence(tail_text)
                or cat_ev
            )
        options = marked.options or extract_options(
            text
            if marked.kind in ("status", "question", "options", "needs-human", "gsd-checkpoint")
            else prose
        )
        recommendation = marked.recommendation or extract_recommendation(
            _paragraphs(prose), options
        )
        if recommendation and question and recommendation.strip() == question.strip():
            recommendation = None
        if (
            category is None
            and (
                (
                    marked.kind not in ("ralph", "loop-blocked")
                    and (len(options) >= 2 or UNCERTAIN.search(text))
                )
                # a decision the agent names as a person's ("Product owner must decide which spec governs")
                or PERSON_DECIDES.search(text[-4000:])
                or DESIGN.search(text[-4000:])
            )
        ):
            category = "ambiguous_requirements"
        why = WHY[category] if category else (marked.why or WHY_GENERIC)
        return Interpretation(
            verdict="needs_human",
            category=category,
            question=question,
            options=options,
            recommendation=recommendation,
            why=why,
            source=source,
            confident=True,
            evidence=cat_ev or marked.evidence,
        )

    ask = final_ask_call(text)
    if ask is not None:  # the agent's own ask tool, last: a question waiting for a person
        ask_category, ask_ev = _category(lines, tail_text, done_confident=False)
        if ask_category is None and (len(ask.options) >= 2 or _CHOICE.search(ask.question)):
            ask_category = "ambiguous_requirements"
        return Interpretation(
            verdict="needs_human",
            category=ask_category,
            question=ask.question,
            options=ask.options,
            why=WHY[ask_category] if ask_category else WHY_GENERIC,
            source="marker",
            confident=True,
            evidence=ask_ev or ask.question,
        )
    if final_plan_call(text):
        return Interpretation(
            verdict="needs_human",
            question="Approve this plan and go ahead?",
            why=WHY_GENERIC,
            source="marker",
            confident=True,
            evidence="the output ends on a plan waiting for approval",
        )
    reading = read_unmarked(lines)
    if (
        reading.verdict == "needs_human" or (reading.verdict == "failed" and not reading.confident)
    ) and final_completion_call(text):
        # the agent's structured report of work done: what its result offers waits for nobody,
        # and the problems it names are what the work was about
        reading.verdict, reading.confident, reading.question = "completed", False, None
        reading.evidence = "the output ends on attempt_completion"
    done_confident = reading.verdict == "completed" and reading.confident
    category, cat_ev = _category(lines, tail_text, done_confident=done_confident)
    verdict: Verdict = reading.verdict
    src: Source = reading.source
    confident = reading.confident
    if category == "external_service" and (passing := passing_trouble(cat_ev)) is not None:
        return passing
    if category is not None:
        verdict, src, confident = "needs_human", "category", True
    if verdict != "needs_human":
        return Interpretation(
            verdict=verdict,
            source=src,
            confident=confident,
            evidence=reading.evidence,
            error=reading.error if verdict == "failed" else None,
        )
    q = reading.question
    question = _with_context(strip_md(q.text), tail_text) if q else None
    if not question and category == "extreme_destructive":
        asks = [
            s
            for s in sentences(_paragraphs(tail_text))
            if ASK.search(s) and DESTRUCTIVE_VERB.search(s)
        ]
        question = asks[-1] if asks else f"Approve running `{cat_ev}`?"
    if not question and reading.uncertain:  # seed 000's fallback, as a real question
        question = uncertainty_question(_paragraphs(tail_text))
    if not question:
        question = _blocker_sentence(_paragraphs(tail_text)) or cat_ev
    if not question and reading.plan:
        question = "Go ahead with this plan?"
    anchor = q.line if q else (tail[-1].no if tail else None)
    options = extract_options(prose, anchor=anchor, question=q.text if q else None)
    recommendation = (
        extract_recommendation(_paragraphs(tail_text), options) if (q or options) else None
    )
    cli_prompt = q is not None and bool(CLI_PROMPT.search(q.text))
    if cli_prompt or reading.plan:
        options = []  # "(Y)es/(N)o/(D)on't ask again" is the CLI's prompt; a plan's steps are no choice
    if category is None and not cli_prompt and (access := remote_access_request(tail_text)):
        # what the person is asked for is access to a remote service (a token, the remote URL)
        category, cat_ev = "external_service", access
    if category is None and (
        len(options) >= 2
        or reading.uncertain
        or sum(x.kind == "decision" for x in reading.questions) >= 2  # several things to settle
        # a list of questions (in any language): requirements still to settle
        or sum(x.kind != "offer" for x in reading.questions) >= 3
        or (q is not None and _QUESTION_COUNT.search(q.text) is not None)
        # options laid out for the user: "(a) … or (b) …", "you could either: …"
        or (q is not None and not cli_prompt and OFFERED_CHOICE.search(q.text) is not None)
        # an offer to start work nothing was done for yet: what gets built is still open
        or (q is not None and q.kind == "offer")
        or (
            q is not None
            and not cli_prompt
            and _CHOICE.search(q.text)
            and (not _APPROVAL.search(q.text) or _WHICH_ONE.search(q.text))
        )
    ):
        category = "ambiguous_requirements"
        if len(options) >= 2 or reading.uncertain:
            confident = True
    return Interpretation(
        verdict="needs_human",
        category=category,
        question=question,
        options=options,
        recommendation=recommendation,
        why=WHY[category] if category else WHY_GENERIC,
        source=src,
        confident=confident,
        evidence=cat_ev or reading.evidence,
    )


def interpret(
    text: str, *, llm: LLMBackend | None = None, llm_only: bool = False, timeout: float = 60
) -> Interpretation:
    """Judge one attempt's output: completed, needs_human (with question/options/why) or failed.

    >>> interpret("All 12 tests pass. Would you like me to also add docs?").verdict
    'completed'
    >>> r = interpret("Should I use Redis or in-memory caching?\\nA) Redis\\nB) In-memory\\nI recommend B.")
    >>> (r.verdict, r.category, r.options, r.recommendation)
    ('needs_human', 'ambiguous_requirements', ['Redis', 'In-memory'], 'B')

    With `llm`, the LLM is consulted when the rules are not confident (always with `llm_only`);
    if it fails, times out or answers nonsense, the rules' answer stands and the failure is
    logged on the `orchestrator.interpret` logger.
    """
    if llm is not None and llm_only:
        try:
            return ask_llm(llm, text, timeout=timeout)
        except Exception as e:
            log.warning(
                "LLM interpreter (%s) failed, using the rules: %s", getattr(llm, "name", "?"), e
            )
            return interpret_rules(text)
    rules = interpret_rules(text)
    if llm is None or rules.confident:
        return rules
    try:
        answer = ask_llm(llm, text, timeout=timeout)
    except Exception as e:
        log.warning(
            "LLM interpreter (%s) failed, the rules' answer stands: %s",
            getattr(llm, "name", "?"),
            e,
        )
        return rules
    if answer.verdict == rules.verdict == "needs_human":
        # the LLM agrees a human is needed: keep what the rules extracted where it said nothing
        category = answer.category or rules.category
        answer = answer.model_copy(
            update={
                "question": answer.question or rules.question,
                "options": answer.options or rules.options,
                "recommendation": answer.recommendation or rules.recommendation,
                "category": category,
                "why": WHY[category] if category else answer.why,
            }
        )
    return answer
