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
from dataclasses import dataclass, field
from typing import Literal

from orchestrator.interpret.text import Line, LineFinder, final_prose, join, sentences
from orchestrator.models import Verdict
from orchestrator.rules.failure import (
    CLI_PROMPT,
    FINAL_FAILURE,
    INTENT,
    LABELLED_QUESTION,
    PENDING_TOOL,
    PROPOSED,
    WHICH_QUESTION,
    final_failure,
)

_W = list[tuple[re.Pattern[str], int]]

_DONE_VERBS = (
    r"implemented|added|created|updated|fixed|refactored|written|wrote|completed|finished|built|set up|"
    r"configured|migrated|replaced|renamed|moved|extracted|introduced|converted|upgraded|switched|resolved|"
    r"enabled|removed|rebased|squashed|merged|split|documented|verified|rewritten|ported|generated|"
    r"bumped|cleaned up|wired|deleted|reworked|adjusted|normali[sz]ed|linked|exposed|restructured|"
    r"simplified|hooked up|registered|installed|ran(?! out)|re-ran|tested"
)
COMPLETION: _W = [
    (
        re.compile(
            rf"\b(?:I'?ve|I have|I)\s+(?:now\s+|also\s+|successfully\s+|just\s+)?(?:{_DONE_VERBS})\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:all|the)\s+(?:\d[\d,]*\s+)?(?:unit\s+|integration\s+|e2e\s+|\w+\s+)?(?:tests?|specs?|checks?|suites?)\s+"
            r"(?:now\s+|still\s+)?(?:pass|passed|passing|are passing|are green|succeed|passes)\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:tests?|suite|build|lint|typecheck|mypy|ruff|CI)\b[^.\n]{0,30}\b(?:pass(?:es|ed)?|green|is clean|succeeds|"
            r"succeeded|no (?:new )?(?:errors|problems|issues|warnings))\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b\d[\d,]*\s+(?:tests?\s+)?(?:passed|passing|examples?, 0 failures)\b(?![^\n]*\b[1-9]\d*\s+(?:failed|errors?|failing)\b)",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"(?:^|\n)\s*(?:[✅✓]\s*)?(?:Done|Fertig|Erledigt|Finished|Complete)\b\s*[.!:—–-]", re.I
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:is|are)\s+(?:now\s+)?(?:complete|done|implemented|fixed|in place|working|supported|green|idempotent|met|written|"
            r"tested|merged|deployed|added|wired up)\b",
            re.I,
        ),
        2,
    ),
    (re.compile(r"\ball\s+(?:passing|pass|green)\b", re.I), 2),
    (
        re.compile(
            r"\b(?:task|criteria|acceptance criteria)\b[^.\n]{0,40}\b(?:complete|met|done)\b", re.I
        ),
        2,
    ),
    (re.compile(r"[✅✓]"), 1),
    (
        re.compile(
            r"\b(?:all green|everything (?:passes|is green|works)|all (?:checks|tests) green)\b|"
            r"\bTests?:\s*(\d+)/\1\b",
            re.I,
        ),
        3,
    ),
    (re.compile(rf"(?:^|\n)\s*(?:[-*]\s+)?(?:{_DONE_VERBS})\b", re.I), 1),
    (
        re.compile(
            r"\b(?:now\s+)?(?:succeeds|succeeded|successfully|works end to end|now works|works now)\b",
            re.I,
        ),
        1,
    ),
    (
        re.compile(
            r"^\s*+#*\s*\**(?:Summary|Changes(?: made)?|What (?:I )?changed|What I did|Zusammenfassung|Änderungen|"
            r"Was ich gemacht habe)\**\s*:?\s*$",
            re.I | re.M,
        ),
        1,
    ),
    (
        re.compile(
            r"\bno (?:code |further )?changes (?:are |were )?(?:needed|necessary|required)\b", re.I
        ),
        3,
    ),
    (
        re.compile(
            r"\bIch habe\b[^.\n]{0,80}\b(?:implementiert|umgesetzt|hinzugefügt|erstellt|angepasst|behoben|aktualisiert|"
            r"ergänzt|geschrieben|eingebaut|refaktoriert|entfernt|erweitert)\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:alle|die)\s+(?:\d+\s+)?Tests?\b[^.\n]{0,30}\b(?:grün|bestanden|durch|erfolgreich)\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:ist|sind)\s+(?:jetzt\s+|nun\s+)?(?:(?!nicht\b|noch\b|kein\w*\b)[\w-]+\s+)?"
            r"(?:behoben|umgesetzt|implementiert|fertig|erledigt)\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:jetzt|nun)\b[^.\n]{0,60}\b(?:umgesetzt|implementiert|verarbeitet|unterstützt)\b",
            re.I,
        ),
        1,
    ),
    (
        re.compile(
            r"\b(?:Tests?|Build)\b[^.\n]{0,30}\b(?:laufen|läuft|sind|ist)\s+(?:alle\s+)?(?:durch|grün|erfolgreich)\b|"
            r"(?:^|\n)\s*(?:Umgesetzt|Implementiert|Erledigt)\b",
            re.I,
        ),
        2,
    ),
]
FAILURE: _W = [
    (
        re.compile(
            r"\b(?:I|we)\s+(?:was|were)(?:n't| not)\s+able\s+to\b|\bI\s+(?:could(?:n't| not)|can(?:no|')t|was unable to|am unable to|"
            r"failed to|did(?:n't| not) manage to)\b",
            re.I,
        ),
        3,
    ),
    (re.compile(r"\bunable to\b|\bnot able to\b", re.I), 2),
    (
        re.compile(
            r"\b(?:still|keeps?|continues? to)\s+(?:fail|failing|fails|crash|crashes|times? out|breaks|broken|red)\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:tests?|build|suite|run|lint|check|image|migration|server|script|test run|pipeline|process)\b[^.\n]{0,30}"
            r"\b(?:fails?|failing|failed|crash(?:es|ed)?|broken|breaks|segfaults|times out|timed out|was killed)\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:not|isn't|is not|aren't|are not|wasn't)\s+(?:yet\s+)?(?:done|fixed|finished|complete|completed|working|resolved|"
            r"implemented|verified)\b|\bNot fixed\b|\bnot done\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\bran out of (?:time|turns|context|budget)\b|\bhit the (?:turn|context) limit\b|\bmax(?:imum)? turns\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\b(?:the )?task (?:has )?(?:failed|cannot be completed|can't be completed|could not be completed)\b|"
            r"\bcannot be completed\b",
            re.I,
        ),
        3,
    ),
    (re.compile(r"\b(?:I'm|I am) stuck\b|\bI (?:gave up|give up|am giving up)\b", re.I), 3),
    (
        re.compile(
            r"\b(?:can(?:no|')t|couldn't|could not|unable to)\s+(?:reach|connect|access|fetch|install|resolve|"
            r"load|import|start|build|compile)\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:doesn't|does not|won't|didn't|did not) (?:work|start|compile|build|run|pass|load)\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\bhaven't (?:yet )?(?:fixed|resolved|found|confirmed|finished|got|gotten|managed)\b|\bhaven't been able\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\b(?:I've |I have |I )reverted\b|\bmade things worse\b|\bno verified fix\b|\bpartial progress\b|"
            r"\buntested\b",
            re.I,
        ),
        2,
    ),
    (
        re.compile(
            r"\bnone of (?:them|these|those|the \w+)\b[^.\n]{0,40}\b(?:work\w*|pass\w*|help\w*|fix\w*)|"
            r"\bstill\b[^.\n]{0,20}\bfailures?\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\bI (?:encountered|ran into|hit|got) (?:an? |the same |another )?(?:error|problem|issue|exception)\b|"
            r"\b(?:was|were)(?:n't| not) (?:applied|saved|written|committed|created)\b",
            re.I,
        ),
        2,
    ),
    (re.compile(r"\bmutually exclusive\b|\bcontradict\w*\b|\bimpossible\b", re.I), 1),
    (
        re.compile(
            r"\bkonnte\b[^.\n]{0,60}\bnicht\b|\bnicht\s+(?:fertig|gelöst|behoben|möglich|abgeschlossen|lösen|beheben|"
            r"erledigt|umgesetzt|implementiert)\b|\bkeine\s+(?:\w+\s+)?Lösung\b|\bstürzt\b[^.\n]{0,60}\bab\b",
            re.I,
        ),
        3,
    ),
    (
        re.compile(
            r"\bschl(?:ä|a)gt\s+(?:\w+\s+){0,2}fehl\b|\bschlagen\s+(?:\w+\s+){0,2}fehl\b|\bfehlgeschlagen\b",
            re.I,
        ),
        3,
    ),
    (re.compile(r"\bleider\b", re.I), 1),
]
NOT_FAILURE = re.compile(
    r"\b(?:no|0|zero)\s+(?:failures|failed|errors)\b|\bwithout (?:errors|failures)\b|\bfixed the failing\b|"
    r"\bno longer (?:fails|crashes|breaks)\b",
    re.I,
)

CAVEAT = re.compile(
    r"^\s*(?:[-*]\s+)?\**(?:Note|NB|Caveat|Hinweis|Anmerkung)\**\s*:.*$", re.I | re.M
)
"""A caveat after finished work ("Note: I couldn't run the e2e suite here") is not the verdict."""

_RESULT_OK = re.compile(
    r"\b\d[\d,]*\s+(?:passed|passing)\b(?!.*\b[1-9]\d*\s+(?:failed|errors?|failing)\b)|\btest result: ok\b|"
    r"\b\d+ examples?, 0 failures\b|\bTests:\s+\d+ passed, \d+ total\b|\bsucceeded in\b|\bSuccessfully built\b|"
    r"\bcompiled successfully\b|\bexited 0\b|^Applied edit to\b|^Commit [0-9a-f]{7}\b|^ok\s+\S+\s+[\d.]+s|"
    r"\bFound 0 errors\b|\bAll checks passed\b|\bBuild succeeded\b|^\s*│?\s*✓|\b0 failures\b|\b0 failed\b|"
    r"\bSuccess\. Updated the following files\b",
    re.I,
)
_RESULT_FAIL = re.compile(
    r"\b[1-9]\d*\s+(?:failed|failing|errors?)\b|^\s*FAILED\b|^\s*ERROR\b|^E\s+\w*(?:Error|Exception)\b|^\s*FAIL\b|^--- FAIL|Traceback \(most recent call last\)|"
    r"^\s*[\w.]*(?:Error|Exception)(?:\s*\[[\w-]+\])?:\s|^\s*│?\s*[\w.]*(?:Error|Exception):|\berror(?:\[E\d+\])?:|\berror TS\d+|"
    r"\bexited [1-9]\d*\b|\bexit(?:ed)? (?:with )?(?:code|status):? [1-9]\d*|npm ERR!|ELIFECYCLE|\bCommand failed\b|"
    r"^\s*Killed\s*$|Segmentation fault|could not compile|BUILD FAILED|Command timed out|✗|SearchReplaceNoExactMatch|"
    r"failed to match|A potential loop was detected|\bFound [1-9]\d* errors?\b|✖ \d+ problems|\bFatal\b|panicked at|"
    r"\berror during build\b|\bfailed to solve\b",
    re.I | re.M,
)

_OFFER_LEAD = re.compile(
    r"\b(?:would you like|do you want me|want me to|shall I|should I|can I|may I|I can|I could|happy to|"
    r"möchtest du|willst du|soll ich|let me know if|if you(?:'d| would)? like|if you want|"
    r"what would you like(?: me)? to (?:do|tackle|work on|focus on)|anything else|sag Bescheid|"
    r"is there anything|gibt es noch (?:etwas|was)|noch etwas)\b",
    re.I,
)
_EXTENSION = re.compile(
    r"\b(?:also|too|as well|additionally|next|further|more|another|other|extra|follow[- ]?ups?|anything else|"
    r"in addition|noch|auch|zusätzlich|weitere[nrs]?|try (?:again|a different|another|something else)|"
    r"different approach|something else|same option|same thing)\b",
    re.I,
)
_BLOCKING = re.compile(
    r"\b(?:before I (?:proceed|continue|start|go ahead|make|change|begin|implement|wire|write)|bevor ich|"
    r"haven't (?:changed|modified|made|implemented|touched|started)|I have not (?:changed|modified|made|implemented)|"
    r"noch nicht (?:geändert|umgesetzt|übernommen|angefangen)|(?:I've|I have) (?:paused|stopped) (?:here|before|until)|"
    r"so I(?:'ve| have) (?:paused|stopped)|requires? (?:a )?human sign-?off|waiting for your (?:go|approval|confirmation)|"
    r"so (?:that )?I can (?:proceed|continue|start|suggest|make|apply|implement|fix|propose|edit)|"
    r"ready for your (?:review|approval|go-?ahead|sign-?off)|once you(?:'ve)? (?:add|share|provide|confirm|approve)\w*)\b",
    re.I,
)
_DECISION = re.compile(
    r"\b(?:which|what should|what do you want|what would you prefer|how should|how would you like|whether|prefer|choose|"
    r"pick|decide|decision|confirm|approve|approval|clarify|welche[nrsm]?|wie möchtest|wie soll|bevorzugst|"
    r"entscheide|bestätig\w*|freigabe|freigeben|darf ich|ok to|okay to|is it ok|go ahead|proceed|select|"
    r"intended|correct|right one|is right|should it be|should (?:the|it|they|this|we)|what should)\b",
    re.I,
)
_ALTERNATIVES = re.compile(
    r"^(?=.*\b(?:should|shall|do you|would you|could you|soll|sollen|möchtest|willst|want)\b)"
    r"(?=.*\b(?:or|oder)\b).*\?\s*$",
    re.I,
)
_HUMAN_ACTION = re.compile(
    r"\b(?:could|can|would) you (?:please )?(?:provide|put|add|give|create|set|check|renew|regenerate|confirm|"
    r"clarify|tell|share|send|update|run|look|verify|approve)\b|\bplease (?:provide|confirm|advise|choose|decide|"
    r"tell me|let me know (?:which|whether|how|what)|clarify|specify|approve|select|pick)\b|"
    r"\blet me know (?:which|whether|how|what)\b|\bI need (?:you|your|a decision|an answer)\b|\bneed your (?:approval|decision|input)\b|"
    r"\bwaiting for your\b|\bawaiting your\b|\bkannst du\b|\bbitte (?:bestätige|entscheide|gib)\b|^Select:|"
    r"\breply\b[^.\n]{0,20}\bto (?:continue|proceed|confirm)|\bI need a decision\b|"
    r"\bplease (?:add|paste|share|upload|send|check your|run this on your)\b|\bready for your (?:review|approval)\b",
    re.I,
)
UNCERTAIN = re.compile(
    r"\bI'?m not sure (?:whether|if|which|how|what)\b|\bI'?m uncertain\b|\bcould go either way\b|"
    r"\bunclear (?:whether|which|what|how)\b|\bit(?:'s| is) (?:unclear|ambiguous)\b|\b(?:doesn't|does not|don't) specify\b|"
    r"\bnot specified\b|\bambiguous\b|\bUnklar ist\b|\bnicht eindeutig\b|\blässt offen\b|\bconflict with\b|"
    r"\btwo (?:reasonable )?(?:interpretations|readings)\b|\bboth (?:patterns|approaches) exist\b|"
    r"\b(?:doesn't|does not|don't) say\b|\bno mention of\b|\b(?:isn't|is not|aren't|are not) (?:specified|defined)\b|"
    r"\bunspecified\b|\bthere (?:is|are) no (?:spec|style guide|specification|definition|requirements?|palette)\b|"
    r"\bnennt kein\w*\b",
    re.I,
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


def output_status(
    lines: list[Line],
) -> tuple[Literal["success", "failure"] | None, str | None, int]:
    """The last test/build result printed by a tool: success, failure, or None."""
    for ln in reversed(lines):
        if ln.zone == "prose":
            continue
        text = ln.text
        if _RESULT_FAIL.search(text) and not re.search(r"\b0 failed\b|\bno errors\b", text, re.I):
            return "failure", text.strip(), ln.no
        if _RESULT_OK.search(text):
            return "success", text.strip(), ln.no
    return None, None, -1


_CHOICE = re.compile(
    r"\b(?:which|prefer|choose|pick|whether|clarify|welche[nrsm]?|bevorzugst|entscheide)\b|\b(?:or|oder)\b[^?]*\?",
    re.I,
)


def _classify(sentence: str, done: bool, failed: bool, paused: bool = False) -> QKind:
    """PAUSED: the agent said elsewhere that it stopped to wait ("so I've paused here")."""
    # "Which fix do you want me to apply?" asks for a choice, not whether to do more
    offer = bool(_OFFER_LEAD.search(sentence)) and not WHICH_QUESTION.search(sentence)
    blocking = bool(_BLOCKING.search(sentence)) or (paused and bool(_HUMAN_ACTION.search(sentence)))
    alternatives = bool(_ALTERNATIVES.search(sentence))
    if done and not blocking:
        # after finished and tested work only a real choice still blocks; the rest is follow-up
        if _EXTENSION.search(sentence) and offer:
            return "offer"
        return "decision" if alternatives or (_CHOICE.search(sentence) and not offer) else "offer"
    if offer and not blocking:
        if _EXTENSION.search(sentence):
            return "offer"  # "would you like me to also…", "…try a different approach?"
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
    paused = bool(_BLOCKING.search(" ".join(" ".join(ln.text.split()) for ln in tail)))
    out: list[Question] = []
    for ln_sents in _sentences_with_lines(tail):
        no, s = ln_sents
        is_q = s.rstrip().endswith("?") or bool(_HUMAN_ACTION.search(s))
        if not is_q or LABELLED_QUESTION.match(s):
            continue
        out.append(Question(s, _classify(s, done, failed, paused), no))
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


def read_unmarked(lines: list[Line]) -> Reading:
    """The heuristic verdict for output without explicit markers."""
    tail = final_prose(lines)
    tail_text = join(tail)
    in_tail = {ln.no for ln in tail}
    # earlier prose, most recent first in importance; capped so megabyte logs stay fast
    earlier = [ln for ln in lines if ln.zone == "prose" and ln.no not in in_tail][-2000:]
    done, done_ev = _score(COMPLETION, tail_text)
    fail_text = NOT_FAILURE.sub(" ", CAVEAT.sub(" ", tail_text))
    failed, fail_ev = _score(FAILURE, fail_text)
    status, status_ev, _status_no = output_status(lines)
    if status == "success":
        done += 2
    elif status == "failure":
        failed += 2
    uncertain_m = UNCERTAIN.search(tail_text)
    uncertain = uncertain_m is not None

    is_done = done >= 2 and done > failed
    is_failed = failed >= 2 and failed >= done
    # a question inside a failure banner ("Something went wrong? Hit /feedback") asks nothing
    questions = [
        q for q in find_questions(tail, is_done, is_failed) if not FINAL_FAILURE.search(q.text)
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
    if last and (CLI_PROMPT.search(last[0].text) or PENDING_TOOL.match(last[0].text)):
        q = Question(last[0].text.strip().lstrip("> "), "decision", last[0].no)
        return _with(base, "needs_human", True, question=q, evidence=q.text)
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
    if uncertain_m is not None and not is_done and not is_failed:
        return _with(base, "needs_human", False, evidence=uncertain_m.group(0))
    if generic and not is_done and not is_failed and failed == 0:
        return _with(base, "needs_human", False, question=generic[-1], evidence=generic[-1].text)
    if failed > 0 and failed >= done:
        confident = failed >= 3 and failed - done >= 2
        return _with(base, "failed", confident, evidence=error or fail_ev)
    if done > 0:
        confident = (done >= 3 and failed == 0) or done - failed >= 4
        return _with(
            base, "completed", confident, evidence=_sentence_of(tail_text, done_ev) or status_ev
        )
    if INTENT.search(" ".join(tail_text.split()[-60:])):
        # it ends on what it is about to do ("I'm continuing now and will return results"):
        # the turn ended before the work did
        return _with(base, "failed", False, evidence="the output ends on an intention")
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
